"""A global mutex contended by lock_server's workers is found, named
`model_lock`, and its recorded total wait matches the app's own
measurement within 10%. The --per-thread variant records no lock wait."""
import os
import shutil

from corelib import dropped, lock_server, open_db, read_kv
from lptest import check, q1, record, tmpdir

d = tmpdir()
stats = os.path.join(d, "contended.txt")
out = os.path.join(d, "contended.db")
record(out, lock_server(), "--threads", "4", "--requests", "600", "--work-us", "50",
       "--locked-us", "200", "--stats", stats)
app = read_kv(stats)
c = open_db(out)
check(app["contended"] > 0, f"the app saw contention ({app['contended']} contended acquisitions)")
rows = c.execute("SELECT l.id, l.name, l.kind, count(w.id) n, sum(w.dur_ns) total "
                 "FROM locks l JOIN lock_waits w ON w.lock_id = l.id "
                 "GROUP BY l.id ORDER BY total DESC").fetchall()
check(len(rows) >= 1, f"lock waits recorded ({len(rows)} contended locks)")
top = rows[0]
check(top["name"] == "model_lock", f"the most contended lock is named model_lock (got {top['name']!r})")
check(top["kind"] == "mutex", f"model_lock is a mutex (got {top['kind']!r})")
total, mine = top["total"], app["wait_ns"]
print(f"info: recorded {top['n']} waits, {total / 1e6:.3f} ms; app measured "
      f"{app['contended']} contended ({app['long_waits']} long), {mine / 1e6:.3f} ms")
check(abs(total - mine) <= 0.10 * mine,
      f"recorded total wait {total / 1e6:.3f} ms within 10% of the app's {mine / 1e6:.3f} ms")
check(top["n"] <= app["contended"],
      f"no more waits recorded ({top['n']}) than the app's failed trylocks ({app['contended']})")
check(top["n"] >= app["long_waits"] - 4,
      f"every long wait the app saw is recorded ({top['n']} >= {app['long_waits']} - 4)")
workers = q1(c, "SELECT count(*) FROM threads WHERE name LIKE 'worker-%'")
check(workers == 4, f"4 named worker threads (got {workers})")
waiters = q1(c, "SELECT count(DISTINCT t.name) FROM lock_waits w JOIN threads t "
                "ON t.id = w.thread_id WHERE w.lock_id = ?", top["id"])
check(waiters >= 2, f"waits come from several workers ({waiters})")
# The interposer takes a free mutex itself (lp_mutex_fast) and writes the
# owner glibc would: the holder a wait saw is another thread of the process.
owned = q1(c, "SELECT count(*) FROM lock_waits w JOIN threads o ON o.tid = w.owner_tid "
              "JOIN threads t ON t.id = w.thread_id AND t.process_id = o.process_id "
              "WHERE w.lock_id = ? AND o.id != t.id", top["id"])
check(owned >= top["n"] * 0.9,
      f"waits name another thread of the process as holder ({owned} of {top['n']})")
bad = q1(c, "SELECT count(*) FROM lock_waits WHERE dur_ns < 0 OR stack_id IS NULL")
check(bad == 0, f"every wait has a duration >= 0 and a stack ({bad} without)")
check(dropped(c) == 0, "no record dropped")
# Call sites are symbolized: lock_server is built with -g.
fns = {r[0] for r in c.execute(
    "SELECT DISTINCT f.function FROM lock_waits w JOIN stack_frames sf ON sf.stack_id = w.stack_id "
    "JOIN frames f ON f.id = sf.frame_id WHERE w.lock_id = ?", (top["id"],))}
check(fns & {"serve", "lock_timed", "worker_main"},
      f"wait stacks name lock_server's functions (got {sorted(f for f in fns if f)[:8]})")
line = q1(c, "SELECT count(*) FROM lock_waits w JOIN stack_frames sf ON sf.stack_id = w.stack_id "
             "JOIN frames f ON f.id = sf.frame_id WHERE w.lock_id = ? AND f.file LIKE "
             "'%lock_server.c' AND f.line > 0", top["id"])
check(line > 0, f"wait stacks carry lock_server.c:line ({line} frames)")

# Same work, per-thread state: nothing to wait for.
stats = os.path.join(d, "per_thread.txt")
out = os.path.join(d, "per_thread.db")
record(out, lock_server(), "--threads", "4", "--requests", "600", "--work-us", "50",
       "--locked-us", "200", "--per-thread", "--stats", stats)
app = read_kv(stats)
c = open_db(out)
check(app["acquisitions"] == 600 and app["contended"] == 0,
      f"per-thread run: 600 uncontended acquisitions (app: {app['contended']} contended)")
n = q1(c, "SELECT count(*) FROM lock_waits")
check(n == 0, f"uncontended program records zero lock waits (got {n})")
n = q1(c, "SELECT count(*) FROM threads WHERE name LIKE 'worker-%'")
check(n == 4, f"the per-thread run was recorded (4 workers, got {n})")
shutil.rmtree(d, ignore_errors=True)  # kept on failure: fail() exits first
