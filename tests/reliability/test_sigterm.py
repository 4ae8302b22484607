"""SIGTERM to `latprof run` itself (a job scheduler's first step) reaches an
app that handles it: the app shuts down its own way, its exit status (7)
is latprof's, and the run is imported with what it recorded until then.
(tests/core covers an app that dies of the forwarded signal.)"""
import os
import signal
import subprocess
import time

from lptest import LATPROF, check, fail, q1, tmpdir
from rellib import SMALL_LOGS, app, open_db

d = tmpdir()
out = os.path.join(d, "term.db")
ready = os.path.join(d, "ready")
lp = subprocess.Popen([LATPROF, "run", "-o", out, "--", app(), "term", ready],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                      env={**os.environ, **SMALL_LOGS})
deadline = time.monotonic() + 30
while not os.path.exists(ready) and time.monotonic() < deadline:
    time.sleep(0.01)
if not os.path.exists(ready):
    lp.kill()
    fail("the app never got ready")
time.sleep(0.3)
lp.send_signal(signal.SIGTERM)
so, se = lp.communicate(timeout=120)
check(lp.returncode == 7, f"latprof exits with the app's own status 7 (got {lp.returncode})\n{se}")
check("terminated cleanly" in so, "the app's handler ran (output passed through)")
c = open_db(out)
r = c.execute("SELECT exit_status, exit_signal FROM processes WHERE parent_id IS NULL").fetchone()
check(r["exit_status"] == 7 and r["exit_signal"] is None,
      f"the database records exit 7 ({r['exit_status']}, signal {r['exit_signal']})")
# Before it got ready the app made 5 waits for sure (lp_rel_app's
# REL_SURE_WAITS), on rel_sure_lock; then 3 threads contend on rel_lock.
check("sure_waits 5" in so, "the app made 5 sure waits")
sure = q1(c, "SELECT count(*) FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
             "WHERE l.name = 'rel_sure_lock'")
check(sure == 5, f"the 5 sure lock waits before SIGTERM are imported ({sure})")
n = q1(c, "SELECT count(*) FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
          "WHERE l.name = 'rel_lock'")
check(n > 0, f"the {n} waits of the contending threads until SIGTERM are imported")
procs, threads = q1(c, "SELECT count(*) FROM processes"), q1(c, "SELECT count(*) FROM threads")
check(procs == 1 and threads == 9, f"1 process ({procs}), 1 + 5 + 3 threads ({threads})")
