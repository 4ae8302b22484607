"""latprof run and the descendants an app leaves running (daemons, background
jobs). Default (--wait=primary, as before): import when the app exits, say
which descendants are still running, and keep the event logs (they still
write there) so that `latprof import DIR` gets their whole recording later.
--wait=all: wait for them too (nsys profile's default); INT/TERM/HUP to
latprof ends that wait and imports what is there."""
import os
import re
import signal
import subprocess
import time

from lptest import *
from rellib import SMALL_LOGS, app, open_db, run

d = tmpdir()

# --wait=all on daemon(): when latprof returns, the daemon has finished and
# its whole recording (waits after daemon(), its exit) is in the database.
out, mark = os.path.join(d, "all.db"), os.path.join(d, "all.mark")
p = run(out, app(), "daemon", mark, args=("--wait=all",))
check(p.returncode == 0, f"--wait=all: exit 0 like the app\n{p.stderr}")
check(os.path.exists(mark), "--wait=all returns only after the daemon finished")
dpid = int(re.search(r"pid=(\d+)", open(mark).read()).group(1))
c = open_db(out)
row = c.execute("SELECT id, end_ns, exit_status FROM processes WHERE pid = ? "
                "ORDER BY id DESC LIMIT 1", (dpid,)).fetchone()
check(row is not None and row["end_ns"] is not None and row["exit_status"] == 0,
      f"the daemon (pid {dpid}) is recorded with its exit: {tuple(row) if row else None}")
# After daemon(), the daemon made 5 waits for sure on rel_sure_lock
# (sure_waits=5 in the mark) in 1 + 3 + 5 threads.
sure = int(re.search(r"sure_waits=(\d+)", open(mark).read()).group(1))
waits = q1(c, "SELECT count(*) FROM lock_waits w JOIN threads t ON t.id = w.thread_id "
              "JOIN locks l ON l.id = w.lock_id WHERE t.process_id = ? AND "
              "l.name = 'rel_sure_lock'", row["id"])
check(sure == 5 and waits == sure,
      f"the daemon's {sure} sure lock waits after daemon() are recorded ({waits})")
threads = q1(c, "SELECT count(*) FROM threads WHERE process_id = ?", row["id"])
check(threads == 9, f"the daemon's 1 + 3 + 5 threads are recorded ({threads})")
check("still running" not in p.stderr and "logs kept" not in p.stderr,
      "nothing left running, logs removed")

# Default: a background job outlives the app. One line names it, the logs stay.
env = dict(os.environ, **SMALL_LOGS)
t0 = time.monotonic()
out = os.path.join(d, "primary.db")
p = latprof("run", "-o", out, "--", "sh", "-c", "sleep 1.5 >/dev/null 2>&1 & echo started", env=env)
el = time.monotonic() - t0
check(p.returncode == 0 and p.stdout == "started\n", f"default: exit 0, output unchanged ({el:.2f} s)")
m = re.search(r"latprof: 1 descendant of the app still running \(pid (\d+)\) not waited for; "
              r".*--wait=all waits for them\)", p.stderr)
check(m is not None, f"default: one line names the descendant still running\n{p.stderr}")
m2 = re.search(r"event logs kept in (\S+);", p.stderr)
check(m2 is not None and os.path.isdir(m2.group(1)), "default: the event logs are kept, and where")
logdir = m2.group(1)
check(el < 1.2, f"default: latprof did not wait for the background job ({el:.2f} s)")
time.sleep(max(0, 1.8 - el))
full = os.path.join(d, "full.db")
latprof("import", logdir, "-o", full, check=0)
c = open_db(full)
check(q1(c, "SELECT exit_status FROM processes WHERE pid = ? ORDER BY id DESC LIMIT 1",
         int(m.group(1))) == 0,
      "latprof import of the kept logs has the background job's exit")

# --wait=all interrupted by SIGTERM: imports at once with the app's status.
out = os.path.join(d, "term.db")
lp = subprocess.Popen([LATPROF, "run", "--wait=all", "-o", out, "--", "sh", "-c",
                       "sleep 30 >/dev/null 2>&1 & echo $! > " + os.path.join(d, "bg.pid")],
                      stderr=subprocess.PIPE, text=True, env=env)
deadline = time.monotonic() + 10
while not os.path.exists(os.path.join(d, "bg.pid")) and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(0.5)
check(lp.poll() is None, "--wait=all: still waiting while the background job runs")
lp.send_signal(signal.SIGTERM)
err = lp.communicate(timeout=30)[1]
bg = int(open(os.path.join(d, "bg.pid")).read())
try:
    os.kill(bg, signal.SIGKILL)
except ProcessLookupError:
    pass
check(lp.returncode == 0, f"SIGTERM ends the wait; the app's exit status 0 passes ({lp.returncode})")
check(f"(pid {bg}) after the wait was interrupted" in err, f"the line says it was interrupted\n{err}")
check(os.path.exists(out) and q1(open_db(out), "SELECT count(*) FROM processes") >= 2,
      "the recording so far is imported")

p = latprof("run", "--wait=some", "--", "true")
check(p.returncode == 2 and p.stderr.count("\n") == 1 and "--wait" in p.stderr,
      f"--wait=some: exit 2, one line ({p.stderr.strip()})")
