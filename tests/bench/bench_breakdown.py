"""Benchmark: `latprof report --breakdown` (and --ranges) on a database of
N ranges (default 10M, or argv[1] / LP_BENCH_RANGES), generated directly in
the real schema (schemas/core.sql + schemas/nvtx.sql, PRAGMA user_version
from db/lp_db.h) with the importer's indexes. Prints seconds and the
child's max RSS against the targets (5 s, 1 GB) as ratios; never fails on
them (tests must not time things), only on a broken run."""
import os
import re
import resource
import sqlite3
import subprocess
import sys
import time

from lptest import LATPROF, SRC, fail, tmpdir

N = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LP_BENCH_RANGES", 10_000_000))
THREADS = 8
STAGES = [("decode", 2_100_000), ("preprocess", 1_800_000), ("infer", 6_400_000),
          ("postprocess", 700_000)]
PER_REQ = 1 + len(STAGES)


def schema_version():
    with open(os.path.join(SRC, "db", "lp_db.h")) as f:
        return int(re.search(r"#define LP_SCHEMA_VERSION (\d+)", f.read()).group(1))


def ranges():
    """Requests on THREADS threads, back to back, each with 4 stages; the
    stage costs jitter by up to 10% (a hash of the request number)."""
    rid = 0
    nreq = N // PER_REQ
    t_next = [1_000_000_000] * THREADS
    for r in range(nreq):
        th = r % THREADS
        jit = (r * 2654435761) % 1000
        start = t_next[th]
        t = start + 5_000
        rid += 1
        req_id = rid
        kids = []
        for i, (_, cost) in enumerate(STAGES):
            d = cost + cost * jit // 10_000
            if i == 2 and r % 100 == 0:
                d += 20_000_000  # the locked path: 1% of requests
            rid += 1
            kids.append((rid, i + 2, t, t + d, req_id))
            t += d + 2_000
        end = t + 3_000
        yield (req_id, 1, start, end, th + 1, None, 0)
        for k in kids:
            yield (k[0], k[1], k[2], k[3], th + 1, k[4], 1)
        t_next[th] = end + 10_000


def lock_waits():
    """The locked requests wait 19 ms inside infer (same generator order)."""
    t_next = [1_000_000_000] * THREADS
    for r in range(N // PER_REQ):
        th = r % THREADS
        jit = (r * 2654435761) % 1000
        t = t_next[th] + 5_000
        for i, (_, cost) in enumerate(STAGES):
            d = cost + cost * jit // 10_000 + (20_000_000 if i == 2 and r % 100 == 0 else 0)
            if i == 2 and r % 100 == 0:
                yield (1, th + 1, t + 100_000, 19_000_000)
            t += d + 2_000
        t_next[th] = t + 3_000 + 10_000


def generate(path):
    c = sqlite3.connect(path)
    c.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
    for f in ("core.sql", "nvtx.sql"):
        with open(os.path.join(SRC, "schemas", f)) as fh:
            c.executescript(fh.read())
    c.execute(f"PRAGMA user_version = {schema_version()}")
    c.execute("INSERT INTO meta VALUES ('generator', 'tests/bench/bench_breakdown.py')")
    c.execute("INSERT INTO processes(id, pid, ppid, start_ns, end_ns) VALUES (1, 4242, 1, ?, ?)",
              (999_000_000, 10**15))
    c.executemany("INSERT INTO threads(id, process_id, tid, name) VALUES (?, 1, ?, ?)",
                  [(i + 1, 4242 + i, f"worker-{i}") for i in range(THREADS)])
    c.executemany("INSERT INTO strings(id, value) VALUES (?, ?)",
                  [(1, "request")] + [(i + 2, s[0]) for i, s in enumerate(STAGES)])
    c.execute("INSERT INTO domains(id, process_id, name) VALUES (1, 1, '')")
    c.execute("INSERT INTO locks(id, process_id, address, kind, name) "
              "VALUES (1, 1, 4096, 'mutex', 'model_lock')")
    c.executemany("INSERT INTO ranges(id, process_id, domain_id, name_id, start_ns, end_ns, "
                  "start_thread_id, end_thread_id, parent_id, depth) "
                  "VALUES (?1, 1, 1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)", ranges())
    c.executemany("INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns) "
                  "VALUES (?,?,?,?,?)", ((i + 1,) + w for i, w in enumerate(lock_waits())))
    c.executescript("CREATE INDEX ranges_start ON ranges(start_ns);"
                    "CREATE INDEX ranges_name ON ranges(name_id);"
                    "CREATE INDEX ranges_parent ON ranges(parent_id);")
    c.commit()
    n = c.execute("SELECT count(*) FROM ranges").fetchone()[0]
    c.close()
    return n


def timed(*args):
    """Wall seconds, CPU seconds and max RSS (MB) of one latprof run, from
    wait4's rusage of that child alone. CPU time is printed too because on a
    shared 2-core box wall time mostly measures the neighbours."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execv(LATPROF, [LATPROF, *args])
    t0 = time.perf_counter()
    _, status, ru = os.wait4(pid, 0)
    secs = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        fail(f"latprof {' '.join(args)} failed: status {status}")
    return secs, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


keep = os.environ.get("LP_BENCH_DB")  # reuse/keep a generated database
db = keep or os.path.join(tmpdir(), "bench.db")
t0 = time.perf_counter()
if keep and os.path.exists(keep):
    n = sqlite3.connect(keep).execute("SELECT count(*) FROM ranges").fetchone()[0]
else:
    n = generate(db)
print(f"bench_breakdown: {'reused' if keep else 'generated'} {n} ranges ({n // PER_REQ} requests) "
      f"in {time.perf_counter() - t0:.1f} s, {os.path.getsize(db) / 2**20:.0f} MB")
# warm the page cache once so the figures are about latprof, not the disk
subprocess.run(["cat", db], stdout=subprocess.DEVNULL, check=True)
out = subprocess.run([LATPROF, "report", db, "--breakdown"], capture_output=True, text=True)
if out.returncode != 0 or "model_lock" not in out.stdout:
    fail(f"--breakdown on the generated database did not name model_lock:\n{out.stdout}{out.stderr}")
for view in ("--breakdown", "--ranges"):
    secs, cpu, rss = timed("report", db, view, "--format", "json")
    print(f"bench_breakdown: {view} on {n} ranges: {secs:.2f} s wall (target 5 s, ratio "
          f"{secs / 5:.2f}), {cpu:.2f} s CPU (ratio {cpu / 5:.2f}), max RSS {rss:.0f} MB "
          f"(target 1024 MB, ratio {rss / 1024:.2f})")
if not keep:
    os.unlink(db)
