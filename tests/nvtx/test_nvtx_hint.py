"""A run without NVTX ranges says once, at the end of `latprof run`, how to
add them (C, C++ and Python); `report --breakdown` says it once too, and
`report --bottlenecks` names the rules that need requests in one line (it
said "no NVTX request ranges" once per rule, eight times); a
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
bn = latprof("report", plain, "--bottlenecks")
lines = [ln for ln in bn.stdout.splitlines() if "no NVTX request ranges" in ln]
check(bn.returncode == 0 and len(lines) == 1 and bn.stdout.count(HINT) == 1 and
      "queue-wait" in lines[0] and "cold-start" in lines[0],
      f"report --bottlenecks: the rules that need requests in one line with the hint ({lines})")

srv = sample("infer_server")
if os.path.exists(srv):
    ranged = os.path.join(d, "ranged.db")
    p = latprof("run", "-o", ranged, "--", srv, "--requests", 5, "--threads", 1)
    check(p.returncode == 0 and HINT not in p.stderr, "a run with NVTX ranges: no hint")
