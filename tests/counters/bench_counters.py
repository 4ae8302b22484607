"""Benchmark (label bench): cost per stage boundary with the default
counter set, and infer_server recorded with counters on vs off. Prints
figures and ratios; never fails on them (target: <= 1.5 us per boundary)."""
import os
import statistics
import subprocess
import time

from lptest import BUILD, check, latprof, sample, skip, tmpdir

bench = os.path.join(BUILD, "tests", "bench", "bench_counters")
d = tmpdir()


def boundary_ns(counters):
    logs = tmpdir()
    env = dict(os.environ, LATPROF_DIR=logs, LATPROF_COUNTERS=counters)
    out = subprocess.run([bench, "20000"], capture_output=True, text=True, env=env, check=True)
    return float(out.stdout.split()[1])


on = boundary_ns("default")
off = boundary_ns("none")
print(f"bench counters: boundary cost with the default set: {on:.0f} ns "
      f"(counters off: {off:.0f} ns; target <= 1500 ns: {on / 1500:.2f}x of target)")

srv = sample("infer_server")
if not os.path.exists(srv):
    skip("samples/infer_server not built")
args = ["--requests", "400", "--threads", "2", "--decode-us", "50", "--pre-us", "50",
        "--infer-us", "200", "--post-us", "50"]


def wall(counters):
    times = []
    for i in range(3):
        t0 = time.monotonic()
        latprof("run", "-f", "-o", os.path.join(d, f"s-{counters}.db"), "--counters", counters,
                "--", srv, *args, check=0)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


w_on, w_off = wall("default"), wall("none")
print(f"bench counters: infer_server {' '.join(args)}: counters on {w_on * 1000:.0f} ms, "
      f"off {w_off * 1000:.0f} ms, ratio {w_on / w_off:.3f}")
check(True, "benchmark ran")
