"""A process-shared mutex is one lock: tests/locks/lp_pshared forks 3
children that share a PTHREAD_PROCESS_SHARED mutex in inherited
MAP_SHARED | MAP_ANONYMOUS memory (offset 0x40 of the mapping). Their
waits all land on one locks row, named after the mapping and the offset,
waited on from more than one process; no other row holds the same
mutex."""
import os

from lptest import BUILD, check, db, record, tmpdir

path = os.path.join(tmpdir(), "pshared.db")
record(path, os.path.join(BUILD, "tests", "locks", "lp_pshared"), "3", "20")
c = db(path)
rows = c.execute(
    "SELECT l.id, l.kind, l.name, l.module, count(*) AS n, count(DISTINCT t.process_id) AS procs "
    "FROM lock_waits w JOIN locks l ON l.id = w.lock_id JOIN threads t ON t.id = w.thread_id "
    "GROUP BY l.id").fetchall()
print([dict(r) for r in rows])
check(len(rows) == 1, f"one lock row for the shared mutex ({len(rows)})")
r = rows[0]
check(r["kind"] == "mutex" and r["name"] == "shared anonymous memory+0x40" and
      r["module"] == "/dev/zero" and r["procs"] >= 2,
      f"a mutex named 'shared anonymous memory+0x40', waited on from {r['procs']} processes "
      f"({r['n']} waits)")
