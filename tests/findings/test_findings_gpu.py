"""GPU rules on runs of fnd_gpu: its CUPTI records go through the real
translator, event log and importer. The healthy pipeline fires no GPU rule;
each defect fires its own rule, with the counts the program produced."""
import os

from fndlib import (BUILD, GPU_RULES, binary, check, ev, finding, findings, ids, record, rule,
                    tmpdir)
from lptest import realtime

prog = binary(os.path.join(BUILD, "tests", "bin", "fnd_gpu"), "fnd_gpu (needs CUPTI headers)")
d = tmpdir()
N = 40


def run(*defects):
    """At real-time priority where allowed: the requests are busy-wait
    windows the GPU records fill ~90%; a window the host is preempted in
    grows, and on a loaded machine (an ASan build beside other tests) half
    the healthy windows did, so gpu-idle's median share passed 0.5."""
    db = os.path.join(d, "-".join(defects or ("healthy",)) + ".db")
    record(db, *realtime(), prog, "--requests", str(N), *defects)
    return findings(db)


good = run()
for r in GPU_RULES:
    check(rule(good, r)["state"] == "quiet", f"healthy pipeline: {r} quiet ({rule(good, r)['value']})")
check(rule(good, "sync-memcpy")["value"] == 0,
      "healthy: the 4 KB synchronous H2D per request is exempt (<= 64 KB, as nsys)")

doc = run("sync-memcpy")
f = finding(doc, "sync-memcpy")
check(ev(f, "copies") == N, f"sync-memcpy: {ev(f, 'copies')} blocking 1 MB copies, one per request")
check(f["example"] is not None and f["example"]["at_stake_ns"] >= 300000,
      "sync-memcpy: the example request blocked >= 330 us - slack")

doc = run("pageable-memcpy")
f = finding(doc, "pageable-memcpy")
check(ev(f, "copies") == N, "pageable-memcpy: one pageable cudaMemcpyAsync per request")
# fnd_gpu's pageable cudaMemcpyAsync call lasts 330 us (100 -> 430 in its
# window): the host time the rule reports and saves is N of them.
blocked = ev(f, "blocked_ns")
check(blocked is not None and abs(blocked - N * 330000) <= N and
      f["saving_ns"] == f["basis_ns"] == blocked and ev(f, "per_request") == 1,
      f"pageable-memcpy: {blocked} ns blocked = {N} x 330 us, saved, 1 per request")
check(rule(doc, "sync-memcpy")["state"] == "quiet", "pageable-memcpy: not a sync-memcpy")

doc = run("excessive-sync")
f = finding(doc, "excessive-sync")
check(f["value"] == 5, f"excessive-sync: 5 syncs per request ({f['value']})")
check(f["saving_ns"] < ev(f, "blocked_ns"), "excessive-sync: one sync per request is kept")

doc = run("gpu-idle")
f = finding(doc, "gpu-idle")
check(f["value"] > 0.6, f"gpu-idle: GPU idle {f['value']:.2f} of the median request (8 ms host, ~2 ms GPU)")

doc = run("small-kernels")
f = finding(doc, "small-kernels")
check(f["value"] == 40, f"small-kernels: 40 short kernels per request ({f['value']})")
check("relu" in f["sites"]["items"][0]["what"], f"small-kernels names relu: {f['sites']}")

doc = run("no-overlap")
f = finding(doc, "no-overlap")
check(f["value"] == 0, "no-overlap: copies and kernels never overlap")
check(rule(good, "no-overlap")["value"] > 0.5, "healthy: copies overlap kernels")

doc = run("alloc-in-path")
f = finding(doc, "alloc-in-path")
check(ev(f, "calls") == 2 * N and ev(f, "outside") == 1,
      "alloc-in-path: cudaMalloc + cudaFree per request; the start-up cudaMalloc is not counted")

nogpu = os.path.join(d, "nogpu.db")
record(nogpu, os.path.join(BUILD, "samples", "lock_server"), "--threads", "2", "--requests", "50")
doc = findings(nogpu)
for r in GPU_RULES:
    check(rule(doc, r)["state"] == "not_evaluated" and rule(doc, r)["why"].startswith("no GPU data"),
          f"without GPU data {r} is not evaluated: {rule(doc, r)['why']}")
