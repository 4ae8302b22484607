"""Counters with the default set on a tight loop of tiny NVTX ranges
(tests/counters/ctr_tiny.c): a thread reads its group at most once per
LATPROF_COUNTERS_INTERVAL_NS, yet every stage range still gets its delta
(fresh-page faults +-10%, ~1 context switch per nap), the tiny ranges are
left without one and counted in meta counters.ranges_unsampled, and each
thread's group opened before its first range. With the interval set to 0
every boundary is read and every range has a delta."""
import os
import subprocess

from lptest import BUILD, LATPROF, check, db, meta, q1, record, sanitizer, skip, tmpdir

STAGES, TINY, PAGES, THREADS = 3, 100000, 200, 2
exe = os.path.join(BUILD, "tests", "counters", "ctr_tiny")
if not os.path.exists(exe):
    skip("ctr_tiny not built (no NVTX3 headers)")
d = tmpdir()


def per_range(c, name, event):
    return [r[0] for r in c.execute(
        "SELECT rc.delta FROM range_counters rc JOIN ranges_named r ON r.id = rc.range_id "
        "JOIN counter_events e ON e.id = rc.event_id WHERE r.name = ? AND e.name = ?",
        (name, event))]


def counted(c):
    cfg = c.execute("SELECT * FROM counter_config").fetchone()
    if cfg is None or cfg["no_libpfm"]:
        skip("no counters recorded (built without libpfm4?)")
    for ev in ("context-switches", "minor-faults"):
        r = c.execute("SELECT * FROM counter_events WHERE name = ?", (ev,)).fetchone()
        if not r["available"]:
            skip(f"{ev} cannot be counted here: {r['reason']}")


def groups_open_before_first_range(c, how):
    rows = c.execute(
        "SELECT t.thread_id, min(t.start_ns), (SELECT min(start_ns) FROM ranges r WHERE "
        "r.start_thread_id = t.thread_id) FROM thread_counters t WHERE t.source = 'exit' "
        "GROUP BY t.thread_id").fetchall()
    workers = [r for r in rows if r[2] is not None]
    check(len(workers) == THREADS and all(r[1] <= r[2] for r in workers),
          f"{how}: every worker's counter group opened before its first range "
          f"({[(r[1], r[2]) for r in workers]})")


# Default counters, default interval, under latprof run (preload opens groups).
path = os.path.join(d, "t.db")
record(path, exe, STAGES, TINY, PAGES, THREADS)
c = db(path)
counted(c)
n_stage = STAGES * THREADS
flt = per_range(c, "stage", "minor-faults")
check(len(flt) == n_stage, f"every stage range has a minor-fault delta ({len(flt)}/{n_stage})")
if sanitizer():  # ASan faults in its shadow and allocator pages too: a lower bound only
    check(all(f >= 0.9 * PAGES for f in flt),
          f"stage: minor faults per range {flt} >= {PAGES} pages touched (-10%; "
          f"{sanitizer()} build adds its own)")
else:
    check(all(abs(f - PAGES) <= 0.1 * PAGES for f in flt),
          f"stage: minor faults per range {flt} = {PAGES} pages touched (+-10%)")
cs = per_range(c, "nap", "context-switches")
check(len(cs) == n_stage and min(cs) >= 1 and sum(cs) / len(cs) <= 1.5,
      f"nap: context switches per call {cs} (~1)")

n_tiny = TINY * n_stage
tiny_with = q1(c, "SELECT count(DISTINCT rc.range_id) FROM range_counters rc JOIN ranges_named "
                  "r ON r.id = rc.range_id WHERE r.name = 'tiny'")
unsampled = meta(c, "counters.ranges_unsampled")
without = q1(c, "SELECT count(*) FROM ranges r WHERE r.end_thread_id = r.start_thread_id AND "
                "NOT EXISTS (SELECT 1 FROM range_counters rc WHERE rc.range_id = r.id)")
check(unsampled == without, f"meta counters.ranges_unsampled = {unsampled}, the ranges "
      f"without a delta ({without})")
check(unsampled >= n_tiny - tiny_with and tiny_with <= 0.01 * n_tiny,
      f"{n_tiny - tiny_with} of {n_tiny} tiny ranges left without a delta ({unsampled} "
      f"unsampled in all)")
samples = q1(c, "SELECT count(*) FROM counter_samples")
boundaries = 2 * q1(c, "SELECT count(*) FROM ranges")
check(samples < 0.05 * boundaries,
      f"{samples} counter reads for {boundaries} boundaries (at most one per interval)")
check(meta(c, "counters.ranges_cross_thread") == 0, "no cross-thread ranges")
groups_open_before_first_range(c, "latprof run")

# NVTX injection alone (no preload): the NVTX source opens each thread's
# group before its first time stamp.
logs = tmpdir()
lib = os.path.join(BUILD, "lib", "latprof", "liblatprof_nvtx.so")
env = dict(os.environ, LATPROF_DIR=logs, NVTX_INJECTION64_PATH=lib)
p = subprocess.run([exe, "1", "1000", "10", str(THREADS)], env=env, capture_output=True)
check(p.returncode == 0, "ctr_tiny ran with NVTX injection only")
inj = os.path.join(d, "inj.db")
imp = subprocess.run([LATPROF, "import", logs, "-o", inj], capture_output=True, text=True)
check(imp.returncode == 0, f"latprof import: {imp.stderr.strip()}")
groups_open_before_first_range(db(inj), "NVTX injection only")

# Interval 0: every boundary read, every range has its delta.
zero = os.path.join(d, "z.db")
record(zero, exe, 1, 2000, 20, 1, env={"LATPROF_COUNTERS_INTERVAL_NS": "0"})
z = db(zero)
n_ranges = q1(z, "SELECT count(*) FROM ranges")
check(q1(z, "SELECT count(*) FROM counter_samples") >= 2 * n_ranges,
      "interval 0: one counter read per boundary")
check(meta(z, "counters.ranges_unsampled") == 0 and
      q1(z, "SELECT count(DISTINCT range_id) FROM range_counters") == n_ranges,
      f"interval 0: all {n_ranges} ranges have a delta")
