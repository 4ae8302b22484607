"""The in-app code reads its settings once, at start-up: an app that
unsets LATPROF_DIR and sets LATPROF_LOG_MB=1 / LATPROF_COUNTERS=none mid-run,
then forks, still gets its child recorded exactly as before (same log size,
nothing dropped). Environment variables are the app's to change."""
import glob
import os

from lptest import check, q1, tmpdir
from rellib import app, meta, open_db, run

d = tmpdir()
logs = os.path.join(d, "tmp")
os.mkdir(logs)
out = os.path.join(d, "env.db")
p = run(out, app(), "envchange", args=("--keep-logs",), env={"TMPDIR": logs})
check(p.returncode == 0, f"the app and its child exit 0 ({p.returncode}) {p.stdout.strip()}\n{p.stderr}")
files = sorted(glob.glob(os.path.join(logs, "latprof-*", "*.lplog")))
sizes = {os.path.basename(f): os.path.getsize(f) for f in files}
check(len(files) == 2 and len(set(sizes.values())) == 1,
      f"the child's log has the size set at start-up, not LATPROF_LOG_MB=1: {sizes}")
c = open_db(out)
n = q1(c, "SELECT count(*) FROM strings WHERE value LIKE 'child ev %'")
dropped = int(meta(c, "dropped_records"))
check(n == 20000 and dropped == 0,
      f"the child recorded all 20000 events, none dropped ({n}, dropped {dropped})")
procs = q1(c, "SELECT count(*) FROM processes")
check(procs == 2, f"after unsetenv(LATPROF_DIR) the forked child is still recorded ({procs})")
