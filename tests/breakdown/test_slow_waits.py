"""Each slowest request's largest wait (report --breakdown: slowest[].largest_wait)
on bd_slowwait, which times its own waits: one request waits on slow_lock,
held for HOLD ms from the moment the program sleeps on it; another sleeps
SLEEP ms in nap(). Their largest waits are that lock wait (named by the
lock's symbol) and that sleep (named by the call and nap), each at least its
programmed time (the part in the run queue left out) and inside the
program's own clock reads around the call; the other requests have no
wait."""
import os

from bdlib import BUILD, breakdown, need, need_nvtx
from lptest import check, latprof, record, tmpdir

need_nvtx()
prog = os.path.join(BUILD, "tests", "bin", "bd_slowwait")
need(prog, "tests/breakdown/bd_slowwait")
N, W_US, LOCK_AT, HOLD_MS, SLEEP_AT, SLEEP_MS = 30, 500, 10, 60, 20, 30
d = tmpdir()
run, side = f"{d}/run.db", f"{d}/waits.txt"
record(run, prog, side, N, W_US, LOCK_AT, HOLD_MS, SLEEP_AT, SLEEP_MS)
me = {}
with open(side) as f:
    for ln in f:
        kind, *v = ln.split()
        me[kind] = [int(x) for x in v]
line, lock_t0, lock_t1 = me["lock"]
sleep_t0, sleep_t1 = me["sleep"]
doc = breakdown(run)
slow = doc["slowest"]
check(len(slow) == 10, f"10 slowest requests listed ({len(slow)})")


def holding(t0, t1):
    """The listed request whose span holds [t0, t1]."""
    return next((s for s in slow if s["start_ns"] <= t0 and
                 t1 <= s["start_ns"] + s["latency_ns"]), None)


lk, sl = holding(lock_t0, lock_t1), holding(sleep_t0, sleep_t1)
check(lk is not None and sl is not None, "the lock's and the sleep's requests are listed")
w = lk["largest_wait"]
check(w is not None and w["category"] == "lock_wait" and w["site"] == "slow_lock" and
      not w["python"] and w["source"] is None,
      f"the lock's request: largest wait {w and w['category']} on {w and w['site']!r} "
      "(want lock_wait on 'slow_lock')")
check(HOLD_MS * 1e6 <= w["wait_ns"] and lock_t0 <= w["start_ns"] and
      w["start_ns"] + w["wait_ns"] <= lock_t1,
      f"its {w['wait_ns'] / 1e6:.2f} ms: at least the {HOLD_MS} ms hold, inside the "
      f"program's {(lock_t1 - lock_t0) / 1e6:.2f} ms around pthread_mutex_lock (line {line})")
w = sl["largest_wait"]
check(w is not None and w["category"] == "sleep" and "nanosleep" in w["site"] and
      w["site"].endswith(" in nap") and not w["python"],
      f"the sleep's request: largest wait {w and w['category']} at {w and w['site']!r} "
      "(want sleep, nanosleep in nap)")
# A blocking call timed in TSC ticks has its end on CLOCK_MONOTONIC and its
# start at end - dur, dur within 1e-4 of itself (docs/schema.md,
# blocking_calls): the start may read up to that much before the program's.
tsc_err = 1e-4 * w["wait_ns"] + 30 if w else 0
check(SLEEP_MS * 1e6 <= w["wait_ns"] and sleep_t0 - tsc_err <= w["start_ns"] and
      w["start_ns"] + w["wait_ns"] <= sleep_t1,
      f"its {w['wait_ns'] / 1e6:.2f} ms: at least the {SLEEP_MS} ms asked, inside the "
      f"program's {(sleep_t1 - sleep_t0) / 1e6:.2f} ms around it")
rest = [s for s in slow if s is not lk and s is not sl]
check(all(s["largest_wait"] is None for s in rest),
      f"the other {len(rest)} listed requests (busy-waits only) have no wait: "
      f"{[s['largest_wait'] and s['largest_wait']['category'] for s in rest]}")
text = latprof("report", run, "--breakdown", env={"COLUMNS": "100"}).stdout
rows = text.split("Their largest waits", 1)[-1].splitlines()
row = next((r for r in rows if r.split()[:1] == [str(lk["range_id"])]), "")
check("lock wait" in row and "slow_lock" in row and max(len(r) for r in rows) <= 100,
      f"text: the lock's request's row names slow_lock within 100 columns: {row.strip()!r}")
check(sum("(none recorded)" in r for r in rows) == len(rest),
      f"text: {len(rest)} rows say '(none recorded)'")
