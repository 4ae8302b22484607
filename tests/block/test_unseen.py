"""Blocking latprof does not record is not waiting for a CPU.
tests/block/lp_unseenprog: 2000 nanosleeps of 200 us (timer slack 1 ns)
and after every 50 one of 3 ms, recorded with a block threshold of 1 ms:
the short sleeps leave the CPU unrecorded, about half a second off the
CPU that no recorded wait covers and that the kernel did not spend on a
run queue. The thread's preempted must be its own schedstat run_delay
within 15%; the short sleeps' time goes to other_block (blocking the
interposer did not record), the long ones' to sleep. Before the thread's
run_delay was recorded, the breakdown took all of the time outside
recorded waits that task-clock did not cover for run-queue time: 271 ms
preempted against the kernel's 0.3 ms on a quiet machine."""
import os

from bdlib import breakdown
from lptest import BUILD, check, db, q1, record, sanitizer, skip, tmpdir, within

PROG = os.path.join(BUILD, "tests", "bin", "lp_unseenprog")
N, EVERY, SHORT_US = 2000, 50, 200
if sanitizer():
    skip(f"{sanitizer()} build: instrumented code changes the CPU figures")
d = tmpdir()
run, own = f"{d}/unseen.db", f"{d}/own.txt"
record(run, PROG, N, EVERY, SHORT_US, own, env={"LATPROF_BLOCK_THRESHOLD_NS": "1000000"})
with open(own) as f:
    o = {k: int(v) for k, v in (x.split("=") for x in f.read().split())}
t = next((t for t in breakdown(run)["threads"] if t["tid"] == o["tid"]), None)
check(t is not None, f"tid {o['tid']} has a breakdown row")
if t["cpu_ns"] is None:
    skip("no task-clock total for the thread (counters off): the rest stays unsplit")
c = t["categories"]
conn = db(run)
check(q1(conn, "SELECT run_delay_ns FROM threads WHERE tid = ?", o["tid"]) is not None,
      "the thread's run_delay is recorded (threads.run_delay_ns)")
recorded = q1(conn, "SELECT count(*) FROM blocking_calls WHERE call = 'nanosleep'")
shorts = recorded - N // EVERY
check(0 <= shorts < N // 10,
      f"{recorded} sleeps recorded: the {N // EVERY} of 3 ms and {shorts} of the {N} short ones "
      f"(those that a busy machine stretched past 1 ms)")
check(o["short_ns"] >= N * SHORT_US * 1000,
      f"the program's own time in its short sleeps: {o['short_ns'] / 1e6:.1f} ms")
slack = 0.01 * o["wall_ns"] + 2e6
check(within(c["preempted"], o["run_delay_ns"], rel=0.15, abs_=slack),
      f"preempted {c['preempted'] / 1e6:.1f} ms, schedstat run_delay "
      f"{o['run_delay_ns'] / 1e6:.1f} ms (of {t['time_ns'] / 1e6:.0f} ms)")
# its own time in its sleeps less the run-queue time and the CPU time in
# them (at most all of run_delay and of its CPU time) is blocked time:
# sleep and other_block, together
blocked = o["short_ns"] + o["long_ns"]
got = c["sleep"] + c["other_block"]
check(blocked - o["run_delay_ns"] - o["cpu_ns"] - slack <= got <= blocked + slack,
      f"sleep {c['sleep'] / 1e6:.1f} ms + other_block {c['other_block'] / 1e6:.1f} ms: the "
      f"program's own {blocked / 1e6:.1f} ms in nanosleep less up to its run_delay "
      f"{o['run_delay_ns'] / 1e6:.1f} ms and CPU time {o['cpu_ns'] / 1e6:.1f} ms")
# each unrecorded sleep was blocked SHORT_US at least; a recorded sleep's
# run-queue part that its gap's short sleeps hid from it (lp_runq.c gives
# a wait what the gap's time off the CPU cannot hold) stays in sleep and is
# taken from there: at most all of run_delay
least = (N - shorts) * SHORT_US * 1000
check(c["other_block"] >= least - o["run_delay_ns"] - slack,
      f"other_block {c['other_block'] / 1e6:.1f} ms holds the {N - shorts} unrecorded short "
      f"sleeps: {least / 1e6:.1f} ms blocked at least, less up to the run_delay")
check(sum(c.values()) == t["time_ns"], "the categories add up to the thread's time")
