"""The benchmarks gate: a build whose record path is deliberately slowed
(-DLATPROF_TEST_SLOW_HOTPATH=ON: a short spin in every record) makes the
NVTX benchmark fail, naming the figure that missed its target, while the
same benchmark passes on this build (bench_nvtx_pushpop). Builds the few
targets it needs in a build directory of its own."""
import os
import subprocess
import sys

from lptest import BUILD, check, fail, skip

src = os.environ.get("LP_SRC")
here = os.path.dirname(os.path.abspath(__file__))
slow = os.path.join(os.path.abspath(BUILD), "tests", "bench", "slowed-build")
if not src:
    skip("LP_SRC not set (run under ctest)")
if not os.path.exists(os.path.join(BUILD, "tests", "bench", "bench_nvtx")):
    skip("bench_nvtx not built (no NVTX3 headers)")
cfg = subprocess.run(["cmake", "-S", src, "-B", slow, "-DLATPROF_TEST_SLOW_HOTPATH=ON",
                      "-DLATPROF_WERROR=OFF"], capture_output=True, text=True)
if cfg.returncode:
    fail(f"configuring the slowed build failed\n{cfg.stdout}{cfg.stderr}")
b = subprocess.run(["cmake", "--build", slow, "-j2", "--target", "latprof_core", "latprof_nvtx",
                    "bench_nvtx"], capture_output=True, text=True)
if b.returncode:
    fail(f"building the slowed build failed\n{b.stdout[-3000:]}{b.stderr[-3000:]}")
env = dict(os.environ, LP_BUILD=slow, LP_BENCH_ROUNDS="2", LP_BENCH_NVTX_CONFIGS="inject,counters",
           LP_BENCH_NVTX_PAIRS="400000")
p = subprocess.run([sys.executable, os.path.join(here, "..", "nvtx", "bench_nvtx.py")],
                   capture_output=True, text=True, env=env)
print(p.stdout)
check(p.returncode == 1, f"the slowed build's NVTX benchmark fails (exit 1, got {p.returncode})"
      f"\n{p.stderr}")
fails = [ln for ln in p.stdout.splitlines() if ln.startswith("gate FAIL nvtx push+pop, inject")]
check(len(fails) == 1, "it names the figure that missed its target (inject)")
check("gates: 0 of 2 met" in p.stdout, "both gated figures missed")
