"""Lock waits reach the database in batches (import/lp_import_batch.c: an
INSERT ... SELECT from a virtual table over the batch array, 1,024 rows a
statement). 5,000 waits written through the recording core by
bench_gen_log (4 threads x 1,250, so the last batch is partial) import as
5,000 rows whose ids follow each thread's log order and whose values are
the ones written: thread-relative wait k starts 2,000 ns after wait k-1 and
lasts 500 + 10 * (k % 97) ns; its lock repeats every 16 waits and its
stack every 64; no owner was written (NULL), every stack was (but for counted drops)."""
import os
import subprocess

from lptest import BUILD, check, db, latprof, tmpdir

N, THREADS = 5000, 4
T = tmpdir()
logs = os.path.join(T, "logs")
os.mkdir(logs)
gen = subprocess.run([os.path.join(BUILD, "tests", "bench", "bench_gen_log"), logs, str(N)],
                     capture_output=True, text=True)
check(gen.returncode == 0 and f"lock_waits={N}" in gen.stdout,
      f"bench_gen_log wrote {N} lock waits ({gen.stdout.strip()} {gen.stderr.strip()})")
out = os.path.join(T, "batch.db")
latprof("import", logs, "-o", out, check=0)
c = db(out)
rows = c.execute("SELECT id, thread_id, lock_id, owner_tid, start_ns, dur_ns, mode, stack_id, "
                 "flags FROM lock_waits ORDER BY id").fetchall()
check(len(rows) == N, f"{len(rows)} lock waits imported of {N} written")
check([r["id"] for r in rows] == list(range(1, N + 1)), "ids 1..N, no gap")
# The importer numbers the rows as they go in, in start order (one drain).
in_start_order = [r[0] for r in c.execute("SELECT id FROM lock_waits ORDER BY start_ns, id")]
check(in_start_order == list(range(1, N + 1)), "ids follow start order")
by_thread = {}
for r in rows:
    by_thread.setdefault(r["thread_id"], []).append(r)
check(len(by_thread) == THREADS and all(len(v) == N // THREADS for v in by_thread.values()),
      f"{THREADS} threads of {N // THREADS} waits ({ {k: len(v) for k, v in by_thread.items()} })")
bad_start = bad_dur = bad_lock = bad_stack = 0
for waits in by_thread.values():
    for k, r in enumerate(waits):
        bad_start += r["start_ns"] != waits[0]["start_ns"] + 2000 * k
        bad_dur += r["dur_ns"] != 500 + 10 * (k % 97)
        bad_lock += k >= 16 and r["lock_id"] != waits[k - 16]["lock_id"]
        bad_stack += k >= 64 and r["stack_id"] != waits[k - 64]["stack_id"]
check(bad_start == 0, f"each thread's waits in log order, 2,000 ns apart ({bad_start} out of order)")
check(bad_dur == 0, f"durations as written ({bad_dur} differ)")
check(bad_lock == 0 and bad_stack == 0,
      f"locks repeat every 16 waits, stacks every 64 ({bad_lock}, {bad_stack} differ)")
check(all(r["owner_tid"] is None for r in rows), "owner never written: NULL in every row")
# A stack interned by two threads at once: the loser waits a bounded spin
# for the winner's id, then drops it, counted (lp_core.c lp_intern_find);
# on a loaded machine that happens. Each such drop loses one of a thread's
# 64 stacks, nothing else.
lost = {(r["thread_id"], k % 64) for v in by_thread.values() for k, r in enumerate(v)
        if r["stack_id"] is None}
dropped = c.execute("SELECT sum(dropped_strings) FROM processes").fetchone()[0]
check(len(lost) <= dropped,
      f"stack written in every row but those of a counted dropped intern ({len(lost)} stacks "
      f"missing, {dropped} drops counted)")
check(all(r["mode"] == 0 and r["flags"] == 0 for r in rows), "mode and flags 0 as written")
locks = {r["lock_id"] for r in rows}
check(len(locks) == 16, f"16 distinct locks ({len(locks)})")
