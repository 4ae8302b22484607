"""--bottlenecks on the command line: thresholds, bad input, the default
report leading with the findings."""
import os

from fndlib import binary, check, findings, ids, latprof, record, sample, tmpdir

d = tmpdir()
db = os.path.join(d, "lock.db")
# findings_cpu's acceptance run: with lock_server's defaults (200 requests,
# ~60 ms) the lock's share of thread time sat near the 5% bar and, on a busy
# machine, under it about one run in a dozen.
record(db, binary(sample("lock_server"), "lock_server"), "--threads", "4", "--requests", "1000",
       "--work-us", "50", "--locked-us", "100")
doc = findings(db)
check("lock-contention" in ids(doc), "default threshold: lock-contention")
v = next(r for r in doc["rules"] if r["id"] == "lock-contention")["value"]
doc = findings(db, "--rule-threshold", f"lock-contention={min(100, v * 100 + 1):.3f}%")
check("lock-contention" not in ids(doc), f"threshold above the measured {v:.3f}: quiet")
check(doc["rules"][0]["threshold"] > v, "the threshold used is reported")
for bad in ["nosuch=1", "lock-contention", "lock-contention=-1", "lock-contention=abc",
            "cold-start=5%"]:
    p = latprof("report", db, "--bottlenecks", "--rule-threshold", bad)
    check(p.returncode == 2 and p.stderr.startswith("latprof") and p.stderr.count("\n") == 1,
          f"--rule-threshold {bad}: exit 2, one line ({p.stderr.strip()})")
p = latprof("report", db, "--bottlenecks", "--format", "csv")
check(p.returncode == 0 and p.stdout.startswith("rank,state,id,"),
      "--bottlenecks --format csv: a header row (tests/findings/test_findings_csv.py checks the rows)")
p = latprof("report", db, "--bottlenecks", "--format", "xml")
check(p.returncode == 2 and p.stderr.count("\n") == 1, f"--format xml: exit 2, one line ({p.stderr.strip()})")
p = latprof("report", db, "--locks", "--rule-threshold", "gpu-idle=0.2")
check(p.returncode == 2, "--rule-threshold with another view: exit 2")
p = latprof("report", db, check=0)
check(p.stdout.startswith("Top findings") and "model_lock" in p.stdout.split("\n\n")[0],
      "the default report leads with the top finding, naming model_lock")
p = latprof("report", db, "--bottlenecks", check=0)
check("not evaluated:" in p.stdout and "no GPU data" in p.stdout,
      "text lists the rules not evaluated, with why")
