"""pthread_spin_lock and prctl(PR_SET_NAME) under `latprof run`.

contend: 4 threads take the global `queue_spin`, holding it ~200 us each time;
the recorded spin waits add up to the program's own measurement within 10%,
show in `report --locks` as kind 'spin', and the thread that renamed itself
with prctl is recorded as 'spin-worker'.
single: thousands of uncontended spin_lock calls and failed spin_trylock calls
record nothing; the one wait the program arranges is recorded, and a prctl
name longer than the kernel keeps is recorded as the kernel keeps it.
Both: errno comes back as it was from the hooks (the program counts misses)."""
import json
import os

from locklib import SMALL_LOGS, check_schema
from lptest import BUILD, check, db, fail, latprof, q1, record, tmpdir


def spinprog():
    return os.path.join(BUILD, "tests", "locks", "lp_spinprog")


def app_stats(p):
    """The program's key=value line (its stdout comes through latprof run)."""
    for line in p.stdout.splitlines():
        if line.startswith("wait_ns="):
            return {k: int(v) for k, _, v in (t.partition("=") for t in line.split())}
    fail(f"no stats line from lp_spinprog\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")


def dropped(conn):
    return q1(conn, "SELECT value FROM meta WHERE key = 'dropped_records'")


d = tmpdir()

# ---- contend: four threads on one spinlock ---------------------------------
path = os.path.join(d, "spin.db")
app = app_stats(record(path, spinprog(), "contend", "300", env=SMALL_LOGS))
conn = db(path)
check(app["errno_bad"] == 0, "errno unchanged across every pthread_spin_lock (program's count)")
check(app["prctl_bad"] == 0,
      "prctl: errno kept on success, PR_GET_NAME reads the name back, EINVAL passed through")
check(dropped(conn) == 0, "no record dropped")

locks = conn.execute("SELECT id, kind, name FROM locks").fetchall()
check(len(locks) == 1 and locks[0]["kind"] == "spin" and locks[0]["name"] == "queue_spin",
      f"one contended lock, the spinlock queue_spin of kind 'spin' ({[tuple(l) for l in locks]})")
lid = locks[0]["id"]
n, total = conn.execute("SELECT count(*), sum(dur_ns) FROM lock_waits WHERE lock_id = ?",
                        (lid,)).fetchone()
mine = app["wait_ns"]
print(f"info: recorded {n} waits, {total / 1e6:.3f} ms; program measured "
      f"{app['acquisitions']} acquisitions, {mine / 1e6:.3f} ms in pthread_spin_lock")
# How many acquisitions find the lock taken depends on scheduling (an unlocker
# may take it again before a preempted spinner runs): only bound it.
check(0 < n <= app["acquisitions"], f"{n} waits: at most one per acquisition ({app['acquisitions']})")
check(abs(total - mine) <= 0.10 * mine,
      f"recorded spin wait {total / 1e6:.3f} ms within 10% of the program's {mine / 1e6:.3f} ms")
check(q1(conn, "SELECT count(*) FROM lock_waits WHERE lock_id = ? AND (owner_tid IS NOT NULL "
         "OR mode != 0 OR flags != 0)", lid) == 0,
      "spin waits: owner unknown, exclusive, no failure flags")

names = conn.execute("SELECT tid FROM threads WHERE name = 'spin-worker'").fetchall()
check([r[0] for r in names] == [app["worker_tid"]],
      f"prctl(PR_SET_NAME) recorded: thread {app['worker_tid']} is 'spin-worker' "
      f"(named: {[r[0] for r in names]})")

p = latprof("report", path, "--locks", "--format", "json", check=0)
rep = json.loads(p.stdout)
check_schema(rep, "--locks JSON of a spinlock run")
rl = [l for l in rep["locks"] if l["symbol"] == "queue_spin"]
if len(rl) != 1:
    fail(f"queue_spin not in the lock report: {[l['name'] for l in rep['locks']]}")
rl = rl[0]
check(rl["kind"] == "spin" and rl["count"] == n and rl["total_ns"] == total,
      f"report: queue_spin, kind {rl['kind']}, {rl['count']} waits, {rl['total_ns']} ns as in the db")
check(rl["owner_unknown"] == n and not rl["owners"], "report: owner unknown for every spin wait")
site = rl["sites"][0] if rl["sites"] else {}
check(site.get("function") == "lp_timed_lock" and rl["sites_total"] == 1,
      f"report: the wait's call site is the program's lp_timed_lock ({site.get('where')})")
dbw = {r[0]: (r[1], r[2]) for r in conn.execute(
    "SELECT t.tid, t.name, count(*) FROM lock_waits w JOIN threads t ON t.id = w.thread_id "
    "WHERE w.lock_id = ? GROUP BY t.id", (lid,))}
repw = {w["tid"]: (w["name"], w["count"]) for w in rl["waiters"]}
check(all(dbw.get(t) == v for t, v in repw.items()) and
      sum(c for _, c in repw.values()) == n,
      f"report: waiters by tid and name as in the db ({sorted(set(v[0] for v in repw.values()))})")
text = latprof("report", path, "--locks", check=0).stdout
check(any("queue_spin" in ln and " spin " in ln for ln in text.splitlines()),
      "text report lists queue_spin with kind spin")

# ---- single: uncontended calls and failed trylocks are not waits ------------
iters = 20000
path = os.path.join(d, "single.db")
app = app_stats(record(path, spinprog(), "single", iters, env=SMALL_LOGS))
conn = db(path)
check(app["errno_bad"] == 0 and app["prctl_bad"] == 0, "single: errno and prctl results intact")
check(app["trylock_busy"] == iters, f"single: {iters} pthread_spin_trylock calls failed (EBUSY)")
rows = conn.execute("SELECT l.kind, l.name, w.dur_ns FROM lock_waits w "
                    "JOIN locks l ON l.id = w.lock_id").fetchall()
check(len(rows) == 1 and rows[0]["kind"] == "spin" and rows[0]["name"] == "solo_spin",
      f"{iters} uncontended pthread_spin_lock and {iters} failed trylocks recorded no wait; "
      f"the one arranged wait is ({[tuple(r) for r in rows]})")
got, mine = rows[0]["dur_ns"], app["wait_ns"]
check(abs(got - mine) <= 0.10 * mine,
      f"single: the wait {got / 1e6:.3f} ms within 10% of the program's {mine / 1e6:.3f} ms")
main = q1(conn, "SELECT t.name FROM threads t JOIN processes p ON p.id = t.process_id "
          "WHERE t.tid = p.pid")
check(main == "spin-main-long-",
      f"a 19-byte prctl name is recorded as the kernel keeps it, 15 bytes ('{main}')")
check(dropped(conn) == 0, "single: no record dropped")
