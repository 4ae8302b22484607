"""Python threads contending on a threading.Lock (a semaphore): the waits
are recorded as kind 'sem' and their total matches the program's own
measurement within 10%."""
import os
import re
import sys
import shutil

from corelib import dropped, open_db, read_kv
from lptest import SRC, check, record, tmpdir

d = tmpdir()
stats = os.path.join(d, "py.txt")
out = os.path.join(d, "py.db")
p = record(out, sys.executable, os.path.join(SRC, "samples", "py_lock.py"), "--threads", "4",
           "--iters", "40", "--hold-ms", "2", "--stats", stats)
app = read_kv(stats)
c = open_db(out)
check(app["contended"] > 0, f"the program saw contention ({app['contended']} contended)")
# The busiest semaphore is model_lock; others are thread start/join events.
top = c.execute("SELECT l.id, l.kind, count(w.id) n, sum(w.dur_ns) total FROM locks l "
                "JOIN lock_waits w ON w.lock_id = l.id WHERE l.kind = 'sem' "
                "GROUP BY l.id ORDER BY n DESC LIMIT 1").fetchone()
check(top is not None, "semaphore waits recorded")
total, mine = top["total"], app["wait_ns"]
print(f"info: recorded {top['n']} waits, {total / 1e6:.3f} ms; program measured "
      f"{app['contended']} contended, {mine / 1e6:.3f} ms")
check(abs(total - mine) <= 0.10 * mine,
      f"recorded sem wait {total / 1e6:.3f} ms within 10% of the program's {mine / 1e6:.3f} ms")
check(top["n"] <= app["contended"],
      f"no more waits ({top['n']}) than contended acquisitions ({app['contended']})")
check(top["n"] >= 0.9 * app["contended"],
      f"at least 90% of contended acquisitions recorded ({top['n']} of {app['contended']})")
check(dropped(c) == 0, "no record dropped")
# The run's summary counts the waits by class (the threads' joins are waits,
# not contention): the same counts as the database's.
classes = {r[0]: r[1] for r in c.execute(
    "SELECT c.name, count(*) FROM lock_waits w JOIN wait_classes c ON c.id = w.class "
    "GROUP BY w.class")}
m = re.search(r"lock waits by class: ([^(]*) \(", p.stderr)
said = {k: int(n) for n, k in re.findall(r"(\d+) (\w+)", m.group(1))} if m else {}
check(classes.get("join", 0) > 0 and said == classes,
      f"the summary line gives the waits by class as recorded ({said} vs {classes})")
shutil.rmtree(d, ignore_errors=True)  # kept on failure: fail() exits first
