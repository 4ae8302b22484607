"""latprof's CUPTI capture against a second source: what samples/cuda/cuda_truth
printed about its own work (exact counts, cudaEvent timings). tests/gpu/run.sh
records each mode with `latprof run --cuda=on` and runs this on the database
and the program's output.

usage: truth.py DB OUTPUT_FILE
Prints one "ok:"/"FAIL:" line per check and a summary line starting with
"gpu-truth: PASS" or "gpu-truth: FAIL". Exit 0 = pass, 1 = a check failed,
2 = bad input.
"""
import json
import os
import sqlite3
import subprocess
import sys

fails = []

# Kernels that end after the cudaStreamSynchronize / cudaDeviceSynchronize
# call that followed their launch on the launching thread returned: an upper
# bound the program's own control flow sets (the sync waited for them).
AFTER_SYNC = """SELECT count(*) FROM gpu_launches g WHERE g.op = 'kernel' AND g.end_ns > (
  SELECT min(a.end_ns) FROM cuda_api a JOIN strings s ON s.id = a.name_id
  WHERE a.process_id = g.process_id AND a.thread_id = g.thread_id
    AND a.start_ns > g.api_end_ns
    AND (s.value LIKE 'cudaStreamSynchronize%' OR s.value LIKE 'cudaDeviceSynchronize%'))"""

# GPU work launched inside each request range: (kernels, copies) per request.
PER_REQUEST = """SELECT r.id, sum(g.op = 'kernel'), sum(g.op = 'memcpy') FROM ranges_named r
  LEFT JOIN gpu_launches g ON g.thread_id = r.start_thread_id
    AND g.api_start_ns >= r.start_ns AND g.api_start_ns < r.end_ns
  WHERE r.name = 'request' GROUP BY r.id"""


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        fails.append(msg)


def q1(c, sql, *args):
    row = c.execute(sql, args).fetchone()
    return None if row is None else row[0]


def within(measured, expected, rel):
    return expected > 0 and abs(measured - expected) <= rel * expected


def truth_line(path):
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "truth":
                return w[1], {w[i]: float(w[i + 1]) for i in range(2, len(w) - 1, 2)}
    return None, None


def capture_clean(c, mode):
    cap = c.execute("SELECT coalesce(sum(dropped), 0), coalesce(sum(bad_timestamps), 0), "
                    "group_concat(conflicts) FROM cuda_capture").fetchone()
    check(cap[0] == 0 and cap[1] == 0 and not cap[2],
          f"{mode}: nothing dropped ({cap[0]}), no bad timestamps ({cap[1]}), "
          f"no conflict ({cap[2]})")


def requests(c, t):
    n = int(t["requests"])
    k = q1(c, "SELECT count(*) FROM kernels")
    m = q1(c, "SELECT count(*) FROM memcpys")
    y = q1(c, "SELECT count(*) FROM syncs WHERE type = 'stream_synchronize'")
    check(k == t["kernels"] and m == t["copies"] and y == t["syncs"],
          f"requests: kernels {k}/{t['kernels']:.0f}, copies {m}/{t['copies']:.0f}, "
          f"stream syncs {y}/{t['syncs']:.0f}")
    per = c.execute(PER_REQUEST).fetchall()
    bad = [r for r in per if r[1] != 3 or r[2] != 2]
    check(len(per) == n and not bad,
          f"requests: {len(per)}/{n} request ranges, each launched 3 kernels and 2 copies "
          f"({len(bad)} did not)")
    kern = q1(c, "SELECT sum(end_ns - start_ns) FROM kernels")
    h2d = q1(c, "SELECT sum(end_ns - start_ns) FROM memcpys WHERE copy_kind = 'HtoD'")
    d2h = q1(c, "SELECT sum(end_ns - start_ns) FROM memcpys WHERE copy_kind = 'DtoH'")
    for what, got, want in (("kernel", kern, t["kernel_ns"]), ("HtoD copy", h2d, t["h2d_ns"]),
                            ("DtoH copy", d2h, t["d2h_ns"])):
        check(within(got or 0, want, 0.10),
              f"requests: {what} time {(got or 0) / 1e6:.3f} ms vs the program's cudaEvent "
              f"{want / 1e6:.3f} ms (within 10%)")
    after = q1(c, AFTER_SYNC)
    check(after == 0, f"requests: {after} kernels end after the sync that waited for them")
    return f"requests {n}: {k} kernels, {m} copies, kernel time {kern / max(t['kernel_ns'], 1):.3f}x events"


def graph(c, t, db, lp):
    n = int(t["launches"])
    g = q1(c, "SELECT count(*) FROM kernels WHERE graph_id <> 0")
    corr = q1(c, "SELECT count(DISTINCT correlation_id) FROM kernels WHERE graph_id <> 0")
    check(g == t["kernels"] and corr == n,
          f"graph: {g}/{t['kernels']:.0f} graph kernels under {corr}/{n} launch correlation ids")
    p = subprocess.run([lp, "report", db, "--kernels", "--format", "json"], capture_output=True,
                       text=True)
    kj = json.loads(p.stdout)
    ld = kj["launch_delay"]
    check(ld["count"] == n and kj["graph_launches"] == n,
          f"graph: launch delay counted once per launch ({ld['count']}), median "
          f"{ld['med_ns'] / 1e3:.1f} us")
    p = subprocess.run([lp, "report", db, "--bottlenecks", "--format", "json"],
                       capture_output=True, text=True)
    ids = [f["id"] for f in json.loads(p.stdout)["findings"]]
    check("small-kernels" not in ids, f"graph: no small-kernels finding ({ids})")
    after = q1(c, AFTER_SYNC)
    check(after == 0, f"graph: {after} nodes end after the sync that waited for them")
    return f"graph {n} launches: {g} nodes, launch delay median {ld['med_ns'] / 1e3:.1f} us"


def killed(c, t, mode):
    k = q1(c, "SELECT count(*) FROM kernels")
    check(k == t["kernels"], f"{mode}: {k}/{t['kernels']:.0f} kernels recorded although the "
                             f"process {'was killed by SIGTERM' if mode == 'kill' else 'called _exit'}")
    return f"{mode}: {k}/{t['kernels']:.0f} kernels"


def main(argv):
    if len(argv) != 3 or not all(os.path.isfile(p) for p in argv[1:]):
        print("usage: truth.py DB OUTPUT_FILE", file=sys.stderr)
        return 2
    mode, t = truth_line(argv[2])
    if not mode:
        print(f"truth.py: no 'truth' line in {argv[2]}", file=sys.stderr)
        return 2
    lp = os.environ.get("LATPROF", "latprof")
    try:
        c = sqlite3.connect(f"file:{argv[1]}?mode=ro", uri=True)
        capture_clean(c, mode)
        if mode == "requests":
            what = requests(c, t)
        elif mode == "graph":
            what = graph(c, t, argv[1], lp)
        else:
            what = killed(c, t, mode)
    except (sqlite3.Error, ValueError, KeyError) as e:
        print(f"truth.py: cannot check {argv[1]}: {e}", file=sys.stderr)
        return 2
    print(f"gpu-truth: {'PASS' if not fails else 'FAIL'} {what}"
          + (f"; failed: {'; '.join(fails)}" if fails else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
