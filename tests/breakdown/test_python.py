"""A Python program using the PyPI `nvtx` package (samples/py_nvtx.py, ranges
in domain py_infer) gets the same breakdown as C: stage p50s near their
programmed costs, DOMAIN::NAME for --request."""
import os
import sys

from bdlib import breakdown, need, need_nvtx, settle, stage
from lptest import check, latprof, record, sample, skip, tmpdir, within

need_nvtx()
need(sample("py_nvtx.py"), "samples/py_nvtx.py")
try:
    import nvtx  # noqa: F401
except ImportError:
    skip("the PyPI package nvtx is not installed (pip install nvtx)")
COST_US = {"decode": 1000, "preprocess": 600, "infer": 1500, "postprocess": 300}
run = os.path.join(tmpdir(), "run.db")


def attempt():
    if os.path.exists(run):
        os.unlink(run)
    record(run, sys.executable, sample("py_nvtx.py"), "--requests", 150, "--threads", 1,
           "--decode-us", COST_US["decode"], "--pre-us", COST_US["preprocess"],
           "--infer-us", COST_US["infer"], "--post-us", COST_US["postprocess"])
    doc = breakdown(run)
    checks = [(doc["request"]["domain"] == "py_infer" and doc["request"]["name"] == "request",
               "request = py_infer::request")]
    for name, us in COST_US.items():
        p50 = stage(doc, name)["stats"]["p50_ns"] / 1e3
        checks.append((within(p50, us, rel=0.05, abs_=200),
                       f"{name}: p50 {p50:.0f} us within 5% or 0.2 ms of {us} us"))
    return doc, checks


doc = settle(attempt)
check(all(s["domain"] == "py_infer" for s in doc["stages"] if not s["unattributed"]),
      "stages carry their domain")
check(sum(s["stats"]["total_ns"] for s in doc["stages"]) == doc["request"]["stats"]["total_ns"],
      "stage times add up to request time")
d2 = breakdown(run, "--request", "py_infer::request")
check(d2["request"]["explicit"] and d2["request"]["stats"]["n"] == 150, "--request py_infer::request")
p = latprof("report", run, "--breakdown", "--request", "other::request")
check(p.returncode == 2, "a name in the wrong domain: exit 2")
