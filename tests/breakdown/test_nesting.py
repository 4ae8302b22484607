"""--request and --stage-depth on three levels of nesting (bd_nested), and
bad --request names."""
import os

from bdlib import BUILD, breakdown, need, need_nvtx, settle, stage
from lptest import check, latprof, record, tmpdir, within

need_nvtx()
prog = os.path.join(BUILD, "tests", "bin", "bd_nested")
need(prog, "tests/breakdown/bd_nested")
LOAD, PARSE, STEP, GAP, N = 700, 500, 1200, 400, 200
d = tmpdir()
run = f"{d}/run.db"


def p50_us(doc, name):
    return stage(doc, name)["stats"]["p50_ns"] / 1e3


def attempt():
    if os.path.exists(run):
        os.unlink(run)
    record(run, prog, N, LOAD, PARSE, STEP, GAP)
    d1, d2 = breakdown(run), breakdown(run, "--stage-depth", "2")
    checks = [(within(p50_us(d1, "prep"), LOAD + PARSE, rel=0.05, abs_=200),
               "depth 1: prep p50 = load + parse"),
              (within(p50_us(d1, "(unattributed)"), GAP, rel=0.05, abs_=200),
               "depth 1: the gap is unattributed")]
    for name, us in (("load", LOAD), ("parse", PARSE), ("step", STEP)):
        checks.append((within(p50_us(d2, name), us, rel=0.05, abs_=200),
                       f"depth 2: {name} p50 ~ {us} us"))
    return None, checks


settle(attempt)
doc = breakdown(run)
check(doc["request"]["name"] == "request" and doc["request"]["stats"]["n"] == N,
      "default request: the most frequent outermost range")
check(doc["request"]["open_at_exit_skipped"] == 1,
      "the request range still open at exit is left out (and counted)")
check([(o["name"], o["count"]) for o in doc["other_outermost"]] == [("warmup", 1)],
      "the other outermost range is listed")
check([s["name"] for s in doc["stages"]] == ["prep", "run", "(unattributed)"], "depth 1: prep, run")

doc = breakdown(run, "--stage-depth", "2")
check([s["name"] for s in doc["stages"]] == ["load", "parse", "step", "(unattributed)"],
      "--stage-depth 2: load, parse, step")
check(abs(sum(s["share"] for s in doc["stages"]) - 1) < 1e-5, "depth 2: shares add up to 100%")
check(sum(s["stats"]["total_ns"] for s in doc["stages"]) == doc["request"]["stats"]["total_ns"],
      "stage times incl. (unattributed) add up to request time exactly")

doc = breakdown(run, "--request", "prep")
# N + 1: the request left open at exit holds one closed "prep"
check(doc["request"]["name"] == "prep" and doc["request"]["explicit"] and
      doc["request"]["stats"]["n"] == N + 1, f"--request prep: {N + 1} requests")
check([s["name"] for s in doc["stages"]] == ["load", "parse", "(unattributed)"],
      "--request prep: its children are the stages")
doc = breakdown(run, "--request", "::run")  # default domain spelled out
check(doc["request"]["name"] == "run" and [s["name"] for s in doc["stages"]][0] == "step",
      "--request ::run (DOMAIN::NAME with the default domain)")

for bad in (["--request", "nosuch"], ["--request", "other::prep"]):
    p = latprof("report", run, "--breakdown", *bad)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("latprof:") and
          "no NVTX range is named" in lines[0], f"{' '.join(bad)}: exit 2, one line: {lines}")
p = latprof("report", run, "--breakdown", "--stage-depth", "0")
check(p.returncode == 2, "--stage-depth 0 is refused with exit 2")
p = latprof("report", run, "--locks", "--request", "prep")
check(p.returncode == 2, "--request without --breakdown is refused with exit 2")
