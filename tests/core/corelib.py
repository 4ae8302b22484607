"""Shared bits of the tests/core e2e tests (on top of tests/lib/lptest)."""
import hashlib
import os

from lptest import BUILD, db, fail, q1

# Small logs: the default 1 GiB sparse file is slow to copy and hash.
SMALL_LOGS = {"LATPROF_LOG_MB": "64"}


def helper():
    return os.path.join(BUILD, "tests", "core", "lp_core_proc")


def lock_server():
    return os.path.join(BUILD, "samples", "lock_server")


def read_kv(path):
    """key=value lines (or one line of space-separated pairs) -> dict of ints."""
    out = {}
    with open(path) as f:
        for tok in f.read().split():
            k, _, v = tok.partition("=")
            out[k] = int(v)
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def open_db(path):
    if not os.path.exists(path):
        fail(f"no database written at {path}")
    return db(path)


def dropped(conn):
    return q1(conn, "SELECT value FROM meta WHERE key = 'dropped_records'")


def one_error_line(p, what):
    """stderr is exactly one line starting with 'latprof'; exit status 2."""
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode != 2:
        fail(f"{what}: exit {p.returncode}, expected 2\nstderr:\n{p.stderr}")
    if len(lines) != 1 or not lines[0].startswith("latprof"):
        fail(f"{what}: expected one 'latprof...' line on stderr, got:\n{p.stderr}")
    print(f"ok: {what}: exit 2, '{lines[0]}'")
