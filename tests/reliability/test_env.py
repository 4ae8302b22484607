"""The in-app code reads its settings once, at start-up: an app that
unsets LATPROF_DIR and sets LATPROF_LOG_MB=1 / LATPROF_COUNTERS=none mid-run,
then forks, still gets its child recorded exactly as before (same log size,
nothing dropped). Environment variables are the app's to change."""
import glob
import os
import struct

from lptest import check, q1, tmpdir
from rellib import app, meta, open_db, run

d = tmpdir()
logs = os.path.join(d, "tmp")
os.mkdir(logs)
out = os.path.join(d, "env.db")
p = run(out, app(), "envchange", args=("--keep-logs",), env={"TMPDIR": logs})
check(p.returncode == 0, f"the app and its child exit 0 ({p.returncode}) {p.stdout.strip()}\n{p.stderr}")
files = sorted(glob.glob(os.path.join(logs, "latprof-*", "*.lplog")))


def max_chunks(path):
    """The log's room (header max_chunks, schemas/eventlog.md): the file
    itself grows a chunk at a time."""
    with open(path, "rb") as f:
        return struct.unpack_from("<II", f.read(32), 20)


rooms = {os.path.basename(f): max_chunks(f) for f in files}
check(len(files) == 2 and len(set(rooms.values())) == 1
      and all(cs * n > (1 << 20) for cs, n in rooms.values()),
      f"the child's log has the room set at start-up, not LATPROF_LOG_MB=1: {rooms}")
c = open_db(out)
n = q1(c, "SELECT count(*) FROM strings WHERE value LIKE 'child ev %'")
dropped = int(meta(c, "dropped_records"))
check(n == 20000 and dropped == 0,
      f"the child recorded all 20000 events, none dropped ({n}, dropped {dropped})")
procs = q1(c, "SELECT count(*) FROM processes")
check(procs == 2, f"after unsetenv(LATPROF_DIR) the forked child is still recorded ({procs})")
