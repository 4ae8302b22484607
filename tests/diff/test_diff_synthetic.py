"""latprof diff on synthetic pairs: false-positive rate when both sides come
from one distribution (acceptance: <= 7% at alpha 0.05), power when one
stage is 10% slower, and exit 2 on other schema versions / no ranges."""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
from lptest import check, latprof, tmpdir  # noqa: E402
import synth  # noqa: E402

d = tmpdir()
rng = random.Random(6)


def pair(i, scale_new=None, n=None):
    n = n or rng.choice((12, 20, 40))  # exact U test for the small ones
    a, b = os.path.join(d, f"a{i}.db"), os.path.join(d, f"b{i}.db")
    synth.make_db(a, synth.draw(rng, n))
    synth.make_db(b, synth.draw(rng, n, scale_new))
    return a, b


def flagged(a, b):
    # Threshold 0: only the significance test decides, the strictest setting.
    p = latprof("diff", a, b, "--threshold", "0%", "--format", "json")
    check(p.returncode in (0, 1), f"diff exits 0 or 1 (got {p.returncode}: {p.stderr.strip()})")
    j = json.loads(p.stdout)
    bad = [r for r in j["rows"] if r["verdict"] in ("regression", "improvement")]
    return j, bad, p.returncode


N = 200
fp = 0
exact_seen = False
for i in range(N):
    a, b = pair(i)
    j, bad, _ = flagged(a, b)
    fp += bool(bad)
    exact_seen |= any(r["exact"] for r in j["rows"])
    os.unlink(a)
    os.unlink(b)
rate = fp / N
print(f"false positives: {fp}/{N} pairs = {rate:.1%} (alpha 0.05, Holm over "
      f"{j['comparisons']} comparisons)")
check(rate <= 0.07, f"false-positive rate {rate:.1%} <= 7%")
check(exact_seen, "small pairs used the exact U distribution")

# Power: a 10% slower infer with 100 requests per side is found, and only infer.
hits, wrong = 0, 0
for i in range(20):
    a, b = pair(1000 + i, {"infer": 1.10}, n=100)
    p = latprof("diff", a, b, "--format", "json", "--metric", "p50")
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
p = latprof("diff", "--base", a, a, "--new", b)
j = json.loads(latprof("diff", "--base", a, a, "--new", b, "--format", "json").stdout)
check(j["base"]["databases"] == 2 and j["base"]["requests"] == 2 * j["new"]["requests"],
      "--base pools the requests of two databases")

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
