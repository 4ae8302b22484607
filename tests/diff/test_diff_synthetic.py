"""latprof diff on synthetic pairs: false-positive rate when both sides come
from one distribution (acceptance: <= 7% at alpha 0.05, threshold and noise
floor 0), power when one stage is 10% slower, "not enough data" below 10
requests beyond a quantile, the --vs and --base/--new forms, and exit 2 on
other schema versions / no ranges."""
import json
import os
import random

from lptest import check, latprof, tmpdir
import synth

d = tmpdir()
rng = random.Random(6)


def pair(i, scale_new=None, n=None):
    n = n or rng.choice((30, 60, 120))
    a, b = os.path.join(d, f"a{i}.db"), os.path.join(d, f"b{i}.db")
    synth.make_db(a, synth.draw(rng, n))
    synth.make_db(b, synth.draw(rng, n, scale_new))
    return a, b


def flagged(a, b):
    # Threshold and noise floor 0: only the intervals decide, the strictest setting.
    p = latprof("diff", a, b, "--threshold", "0%", "--noise", "0%", "--format", "json",
                "--metric", "p50,p90,mean")
    check(p.returncode in (0, 1, 3), f"diff exits 0, 1 or 3 (got {p.returncode}: {p.stderr.strip()})")
    j = json.loads(p.stdout)
    bad = [r for r in j["rows"] if r["verdict"] in ("regression", "improvement")]
    return j, bad, p.returncode


N = 150
fp = 0
for i in range(N):
    a, b = pair(i)
    j, bad, _ = flagged(a, b)
    fp += bool(bad)
    os.unlink(a)
    os.unlink(b)
rate = fp / N
print(f"false positives: {fp}/{N} pairs = {rate:.1%} (alpha 0.05, Holm over "
      f"{j['comparisons']} comparisons)")
check(rate <= 0.07, f"false-positive rate {rate:.1%} <= 7%")

# Too few beyond a quantile: not enough data, with the reason; the p99 of 300
# requests has 3 above it.
a, b = pair(900, n=300)
j = json.loads(latprof("diff", a, b, "--format", "json").stdout)
p99 = [r for r in j["rows"] if r["metric"] == "p99"]
check(p99 and all(r["verdict"] == "not enough data" and "3 requests above" in r["why"]
                  for r in p99), "p99 of 300 requests: not enough data (3 above it)")
p50 = [r for r in j["rows"] if r["metric"] == "p50"]
check(all(r["ci_low"] is not None and r["ci_low"] < r["ci_high"] for r in p50),
      "each p50 row has an interval")
check(j["run_noise_unknown"] and all(r["noise_floor"] == j["noise_floor"] for r in p50),
      f"one run per side: the noise floor ({j['noise_floor']}) is in every interval")
txt = latprof("diff", a, b).stdout
check("run-to-run noise is unknown" in txt and "+-10.0%" in txt,
      "the text header says run-to-run noise is unknown and prints the floor")
p = latprof("diff", a, b, "--metric", "p95,p75", "--format", "json")
j = json.loads(p.stdout)
check({r["metric"] for r in j["rows"]} == {"p95", "p75"} and
      all(abs(r["quantile"] - float(r["metric"][1:]) / 100) < 1e-9 for r in j["rows"]),
      "any quantile can be asked: --metric p95,p75")

# Power: a 10% slower infer with 400 requests per side is found, and only infer
# (synthetic runs have no run-to-run noise: floor 0).
hits, wrong = 0, 0
for i in range(20):
    a, b = pair(1000 + i, {"infer": 1.10}, n=400)
    p = latprof("diff", a, b, "--format", "json", "--metric", "p50", "--noise", "0")
    j = json.loads(p.stdout)
    reg = {r["scope"] for r in j["rows"] if r["verdict"] == "regression"}
    hits += "infer" in reg and p.returncode == 1
    wrong += bool(reg - {"infer", "request"})
print(f"10% slower infer: flagged in {hits}/20 pairs, other stage flagged in {wrong}")
check(hits >= 14, "a 10% stage slowdown is flagged in most pairs")
check(wrong <= 2, "unchanged stages are not flagged")

# Bad input: exit 2 with one clear line.
a, b = pair(2000)
old = os.path.join(d, "old.db")
synth.make_db(old, synth.draw(rng, 10), version=synth.schema_version() + 1)
p = latprof("diff", a, old)
check(p.returncode == 2 and "schema version" in p.stderr, f"other schema version: exit 2 ({p.stderr.strip()})")
empty = os.path.join(d, "empty.db")
synth.make_db(empty, [], with_ranges=False)
p = latprof("diff", empty, b)
check(p.returncode == 2 and "no NVTX ranges" in p.stderr, f"no ranges: exit 2 ({p.stderr.strip()})")
p = latprof("diff", a, os.path.join(d, "missing.db"))
check(p.returncode == 2 and p.stderr.startswith("latprof: "), "missing file: exit 2")
p = latprof("diff", a, b, "--request", "nosuch")
check(p.returncode == 2 and "nosuch" in p.stderr, "unknown --request: exit 2")
p = latprof("diff", a, b, a)
check(p.returncode == 2 and "--vs" in p.stderr, f"three databases without --vs: exit 2 ({p.stderr.strip()})")
p = latprof("diff", a, b, "--noise", "x")
check(p.returncode == 2, "bad --noise: exit 2")
j = json.loads(latprof("diff", "--base", a, a, "--new", b, "--format", "json").stdout)
check(j["base"]["databases"] == 2 and j["base"]["requests"] == 2 * j["new"]["requests"],
      "--base pools the requests of two databases")
a2, b2 = pair(3000, n=200)
j = json.loads(latprof("diff", a, a2, "--vs", b, b2, "--format", "json").stdout)
req = next(r for r in j["rows"] if r["kind"] == "request" and r["metric"] == "p50")
check(j["base"]["databases"] == 2 and j["new"]["databases"] == 2 and req["runs_base"] == 2 and
      req["runs_new"] == 2 and "runs, then requests" in req["method"] and req["noise_floor"] == 0,
      "A1 A2 --vs B1 B2: two runs per side, hierarchical bootstrap, no noise floor")

# The JSON follows schemas/report-diff.schema.json (checked where jsonschema is installed).
try:
    import jsonschema
except ImportError:
    print("note: python jsonschema not installed, schema validation skipped")
else:
    from lptest import SRC
    with open(os.path.join(SRC, "schemas", "report-diff.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validate(j, schema)
    check(True, "diff JSON validates against schemas/report-diff.schema.json")
