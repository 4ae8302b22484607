"""Benchmark: every report view, findings, diff, check, export --chrome and
plot on a database of N lock waits (default 1 M; argv[1] or
LP_BENCH_WAITS) and on one of M ranges (default 1 M; argv[2] or
LP_BENCH_RANGES), each against SQLite's own grouped scan of the tables it
reads, measured in the same run (median of LP_BENCH_ROUNDS, default 3,
interleaved). Both databases are real recordings (lock_server for the
waits, infer_server for the ranges, recorded here) repeated in time by
gen_scale_db.py, in the recorder's own schema.

Ratios are of CPU time (user + system of the child, from wait4): on a
shared machine wall time mostly measures the neighbours; wall time and the
child's max RSS are printed beside them. Gates (tests/lib/lpgate.py): the
views the acceptance names must stay within 3x their scan.

    LP_BENCH_KEEP=DIR   keep (and reuse) the generated databases in DIR
    argv[3]             only the cases whose names are listed, comma-separated
                        (e.g. "report" at 100 M waits); a database no listed
                        case reads is not generated. Max RSS is printed per case.
"""
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

from lpgate import finish, gate
from lptest import BUILD, LATPROF, SRC, fail, tmpdir

WAITS = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LP_BENCH_WAITS", 1_000_000))
RANGES = int(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("LP_BENCH_RANGES", 1_000_000))
ROUNDS = int(os.environ.get("LP_BENCH_ROUNDS", 3))
ONLY = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
GEN = os.path.join(SRC, "tests", "bench", "gen_scale_db.py")
SAMPLES = os.path.join(BUILD, "samples")
keep = os.environ.get("LP_BENCH_KEEP")
d = keep or tmpdir()
os.makedirs(d, exist_ok=True)


def child(args, out=subprocess.DEVNULL):
    """(wall s, CPU s, max RSS MB) of one child, from wait4's rusage."""
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=out, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 3):  # diff and check: 1 regression or failed expectation, 3 inconclusive
        fail(f"{' '.join(args)} exited {code}: {err[-500:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


SCAN = [sys.executable, "-c", """
import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for q in sys.argv[2:]:
    for _ in c.execute(q):
        pass
"""]
# SQLite's grouped scans: the waits by lock, stack and thread (what the lock
# views rank), the ranges by name and depth, the blocking calls by thread
# and category (what the breakdown splits).
G_WAITS = ("SELECT lock_id, stack_id, thread_id, count(*), sum(dur_ns), max(dur_ns) "
           "FROM lock_waits GROUP BY lock_id, stack_id, thread_id")
G_RANGES = ("SELECT name_id, depth, count(*), sum(end_ns - start_ns), max(end_ns - start_ns) "
            "FROM ranges GROUP BY name_id, depth")
G_BLOCK = ("SELECT thread_id, category, count(*), sum(dur_ns) FROM blocking_calls "
           "GROUP BY thread_id, category")


def record(name, args, db):
    path = os.path.join(d, db)
    if not os.path.exists(path):
        subprocess.run([LATPROF, "run", "--counters", "none", "-o", path, "--",
                        os.path.join(SAMPLES, name), *args], check=True,
                       capture_output=True)
    return path


def grow(src, out, n, table):
    path = os.path.join(d, out)
    if keep and os.path.exists(path):
        return path
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, GEN, src, path, str(n), "--table", table], check=True,
                       capture_output=True, text=True)
    print(f"bench_views: {r.stdout.strip()} ({time.perf_counter() - t0:.1f} s, "
          f"{os.path.getsize(path) / 2**20:.0f} MB)", flush=True)
    return path


def wanted(ranges):
    """Whether a listed case reads the ranges database (ranges) or the waits one."""
    return ONLY is None or any(n.startswith("ranges:") == ranges for n in ONLY)


W = R = R2 = os.path.join(d, "absent.db")
if wanted(False):
    lock_src = record("lock_server", ["--threads", "8", "--requests", "3000"], "lock_src.db")
    W = grow(lock_src, f"waits{WAITS}.db", WAITS, "lock_waits")
if wanted(True):
    infer_src = record("infer_server", ["--requests", "400", "--threads", "8", "--locked-frac",
                                        "0.3", "--locked-stage", "infer", "--locked-us", "200"],
                       "infer_src.db")
    R = grow(infer_src, f"ranges{RANGES}.db", RANGES, "ranges")
    if ONLY is None or any(n.startswith("ranges: diff") for n in ONLY):
        infer_src2 = record("infer_server", ["--requests", "400", "--threads", "8",
                                             "--locked-frac", "0.3", "--locked-stage", "infer",
                                             "--locked-us", "400", "--seed", "2"],
                            "infer_src2.db")
        R2 = grow(infer_src2, f"ranges{RANGES}b.db", RANGES, "ranges")
