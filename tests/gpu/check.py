"""The GPU checks on two recordings of samples/cuda/cuda_pipeline:
the default (slow) mode and --fixed. tests/gpu/run.sh records them on a GPU
machine; tests/gpu/test_check.py runs this script on fnd_gpu's imitation of
both modes (real CUPTI structs, no GPU) so that a mistake here does not cost
a GPU session.

usage: check.py SLOW.db FIXED.db
Prints one "ok:"/"FAIL:" line per check and one summary line starting with
"gpu: PASS" or "gpu: FAIL". Exit 0 = pass, 1 = a check failed, 2 = bad input.
"""
import os
import sqlite3
import sys

# Host blocked: sync API calls and synchronous copies (same rule as
# `latprof report --sync` and the breakdown's "sync wait" column).
SYNC_WAIT = """SELECT coalesce(sum(a.end_ns - a.start_ns), 0) FROM cuda_api a
  WHERE a.domain = 'runtime' AND (
    EXISTS (SELECT 1 FROM syncs y WHERE y.process_id = a.process_id
            AND y.correlation_id = a.correlation_id)
    OR EXISTS (SELECT 1 FROM memcpys m WHERE m.process_id = a.process_id AND m.async = 0
               AND a.correlation_id = coalesce(m.runtime_correlation_id, m.correlation_id)))"""

# GPU operations that start before the outermost NVTX range (the request)
# in which their launching API call was made, on the launching thread.
BEFORE_REQUEST = """SELECT count(*) FROM gpu_launches g JOIN ranges r
  ON r.start_thread_id = g.thread_id AND r.depth = 0
  AND g.api_start_ns >= r.start_ns AND g.api_start_ns < r.end_ns
  WHERE g.start_ns < r.start_ns"""

fails = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        fails.append(msg)


def q1(c, sql, *args):
    row = c.execute(sql, args).fetchone()
    return None if row is None else row[0]


def p50(c, name):
    v = sorted(r[0] for r in c.execute(
        "SELECT end_ns - start_ns FROM ranges_named WHERE name = ?", (name,)))
    return v[len(v) // 2] if v else 0


def one_mode(mode, path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    check(q1(c, "SELECT value FROM meta WHERE key = 'cuda.captured'") == 1,
          f"{mode}: GPU data captured")
    k, m, s = (q1(c, f"SELECT count(*) FROM {t}") for t in ("kernels", "memcpys", "syncs"))
    check(k > 0 and m > 0 and s > 0, f"{mode}: kernels {k}, memcpys {m}, syncs {s} present")
    check(q1(c, "SELECT count(*) FROM gpu_devices") >= 1, f"{mode}: device row")
    linked = q1(c, "SELECT count(*) FROM gpu_launches")
    early = q1(c, "SELECT count(*) FROM gpu_launches WHERE start_ns < api_start_ns")
    check(linked >= k + m and early == 0,
          f"{mode}: {linked} GPU ops linked to their API call (kernels + copies {k + m}), "
          f"{early} start before it")
    before = q1(c, BEFORE_REQUEST)
    check(before == 0, f"{mode}: {before} GPU ops start before their request range")
    dropped = q1(c, "SELECT coalesce(sum(dropped), 0) FROM cuda_capture")
    check(dropped == 0, f"{mode}: {dropped} records dropped by CUPTI")
    r = dict(
        sync=q1(c, SYNC_WAIT), p50=p50(c, "request"), kernels=k,
        requests=q1(c, "SELECT count(*) FROM ranges_named WHERE name = 'request'"),
        pageable=q1(c, "SELECT count(*) FROM memcpys WHERE 'pageable' IN (src_kind, dst_kind)"),
        pinned=q1(c, "SELECT count(*) FROM memcpys "
                     "WHERE 'pinned' IN (src_kind, dst_kind) AND async = 1"),
        wall=q1(c, "SELECT sum(end_ns - start_ns) FROM processes"))
    c.close()
    return r


def main(argv):
    if len(argv) != 3 or not all(os.path.isfile(p) for p in argv[1:]):
        print("usage: check.py SLOW.db FIXED.db (two latprof databases)", file=sys.stderr)
        return 2
    try:
        s, f = one_mode("slow", argv[1]), one_mode("fixed", argv[2])
    except sqlite3.Error as e:
        print(f"check.py: not a latprof database with GPU tables: {e}", file=sys.stderr)
        return 2
    check(s["requests"] > 0 and s["requests"] == f["requests"],
          f"both modes served the same requests ({s['requests']}, {f['requests']})")
    check(s["pageable"] > 0 and s["pinned"] == 0,
          f"slow: {s['pageable']} pageable copies, {s['pinned']} pinned async")
    check(f["pinned"] > 0 and f["pageable"] == 0,
          f"fixed: {f['pinned']} pinned async copies, {f['pageable']} pageable")
    check(f["sync"] < s["sync"],
          f"fixed waits less in sync: {f['sync'] / 1e6:.1f} ms vs {s['sync'] / 1e6:.1f} ms")
    check(0 < f["p50"] < s["p50"],
          f"fixed request p50 lower: {f['p50'] / 1e3:.0f} us vs {s['p50'] / 1e3:.0f} us")
    print(f"gpu: {'PASS' if not fails else 'FAIL'} slow p50 {s['p50'] / 1e3:.0f} us, sync wait "
          f"{100 * s['sync'] / max(s['wall'], 1):.0f}% of wall; fixed p50 {f['p50'] / 1e3:.0f} us, "
          f"sync wait {100 * f['sync'] / max(f['wall'], 1):.0f}%; kernels "
          f"{s['kernels']}/{f['kernels']}" + (f"; failed: {'; '.join(fails)}" if fails else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
