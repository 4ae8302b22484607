"""Stages of samples/infer_server with programmed costs: p50 per stage near
its cost, shares add up to 100%, text/CSV/--ranges agree with the database."""
import csv
import io
import math
import os

from bdlib import breakdown, need, need_nvtx, settle, shares_sum, stage
from lptest import check, db, latprof, record, sample, tmpdir, within

need_nvtx()
need(sample("infer_server"), "samples/infer_server")
# each stage shorter than a scheduler slice on a loaded box, so that a
# preemption rarely lands on a stage's end (busy-waits to a deadline)
COST_US = {"decode": 1000, "preprocess": 600, "infer": 1500, "postprocess": 300}
N = 300
d = tmpdir()
run = f"{d}/run.db"


def attempt():
    if os.path.exists(run):
        os.unlink(run)
    # one worker: stage costs are busy-waits, and a second spinning thread on
    # a 2-core machine only adds preemption noise
    record(run, sample("infer_server"), "--requests", N, "--threads", 1,
           "--decode-us", COST_US["decode"], "--pre-us", COST_US["preprocess"],
           "--infer-us", COST_US["infer"], "--post-us", COST_US["postprocess"])
    doc = breakdown(run)
    checks = []
    for name, us in COST_US.items():
        s = stage(doc, name)
        p50 = s["stats"]["p50_ns"] / 1e3
        checks.append((within(p50, us, rel=0.05, abs_=200),
                       f"{name}: p50 {p50:.0f} us within 5% or 0.2 ms of the programmed {us} us"))
    return doc, checks


doc = settle(attempt)
check(doc["has_ranges"] and doc["request"]["name"] == "request",
      f"request = the outermost range 'request' ({doc['request']['name']})")
check(doc["request"]["stats"]["n"] == N, f"{N} requests ({doc['request']['stats']['n']})")
for name in COST_US:
    check(stage(doc, name)["instances"] == N, f"{name}: {N} instances")
names = [s["name"] for s in doc["stages"]]
check(names == ["decode", "preprocess", "infer", "postprocess", "(unattributed)"],
      f"stages in request order, (unattributed) last: {names}")
check(abs(shares_sum(doc) - 1.0) < 1e-5, f"shares add up to 100% ({shares_sum(doc) * 100:.4f}%)")
check(sum(s["stats"]["total_ns"] for s in doc["stages"]) == doc["request"]["stats"]["total_ns"],
      "stage times incl. (unattributed) add up to request time exactly")
check(not doc["stages_overlap"], "push/pop stages do not overlap")
# category split of each stage adds up to its time
for s in doc["stages"]:
    tot = sum(s["categories"].values())
    check(abs(tot - s["stats"]["total_ns"]) <= 1 + len(s["categories"]),
          f"{s['name']}: categories add up to the stage time ({tot} vs {s['stats']['total_ns']})")

# the numbers come from the database: recompute stage totals and the request p99
conn = db(run)
tot = {r[0]: r[1] for r in conn.execute(
    "SELECT c.name, sum(c.end_ns - c.start_ns) FROM ranges_named c JOIN ranges p "
    "ON p.id = c.parent_id JOIN ranges_named q ON q.id = p.id WHERE q.name = 'request' "
    "GROUP BY c.name")}
for name in COST_US:
    check(stage(doc, name)["stats"]["total_ns"] == tot[name],
          f"{name}: total equals the sum of its ranges in the database")
durs = sorted(r[0] for r in conn.execute(
    "SELECT end_ns - start_ns FROM ranges_named WHERE name = 'request'"))
p99 = durs[math.ceil(0.99 * len(durs)) - 1]
check(doc["request"]["stats"]["p99_ns"] == p99, "request p99 is the nearest-rank p99 of the database")
ua = stage(doc, "(unattributed)")["stats"]["total_ns"]
check(ua == sum(durs) - sum(tot.values()), "(unattributed) = request time minus stage time")

slow = doc["slowest"]
check(len(slow) == 10 and all(slow[i]["latency_ns"] >= slow[i + 1]["latency_ns"] for i in range(9)),
      "10 slowest requests, slowest first")
r = conn.execute("SELECT start_ns, end_ns - start_ns FROM ranges_named WHERE id = ?",
                 (slow[0]["range_id"],)).fetchone()
check(r is not None and r[0] == slow[0]["start_ns"] and r[1] == slow[0]["latency_ns"] == durs[-1],
      "slowest request's range id, start and latency match the database")
check(sum(slow[0]["stage_ns"]) == slow[0]["latency_ns"], "its stage times add up to its latency")

# text and CSV render the same result
p = latprof("report", run, "--breakdown", check=0)
check("(unattributed)" in p.stdout and "Slowest requests" in p.stdout and "Tail:" in p.stdout,
      "text: table, tail paragraph, slowest requests")
rows = list(csv.DictReader(io.StringIO(latprof("report", run, "--breakdown", "--format", "csv",
                                               check=0).stdout)))
check([r["stage"] for r in rows] == names, "CSV: one row per stage")
check(all(int(r["p50_ns"]) == stage(doc, r["stage"])["stats"]["p50_ns"] for r in rows),
      "CSV p50 equals JSON p50")
# the default report includes the breakdown when ranges exist
p = latprof("report", run, check=0)
check("(unattributed)" in p.stdout and "decode" in p.stdout, "default report shows the breakdown")

# --ranges: every name, counts and p50 from the database
import json  # noqa: E402
rj = json.loads(latprof("report", run, "--ranges", "--format", "json", check=0).stdout)
byname = {r["name"]: r for r in rj["ranges"]}
check(set(byname) == set(COST_US) | {"request"}, f"--ranges lists every name ({sorted(byname)})")
for name in COST_US:
    ds = sorted(x[0] for x in conn.execute(
        "SELECT end_ns - start_ns FROM ranges_named WHERE name = ?", (name,)))
    st = byname[name]["stats"]
    check(st["n"] == len(ds) and st["p50_ns"] == ds[math.ceil(0.5 * len(ds)) - 1] and
          st["max_ns"] == ds[-1], f"--ranges {name}: count, p50, max match the database")
p = latprof("report", run, "--ranges", check=0)
check("postprocess" in p.stdout and "p99" in p.stdout, "--ranges text table")
