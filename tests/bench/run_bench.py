"""latprof benchmarks; figures only, never a failure on a ratio.

  run_bench.py lock     uncontended lock+unlock: bare vs under `latprof run`,
                        interleaved, 5 rounds, medians (target <= 1.10x)
  run_bench.py import   `latprof import` of 1M synthetic lock waits written
                        through the recording core (targets >= 1M records/s
                        on one core, <= 64 DB bytes per lock wait)
  run_bench.py import-nsys    `latprof import` of a generated Nsight Systems
                        export of ~1M rows (target >= 1M rows/s)
  run_bench.py import-kineto  `latprof import` of a generated Kineto trace of
                        LP_BENCH_KINETO_MB (default 1024) MB of JSON, and of
                        one an eighth that size (targets >= 50 MB/s, peak
                        RSS < 300 MB and independent of the trace's size)
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


def bench_lock_mode(mode, title):
    iters = os.environ.get("LP_BENCH_LOCK_ITERS", "20000000")
    d = tempfile.mkdtemp(prefix="lpbench-")
    exe = os.path.join(BENCH, "bench_lock")
    args = [exe, iters] + ([mode] if mode != "st" else [])
    bare, traced = [], []
    for r in range(ROUNDS):
        bare.append(float(kv(run(args).stdout)["ns_per_op"]))
        db = os.path.join(d, "lock.db")
        p = run([LATPROF, "run", "--force", "-o", db, "--", *args])
        traced.append(float(kv(p.stdout)["ns_per_op"]))
    shutil.rmtree(d, ignore_errors=True)
    b, t = statistics.median(bare), statistics.median(traced)
    what = "pthread_spin_lock+unlock" if mode == "spin" else "pthread_mutex_lock+unlock"
    print(f"=== bench: uncontended {what}, {title} ===")
    print(f"iterations per run   {iters}, {ROUNDS} rounds interleaved")
    print(f"bare                 {b:8.2f} ns/op  (rounds: {', '.join(f'{x:.2f}' for x in bare)})")
    print(f"latprof run          {t:8.2f} ns/op  (rounds: {', '.join(f'{x:.2f}' for x in traced)})")
    print(f"ratio                {t / b:8.3f}x   (target <= 1.10x; LTTng-UST ~23x, uftrace ~42x)")
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


def timed_import(src, db):
    """(wall s, cpu s, peak RSS bytes) of one `latprof import`."""
    t0 = time.monotonic()
    p = subprocess.Popen([LATPROF, "import", "--force", src, "-o", db],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        print(f"bench: latprof import {src} exited {p.returncode}: {err}")
        sys.exit(1)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def import_gen():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "import"))


def bench_import_nsys():
    import_gen()
    import nsysgen
    n = int(os.environ.get("LP_BENCH_NSYS_KERNELS", "480000"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    src, db = os.path.join(d, "big.sqlite"), os.path.join(d, "big.db")
    rows = nsysgen.make_big(src, n)
    runs = [timed_import(src, db) for _ in range(ROUNDS)]
    shutil.rmtree(d, ignore_errors=True)
    w = statistics.median(r[0] for r in runs)
    c = statistics.median(r[1] for r in runs)
    print("=== bench: latprof import of an Nsight Systems export ===")
    print(f"rows                 {rows} (kernels, runtime calls, memcpys; generated by "
          f"tests/import/nsysgen.py)")
    print(f"wall                 {w:8.3f} s median of {ROUNDS}  -> {rows / w / 1e6:.2f} M rows/s")
    print(f"cpu (user+sys)       {c:8.3f} s median           -> {rows / c / 1e6:.2f} M rows/s per core")
    print(f"peak RSS             {max(r[2] for r in runs) / 2**20:8.1f} MiB")
    print("target               >= 1.00 M rows/s")
    print("=== end ===")


def bench_import_kineto():
    import_gen()
    import kinetogen
    mb = int(os.environ.get("LP_BENCH_KINETO_MB", "1024"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    print("=== bench: latprof import of a Kineto trace ===")
    for size in (max(mb // 8, 1), mb):
        src, db = os.path.join(d, "big.pt.trace.json"), os.path.join(d, "big.db")
        kinetogen.stream_big(src, size * 2**20)  # written streaming, never held
        nbytes = os.path.getsize(src)
        w, c, rss = timed_import(src, db)
        os.unlink(src)
        os.unlink(db)
        print(f"{nbytes / 2**20:7.0f} MiB JSON     wall {w:7.2f} s -> {nbytes / w / 2**20:6.1f} MiB/s, "
              f"cpu {c:7.2f} s -> {nbytes / c / 2**20:6.1f} MiB/s per core, peak RSS "
              f"{rss / 2**20:6.1f} MiB")
    shutil.rmtree(d, ignore_errors=True)
    print("target               >= 50 MB/s; peak RSS < 300 MB, the same at both sizes")
    print("=== end ===")


if __name__ == "__main__":
    what = sys.argv[1:] or ["lock", "import"]
    for w in what:
        {"lock": bench_lock, "import": bench_import, "import-nsys": bench_import_nsys,
         "import-kineto": bench_import_kineto}[w]()
