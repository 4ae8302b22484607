"""latprof benchmarks; figures only, never a failure on a ratio.

  run_bench.py lock     uncontended lock+unlock: bare vs under `latprof run`,
                        interleaved, 5 rounds, medians (target <= 1.10x)
  run_bench.py block    blocking-call hooks: 64-byte pipe write()+read() (under
                        the threshold) and nanosleep(0) (recorded), bare vs
                        under `latprof run`, interleaved (targets <= 1.10x)
  run_bench.py import   `latprof import` of 1M synthetic lock waits written
                        through the recording core (targets >= 1M records/s
                        on one core, <= 64 DB bytes per lock wait)
  run_bench.py diff     `latprof diff` of two 1 M-request, 4-stage databases made
                        in SQL (gen_diff_db.py): wall and CPU, median of
                        LP_BENCH_ROUNDS (target <= 2 s wall)
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LATPROF = os.environ.get("LATPROF", "latprof")
BUILD = os.environ.get("LP_BUILD", "build")
BENCH = os.path.join(BUILD, "tests", "bench")
ROUNDS = int(os.environ.get("LP_BENCH_ROUNDS", "5"))


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if p.returncode != 0:
        print(f"bench: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
        sys.exit(1)
    return p


def kv(text):
    return dict(t.split("=", 1) for t in text.split() if "=" in t)


def bench_lock():
    for mode, title in (("st", "one thread (glibc's single-threaded shortcut)"),
                        ("mt", "a second thread exists (any program that needs a lock)"),
                        ("spin", "a second thread exists")):
        bench_lock_mode(mode, title)


def interleaved(args):
    """ns_per_op of `args` bare and under `latprof run`, ROUNDS rounds
    alternating, so load on the machine hits both alike."""
    d = tempfile.mkdtemp(prefix="lpbench-")
    bare, traced = [], []
    for r in range(ROUNDS):
        bare.append(float(kv(run(args).stdout)["ns_per_op"]))
        p = run([LATPROF, "run", "--force", "-o", os.path.join(d, "bench.db"), "--", *args])
        traced.append(float(kv(p.stdout)["ns_per_op"]))
    shutil.rmtree(d, ignore_errors=True)
    return bare, traced


def bench_lock_mode(mode, title):
    iters = os.environ.get("LP_BENCH_LOCK_ITERS", "20000000")
    exe = os.path.join(BENCH, "bench_lock")
    bare, traced = interleaved([exe, iters] + ([mode] if mode != "st" else []))
    b, t = statistics.median(bare), statistics.median(traced)
    what = "pthread_spin_lock+unlock" if mode == "spin" else "pthread_mutex_lock+unlock"
    print(f"=== bench: uncontended {what}, {title} ===")
    print(f"iterations per run   {iters}, {ROUNDS} rounds interleaved")
    print(f"bare                 {b:8.2f} ns/op  (rounds: {', '.join(f'{x:.2f}' for x in bare)})")
    print(f"latprof run          {t:8.2f} ns/op  (rounds: {', '.join(f'{x:.2f}' for x in traced)})")
    print(f"ratio                {t / b:8.3f}x   (target <= 1.10x; LTTng-UST ~23x, uftrace ~42x)")
    print("=== end ===")


def bench_block():
    for mode, iters, what in (
            ("pipe", os.environ.get("LP_BENCH_PIPE_ITERS", "1000000"),
             "64-byte write()+read() on a pipe (under the threshold: no record)"),
            ("nanosleep", os.environ.get("LP_BENCH_SLEEP_ITERS", "20000"),
             "nanosleep(0) (over the threshold: each call recorded)")):
        bare, traced = interleaved([os.path.join(BENCH, "bench_block"), mode, iters])
        b, t = statistics.median(bare), statistics.median(traced)
        print(f"=== bench: {what} ===")
        print(f"iterations per run   {iters}, {ROUNDS} rounds interleaved")
        print(f"bare                 {b:10.2f} ns/op  (rounds: {', '.join(f'{x:.0f}' for x in bare)})")
        print(f"latprof run          {t:10.2f} ns/op  (rounds: {', '.join(f'{x:.0f}' for x in traced)})")
        print(f"ratio                {t / b:10.3f}x   (target <= 1.10x)")
        print("=== end ===")


def bench_import():
    n = int(os.environ.get("LP_BENCH_IMPORT_WAITS", "1000000"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    logs = os.path.join(d, "logs")
    os.mkdir(logs)
    run([os.path.join(BENCH, "bench_gen_log"), logs, str(n)])
    log_bytes = sum(os.stat(os.path.join(logs, f)).st_blocks * 512 for f in os.listdir(logs))
    walls, cpus, size, waits = [], [], 0, 0
    for r in range(ROUNDS):
        db = os.path.join(d, "import.db")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        run([LATPROF, "import", "--force", logs, "-o", db])
        walls.append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        size = os.path.getsize(db)
        out = subprocess.run(["sqlite3", db, "SELECT count(*) FROM lock_waits"],
                             capture_output=True, text=True)
        waits = int(out.stdout.strip() or 0) if out.returncode == 0 else n
    shutil.rmtree(d, ignore_errors=True)
    w, c = statistics.median(walls), statistics.median(cpus)
    print("=== bench: latprof import ===")
    print(f"lock waits           {waits} (generated {n}, 4 threads, {log_bytes / 2**20:.1f} MiB of log)")
    print(f"wall                 {w:8.3f} s median of {ROUNDS}  -> {waits / w / 1e6:.2f} M records/s")
    print(f"cpu (user+sys)       {c:8.3f} s median           -> {waits / c / 1e6:.2f} M records/s per core")
    print(f"database             {size} bytes -> {size / max(waits, 1):.1f} bytes per lock wait "
          f"(target <= 64)")
    print("target               >= 1.00 M records/s on one core")
    print("=== end ===")


def bench_diff():
    n = int(os.environ.get("LP_BENCH_DIFF_REQUESTS", "1000000"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_diff_db.py")
    a, b = os.path.join(d, "a.db"), os.path.join(d, "b.db")
    run([sys.executable, gen, a, str(n), "--seed", "1"])
    run([sys.executable, gen, b, str(n), "--seed", "2", "--slow", "10"])
    walls, cpus = [], []
    for r in range(ROUNDS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.run([LATPROF, "diff", a, b, "--no-findings"], capture_output=True,
                           text=True)
        walls.append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if p.returncode not in (0, 1):
            print(f"bench: latprof diff exited {p.returncode}\n{p.stderr}")
            sys.exit(1)
    infer = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("infer")]
    shutil.rmtree(d, ignore_errors=True)
    w, c = statistics.median(walls), statistics.median(cpus)
    print(f"=== bench: latprof diff, two databases of {n} requests x 4 stages ===")
    print(f"requests per side    {n} (infer 10% slower on the new side)")
    print(f"wall                 {w:8.3f} s median of {ROUNDS} (target <= 2 s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"cpu (user+sys)       {c:8.3f} s median (databases loaded on parallel threads)")
    print("findings             skipped (--no-findings: the rule engine is timed by its own "
          "report)")
    for ln in infer:
        print(f"row                  {ln.strip()}")
    print("=== end ===")


if __name__ == "__main__":
    what = sys.argv[1:] or ["lock", "block", "import", "diff"]
    for w in what:
        {"lock": bench_lock, "block": bench_block, "import": bench_import, "diff": bench_diff}[w]()
