"""500 short-lived threads; 4 threads x 1M lock/unlock of one mutex: no
deadlock, no crash, no lost record."""
import os
import shutil

from corelib import SMALL_LOGS, dropped, helper, open_db
from lptest import check, q1, record, tmpdir

d = tmpdir()
out = os.path.join(d, "threads.db")
p = record(out, helper(), "threads", "500")
c = open_db(out)
n = q1(c, "SELECT count(*) FROM threads")
check(n == 501, f"500 short-lived threads + main recorded (got {n})")
n = q1(c, "SELECT count(*) FROM threads WHERE end_ns IS NOT NULL AND tid != "
          "(SELECT pid FROM processes LIMIT 1)")
check(n == 500, f"every short-lived thread has its end recorded (got {n})")
check(dropped(c) == 0, f"no record dropped ({dropped(c)})")

out = os.path.join(d, "stress.db")
p = record(out, helper(), "stress", "1000000", env=SMALL_LOGS)
app = dict(t.split("=") for t in p.stdout.split())
c = open_db(out)
n = q1(c, "SELECT count(*) FROM lock_waits")
print(f"info: app counted {app['contended']} failed trylocks; db has {n} lock waits")
check(int(app["counter"]) == 4000000, "4M increments under the lock (no lost wakeup)")
check(n <= int(app["contended"]) and (n > 0 or int(app["contended"]) == 0),
      f"lock waits recorded and bounded by the app's failed trylocks ({n} <= {app['contended']})")
check(dropped(c) == 0, f"no record dropped ({dropped(c)})")
m = q1(c, "SELECT sum(dropped_records + dropped_chunks) FROM processes")
check(m == 0, f"no record or chunk dropped in any process ({m})")
shutil.rmtree(d, ignore_errors=True)  # kept on failure: fail() exits first
