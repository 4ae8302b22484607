"""Per-thread semaphores fold into one --locks row per call site:
a database with the real schema where two processes' backends each sleep
on their own semaphore (one waiter each, as PostgreSQL's PGSemaphore)
under PGSemaphoreLock <- LWLockAcquire, called from ProcSleep and from
heap_update, beside a mutex two threads share and a third per-thread
semaphore at a site of its own. --locks must show the two sites as two
folded rows with the waits' own counts and sums, keep the mutex and the
lone semaphore as rows of their own, and lose no wait."""
import csv
import io
import json
import os
import sqlite3

from lptest import check, latprof, tmpdir
from locklib import check_schema
from synth import make_db

MS = 1_000_000
path = os.path.join(tmpdir(), "fold.db")
make_db(path, [], with_ranges=False)
c = sqlite3.connect(path)
c.executescript("""
UPDATE processes SET end_ns = 1000000000, exe = 'app' WHERE id = 1;
INSERT INTO processes (id, pid, ppid, start_ns, end_ns, exe) VALUES
  (2, 200, 100, 0, 1000000000, 'backend'), (3, 300, 100, 0, 1000000000, 'backend');
INSERT INTO threads (id, process_id, tid, start_ns) VALUES (2, 2, 200, 0), (3, 3, 300, 0), (4, 1, 101, 0);
INSERT INTO frames (id, module, offset, function) VALUES (1, 'backend', 16, 'PGSemaphoreLock'),
  (2, 'backend', 32, 'LWLockAcquire'), (3, 'backend', 48, 'ProcSleep'), (4, 'backend', 64, 'heap_update'),
  (5, 'backend', 80, 'main'), (6, 'app', 16, 'worker'), (7, 'app', 32, 'own_fn');
INSERT INTO stacks (id, depth, top_frame) VALUES (1, 4, 1), (2, 4, 1), (3, 2, 6), (4, 2, 7);
INSERT INTO stack_frames (stack_id, depth, frame_id) VALUES (1, 0, 1), (1, 1, 2), (1, 2, 3), (1, 3, 5),
  (2, 0, 1), (2, 1, 2), (2, 2, 4), (2, 3, 5), (3, 0, 6), (3, 1, 5), (4, 0, 7), (4, 1, 5);
INSERT INTO locks (id, process_id, address, kind, name) VALUES (1, 2, 4096, 'sem', NULL),
  (2, 3, 4096, 'sem', NULL), (3, 1, 8192, 'mutex', 'big_lock'), (4, 1, 12288, 'sem', NULL);
""")
waits = ([(1, 2, 1 * MS, 1)] * 3 + [(1, 2, 2 * MS, 2)] * 2 + [(2, 3, 1.5 * MS, 1)] * 4 +
         [(2, 3, 3 * MS, 2)] + [(3, 1, 10 * MS, 3), (3, 4, 10 * MS, 3)] + [(4, 4, MS // 2, 4)] * 2)
c.executemany("INSERT INTO lock_waits (id, lock_id, thread_id, start_ns, dur_ns, stack_id) VALUES "
              "(?, ?, ?, 1000, ?, ?)",
              [(i + 1, lk, th, int(d), st) for i, (lk, th, d, st) in enumerate(waits)])
c.commit()
c.close()

rep = json.loads(latprof("report", path, "--locks", "--format", "json", check=0).stdout)
check_schema(rep, "--locks JSON")
rows = [(l["name"], l["count"], l["total_ns"], l.get("folded"), l.get("processes"), l["pid"])
        for l in rep["locks"]]
want = [("big_lock", 2, 20 * MS, None, None, 100),
        ("2 per-thread semaphores at ProcSleep (backend+0x30)", 7, 9 * MS, 2, 2, 0),
        ("2 per-thread semaphores at heap_update (backend+0x40)", 3, 7 * MS, 2, 2, 0),
        ("0x3000 (heap) at own_fn (app+0x20)", 2, 1 * MS, None, None, 100)]
check(rows == want, f"rows {rows}")
ps = rep["locks"][1]
check([(w["tid"], w["count"]) for w in ps["waiters"]] == [(300, 4), (200, 3)] and
      ps["sites"][0]["chain"] == "LWLockAcquire <- ProcSleep <- main",
      f"ProcSleep's row: waiters {ps['waiters']}, chain {ps['sites'][0]['chain']}")
check(rep["totals"]["contended_locks"] == 4, "contended_locks counts the 4 locks, not rows")
check(sum(l["count"] for l in rep["locks"]) == len(waits), "no wait lost or counted twice")
text = latprof("report", path, "--locks", check=0).stdout
check("(2 per-thread semaphores, each waited on by one thread; 2 processes of backend)" in text
      and "2 procs" in text, "the text view says what the row is")
# CSV: the same rows, with the fold's counts in its last two columns
rows = list(csv.DictReader(io.StringIO(
    latprof("report", path, "--locks", "--format", "csv", check=0).stdout)))
got = [(r["name"], int(r["count"]), r["folded"], r["processes"], r["pid"]) for r in rows]
check(got == [(n, k, str(f or ""), str(p or ""), str(pid)) for n, k, _, f, p, pid in want],
      f"--locks CSV: folded and processes per row ({got})")
