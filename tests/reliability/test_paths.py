"""Paths that lost recordings.

1. A relative TMPDIR: the app was handed LATPROF_DIR=rel/latprof-XXXXXX, so
   every process that changed directory before its first record lost its
   recording, and the summary blamed RLIMIT_NOFILE. The log directory is
   now named by its absolute path: lock_server exec'd after `cd /` records
   its waits (as many as its own count of contended acquisitions).
2. Output paths SQLite cannot open (longer than its VFS's mxPathname less
   the "-journal" suffix, counting the import's temporary suffix) or whose
   file name with that suffix exceeds NAME_MAX passed the pre-check; the app
   ran, then the import failed ("unable to open database file"). They are
   now refused before the app starts (exit 2, one line, the app never
   runs), at the exact limit: one character shorter imports."""
import os
import re
import sqlite3
import subprocess

from lptest import LATPROF, check, latprof, one_error_line, sample, tmpdir

d = tmpdir()
server = sample("lock_server")

# --- 1. relative TMPDIR --------------------------------------------------------
os.mkdir(os.path.join(d, "rel"))
stats = os.path.join(d, "stats.txt")
out = os.path.join(d, "reltmp.db")
env = dict(os.environ, TMPDIR="rel", LATPROF_LOG_MB="64")
p = subprocess.run([LATPROF, "run", "-o", out, "--", "sh", "-c",
                    f'cd / && exec "{server}" --threads 4 --requests 2000'],
                   cwd=d, env=env, capture_output=True, text=True, timeout=300)
check(p.returncode == 0, f"run with TMPDIR=rel (exit {p.returncode})\n{p.stderr}")
check("RLIMIT_NOFILE" not in p.stderr and "not recorded" not in p.stderr,
      f"no process is reported unrecorded: {p.stderr.strip()!r}")
c = sqlite3.connect(out)
procs = c.execute("SELECT count(*) FROM processes WHERE exec_path LIKE '%lock_server'").fetchone()[0]
waits = c.execute("SELECT count(*) FROM lock_waits").fetchone()[0]
m = re.search(r"over (\d+) acquisitions, (\d+) contended", p.stdout)
check(procs == 1, f"lock_server, exec'd after cd /, is recorded ({procs} image)")
# lock_server counts an acquisition contended when trylock fails; each such
# one is a wait the interposer records (one may race its own timing).
check(m is not None and waits >= 1 and abs(waits - int(m.group(2))) <= 2,
      f"its lock waits are recorded: {waits} against the app's {m.group(2) if m else '?'} "
      "contended acquisitions")
check(not os.listdir(os.path.join(d, "rel")), "the log directory (in rel/) is gone after the run")

# --- 2. path limits --------------------------------------------------------------
# A directory whose absolute path leaves exactly room for names up to a
# chosen length: SQLite (3.x unix VFS) opens absolute paths up to
# mxPathname (512) - 8 characters; the import's temporary name adds 11.
LIMIT = 512 - 8
base = os.path.realpath(d)
deep = base
while len(deep) < LIMIT - 140:
    deep = os.path.join(deep, "d" * min(100, LIMIT - 140 - len(deep) - 1 or 1))
    os.makedirs(deep, exist_ok=True)
room = LIMIT - len(deep) - 1 - len(".tmp-XXXXXX")  # longest file name that fits
check(0 < room < 200, f"test directory leaves room for {room}-character names")
side = os.path.join(d, "side")


def app_cmd():
    return ["sh", "-c", f'echo ran > "{side}"; exec "{server}" --threads 2 --requests 50']


fits = os.path.join(deep, "f" * (room - 3) + ".db")
too_long = os.path.join(deep, "f" * (room - 2) + ".db")
p = latprof("run", "-o", too_long, "--", *app_cmd())
one_error_line(p, f"run -o a path of {len(too_long)} characters (+11 for the temporary name)")
check("too long for SQLite" in p.stderr and not os.path.exists(side),
      "it names SQLite's limit, and the app never ran")
p = latprof("run", "-o", fits, "--", *app_cmd())
check(p.returncode == 0 and os.path.exists(fits) and os.path.exists(side),
      f"one character shorter ({len(fits)} characters): recorded and imported (exit {p.returncode})")
os.unlink(side)
for n in (600, 4000):
    far_dir = os.path.join(base, *(["e" * 99] * (n // 100)))
    os.makedirs(far_dir, exist_ok=True)  # the directory exists: only the length is wrong
    far = os.path.join(far_dir, "x.db")
    p = latprof("run", "-o", far, "--", *app_cmd())
    one_error_line(p, f"run -o a path of {len(far)} characters")
    check("too long for SQLite" in p.stderr and not os.path.exists(side),
          f"{len(far)} characters: SQLite's limit named, the app never ran")

# NAME_MAX: the file name plus ".tmp-XXXXXX" must fit 255.
name_max = os.pathconf(d, "PC_NAME_MAX")
for n in (name_max - 11 + 1, 250, name_max):
    p = latprof("run", "-o", os.path.join(d, "n" * (n - 3) + ".db"), "--", *app_cmd())
    one_error_line(p, f"run -o a {n}-character file name")
    check("NAME_MAX" in p.stderr and not os.path.exists(side),
          f"{n}-character name: NAME_MAX named, the app never ran")
ok_name = os.path.join(d, "n" * (name_max - 11 - 3) + ".db")
p = latprof("run", "-o", ok_name, "--", *app_cmd())
check(p.returncode == 0 and os.path.exists(ok_name),
      f"a {name_max - 11}-character name records and imports (exit {p.returncode})")
os.unlink(side)

# %p: checked with the widest pid before the app starts.
p = latprof("run", "-o", os.path.join(deep, "f" * (room - 6) + "%p.db"), "--", *app_cmd())
one_error_line(p, "run -o a %p name that is too long once the pid is in")
check(not os.path.exists(side), "%p: the app never ran")

# latprof import into such paths: refused before reading the input.
p = latprof("run", "--keep-logs", "-o", os.path.join(d, "kept.db"), "--", server,
            "--threads", 2, "--requests", 50)
m = re.search(r"event logs kept in (\S+)", p.stderr)
check(p.returncode == 0 and m is not None, "a run's logs kept for import")
logs = m.group(1)
for target in (too_long, os.path.join(d, "n" * 250 + ".db")):
    p = latprof("import", logs, "-o", target)
    one_error_line(p, f"import -o a {len(os.path.basename(target))}-character name, "
                      f"{len(target)}-character path")
p = latprof("import", logs, "-o", os.path.join(deep, "g" * (room - 3) + ".db"))
check(p.returncode == 0, f"import -o a path at the limit works (exit {p.returncode})\n{p.stderr}")
