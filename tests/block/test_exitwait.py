"""Waits still in progress when the process exits (preload/lp_inflight.c):
tests/block/lp_blockprog exitwait leaves four threads blocked (a condition
wait, a read() on a pipe, a mutex main holds, a waitpid() on a child) and
exits; each wait must be in the database once, flagged unfinished (4),
from the time the thread itself read just before blocking to the exit
main read, within 10% of that span; the breakdown must give those threads
to their wait's category, not to on-CPU or preempted. A condition wait that
returned before the exit is written once, unflagged. A shell waiting for
its command shows the wait as a blocking call of that length."""
import os
import time

from lptest import BUILD, check, db, latprof, record, tmpdir

# Blocking calls are timed in TSC ticks and converted to CLOCK_MONOTONIC
# (preload/lp_blk_clock.h), the program's clock: the converted start of a
# call may read a little before a clock read made just ahead of it (CI54's
# ASan tier: 637 ns). Lock and condition waits read CLOCK_MONOTONIC itself.
TSC_SKEW_NS = 5000

PROG = os.path.join(BUILD, "tests", "bin", "lp_blockprog")
d = tmpdir()
run, times = f"{d}/exitwait.db", f"{d}/times.txt"
record(run, PROG, "exitwait", times)
with open(times) as f:
    own = {k: int(v) for k, v in (ln.split() for ln in f)}
c = db(run)
ROWS = {
    "condidle": ("cond_waits", "1"),
    "pipeidle": ("blocking_calls", "call = 'read' AND fd_kind = 'pipe'"),
    "lockidle": ("lock_waits", "1"),
    "waitidle": ("blocking_calls", "call = 'waitpid' AND category = 'other_block'"),
}
for name, (table, cond) in ROWS.items():
    got = c.execute(f"SELECT w.start_ns, w.dur_ns, w.flags FROM {table} w JOIN threads t "
                    f"ON t.id = w.thread_id WHERE t.name = ? AND {cond}", (name,)).fetchall()
    check(len(got) == 1 and got[0]["flags"] & 4,
          f"{name}: one unfinished row in {table} ({[dict(r) for r in got]})")
    span = own["exit"] - own[name]
    start, dur = got[0]["start_ns"], got[0]["dur_ns"]
    check(own[name] - TSC_SKEW_NS <= start <= own[name] + 0.05 * span,
          f"{name}: starts just after the thread's own clock read ({start - own[name]} ns)")
    check(0.9 * span <= dur <= 1.1 * span,
          f"{name}: lasted {dur / 1e6:.1f} ms, the program's own clocks say {span / 1e6:.1f} ms")

returned = c.execute("SELECT w.flags FROM cond_waits w JOIN threads t ON t.id = w.thread_id "
                     "WHERE t.name = 'condreturns'").fetchall()
check([r["flags"] for r in returned] == [0],
      f"a wait that returned is written once, not unfinished ({[dict(r) for r in returned]})")

import json  # noqa: E402
doc = json.loads(latprof("report", run, "--breakdown", "--format", "json", check=0).stdout)
want = {"condidle": "cond_wait", "pipeidle": "other_block", "lockidle": "lock_wait",
        "waitidle": "other_block"}
for t in doc["threads"]:
    if t["name"] in want:
        cats = t["categories"]
        top = max(cats, key=cats.get)
        check(top == want[t["name"]] and cats[top] >= 0.9 * t["time_ns"],
              f"{t['name']}: {want[t['name']]} is >= 90% of its time ({cats})")

# a shell waiting for its command
sh = f"{d}/sh.db"
t0 = time.monotonic()
record(sh, "sh", "-c", "sleep 0.3; true")
waits = db(sh).execute("SELECT b.dur_ns FROM blocking_calls b JOIN threads t ON t.id = "
                       "b.thread_id WHERE t.name = 'sh' AND b.call LIKE 'wait%'").fetchall()
check(len(waits) == 1 and 0.29e9 <= waits[0]["dur_ns"] <= (time.monotonic() - t0) * 1e9,
      f"sh's wait for sleep 0.3 is one wait of 0.3 s ({[dict(r) for r in waits]})")