for p in (W, R, R2):  # warm the page cache: the figures are about latprof, not the disk
    if os.path.exists(p):
        subprocess.run(["cat", p], stdout=subprocess.DEVNULL, check=True)
out = os.path.join(d, "out")
os.makedirs(out, exist_ok=True)

# (name, latprof args, the scans it is held to, gated)
cases = [
    ("report", ["report", W], [(W, G_WAITS)], True),
    ("report --locks", ["report", W, "--locks"], [(W, G_WAITS)], True),
    ("report --bottlenecks", ["report", W, "--bottlenecks"], [(W, G_WAITS)], True),
    ("report --html", ["report", W, "--html", os.path.join(out, "w.html"), "-f"],
     [(W, G_WAITS)], True),
    ("report --processes", ["report", W, "--processes"], [(W, G_WAITS)], False),
    ("check", ["check", W, "--expect", "p99(lock:model_lock) < 1s",
               "--expect", "count(finding:lock-contention) == 0"], [(W, G_WAITS)], False),
    ("export --chrome", ["export", W, "--chrome", os.path.join(out, "w.json"), "-f"],
     [(W, G_WAITS)], False),
    ("ranges: report --breakdown", ["report", R, "--breakdown"],
     [(R, G_RANGES), (R, G_WAITS), (R, G_BLOCK)], True),
    ("ranges: report --html", ["report", R, "--html", os.path.join(out, "r.html"), "-f"],
     [(R, G_RANGES), (R, G_WAITS), (R, G_BLOCK)], True),
    ("ranges: report", ["report", R], [(R, G_RANGES), (R, G_WAITS), (R, G_BLOCK)], False),
    ("ranges: report --ranges", ["report", R, "--ranges"], [(R, G_RANGES)], False),
    ("ranges: report --bottlenecks", ["report", R, "--bottlenecks"],
     [(R, G_RANGES), (R, G_WAITS), (R, G_BLOCK)], False),
    ("ranges: diff", ["diff", R, R2, "--no-findings"],
     [(R, G_RANGES), (R2, G_RANGES)], True),
    ("ranges: diff with findings", ["diff", R, R2],
     [(R, G_RANGES), (R, G_WAITS), (R, G_BLOCK), (R2, G_RANGES), (R2, G_WAITS),
      (R2, G_BLOCK)], False),
    ("ranges: check", ["check", R, "--expect", "p99(request) < 1s"], [(R, G_RANGES)], True),
]
if ONLY is not None:
    cases = [c for c in cases if c[0] in ONLY]
if shutil.which("gnuplot") and (ONLY is None or "ranges: plot" in ONLY):
    cases.append(("ranges: plot", ["plot", R, "-o", os.path.join(out, "plot"), "--force"],
                  [(R, G_RANGES), (R, G_WAITS), (R, G_BLOCK)], False))

print(f"=== bench_views: {WAITS} lock waits, {RANGES} ranges; CPU s (wall s) median of "
      f"{ROUNDS}, against SQLite's grouped scans of the same tables ===", flush=True)
for name, args, scans, gated in cases:
    runs, refs = [], []
    for _ in range(ROUNDS):  # interleaved: both see the same neighbours
        refs.append([0.0, 0.0])
        for path, sql in scans:
            w, c, _ = child(SCAN + [path, sql])
            w0, c0, _ = child(SCAN + [path])  # the interpreter's start, not the scan
            refs[-1][0] += max(w - w0, 0.0)
            refs[-1][1] += max(c - c0, 0.0)
        runs.append(child([LATPROF, *args]))
    cpu = statistics.median(r[1] for r in runs)
    wall = statistics.median(r[0] for r in runs)
    rss = max(r[2] for r in runs)
    rcpu = statistics.median(r[1] for r in refs)
    rwall = statistics.median(r[0] for r in refs)
    ratio = cpu / rcpu if rcpu > 0 else float("inf")
    print(f"bench_views: {name:30s} {cpu:7.2f} s CPU ({wall:6.2f} s wall), scan {rcpu:6.2f} s "
          f"CPU ({rwall:6.2f} s wall): {ratio:5.2f}x CPU, {wall / rwall if rwall else 0:5.2f}x "
          f"wall; max RSS {rss:.0f} MB", flush=True)
    if gated:
        gate(f"{name} at {WAITS if 'ranges' not in name else RANGES}", ratio, 3.0, 0.15)
if not keep:
    shutil.rmtree(out, ignore_errors=True)
finish()
