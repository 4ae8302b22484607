"""NVTX push+pop cost against its floor, gated (label bench).

tests/bench/bench_nvtx times batches of push+pop pairs and, interleaved in
the same process, batches of two TSC reads (a pair's two time stamps: the
floor of any recorded pair); it prints the best batch of each and their
ratio. Run LP_BENCH_ROUNDS rounds (default 5) of each configuration,
interleaved; the gate takes the best round's ratio:
  inject     LATPROF_DIR + NVTX_INJECTION64_PATH set directly, counters off
  counters   the same with the default CPU counter set (a thread reads its
             counters at most once per LATPROF_COUNTERS_INTERVAL_NS, 20 us)
  run        `latprof run --counters none` (NVTX + the LD_PRELOAD interposer)
  run-ctr    `latprof run` with the default counters
  every      counters read at every boundary (interval 0): printed, not gated
  bare       no tool (NVTX calls are no-ops): printed, not gated
Target: a recorded pair <= 2x two TSC reads (noise margin 15%: the two are
measured side by side, best of the rounds; run-to-run spread here ~5%).
LP_BENCH_NVTX_CONFIGS=a,b limits the configurations (the slowed-build test)."""
import os
import shutil
import subprocess
import sys
import tempfile

import lpgate
import lptest

ROUNDS = int(os.environ.get("LP_BENCH_ROUNDS", "5"))
PAIRS = os.environ.get("LP_BENCH_NVTX_PAIRS", "2000000")
TARGET, MARGIN = 2.0, 0.15
ALL = ("bare", "inject", "counters", "run", "run-ctr", "every")
CONFIGS = [c for c in os.environ.get("LP_BENCH_NVTX_CONFIGS", ",".join(ALL)).split(",") if c]


def kv(out):
    return {k: float(v) for k, v in (t.split("=", 1) for t in out.split() if "=" in t)}


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if p.returncode:
        lptest.fail(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return kv(p.stdout)


def main():
    exe = os.path.join(lptest.BUILD, "tests", "bench", "bench_nvtx")
    lib = os.path.join(lptest.BUILD, "lib", "latprof", "liblatprof_nvtx.so")
    if not (os.path.exists(exe) and os.path.exists(lib)):
        lptest.skip("bench_nvtx or liblatprof_nvtx.so not built")
    res = {k: [] for k in CONFIGS}
    direct = {"inject": {"LATPROF_COUNTERS": "off"}, "counters": {"LATPROF_COUNTERS": ""},
              "every": {"LATPROF_COUNTERS": "", "LATPROF_COUNTERS_INTERVAL_NS": "0"}}
    few = str(max(int(PAIRS) // 20, 20000))
    for _ in range(ROUNDS):
        for k in CONFIGS:
            d = tempfile.mkdtemp(prefix="lpbench-")
            if k == "bare":
                o = run([exe, PAIRS], env={"NVTX_INJECTION64_PATH": ""})
            elif k in direct:
                o = run([exe, few if k == "every" else PAIRS],
                        env={"LATPROF_DIR": d, "NVTX_INJECTION64_PATH": lib, **direct[k]})
            else:
                o = run([lptest.LATPROF, "run", "--counters",
                         "none" if k == "run" else "default", "-o", os.path.join(d, "b.db"),
                         "--", exe, PAIRS])
            shutil.rmtree(d)
            res[k].append(o)
    for k in CONFIGS:
        best = min(res[k], key=lambda o: o["ratio"])
        ratios = ", ".join(f"{o['ratio']:.2f}" for o in res[k])
        print(f"nvtx push+pop {k:8s}: best batch {best['best_ns_per_pair']:7.2f} ns/pair, two "
              f"TSC reads {best['tsc2_best_ns']:.2f} ns -> {best['ratio']:.2f}x (rounds: {ratios}); "
              f"mean {min(o['ns_per_pair'] for o in res[k]):.1f} ns/pair")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for k in CONFIGS:
        if k in ("bare", "every"):
            continue
        lpgate.gate(f"nvtx push+pop, {k}, per two TSC reads (best of {ROUNDS})",
                    min(o["ratio"] for o in res[k]), TARGET, MARGIN)
    lpgate.finish()


if __name__ == "__main__":
    main()
