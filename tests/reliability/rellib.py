"""Shared bits of the reliability tests, on top of tests/lib/lptest."""
import os
import subprocess

# open_db and meta re-exported: tests of this folder import them from here.
from lptest import BUILD, LATPROF, meta, open_db  # noqa: F401

# Small logs: a 1 GiB sparse file per process is slow to import by the dozen.
SMALL_LOGS = {"LATPROF_LOG_MB": "64"}


def app():
    return os.path.join(BUILD, "tests", "reliability", "lp_rel_app")


def relbin(name):
    return os.path.join(BUILD, "tests", "reliability", name)


def run(db_path, *cmd, args=(), env=None, timeout=600, **kw):
    """latprof run -o db [args] -- cmd; returns CompletedProcess (no check)."""
    e = dict(os.environ)
    e.update(SMALL_LOGS)
    if env:
        e.update(env)
    return subprocess.run([LATPROF, "run", "-o", db_path, *args, "--", *map(str, cmd)],
                          capture_output=True, text=True, env=e, timeout=timeout, **kw)


def bare(*cmd, timeout=600):
    """The app without latprof: the reference for output and exit status."""
    return subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=timeout)


def event_counts(conn, prefix="ev t"):
    """{thread index: sorted list of event numbers} from the interned strings."""
    out = {}
    for (v,) in conn.execute("SELECT value FROM strings WHERE value LIKE ?", (prefix + "%",)):
        parts = v.split()
        out.setdefault(int(parts[1][1:]), []).append(int(parts[2][1:]))
    for k in out:
        out[k].sort()
    return out


def read_side(path, threads):
    with open(path, "rb") as f:
        b = f.read()
    vals = [int.from_bytes(b[8 * i:8 * i + 8], "little") for i in range(threads + 1)]
    return vals[0], vals[1:]
