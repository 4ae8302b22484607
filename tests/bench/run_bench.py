"""latprof benchmarks. The recording benchmarks (lock, block) gate: the
best pair's ratio (latprof / bare, side by side) must meet its target
within a 30% noise margin (tests/lib/lpgate.py); the others print figures.

  run_bench.py lock     uncontended lock+unlock: bare vs under `latprof run`,
                        interleaved, 5 rounds (target <= 1.10x)
  run_bench.py block    blocking-call hooks: 64-byte pipe write()+read() (under
                        the threshold) and nanosleep(0) (recorded), bare vs
                        under `latprof run`, interleaved (targets <= 1.10x);
                        and a ping-pong of two threads on one CPU (context
                        switches, with the default counters)
                        Ratios of both: the median over the rounds of the
                        best batch under latprof / the best batch bare (the
                        means are printed too)
  run_bench.py import   `latprof import` of 1M synthetic lock waits written
                        through the recording core (targets >= 2M records/s
                        on one core, <= 64 DB bytes per lock wait), beside
                        SQLite's own bulk insert of the same rows, and of
                        narrow rows (start_ns, dur_ns and their id) into a
                        table of those alone: what the machine allows a row
                        that narrow (tests/bench/sqlite_ref.c)
  run_bench.py diff     `latprof diff` of two 1 M-request, 4-stage databases made
                        in SQL (gen_diff_db.py): wall and CPU, median of
                        LP_BENCH_ROUNDS (target <= 2 s wall); with
                        LP_BENCH_RT=1 (root) each diff runs at real-time
                        priority (chrt -f 50), so that other programs on a
                        shared machine do not count in its wall
  run_bench.py symcache import of one recorded run (Python threads on
                        sqlite3: libpython + libsqlite3 stacks) with an
                        empty symbol cache, then again: symbolization time
                        both times (meta import.symbolize_ns; target >= 5x
                        lower the second time)
  run_bench.py import-nsys    `latprof import` of a generated Nsight Systems
                        export of ~1M rows (target >= 1M rows/s)
  run_bench.py import-kineto  `latprof import` of a generated Kineto trace of
                        LP_BENCH_KINETO_MB (default 1024) MiB of JSON, and of
                        one an eighth that size, LP_BENCH_KINETO_ROUNDS
                        (default 3) rounds each, medians of wall and CPU
                        in MB/s (10^6, the target's unit) and MiB/s
                        (targets >= 50 MB/s, peak RSS < 300 MB and
                        independent of the trace's size); LP_BENCH_RT=1 as
                        for diff
  run_bench.py import-kineto-string  `latprof import` of a small Kineto trace
                        holding one string of 8, 32, 64 and 256 MiB
                        (LP_BENCH_STRING_MB), medians of LP_BENCH_KINETO_ROUNDS
                        (default 3): wall and CPU, and both per MiB of string
                        over the floor (the same trace without the string,
                        measured in the same run); target: the largest's
                        per-MiB time within 1.5x the 8 MiB one's (linear in
                        string length; CPU time is the figure a loaded machine
                        leaves intact)
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import lpgate

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


def interleaved(args, env=None):
    """ns_per_op and best_ns_per_op of `args` bare and under `latprof run`
    (with `env` added), ROUNDS rounds alternating, so load on the machine
    hits both alike: (bare means, latprof means, bare best batches, latprof
    best batches, latprof's direct_best_ns_per_op where the program prints
    one)."""
    d = tempfile.mkdtemp(prefix="lpbench-")
    bare, traced, bare_best, traced_best, direct = [], [], [], [], []
    for r in range(ROUNDS):
        o = kv(run(args).stdout)
        bare.append(float(o["ns_per_op"]))
        bare_best.append(float(o["best_ns_per_op"]))
        o = kv(run([LATPROF, "run", "--force", "-o", os.path.join(d, "bench.db"), "--",
                    *args], env=env).stdout)
        traced.append(float(o["ns_per_op"]))
        traced_best.append(float(o["best_ns_per_op"]))
        if "direct_best_ns_per_op" in o:
            direct.append(float(o["direct_best_ns_per_op"]))
    shutil.rmtree(d, ignore_errors=True)
    return bare, traced, bare_best, traced_best, direct


def print_interleaved(what, iters, runs, fmt, target, ref="", margin=0.30):
    """The means, then the ratio: the median over the interleaved pairs of
    latprof's best batch / bare's best batch. The fastest batch of each run
    is the code's own cost; the mean carries whatever else the machine ran.
    Pairs are interleaved, so their ratios share the load of the moment."""
    bare, traced, bare_best, traced_best, direct = runs
    b, t = statistics.median(bare), statistics.median(traced)
    print(f"=== bench: {what} ===")
    print(f"iterations per run   {iters}, {ROUNDS} rounds interleaved")
    print(f"bare                 {b:8.2f} ns/op  (rounds: {', '.join(fmt(x) for x in bare)})")
    print(f"latprof run          {t:8.2f} ns/op  (rounds: {', '.join(fmt(x) for x in traced)})")
    print(f"ratio of means       {t / b:8.3f}x")
    pairs = [x / y for x, y in zip(traced_best, bare_best)]
    print(f"best batch           bare {statistics.median(bare_best):.2f} ns/op, latprof "
          f"{statistics.median(traced_best):.2f} ns/op (pair ratios: "
          f"{', '.join(f'{x:.3f}' for x in pairs)})")
    print(f"ratio                {statistics.median(pairs):8.3f}x   (median of pairs' best "
          f"batches; target <= {target:.2f}x{ref})")
    lpgate.gate(f"{what}: latprof run / bare, best pair of {ROUNDS}", min(pairs), target, margin)
    if direct:
        # In one process, batches through the hooks against batches calling
        # libc's own functions: the hooks' cost free of the machine's drift.
        added = [x - y for x, y in zip(traced_best, direct)]
        ratios = [x / y for x, y in zip(traced_best, direct)]
        print(f"hooks in-process     +{statistics.median(added):.1f} ns/op, "
              f"{statistics.median(ratios):.3f}x (under latprof, best batch through the hooks "
              f"against best batch calling libc directly, interleaved in one process: "
              f"{', '.join(f'{x:+.0f}' for x in added)})")
    print("=== end ===")


def bench_lock_mode(mode, title):
    iters = os.environ.get("LP_BENCH_LOCK_ITERS", "20000000")
    args = [os.path.join(BENCH, "bench_lock"), iters] + ([mode] if mode != "st" else [])
    what = "pthread_spin_lock+unlock" if mode == "spin" else "pthread_mutex_lock+unlock"
    print_interleaved(f"uncontended {what}, {title}", iters, interleaved(args),
                      lambda x: f"{x:.2f}", 1.10, "; LTTng-UST ~23x, uftrace ~42x")


def bench_block():
    for mode, iters, what in (
            ("pipe", os.environ.get("LP_BENCH_PIPE_ITERS", "1000000"),
             "64-byte write()+read() on a pipe (under the threshold: no record)"),
            ("nanosleep", os.environ.get("LP_BENCH_SLEEP_ITERS", "20000"),
             "nanosleep(0) (over the threshold: each call recorded)"),
            ("pingpong", os.environ.get("LP_BENCH_PINGPONG_ITERS", "100000"),
             "two threads on one CPU passing a byte over pipes (2 context switches a round "
             "trip; no NVTX range, so no counter group)")):
        runs = interleaved([os.path.join(BENCH, "bench_block"), mode, iters])
        print_interleaved(what, iters, runs, lambda x: f"{x:.0f}", 1.10)
    # The same pipe loop timed as without the rseq check (lp_rseq.h): a
    # second clock read on every call.
    iters = os.environ.get("LP_BENCH_PIPE_ITERS", "1000000")
    runs = interleaved([os.path.join(BENCH, "bench_block"), "pipe", iters],
                       env={"LATPROF_BLOCK_SWITCH": "off"})
    print_interleaved("64-byte write()+read() on a pipe, LATPROF_BLOCK_SWITCH=off (two clock "
                      "reads per call, the cost before rseq)", iters, runs, lambda x: f"{x:.0f}",
                      1.10)


def child_cpu(cmd):
    """User+system CPU seconds of running cmd (from the children's rusage,
    so that the importer and SQLite's reference count alike: process
    start and exit included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_import():
    n = int(os.environ.get("LP_BENCH_IMPORT_WAITS", "1000000"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    logs = os.path.join(d, "logs")
    os.mkdir(logs)
    run([os.path.join(BENCH, "bench_gen_log"), logs, str(n)])
    log_bytes = sum(os.stat(os.path.join(logs, f)).st_blocks * 512 for f in os.listdir(logs))
    walls, cpus, refs, narrow, size, waits = [], [], [], [], 0, 0
    db = os.path.join(d, "import.db")

    def ref(shape, into):
        into.append(child_cpu([os.path.join(BENCH, "bench_sqlite_ref"),
                               os.path.join(d, "ref.db"), str(n), shape]))

    def imp():
        t0 = time.monotonic()
        cpus.append(child_cpu([LATPROF, "import", "--force", logs, "-o", db]))
        walls.append(time.monotonic() - t0)

    for r in range(ROUNDS):
        # SQLite's own ceilings, interleaved with the imports (same load),
        # in an order reversed every round: on this VM a run after a
        # different program took 7-15% more CPU than after its own kind
        # (6 rounds of each pair), whichever of the two came second.
        steps = [imp, lambda: ref("lock_waits", refs), lambda: ref("narrow", narrow)]
        for step in steps if r % 2 == 0 else reversed(steps):
            step()
        size = os.path.getsize(db)
        out = subprocess.run(["sqlite3", db, "SELECT count(*) FROM lock_waits"],
                             capture_output=True, text=True)
        waits = int(out.stdout.strip() or 0) if out.returncode == 0 else n
    shutil.rmtree(d, ignore_errors=True)
    w, c, ref = statistics.median(walls), statistics.median(cpus), statistics.median(refs)
    nar = statistics.median(narrow)
    print("=== bench: latprof import ===")
    print(f"lock waits           {waits} (generated {n}, 4 threads, {log_bytes / 2**20:.1f} MiB of log)")
    print(f"wall                 {w:8.3f} s median of {ROUNDS}  -> {waits / w / 1e6:.2f} M records/s")
    print(f"cpu (user+sys)       {c:8.3f} s median           -> {waits / c / 1e6:.2f} M records/s per core")
    print(f"database             {size} bytes -> {size / max(waits, 1):.1f} bytes per lock wait "
          f"(target <= 64)")
    print(f"SQLite alone         {ref:8.3f} s median           -> {n / ref / 1e6:.2f} M rows/s "
          f"(bulk insert of {n} lock_waits-shaped rows stored as the importer stores them: "
          f"same pragmas and 64 KiB pages, clustered by (start_ns, id), rows in start order; "
          f"user+sys; latprof import at {ref / c:.2f}x of it)")
    print(f"SQLite, narrow row   {nar:8.3f} s median           -> {n / nar / 1e6:.2f} M rows/s "
          f"(the same, rows of start_ns, dur_ns and id only: lock_waits' row costs "
          f"{ref / nar:.2f}x as much)")
    print("target               >= 2.00 M records/s on one core")
    print("=== end ===")


SYMCACHE_APP = """
import sqlite3, threading
def work(i):
    c = sqlite3.connect(":memory:", check_same_thread=False)
    c.execute("create table t(a, b)")
    for k in range(3000):
        c.execute("insert into t values (?, ?)", (k, str(k)))
        if k % 100 == 0:
            c.execute("select count(*), sum(a) from t").fetchone()
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
"""


def symbolize_ms(db):
    out = subprocess.run(["sqlite3", db, "SELECT value FROM meta WHERE key = 'import.symbolize_ns'"],
                         capture_output=True, text=True).stdout.strip()
    return int(out or 0) / 1e6


def bench_symcache():
    d = tempfile.mkdtemp(prefix="lpbench-")
    app = os.path.join(d, "app.py")
    with open(app, "w") as f:
        f.write(SYMCACHE_APP)
    env = {"TMPDIR": d, "XDG_CACHE_HOME": os.path.join(d, "unused-cache")}
    p = run([LATPROF, "run", "--keep-logs", "-f", "-o", os.path.join(d, "run.db"), "--",
             sys.executable, app], env=env)
    logs = [l.split()[-1] for l in p.stderr.splitlines() if "event logs kept in" in l]
    if not logs:
        print(f"bench: no kept logs in latprof run's output\n{p.stderr}")
        sys.exit(1)
    cold, warm, wall_cold, wall_warm = [], [], [], []
    for r in range(ROUNDS):
        cache = os.path.join(d, f"cache-{r}")  # empty at first, warm the second time
        for times, walls in ((cold, wall_cold), (warm, wall_warm)):
            db = os.path.join(d, "again.db")
            t0 = time.monotonic()
            run([LATPROF, "import", "--force", logs[0], "-o", db], env={"XDG_CACHE_HOME": cache})
            walls.append(time.monotonic() - t0)
            times.append(symbolize_ms(db))
    frames = subprocess.run(["sqlite3", os.path.join(d, "again.db"),
                             "SELECT count(*) FROM frames"], capture_output=True, text=True)
    shutil.rmtree(d, ignore_errors=True)
    c, w = statistics.median(cold), statistics.median(warm)
    print("=== bench: symbol cache, re-import of one run ===")
    print(f"run                  {os.path.basename(sys.executable)} {ROUNDS} rounds, "
          f"{frames.stdout.strip()} frames")
    print(f"symbolization        empty cache {c:9.3f} ms   (rounds: "
          f"{', '.join(f'{x:.1f}' for x in cold)})")
    print(f"                     warm cache  {w:9.3f} ms   (rounds: "
          f"{', '.join(f'{x:.2f}' for x in warm)})")
    print(f"import wall          empty {statistics.median(wall_cold):.3f} s, warm "
          f"{statistics.median(wall_warm):.3f} s")
    print(f"ratio                {c / max(w, 1e-6):8.1f}x lower the second time (target >= 5x)")
    print("=== end ===")


def real_time():
    """LP_BENCH_RT=1: run the timed command at real-time priority (chrt -f
    50), so that other programs on a shared machine do not count in its
    wall; False where chrt -f cannot run (not root)."""
    rt = (os.environ.get("LP_BENCH_RT") == "1" and shutil.which("chrt") and
          subprocess.run(["chrt", "-f", "50", "true"], capture_output=True).returncode == 0)
    if os.environ.get("LP_BENCH_RT") == "1" and not rt:
        print("bench: LP_BENCH_RT=1 but chrt -f cannot run here (not root?): normal priority")
    return rt


def bench_diff():
    n = int(os.environ.get("LP_BENCH_DIFF_REQUESTS", "1000000"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_diff_db.py")
    a, b = os.path.join(d, "a.db"), os.path.join(d, "b.db")
    run([sys.executable, gen, a, str(n), "--seed", "1"])
    run([sys.executable, gen, b, str(n), "--seed", "2", "--slow", "10"])
    walls, cpus = [], []
    rt = real_time()
    for r in range(ROUNDS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.run((["chrt", "-f", "50"] if rt else []) +
                           [LATPROF, "diff", a, b, "--no-findings"], capture_output=True,
                           text=True)
        walls.append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        # 3: inconclusive (one run a side widens each interval by the
        # noise floor): a verdict, as 0 and 1 are; the bench times it.
        if p.returncode not in (0, 1, 3):
            print(f"bench: latprof diff exited {p.returncode}\n{p.stderr}")
            sys.exit(1)
    infer = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("infer")]
    shutil.rmtree(d, ignore_errors=True)
    w, c = statistics.median(walls), statistics.median(cpus)
    print(f"=== bench: latprof diff, two databases of {n} requests x 4 stages ===")
    print(f"requests per side    {n} (infer 10% slower on the new side)")
    print(f"wall                 {w:8.3f} s median of {ROUNDS} (target <= 2 s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
          f"{'; real-time priority, LP_BENCH_RT=1' if rt else ''})")
    print(f"wall, each round     {', '.join(f'{x:.2f}' for x in walls)} s")
    print(f"cpu (user+sys)       {c:8.3f} s median (databases loaded on parallel threads)")
    print("findings             skipped (--no-findings: the rule engine is timed by its own "
          "report)")
    for ln in infer:
        print(f"row                  {ln.strip()}")
    print("=== end ===")


# A child forked from this Python starts with its pages, and the kernel
# counts them in the child's peak RSS when it execs (the nsys bench read
# 99.5 MiB for an import of 30 MB, the generator's data held here); GNU
# time's own child is forked from a small process, so its %M is latprof's.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def timed_import(src, db, rt=False):
    """(wall s, cpu s, peak RSS bytes) of one `latprof import` (rt: at
    real-time priority, chrt -f 50)."""
    t0 = time.monotonic()
    p = subprocess.Popen((["chrt", "-f", "50"] if rt else []) +
                         ([GNU_TIME, "-f", "lpbench-maxrss %M"] if GNU_TIME else []) +
                         [LATPROF, "import", "--force", src, "-o", db],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        print(f"bench: latprof import {src} exited {p.returncode}: {err}")
        sys.exit(1)
    rss = [int(line.split()[1]) for line in err.splitlines() if line.startswith("lpbench-maxrss ")]
    return wall, ru.ru_utime + ru.ru_stime, (rss[-1] if rss else ru.ru_maxrss) * 1024


# The export's rows as latprof stores them, without latprof: SQLite's own
# INSERT ... SELECT from the ATTACHed export into latprof's tables (their
# CREATE statements and indexes read from latprof's database), with the
# importer's pragmas. The copy has no joins, names or checks: a ceiling,
# printed beside the import's rate, measured in the same rounds.
NSYS_REF_COPY = (
    "INSERT INTO kernels(process_id, device, context, stream, correlation_id, start_ns, end_ns, "
    "mangled_id, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, static_smem, "
    "dynamic_smem, registers, graph_id) SELECT 1, deviceId, contextId, streamId, correlationId, "
    "start, end, mangledName, demangledName, gridX, gridY, gridZ, blockX, blockY, blockZ, "
    "staticSharedMemory, dynamicSharedMemory, registersPerThread, 0 "
    "FROM src.CUPTI_ACTIVITY_KIND_KERNEL",
    "INSERT INTO cuda_api(process_id, thread_id, domain, cbid, name_id, correlation_id, "
    "start_ns, end_ns, return_value) SELECT 1, 1, 'runtime', 0, nameId, correlationId, start, "
    "end, returnValue FROM src.CUPTI_ACTIVITY_KIND_RUNTIME",
    "INSERT INTO memcpys(process_id, device, context, stream, correlation_id, start_ns, end_ns, "
    "bytes, copy_kind, src_kind, dst_kind, async) SELECT 1, deviceId, contextId, streamId, "
    "correlationId, start, end, bytes, 'HtoD', 'pinned', 'device', 1 "
    "FROM src.CUPTI_ACTIVITY_KIND_MEMCPY")


def nsys_sqlite_ref(src, lpdb, out, indexes):
    """CPU seconds of SQLite alone storing src's rows (above), into tables
    that have latprof's indexes (made first, as the importer does: faster
    here than building them after, 0.55 against 0.47 M rows/s) or none."""
    import sqlite3
    tables = ("kernels", "cuda_api", "memcpys")
    with sqlite3.connect(lpdb) as lp:
        q = "SELECT type, sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name IN (?,?,?)"
        ddl = lp.execute(q, tables).fetchall()
    if os.path.exists(out):
        os.unlink(out)
    c = sqlite3.connect(out, isolation_level=None)
    # the importer's own (import/lp_import.c: import_setup, then a foreign
    # capture's cache; 64 KiB pages for an input of 16 MiB or more)
    for pragma in ("page_size=65536", "journal_mode=OFF", "synchronous=OFF",
                   "locking_mode=EXCLUSIVE", "temp_store=FILE", "cache_size=-16384",
                   "secure_delete=OFF"):
        c.execute("PRAGMA " + pragma)
    for kind, sql in ddl:
        if kind == "table" or indexes:
            c.execute(sql)
    c.execute("ATTACH ? AS src", (src,))
    t0 = time.process_time()
    c.execute("BEGIN")
    for sql in NSYS_REF_COPY:
        c.execute(sql)
    c.execute("COMMIT")
    t1 = time.process_time()
    c.close()
    os.unlink(out)
    return t1 - t0


def bench_import_nsys():
    import nsysgen
    n = int(os.environ.get("LP_BENCH_NSYS_KERNELS", "480000"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    src, db = os.path.join(d, "big.sqlite"), os.path.join(d, "big.db")
    rows = nsysgen.make_big(src, n)
    runs, refs = [], []
    for _ in range(ROUNDS):  # interleaved: both under the same load
        runs.append(timed_import(src, db))
        refs.append([nsys_sqlite_ref(src, db, os.path.join(d, "ref.db"), ix) for ix in (1, 0)])
    shutil.rmtree(d, ignore_errors=True)
    w = statistics.median(r[0] for r in runs)
    c = statistics.median(r[1] for r in runs)
    rt, rc = statistics.median(r[0] for r in refs), statistics.median(r[1] for r in refs)
    print("=== bench: latprof import of an Nsight Systems export ===")
    print(f"rows                 {rows} (kernels, runtime calls, memcpys; generated by "
          f"tests/lib/nsysgen.py)")
    print(f"wall                 {w:8.3f} s median of {ROUNDS}  -> {rows / w / 1e6:.2f} M rows/s "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"cpu (user+sys)       {c:8.3f} s median           -> {rows / c / 1e6:.2f} M rows/s per core")
    print(f"each round           {', '.join(f'{r[0]:.2f}/{r[1]:.2f}' for r in runs)} s wall/cpu")
    print(f"peak RSS             {max(r[2] for r in runs) / 2**20:8.1f} MiB")
    print(f"SQLite alone         {rt:8.3f} s median of cpu -> {rows / rt / 1e6:.2f} M rows/s "
          f"(the same rows copied by INSERT ... SELECT into latprof's tables with their "
          f"indexes, same pragmas; latprof import at {rt / c:.2f}x of it)")
    print(f"SQLite, no indexes   {rc:8.3f} s median of cpu -> {rows / rc / 1e6:.2f} M rows/s "
          f"(the same copy into tables without indexes)")
    print("target               >= 1.00 M rows/s")
    print("=== end ===")


def bench_import_kineto():
    """MB = 10^6 bytes (the target's unit), MiB = 2^20; rates are bytes of
    uncompressed JSON per second of wall and of CPU (user+sys, both of the
    importer's threads: reader and row writer)."""
    import kinetogen
    mb = int(os.environ.get("LP_BENCH_KINETO_MB", "1024"))
    rounds = int(os.environ.get("LP_BENCH_KINETO_ROUNDS", "3"))
    rt = real_time()
    d = tempfile.mkdtemp(prefix="lpbench-")
    print("=== bench: latprof import of a Kineto trace ===")
    print(f"rounds               {rounds} per size, medians (load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs{'; real-time priority, LP_BENCH_RT=1' if rt else ''})")
    rss_all = []
    for size in (max(mb // 8, 1), mb):
        src, db = os.path.join(d, "big.pt.trace.json"), os.path.join(d, "big.db")
        kinetogen.stream_big(src, size * 2**20)  # written streaming, never held
        nbytes = os.path.getsize(src)
        runs = [timed_import(src, db, rt) for _ in range(rounds)]
        os.unlink(src)
        os.unlink(db)
        w = statistics.median(r[0] for r in runs)
        c = statistics.median(r[1] for r in runs)
        rss = max(r[2] for r in runs)
        rss_all.append(rss)
        print(f"{nbytes / 1e6:7.0f} MB ({nbytes / 2**20:.0f} MiB) of JSON")
        print(f"  wall               {w:7.2f} s -> {nbytes / w / 1e6:6.1f} MB/s ({nbytes / w / 2**20:.1f} "
              f"MiB/s); each round {', '.join(f'{r[0]:.2f}' for r in runs)} s")
        print(f"  cpu (user+sys)     {c:7.2f} s -> {nbytes / c / 1e6:6.1f} MB/s ({nbytes / c / 2**20:.1f} "
              f"MiB/s) of CPU time")
        print(f"  peak RSS           {rss / 1e6:7.1f} MB ({rss / 2**20:.1f} MiB)")
    shutil.rmtree(d, ignore_errors=True)
    print(f"target               >= 50 MB/s (47.7 MiB/s) wall; peak RSS < 300 MB, independent of "
          f"size ({rss_all[-1] / rss_all[0]:.2f}x at {mb // max(mb // 8, 1)}x the JSON)")
    print("=== end ===")


def bench_import_kineto_string():
    import kinetogen
    sizes = [int(x) for x in os.environ.get("LP_BENCH_STRING_MB", "8 32 64 256").split()]
    rounds = int(os.environ.get("LP_BENCH_KINETO_ROUNDS", "3"))
    d = tempfile.mkdtemp(prefix="lpbench-")
    src, db = os.path.join(d, "str.pt.trace.json"), os.path.join(d, "str.db")
    print("=== bench: latprof import of a Kineto trace holding one huge string ===")
    print(f"rounds               {rounds} per size, medians (load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs)")

    def medians(nbytes):
        kinetogen.huge_string(src, nbytes)
        os.sync()  # the next import is not to compete with the write-back
        runs = [timed_import(src, db) for _ in range(rounds)]
        os.unlink(src)
        return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))

    floor = medians(0)
    print(f"floor (no string)    {floor[0]:7.3f} s wall, {floor[1]:.3f} s CPU")
    per = {}
    for mb in sizes:
        w = medians(mb << 20)
        per[mb] = [max(w[i] - floor[i], 1e-3) / mb for i in (0, 1)]
        print(f"{mb:4d} MiB string      {w[0]:7.3f} s wall, {w[1]:.3f} s CPU; per MiB over the "
              f"floor: {per[mb][0] * 1000:.2f} ms wall, {per[mb][1] * 1000:.2f} ms CPU")
    shutil.rmtree(d, ignore_errors=True)
    lo, hi = min(sizes), max(sizes)
    print(f"per-MiB time         {per[hi][0] / per[lo][0]:.2f}x wall, {per[hi][1] / per[lo][1]:.2f}x "
          f"CPU at {hi} MiB vs {lo} MiB (target <= 1.5x: linear in string length)")
    print("=== end ===")


if __name__ == "__main__":
    what = sys.argv[1:] or ["lock", "block", "import", "symcache", "diff"]
    benches = {"lock": bench_lock, "block": bench_block, "import": bench_import,
               "symcache": bench_symcache, "diff": bench_diff, "import-nsys": bench_import_nsys,
               "import-kineto": bench_import_kineto,
               "import-kineto-string": bench_import_kineto_string}
    for w in what:
        benches[w]()
    lpgate.finish()
