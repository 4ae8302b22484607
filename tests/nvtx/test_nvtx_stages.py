"""Acceptance: on the NVTX-annotated inference servers (C and C++)
every stage's recorded p50 is within 5% (or 0.2 ms) of its programmed
cost, stages nest under their request, and stages cover the request."""
import json
import sys

import lptest
from lptest import check
from nvtxlib import need, record_stages

COSTS = {"decode": 2100, "preprocess": 1800, "infer": 6400, "postprocess": 700}
N = 200
ARGS = ["--decode-us", "2100", "--pre-us", "1800", "--infer-us", "6400", "--post-us", "700"]


def check_requests(conn, label, where="1=1"):
    n = lptest.q1(conn, f"SELECT count(*) FROM ranges_named WHERE name = 'request' AND {where}")
    check(n == N, f"{label}: {N} request ranges")


def check_nesting(conn, label):
    bad = lptest.q1(conn, """
        SELECT count(*) FROM ranges_named c LEFT JOIN ranges_named p ON p.id = c.parent_id
        WHERE c.name IN ('decode','preprocess','infer','postprocess')
          AND (p.name IS NOT 'request' OR c.depth != 1 OR c.start_ns < p.start_ns
               OR c.end_ns > p.end_ns OR c.start_thread_id != p.start_thread_id)""")
    check(bad == 0, f"{label}: every stage is a depth-1 child of a request on its thread")
    # Stages cover their request: the gaps (unattributed) are NVTX calls only.
    # Judged on the median request: a thread's first boundary also opens its
    # CPU counter group (collector/lp_counters.c), which can take milliseconds.
    gaps = sorted(r[0] for r in conn.execute("""
        SELECT 1.0 - s.covered * 1.0 / (p.end_ns - p.start_ns) FROM ranges_named p
        JOIN (SELECT parent_id, sum(end_ns - start_ns) AS covered FROM ranges
              GROUP BY parent_id) s ON s.parent_id = p.id WHERE p.name = 'request'"""))
    # In a sanitizer build the NVTX calls themselves are instrumented: the
    # C++ server's median gap measured 1.009% under ASan+UBSan in CI.
    bar = 0.02 if lptest.sanitizer() else 0.01
    check(len(gaps) == N and gaps[N // 2] < bar,
          f"{label}: stages cover >= {100 - 100 * bar:.0f}% of the median request (median gap "
          f"{100 * gaps[N // 2]:.3f}%, worst {100 * gaps[-1]:.2f}%)")


def main():
    srv = need(lptest.sample("infer_server"))
    conn, path = record_stages("C", COSTS, N, [srv, "--requests", N, "--threads", 2, *ARGS])
    check_requests(conn, "C")
    check_nesting(conn, "C")
    ids = [r[0] for r in conn.execute(
        "SELECT payload FROM ranges_named WHERE name = 'request' ORDER BY payload")]
    check(ids == list(range(N)), "C: request payloads are the request ids 0..N-1")
    check(lptest.q1(conn, "SELECT count(DISTINCT color) FROM ranges_named "
                          "WHERE name = 'request'") == 1, "C: request color recorded")
    names = {r[0] for r in conn.execute("SELECT name FROM threads WHERE name IS NOT NULL")}
    check({"worker-0", "worker-1"} <= names, f"C: nvtxNameOsThread names ({sorted(names)})")

    # The breakdown report, where it exists (another engineer's part).
    p = lptest.latprof("report", path,
                       "--breakdown", "--format", "json")
    if p.returncode == 0:
        json.loads(p.stdout)
        for st in COSTS:
            check(st in p.stdout, f"report --breakdown names stage '{st}'")
    else:
        print("note: report --breakdown not available:", p.stderr.strip()[:200])

    cpp = need(lptest.sample("infer_server_cpp"))
    conn, _ = record_stages("C++", COSTS, N, [cpp, "--requests", N, "--threads", 2, *ARGS],
                            "domain = 'infer'")
    check_requests(conn, "C++", "domain = 'infer'")
    check_nesting(conn, "C++")
    check(lptest.q1(conn, "SELECT count(*) FROM domains WHERE name = 'infer'") == 1,
          "C++: custom domain 'infer' recorded once")
    check(lptest.q1(conn, "SELECT count(*) FROM ranges_named WHERE domain = 'infer' AND "
                          "category = 7 AND name IN ('decode','preprocess','infer',"
                          "'postprocess')") == 4 * N,
          "C++: registered-string stages carry category 7")
    check(lptest.q1(conn, "SELECT name FROM categories WHERE category = 7") == "stage",
          "C++: named category 'stage'")


if __name__ == "__main__":
    main()
    sys.exit(0)
