"""A Python program using the PyPI `nvtx` package is recorded like a C one:
the package's bundled NVTX3 headers load latprof through
NVTX_INJECTION64_PATH too. One worker thread: two Python threads that
spin share the GIL, which is handed over every 5 ms (sys.getswitchinterval),
so a 6.4 ms stage would include the other thread's turn."""
import os
import subprocess
import sys

import lptest
from lptest import check, q1
from nvtxlib import meta, record_stages

COSTS = {"decode": 2100, "preprocess": 1800, "infer": 6400, "postprocess": 700}
N = 60


def main():
    if subprocess.run([sys.executable, "-c", "import nvtx"], capture_output=True).returncode:
        lptest.skip("python package 'nvtx' is not installed (pip install nvtx)")
    script = os.path.join(lptest.SRC, "samples", "py_nvtx.py")
    conn, _ = record_stages("python", COSTS, N,
                            [sys.executable, script, "--requests", N, "--threads", 1],
                            "domain = 'py_infer'")
    n = q1(conn, "SELECT count(*) FROM ranges_named WHERE name = 'request' AND "
                 "domain = 'py_infer'")
    check(n == N, f"{N} request ranges in domain py_infer")
    bad = q1(conn, """SELECT count(*) FROM ranges_named c LEFT JOIN ranges_named p
                      ON p.id = c.parent_id WHERE c.name != 'request'
                      AND (p.name IS NOT 'request' OR c.depth != 1)""")
    check(bad == 0, "stages nest under their request")
    ids = sorted(r[0] for r in conn.execute(
        "SELECT payload FROM ranges_named WHERE name = 'request'"))
    check(ids == list(range(N)), "request payloads are the request ids")
    check(q1(conn, "SELECT count(*) FROM marks") == N, f"{N} marks")
    check(q1(conn, "SELECT count(*) FROM categories WHERE name = 'stage'") >= 1,
          "named category 'stage'")
    check(meta(conn, "nvtx.unbalanced_pops") == 0, "no unbalanced pops")


if __name__ == "__main__":
    main()
    sys.exit(0)
