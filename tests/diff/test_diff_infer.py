"""latprof diff on real recordings of samples/infer_server: the same program
twice is no regression; a 10% slower infer stage (--slow-stage infer
--slow-pct 10) is flagged, infer named, exit 1; a 10% faster one is an
improvement, exit 0. Base and new runs are interleaved and pooled
(--base/--new) so load drift on a shared machine hits both sides alike."""
import json
import os
import sys

from lptest import check, latprof, realtime, record, sample, skip, tmpdir

srv = sample("infer_server")
if not os.path.exists(srv):
    skip("infer_server not built (no NVTX3 headers)")
d = tmpdir()
RUNS, REQ = 6, 60
# Stages shorter than a scheduler slice, so that on a loaded machine most
# instances run unpreempted and keep their programmed cost.
COSTS = ["--decode-us", 600, "--pre-us", 500, "--infer-us", 1500, "--post-us", 300]
seq = [0]
METRICS = os.environ.get("LP_DIFF_METRICS", "p50")



def interleaved(extra):
    base, new = [], []
    for i in range(RUNS):
        for side, ex, tag in ((base, [], "base"), (new, extra, "new")):
            seq[0] += 1
            db = os.path.join(d, f"{tag}{seq[0]}.db")
            record(db, *realtime(), srv, "--requests", REQ, "--threads", 1, "--seed", i + 1, *COSTS, *ex)
            side.append(db)
    return base, new


def diff(base, new, *args):
    p = latprof("diff", *base, "--vs", *new, "--metric", METRICS, "--format", "json", *args)
    check(p.returncode in (0, 1, 3), f"diff ran (exit {p.returncode}) {p.stderr.strip()}")
    j = json.loads(p.stdout)
    for r in j["rows"]:
        print(f"  {r['scope']:12} {r['metric']} base {r['base_ns']/1e6:.3f} ms new "
              f"{r['new_ns']/1e6:.3f} ms {100*(r['rel_change'] or 0):+.1f}% p_holm "
              f"{r['p_holm']} [{r['ci_low']}, {r['ci_high']}] {r['verdict']}")
    return p.returncode, j


def verdicts(j, v):
    return {r["scope"] for r in j["rows"] if r["verdict"] == v}


# Same program both sides.
base, new = interleaved([])
rc, j = diff(base, new)
check(j["base"]["requests"] == RUNS * REQ, f"base pools {RUNS} runs x {REQ} requests")
check(rc == 0 and not verdicts(j, "regression"), "same sample twice: no regression, exit 0")

# 10% slower infer.
base, new = interleaved(["--slow-stage", "infer", "--slow-pct", 10])
rc, j = diff(base, new)
reg = verdicts(j, "regression")
check(rc == 1, "10% slower infer: exit 1")
check("infer" in reg, f"infer flagged as a regression ({sorted(reg)})")
check(not (reg - {"infer", "request"}), f"no other stage flagged ({sorted(reg)})")
infer = next(r for r in j["rows"] if r["scope"] == "infer" and r["verdict"] == "regression")
check(0.05 <= infer["rel_change"] <= 0.20, f"infer {infer['metric']} change {infer['rel_change']:+.1%} near +10%")
md = latprof("diff", "--base", *base, "--new", *new, "--metric", METRICS, "--format", "markdown")
check(md.returncode == 1 and "| infer | " in md.stdout and "**regression**" in md.stdout,
      "markdown names infer as a regression")
txt = latprof("diff", "--base", *base, "--new", *new).stdout
check("Holm" in txt and "REGRESSION" in txt and "runs, then requests" in txt,
      "text output states the method and the correction")

# 10% faster infer.
base, new = interleaved(["--slow-stage", "infer", "--slow-pct", -10])
rc, j = diff(base, new)
check(rc == 0, "10% faster infer: exit 0")
check("infer" in verdicts(j, "improvement"), "infer reported as an improvement")
check(not verdicts(j, "regression"), "no regression on a speed-up")
