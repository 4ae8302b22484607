"""Messages that state the real cause: a database locked
by a writer is called locked; a dropped table is named; LATPROF_* values
are checked with their units before the app starts (exit 2, nothing made);
after latprof itself is killed, OUTPUT.logs leads to the logs."""
import glob
import os
import signal
import sqlite3
import subprocess
import time

from lptest import LATPROF, check, latprof, q1, sample, tmpdir
from rellib import SMALL_LOGS, app, open_db, run

d = tmpdir()
server = sample("lock_server")
base = os.path.join(d, "base.db")
p = run(base, server)
check(p.returncode == 0, f"lock_server recorded\n{p.stderr}")
check(not os.path.lexists(base + ".logs"), "a finished run leaves no OUTPUT.logs link")

# Locked by another writer (an exclusive transaction holds it).
w = sqlite3.connect(base, isolation_level=None)
w.execute("BEGIN EXCLUSIVE")
p = latprof("report", base)
w.execute("ROLLBACK")
w.close()
check(p.returncode == 2 and "is locked" in p.stderr and "not SQLite" not in p.stderr,
      f"a locked database is called locked (exit {p.returncode}): {p.stderr.strip()!r}")

# A dropped table is named, for every reading command.
for table in ("ranges", "lock_waits"):
    broken = os.path.join(d, f"no_{table}.db")
    with open(base, "rb") as src, open(broken, "wb") as dst:
        dst.write(src.read())
    c = sqlite3.connect(broken)
    c.execute(f"DROP TABLE {table}")
    c.commit()
    c.close()
    for args in (["report", broken, "--breakdown"], ["report", broken, "--locks"],
                 ["check", broken, "--expect", "p99(request) < 50ms"]):
        p = latprof(*args)
        check(p.returncode == 2 and f"table '{table}' is missing" in p.stderr,
              f"{' '.join(args[:1])} {args[2] if len(args) > 2 else ''} without {table}: "
              f"exit {p.returncode}, {p.stderr.strip()!r}")

# LATPROF_* values: checked, with units, before anything starts.
tmp = os.path.join(d, "tmp")
os.mkdir(tmp)
bad = {"LATPROF_LOG_MB": ["abc", "-5", "0", "1.5G", "512K", "70000"],
       "LATPROF_CUDA_BUFFER_MB": ["lots", "2"],
       "LATPROF_CUDA_FLUSH_MS": ["soon", "0"],
       "LATPROF_COUNTERS_INTERVAL_NS": ["fast", "-1", "5 parsecs"],
       "LATPROF_NVTX_CLOCK": ["sundial"]}
for var, values in bad.items():
    for v in values:
        out = os.path.join(d, "bad.db")
        p = run(out, "sh", "-c", "echo ran", env={var: v, "TMPDIR": tmp})
        check(p.returncode == 2 and var in p.stderr and len(p.stderr.splitlines()) == 1
              and "ran" not in p.stdout and not os.path.exists(out) and not os.listdir(tmp),
              f"{var}={v}: exit 2, one line, nothing run or made ({p.returncode}, "
              f"{p.stderr.strip()!r})")
good = {("LATPROF_LOG_MB", "2G"): "2048", ("LATPROF_LOG_MB", "512m"): "512",
        ("LATPROF_LOG_MB", "64"): "64", ("LATPROF_COUNTERS_INTERVAL_NS", "20us"): "20000",
        ("LATPROF_CUDA_FLUSH_MS", "2s"): "2000"}
for (var, v), want in good.items():
    p = run(os.path.join(d, "good.db"), "sh", "-c", f"echo got=${var}", args=("--force",),
            env={var: v})
    check(p.returncode == 0 and f"got={want}\n" in p.stdout,
          f"{var}={v} reaches the app as {want} ({p.stdout.strip()!r} {p.stderr.strip()!r})")

# kill -9 of latprof: OUTPUT.logs leads to the logs, and imports.
out, ready = os.path.join(d, "killed.db"), os.path.join(d, "killed.ready")
lp = subprocess.Popen([LATPROF, "run", "-o", out, "--", app(), "once", ready],
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                      env={**os.environ, **SMALL_LOGS})
# latprof makes the link after it started the app, beside it: on a loaded
# machine the app can be ready first. Killed once both are there.
deadline = time.monotonic() + 30
while time.monotonic() < deadline and not (os.path.exists(ready) and
                                           open(ready).read().endswith("\n") and
                                           os.path.lexists(out + ".logs")):
    time.sleep(0.01)
app_pid = int(open(ready).read().split()[0])
lp.send_signal(signal.SIGKILL)
lp.wait()
check(os.path.islink(out + ".logs"), "after kill -9 of latprof, OUTPUT.logs is there")
os.kill(app_pid, signal.SIGTERM)  # the orphaned app ends on its own
deadline = time.monotonic() + 30
while time.monotonic() < deadline and os.path.exists(f"/proc/{app_pid}"):
    time.sleep(0.02)
p = latprof("import", out + ".logs", "-o", out)
check(p.returncode == 0, f"latprof import OUTPUT.logs -o OUTPUT works\n{p.stderr}")
st = q1(open_db(out), "SELECT exit_status FROM processes")
check(st == 3, f"the killed run's app and its exit 3 are in the database ({st})")

# That link is the killed run's: a new run to the same name leaves it and
# names its own directory; the default name skips a number with a link.
p = run(out, server, args=("--force",))
check(os.readlink(out + ".logs") and "killed.db.logs exists; this run's event logs are in"
      in p.stderr, f"a new run keeps the earlier run's link and says so: {p.stderr!r}")
p = subprocess.run([LATPROF, "run", "--", "true"], cwd=d, capture_output=True, text=True)
os.symlink("/nonexistent", os.path.join(d, "latprof-2.db.logs"))
p = subprocess.run([LATPROF, "run", "--", "true"], cwd=d, capture_output=True, text=True)
check("wrote latprof-3.db" in p.stderr,
      f"the default name skips latprof-2.db, whose .logs link is there: {p.stderr!r}")
