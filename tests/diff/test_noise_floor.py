"""latprof diff's noise floor, against a reference computation. With one
run on a side the interval of new / base - 1 is the bootstrap percentile
interval [lo, hi] widened by the floor f on each side, outward:
[(1 + lo) / (1 + f) - 1, (1 + hi) * (1 + f) - 1] (analysis/compare/lp_diff.c,
docs/ci.md). The bootstrap's seed is fixed, so the same pair diffed with
--noise 0 gives lo and hi, and the floored interval must be exactly that
(to the JSON's printed digits).
- Every request of the new side 12% slower, all alike: each resample's ratio
  is 1.12, so with the default floor (10%) the interval is
  [1.12 / 1.1 - 1, 1.12 * 1.1 - 1] = [+1.8%, +23.2%]: it holds the 5%
  threshold, a true +12% change on one run each is NOT a confirmed regression
  (it would need 15.5%+, docs/ci.md) but inconclusive, never unchanged: the
  interval excludes 0; with --noise 0 it is one ([12%, 12%]).
- Drawn requests, new 12% slower: the floored interval is the unfloored
  one widened as above, for floors 5%, 10%, 25%, on p50, p90 and mean rows.
- Two runs a side: no floor (noise_floor 0), whatever --noise says."""
import json
import os
import random

from lptest import check, latprof, tmpdir
import synth

d = tmpdir()
N = 200


def req(total):
    return {"decode": 200000, "preprocess": 200000, "infer": total - 600000 - 5000,
            "postprocess": 200000}


def diff(a, b, *args):
    p = latprof("diff", a, b, "--format", "json", *args)
    check(p.returncode in (0, 1, 3), f"diff exits 0, 1 or 3 ({p.returncode}: {p.stderr.strip()})")
    return json.loads(p.stdout)


def request_row(j, metric):
    return next(r for r in j["rows"] if r["scope"] == "request" and r["metric"] == metric)


# All alike: ratio exactly 1.12 in every resample.
a, b = os.path.join(d, "same_a.db"), os.path.join(d, "same_b.db")
synth.make_db(a, [req(1000000) for _ in range(N)])
synth.make_db(b, [req(1120000) for _ in range(N)])
j = diff(a, b, "--metric", "p50,mean")
for m in ("p50", "mean"):
    r = request_row(j, m)
    want = (1.12 / 1.1 - 1, 1.12 * 1.1 - 1)
    check(r["noise_floor"] == 0.1 and abs(r["ci_low"] - want[0]) < 1e-5 and
          abs(r["ci_high"] - want[1]) < 1e-5,
          f"request {m} +12%, floor 10%: interval [{r['ci_low']:.6f}, {r['ci_high']:.6f}] = "
          f"[{want[0]:.6f}, {want[1]:.6f}]")
    check(r["verdict"] == "inconclusive" and r["toward"] == "regression",
          f"request {m}: a true +12% on one run each is not a confirmed regression, and its "
          f"interval excludes 0: inconclusive, never unchanged ({r['verdict']})")
    check("reaches both sides of the threshold" in r["why"],
          f"request {m}: says why ({r['why']})")
j0 = diff(a, b, "--metric", "p50,mean", "--noise", "0")
for m in ("p50", "mean"):
    r = request_row(j0, m)
    check(abs(r["ci_low"] - 0.12) < 1e-5 and abs(r["ci_high"] - 0.12) < 1e-5 and
          r["verdict"] == "regression",
          f"request {m} +12%, floor 0: interval [{r['ci_low']:.6f}, {r['ci_high']:.6f}], "
          f"{r['verdict']}")

# Drawn requests: the floored interval is the unfloored one widened.
rng = random.Random(39)
a, b = os.path.join(d, "drawn_a.db"), os.path.join(d, "drawn_b.db")
synth.make_db(a, synth.draw(rng, N))
synth.make_db(b, synth.draw(rng, N, {st: 1.12 for st in synth.STAGES}))
ref = diff(a, b, "--metric", "p50,p90,mean", "--noise", "0")
bad = []
for f in (0.05, 0.10, 0.25):
    j = diff(a, b, "--metric", "p50,p90,mean", "--noise", f"{f * 100:g}%")
    for r0, r in zip(ref["rows"], j["rows"]):
        if r0["ci_low"] is None:
            continue
        lo = (1 + r0["ci_low"]) / (1 + f) - 1
        hi = (1 + r0["ci_high"]) * (1 + f) - 1
        # JSON prints 6 decimals: the reference inherits that rounding.
        if not (r["noise_floor"] == f and abs(r["ci_low"] - lo) < 5e-6 * (1 + f) and
                abs(r["ci_high"] - hi) < 5e-6 * (1 + f)):
            bad.append((f, r["scope"], r["metric"], r0["ci_low"], r0["ci_high"],
                        r["ci_low"], r["ci_high"], lo, hi))
    n = sum(r["ci_low"] is not None for r in ref["rows"])
    check(n >= 10, f"floor {f:.0%}: {n} rows with an interval")
check(not bad, f"every floored interval is the unfloored one widened outward by the floor "
      f"(mismatches: {bad[:3]})")
req_p50 = request_row(diff(a, b, "--metric", "p50"), "p50")
check(req_p50["verdict"] != "regression",
      f"drawn requests +12%, default floor: request p50 not a regression "
      f"({req_p50['verdict']}, [{req_p50['ci_low']:.4f}, {req_p50['ci_high']:.4f}])")

# Two runs a side: hierarchical bootstrap, the floor does not apply.
a2, b2 = os.path.join(d, "same_a2.db"), os.path.join(d, "same_b2.db")
synth.make_db(a2, [req(1000000) for _ in range(N)])
synth.make_db(b2, [req(1120000) for _ in range(N)])
p = latprof("diff", os.path.join(d, "same_a.db"), a2, "--vs", os.path.join(d, "same_b.db"), b2,
            "--format", "json", "--metric", "p50", "--noise", "25%")
j = json.loads(p.stdout)
r = request_row(j, "p50")
check(r["noise_floor"] == 0 and abs(r["ci_low"] - 0.12) < 1e-5 and
      abs(r["ci_high"] - 0.12) < 1e-5 and r["verdict"] == "regression",
      f"two runs a side, --noise 25%: no floor, interval [{r['ci_low']}, {r['ci_high']}], "
      f"{r['verdict']}")
