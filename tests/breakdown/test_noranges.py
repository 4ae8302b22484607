"""A run without NVTX ranges: --breakdown says so in one line and splits the
whole run by category; the lock wait it shows is what the database holds."""
from bdlib import breakdown, need
from lptest import check, db, latprof, record, sample, tmpdir

need(sample("lock_server"), "samples/lock_server")
d = tmpdir()
run = f"{d}/run.db"
record(run, sample("lock_server"), "--threads", 3, "--requests", 300, "--work-us", 200,
       "--locked-us", 300)
doc = breakdown(run)
check(not doc["has_ranges"] and doc["request"] is None and doc["stages"] == [],
      "no ranges: no request, no stages")
conn = db(run)
waits = conn.execute("SELECT sum(dur_ns) FROM lock_waits").fetchone()[0] or 0
check(waits > 0, f"lock_server contended ({waits / 1e6:.1f} ms of lock wait recorded)")
# a wait's run-queue part (after the wake-up, waiting for a CPU) is preempted
runq = conn.execute("SELECT coalesce(sum(runq_ns), 0) FROM lock_waits").fetchone()[0]
run_lw = doc["run"]["categories"]["lock_wait"]
check(abs(run_lw - (waits - runq)) <= 0.01 * waits,
      f"run lock wait {run_lw} ns = the database's {waits} ns less their run-queue part "
      f"{runq} ns (within 1%)")
check(doc["run"]["categories"]["preempted"] >= runq,
      f"run preempted {doc['run']['categories']['preempted']} ns holds the waits' run-queue part")
tt = doc["run"]["thread_time_ns"]
check(sum(doc["run"]["categories"].values()) == tt, "categories add up to thread time")
check(len(doc["threads"]) == conn.execute("SELECT count(*) FROM threads").fetchone()[0],
      "one row per thread")
p = latprof("report", run, "--breakdown", check=0)
first = p.stdout.splitlines()[0]
check(first.startswith("No NVTX ranges in this run"), f"text says so in one line: '{first}'")
check("lock wait" in p.stdout and "all threads" in p.stdout, "text shows the category split")
p = latprof("report", run, "--breakdown", "--request", "request")
check(p.returncode == 2 and "no NVTX ranges" in p.stderr, "--request on a run without ranges: exit 2")
p = latprof("report", run, "--ranges", check=0)
check("No NVTX ranges" in p.stdout, "--ranges says there are none")
