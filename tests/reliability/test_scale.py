"""10,000 threads over one run, and 64 processes forked at once: no crash,
no deadlock, the app's exit status passes, and every thread and process is
in the database with nothing dropped."""
import os

from lptest import check, q1, tmpdir
from rellib import app, meta, open_db, run

d = tmpdir()
out = os.path.join(d, "threads.db")
p = run(out, app(), "threads", 10000)
check(p.returncode == 0, f"10,000 threads: exit 0 ({p.returncode}) {p.stdout.strip()}\n{p.stderr}")
c = open_db(out)
n = q1(c, "SELECT count(*) FROM threads")
dropped = int(meta(c, "dropped_records"))
print(f"FIGURE threads: {n} threads recorded of 10001, dropped_records={dropped}")
check(n == 10001, f"all 10,000 threads and the main thread recorded ({n})")
check(dropped == 0, f"nothing dropped ({dropped})")
ended = q1(c, "SELECT count(*) FROM threads WHERE end_ns IS NOT NULL")
check(ended >= 10000, f"every short-lived thread has its end recorded ({ended})")

out = os.path.join(d, "fork.db")
p = run(out, app(), "fork", 64)
check(p.returncode == 0, f"64 forks at once: exit 0 ({p.returncode}) {p.stdout.strip()}")
c = open_db(out)
procs = q1(c, "SELECT count(*) FROM processes")
kids = q1(c, "SELECT count(*) FROM processes WHERE parent_id = "
             "(SELECT id FROM processes WHERE parent_id IS NULL)")
clean = q1(c, "SELECT count(*) FROM processes WHERE exit_status = 0")
dropped = int(meta(c, "dropped_records"))
print(f"FIGURE fork: {procs} processes recorded of 65, {kids} children of the app, "
      f"{clean} exited 0, dropped_records={dropped}")
check(procs == 65 and kids == 64, f"all 64 children recorded with their parent ({procs}, {kids})")
check(clean == 65, f"every process has its exit status ({clean})")
check(dropped == 0, f"nothing dropped ({dropped})")
