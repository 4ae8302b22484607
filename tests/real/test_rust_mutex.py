"""A Rust program (std only, tests/real/rust_mutex.rs, built here with
rustc) whose 8 threads each take one `static SESSIONS: Mutex` 30 times and
hold it 500 us; the threads first wait on a std Condvar for a start signal.
Rust's std locks wait on the futex word directly (syscall(SYS_futex)), not
through pthread: each such wait is a lock wait of kind futex on the word's
address. Checked against the program's own timing of its lock() calls:
latprof's contention wait on SESSIONS within 10% of it; the lock is named
by its symbol; its call site is the app's function, not std's
lock_contended; the owners are the threads that woke the waiters; the
Condvar waits are class signal, not contention; the first finding names
SESSIONS."""
import os
import subprocess

from lptest import check, db, record, tmpdir, within
from reallib import findings, first_app_finding, locks, need_cmd

from lptest import check_schema  # noqa: E402

need_cmd("rustc")
d = tmpdir()
exe, out, run = f"{d}/rust_mutex", f"{d}/out.txt", f"{d}/rust.db"
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rust_mutex.rs")
subprocess.run(["rustc", "-O", "-g", src, "-o", exe], check=True)
THREADS, ITERS = 8, 30
record(run, exe, out, str(THREADS), str(ITERS))
with open(out) as f:
    own_ns, n = (int(x) for x in f.read().split())
check(n == THREADS * ITERS, f"the program counted {n} acquisitions")

c = db(run)
rows = c.execute(
    "SELECT l.name, l.kind, w.class, count(*) AS n, sum(w.dur_ns) AS ns, "
    "count(w.owner_tid) AS owned, sum(w.owner_tid = t.tid) AS self FROM lock_waits w "
    "JOIN locks l ON l.id = w.lock_id JOIN threads t ON t.id = w.thread_id "
    "GROUP BY l.id, w.class ORDER BY ns DESC").fetchall()
print([dict(r) for r in rows])
top = rows[0]
check(top["name"] == "rust_mutex::SESSIONS" and top["kind"] == "futex" and top["class"] == 0,
      f"the most waited-on lock is the futex SESSIONS, class contention ({dict(top)})")
check(within(top["ns"], own_ns, rel=0.10),
      f"its waits, {top['ns'] / 1e9:.3f} s, within 10% of the program's own "
      f"{own_ns / 1e9:.3f} s")
check(top["owned"] == top["n"] and top["self"] == 0,
      f"every wait has an owner (the thread that woke it), never the waiter itself "
      f"({top['owned']} of {top['n']})")
start = [r for r in rows if r["name"] == "rust_mutex::START+0x8"]
check(start and all(r["class"] == 4 for r in start) and sum(r["n"] for r in start) <= THREADS,
      f"the start Condvar's waits (at most one per thread) are class signal "
      f"({[dict(r) for r in start]})")
blk = c.execute("SELECT count(*) FROM blocking_calls WHERE call = 'futex'").fetchone()[0]
check(blk == 0, f"no futex wait left as a blocking call ({blk})")

doc = findings(run)
first = first_app_finding(doc) or {}
check(first.get("id") == "lock-contention" and first.get("subject") == "rust_mutex::SESSIONS",
      f"first finding (past the machine's CPU load): lock-contention on rust_mutex::SESSIONS "
      f"({[(f['id'], f['subject']) for f in doc['findings']]})")
site = first["sites"]["items"][0]["what"]
check(site.startswith("rust_mutex::serve_request"),
      f"its call site is the app's serve_request, not std's lock code ({site})")

check_schema(locks(run), "--locks --format json")
