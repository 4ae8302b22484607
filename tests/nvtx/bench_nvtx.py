"""NVTX push+pop cost (issue 3 perf target: <= 60 ns per recorded pair).

Runs tests/bench/bench_nvtx four ways, interleaved, LP_BENCH_ROUNDS
rounds (default 5), and prints medians of the mean and of the best batch
(the best batch is the code's own cost on a loaded or virtual machine):
  bare       no tool: NVTX calls are no-ops
  inject     LATPROF_DIR + NVTX_INJECTION64_PATH set directly, counters off
  counters   the same with the default CPU counter set (a thread reads its
             counters at most once per LATPROF_COUNTERS_INTERVAL_NS, 20 us)
  run        `latprof run --counters none` (NVTX + the LD_PRELOAD interposer)
  run-ctr    `latprof run` with the default counters
  every      counters read at every boundary (interval 0; 1/20 of the pairs)
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
    return float(kv["ns_per_pair"]), float(kv["best_ns_per_pair"])


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
    res = {"bare": [], "inject": [], "counters": [], "run": [], "run-ctr": [], "every": []}
    off = {"LATPROF_COUNTERS": "off"}
    every = {"LATPROF_COUNTERS": "", "LATPROF_COUNTERS_INTERVAL_NS": "0"}
    few = str(max(int(PAIRS) // 20, 20000))
    for _ in range(ROUNDS):
        res["bare"].append(ns(run([exe, PAIRS], env={"NVTX_INJECTION64_PATH": ""})))
        for k, extra, n in (("inject", off, PAIRS), ("counters", {"LATPROF_COUNTERS": ""}, PAIRS),
                            ("every", every, few)):
            d = tempfile.mkdtemp(prefix="lpbench-")
            res[k].append(ns(run([exe, n], env={"LATPROF_DIR": d,
                                                 "NVTX_INJECTION64_PATH": lib, **extra})))
            shutil.rmtree(d)
        for k, ctr in (("run", "none"), ("run-ctr", "default")):
            d = tempfile.mkdtemp(prefix="lpbench-")
            out = run([lptest.LATPROF, "run", "--counters", ctr, "-o", os.path.join(d, "b.db"),
                       "--", exe, PAIRS])
            res[k].append(ns(out))
            shutil.rmtree(d)
    mean = {k: statistics.median(x[0] for x in v) for k, v in res.items()}
    best = {k: statistics.median(x[1] for x in v) for k, v in res.items()}
    for k in res:
        print(f"nvtx push+pop {k:8s}: mean {mean[k]:8.2f} ns/pair, best batch "
              f"{best[k]:7.2f} ns/pair")
    base = max(best["bare"], 0.01)
    print(f"nvtx push+pop recorded: {best['inject']:.1f} ns/pair best batch "
          f"({mean['inject']:.1f} mean; target <= 60 ns), {best['inject'] / base:.0f}x the "
          f"no-tool cost of {best['bare']:.2f} ns; under latprof run {best['run']:.1f} ns")
    print(f"nvtx push+pop with the default counters: {best['counters']:.1f} ns/pair best batch "
          f"({mean['counters']:.1f} mean; target <= 60 ns), "
          f"{best['counters'] / max(best['inject'], 0.01):.2f}x counters off; under latprof "
          f"run {best['run-ctr']:.1f} ns ({best['run-ctr'] / max(best['run'], 0.01):.2f}x "
          f"--counters none); reading at every boundary instead: {best['every']:.0f} ns")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
    sys.exit(0)
