"""A run without NVTX ranges says once, at the end of `latprof run`, how to
add them (C, C++ and Python), and `report --breakdown` says it once too; a
run with ranges gets no such line."""
import os

from lptest import check, latprof, sample, tmpdir

d = tmpdir()
HINT = "nvtxRangePushA"
plain = os.path.join(d, "plain.db")
p = latprof("run", "-o", plain, "--", sample("lock_server"))
check(p.returncode == 0, f"lock_server recorded ({p.stderr.strip()[-200:]})")
check(p.stderr.count(HINT) == 1 and "nvtx3::scoped_range" in p.stderr and
      "nvtx.annotate" in p.stderr, f"run without NVTX: one hint, C, C++ and Python\n{p.stderr}")
bd = latprof("report", plain, "--breakdown")
check(bd.returncode == 0 and bd.stdout.count(HINT) == 1, "report --breakdown says it once")

srv = sample("infer_server")
if os.path.exists(srv):
    ranged = os.path.join(d, "ranged.db")
    p = latprof("run", "-o", ranged, "--", srv, "--requests", 5, "--threads", 1)
    check(p.returncode == 0 and HINT not in p.stderr, "a run with NVTX ranges: no hint")
