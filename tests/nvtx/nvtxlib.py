"""Shared helpers for the NVTX tests: record a program, per-name
durations from the ranges table, percentiles."""
import os

import lptest
from lptest import meta  # noqa: F401 (re-exported for this folder's tests)


def cases_bin():
    return os.path.join(lptest.BUILD, "tests", "nvtx", "lp_nvtx_cases")


def need(path):
    if not os.path.exists(path):
        lptest.skip(f"{path} not built (NVTX3 headers missing?)")
    return path


def record(*cmd, args=(), check_app=0):
    d = lptest.tmpdir()
    db = os.path.join(d, "run.db")
    lptest.record(db, *cmd, args=args, check_app=check_app)
    return lptest.db(db), db


def durations(conn, where="1=1", *params):
    """{name: sorted durations in µs} over ranges_named rows matching where."""
    out = {}
    for name, dur in conn.execute(
            f"SELECT name, end_ns - start_ns FROM ranges_named WHERE {where}", params):
        out.setdefault(name, []).append(dur / 1000.0)
    for v in out.values():
        v.sort()
    return out


def pct(v, p):
    """Nearest-rank percentile of a sorted list."""
    i = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[i]


def stage_p50s(conn, costs, n, where="1=1"):
    """(ok, lines): recorded p50 of every stage against its programmed cost
    (5% or 0.2 ms), and the count of each."""
    d = durations(conn, where)
    ok, lines = True, []
    for st, us in costs.items():
        v = d.get(st, [])
        p50 = pct(v, 50) if v else float("nan")
        good = len(v) == n and lptest.within(p50, us, rel=0.05, abs_=200)
        if lptest.sanitizer():  # instrumented stage work runs slower: count only
            good = len(v) == n
        ok &= good
        lines.append(f"{st}: {len(v)} ranges, p50 {p50:.0f} us, programmed {us} us")
    return ok, lines


def record_stages(label, costs, n, cmd, where="1=1", attempts=2):
    """Record cmd and check stage p50s; a busy-wait stage overruns when the
    machine is oversubscribed at its deadline, so one noisy run is retried
    (with its figures printed) before the test fails."""
    for i in range(attempts):
        # at real-time round-robin priority where allowed (lptest.realtime):
        # neighbours' load then cannot stretch the busy-wait stages
        conn, path = record(*lptest.realtime(), *cmd)
        ok, lines = stage_p50s(conn, costs, n, where)
        if ok:
            # Sanitizer builds: instrumented stage work runs slower, counts only.
            how = f" (count only: {lptest.sanitizer()} build)" if lptest.sanitizer() else ""
            for ln in lines:
                lptest.check(True, f"{label}: {ln}{how}")
            return conn, path
        print(f"note: {label} attempt {i + 1}: stage p50s off (load "
              f"{os.getloadavg()[0]:.1f}):\n  " + "\n  ".join(lines))
    lptest.fail(f"{label}: stage p50s not within 5% / 0.2 ms of the programmed costs")
