"""Whole-thread counter totals with the default set come from the kernel's
own per-thread accounting, and only threads that mark NVTX ranges open a
perf_event group (a thread with perf events makes every one of its context
switches dearer: pgbench's backends, which mark none, ran ~10% slower).
tests/counters/ctr_acct.c prints each thread's getrusage(RUSAGE_THREAD) and
CLOCK_THREAD_CPUTIME_ID, the second source checked here: a thread without
ranges (exits), one with ranges, and one still running at exit()."""
import os
import re

from lptest import BUILD, check, db, q1, record, skip, tmpdir

SPIN_MS, PAGES, NAPS = 40, 300, 20
exe = os.path.join(BUILD, "tests", "counters", "ctr_acct")
if not os.path.exists(exe):
    skip("ctr_acct not built (no NVTX3 headers)")
d = tmpdir()
path = os.path.join(d, "a.db")
p = record(path, exe, SPIN_MS, PAGES, NAPS)
c = db(path)
cfg = c.execute("SELECT * FROM counter_config").fetchone()
if cfg is None or cfg["no_libpfm"] or cfg["denied"]:
    skip("no counters recorded here (built without libpfm4, or refused)")
avail = {r["name"]: r["available"] for r in c.execute("SELECT name, available FROM counter_events")}
if not avail.get("task-clock") or not avail.get("minor-faults"):
    skip(f"task-clock or minor-faults cannot be counted here: {avail}")

own = {}
for line in p.stdout.splitlines():
    m = re.match(r"(\w+) (.*)", line)
    if m and "tid=" in line:
        own[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
check(set(own) == {"plain", "ranges", "alive"}, f"the app reported its three threads: {own}")

# Groups: none on the threads without ranges, one on the thread with them.
check(own["plain"]["perf_fds"] == 0 and own["alive"]["perf_fds"] == 0,
      f"threads without NVTX ranges hold no perf_event fd (plain {own['plain']['perf_fds']}, "
      f"alive {own['alive']['perf_fds']}; the main thread none either)")
check(own["ranges"]["perf_fds"] > 0,
      f"the thread with ranges counts with a group ({own['ranges']['perf_fds']} fds)")
touch = [r[0] for r in c.execute(
    "SELECT rc.delta FROM range_counters rc JOIN ranges_named r ON r.id = rc.range_id "
    "JOIN counter_events e ON e.id = rc.event_id WHERE r.name = 'touch' AND "
    "e.name = 'minor-faults'")]
check(len(touch) == 1 and PAGES <= touch[0] <= PAGES * 1.1 + 10,
      f"its 'touch' stage: {touch} minor faults for {PAGES} fresh pages")


def total(tid, event):
    return c.execute(
        "SELECT tc.value, tc.source FROM thread_counters tc JOIN threads t ON t.id = "
        "tc.thread_id JOIN counter_events e ON e.id = tc.event_id WHERE t.tid = ? AND "
        "e.name = ?", (tid, event)).fetchone()


for role, source in (("plain", "exit"), ("ranges", "exit"), ("alive", "alive_at_exit")):
    o = own[role]
    check(o["minflt"] >= PAGES and o["cpu_ns"] >= SPIN_MS * 1e6 * 0.9,
          f"{role}: the thread did its work ({o})")
    cpu = total(o["tid"], "task-clock")
    check(cpu is not None and cpu[1] == source,
          f"{role}: task-clock total from '{source}' ({cpu and tuple(cpu)})")
    # read after the app's own figures, at the thread's (or process's) exit
    check(o["cpu_ns"] <= cpu[0] <= o["cpu_ns"] * 1.05 + 3e6,
          f"{role}: task-clock {cpu[0] / 1e6:.2f} ms, the thread's own clock "
          f"{o['cpu_ns'] / 1e6:.2f} ms")
    flt = total(o["tid"], "minor-faults")
    check(flt is not None and o["minflt"] <= flt[0] <= o["minflt"] + 40,
          f"{role}: minor faults {flt and flt[0]}, getrusage {o['minflt']}")
    if avail.get("context-switches"):
        cs = total(o["tid"], "context-switches")
        check(cs is not None and o["switches"] <= cs[0] <= o["switches"] + 5,
              f"{role}: context switches {cs and cs[0]}, getrusage {o['switches']} "
              f"(>= {NAPS} naps)")
        check(o["switches"] >= NAPS, f"{role}: {o['switches']} switches for {NAPS} naps")
    if avail.get("cpu-migrations") and os.path.exists(f"/proc/self/sched"):
        check(total(o["tid"], "cpu-migrations") is not None, f"{role}: a migrations total")
