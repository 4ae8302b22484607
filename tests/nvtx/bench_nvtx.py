"""NVTX push+pop cost (issue 3 perf target: <= 60 ns per recorded pair).

Runs tests/bench/bench_nvtx three ways, interleaved, LP_BENCH_ROUNDS
rounds (default 5), and prints medians:
  bare      no tool: NVTX calls are no-ops
  inject    LATPROF_DIR + NVTX_INJECTION64_PATH set directly (NVTX only)
  run       under `latprof run` (NVTX + the LD_PRELOAD lock interposer)
Figures only: never fails on a ratio."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import lptest

ROUNDS = int(os.environ.get("LP_BENCH_ROUNDS", "5"))
PAIRS = os.environ.get("LP_BENCH_NVTX_PAIRS", "2000000")


def ns(out):
    kv = dict(t.split("=", 1) for t in out.split() if "=" in t)
    return float(kv["ns_per_pair"])


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if p.returncode:
        lptest.fail(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def main():
    exe = os.path.join(lptest.BUILD, "tests", "bench", "bench_nvtx")
    lib = os.path.join(lptest.BUILD, "lib", "latprof", "liblatprof_nvtx.so")
    if not (os.path.exists(exe) and os.path.exists(lib)):
        lptest.skip("bench_nvtx or liblatprof_nvtx.so not built")
    res = {"bare": [], "inject": [], "run": []}
    for _ in range(ROUNDS):
        res["bare"].append(ns(run([exe, PAIRS], env={"NVTX_INJECTION64_PATH": ""})))
        d = tempfile.mkdtemp(prefix="lpbench-")
        res["inject"].append(ns(run([exe, PAIRS], env={"LATPROF_DIR": d,
                                                         "NVTX_INJECTION64_PATH": lib})))
        shutil.rmtree(d)
        d = tempfile.mkdtemp(prefix="lpbench-")
        out = run([lptest.LATPROF, "run", "-o", os.path.join(d, "b.db"), "--", exe, PAIRS])
        res["run"].append(ns(out))
        shutil.rmtree(d)
    med = {k: statistics.median(v) for k, v in res.items()}
    for k, v in res.items():
        print(f"nvtx push+pop {k:6s}: median {med[k]:7.2f} ns/pair  "
              f"(rounds: {', '.join(f'{x:.1f}' for x in v)})")
    base = max(med["bare"], 0.01)
    print(f"nvtx push+pop recorded: {med['inject']:.1f} ns/pair (target <= 60 ns), "
          f"{med['inject'] / base:.1f}x the no-tool cost of {med['bare']:.2f} ns; "
          f"under latprof run {med['run']:.1f} ns/pair")


if __name__ == "__main__":
    main()
    sys.exit(0)
