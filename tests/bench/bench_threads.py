"""Thread-creation storms, gated (label bench): what a thread's start and
end cost under `latprof run` (default options: the interposer, the default
counters) against the same program bare.

  alive    5,000 threads alive at once (each takes a mutex, then waits on a
           barrier until all exist), then joined
  rounds   20 rounds of 250 threads created, each taking the mutex, joined

Each round runs bare and under latprof side by side; the program times its
storm itself (process start, exit and the import left out). The gate takes
the best round's ratio (latprof / bare): target <= 3x, noise margin 30% (a
storm is mostly the kernel's clone and the scheduler, which other load on
this 2-CPU machine moves by tens of percent)."""
import os
import shutil
import subprocess
import tempfile

import lpgate
import lptest

ROUNDS = int(os.environ.get("LP_BENCH_ROUNDS", "5"))
STORMS = {"alive": ["alive", "5000"], "rounds": ["rounds", "20", "250"]}
TARGET, MARGIN = 3.0, 0.30


def seconds(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        lptest.fail(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
    kv = dict(t.split("=", 1) for t in p.stdout.split() if "=" in t)
    return float(kv["seconds"])


def main():
    exe = os.path.join(lptest.BUILD, "tests", "bench", "bench_threads")
    if not os.path.exists(exe):
        lptest.skip("bench_threads not built")
    d = tempfile.mkdtemp(prefix="lpbench-")
    res = {k: [] for k in STORMS}
    for _ in range(ROUNDS):
        for k, args in STORMS.items():
            bare = seconds([exe, *args])
            lp = seconds([lptest.LATPROF, "run", "-f", "-o", os.path.join(d, "t.db"), "--", exe,
                          *args])
            res[k].append((bare, lp))
    shutil.rmtree(d, ignore_errors=True)
    for k, runs in res.items():
        print(f"thread storm {k:6s} ({' '.join(STORMS[k])}): bare/latprof per round "
              f"{', '.join(f'{b * 1e3:.0f}/{t * 1e3:.0f}' for b, t in runs)} ms; ratios "
              f"{', '.join(f'{t / b:.2f}' for b, t in runs)}")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for k, runs in res.items():
        lpgate.gate(f"thread storm {k}, latprof run / bare (best of {ROUNDS})",
                    min(t / b for b, t in runs), TARGET, MARGIN)
    lpgate.finish()


if __name__ == "__main__":
    main()
