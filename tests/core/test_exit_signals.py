"""Exit status and signals pass through `latprof run`; SIGTERM sent to
latprof reaches the app and the run is still imported; an app killed with
SIGKILL mid-run still yields every lock wait it completed before the kill."""
import os
import signal
import subprocess
import time
import shutil

from corelib import SMALL_LOGS, helper, lock_server, open_db, read_kv
from lptest import LATPROF, check, fail, q1, record, tmpdir

d = tmpdir()


def root(c):
    return c.execute("SELECT * FROM processes WHERE parent_id IS NULL ORDER BY start_ns "
                     "DESC LIMIT 1").fetchone()


# exit(3) -> 3
out = os.path.join(d, "exit3.db")
p = record(out, helper(), "exit", "3", check_app=3)
r = root(open_db(out))
check(r["exit_status"] == 3 and r["exit_signal"] is None,
      f"exit 3 recorded (exit_status={r['exit_status']}, exit_signal={r['exit_signal']})")

# Killed by a signal it raised -> 128+N
for sig in (signal.SIGTERM, signal.SIGSEGV):
    out = os.path.join(d, f"raise{int(sig)}.db")
    record(out, helper(), "raise", str(int(sig)), check_app=128 + int(sig))
    r = root(open_db(out))
    check(r["exit_signal"] == int(sig),
          f"{sig.name}: latprof exits {128 + int(sig)}, db exit_signal={r['exit_signal']}")

# SIGTERM to latprof itself is forwarded to the app; the import still happens.
out = os.path.join(d, "term.db")
side = os.path.join(d, "term.side")
lp = subprocess.Popen([LATPROF, "run", "-o", out, "--", lock_server(), "--threads", "4",
                       "--requests", "100000000", "--work-us", "20", "--locked-us", "50",
                       "--side-count", side], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      text=True, env={**os.environ, **SMALL_LOGS})
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    if os.path.exists(side) and os.path.getsize(side) > 0 and read_kv(side)["long_waits"] >= 20:
        break
    time.sleep(0.05)
else:
    lp.kill()
    fail("lock_server never reported 20 contended waits")
lp.send_signal(signal.SIGTERM)
try:
    so, se = lp.communicate(timeout=120)
except subprocess.TimeoutExpired:
    lp.kill()
    fail("latprof did not finish within 120 s after SIGTERM")
check(lp.returncode == 128 + signal.SIGTERM,
      f"SIGTERM to latprof: exit {lp.returncode} (expected 143)\n{se}")
c = open_db(out)
r = root(c)
check(r["exit_signal"] == signal.SIGTERM, f"the app died of the forwarded SIGTERM "
      f"(exit_signal={r['exit_signal']})")
n = q1(c, "SELECT count(*) FROM lock_waits")
counted = read_kv(side)["long_waits"]
check(n >= counted - 4, f"waits imported after SIGTERM: {n} >= {counted} - 4")

# SIGKILL mid-run: every wait the app counted in its side file is in the db
# (at most one in-flight record per thread may be missing).
out = os.path.join(d, "kill.db")
side = os.path.join(d, "kill.side")
threads = 4
record(out, lock_server(), "--threads", str(threads), "--requests", "100000000", "--work-us",
       "20", "--locked-us", "20", "--side-count", side, "--kill-self-after", "20000",
       check_app=128 + signal.SIGKILL, env=SMALL_LOGS)
counted = read_kv(side)["long_waits"]
c = open_db(out)
n = q1(c, "SELECT count(*) FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
          "WHERE l.kind = 'mutex'")
print(f"info: app counted {counted} long contended waits before SIGKILL; db has {n}")
check(counted >= 50, f"the app waited often enough to make the test meaningful ({counted})")
check(n >= counted - threads,
      f"every wait committed before SIGKILL is in the db: {n} >= {counted} - {threads}")
r = root(c)
check(r["exit_signal"] == signal.SIGKILL and r["log_closed"] == 0,
      f"killed process: exit_signal={r['exit_signal']}, log_closed={r['log_closed']}")
shutil.rmtree(d, ignore_errors=True)  # kept on failure: fail() exits first
