"""An onnxruntime server in Python (tests/real/py_ort_server.py, a small MLP
built with onnx.helper): with default session options its intra-op pool
thread spins while requests are in flight and burns CPU comparable to a
request thread's (>= 0.5x: on 2 loaded cores the scheduler caps it), so
spinning-pool fires; with intra_op_num_threads=1 and
session.intra_op.allow_spinning=0 there is no pool to spin, and it is quiet."""
import os

from lptest import check, record, tmpdir
from reallib import findings, found, need_python, rule, script

need_python("nvtx", "numpy", "onnx", "onnxruntime")
d = tmpdir()

path = os.path.join(d, "ort.db")
# OpenBLAS (NumPy's) keeps a spinning pool of its own: one thread, so the
# only pool is onnxruntime's.
env = {"OPENBLAS_NUM_THREADS": "1"}
record(path, *script("py_ort_server.py"), "--threads", "2", "--requests", "300", env=env)
doc = findings(path)
r = rule(doc, "spinning-pool")
if r["state"] == "not_evaluated":
    import lptest
    lptest.skip(f"spinning-pool not evaluated here: {r.get('why')}")
f = found(doc, "spinning-pool")
check(f and f[0]["value"] >= 0.5,
      f"default options: spinning-pool fires ({r['state']}, ratio {r.get('value')})")
ev = {e["key"]: e["value"] for e in f[0]["evidence"]}
check(ev["pool_thread_cpu_ns"] >= 0.5 * ev["request_thread_cpu_ns"] > 0,
      f"pool thread CPU {ev['pool_thread_cpu_ns'] / 1e6:.1f} ms vs request thread "
      f"{ev['request_thread_cpu_ns'] / 1e6:.1f} ms")
# the saving is the pool thread's CPU, or what the account leaves of it: the
# requests' preempted time it draws on (tests/lib/lpaccount.py)
check(abs(f[0]["basis_ns"] - ev["pool_thread_cpu_ns"]) <= 1 and
      0 < f[0]["saving_ns"] <= f[0]["basis_ns"] and f[0]["category"] == "preempted",
      f"saving {f[0]['saving_ns']} ns of the pool thread's CPU {f[0]['basis_ns']} ns (its "
      f"basis), drawn on the requests' preempted time")

path2 = os.path.join(d, "ort1.db")
record(path2, *script("py_ort_server.py"), "--threads", "2", "--requests", "300", "--intra-op", "1",
       "--no-spin", env=env)
doc2 = findings(path2)
r2 = rule(doc2, "spinning-pool")
check(not found(doc2, "spinning-pool") and r2["state"] == "quiet",
      f"intra_op_num_threads=1, spinning off: quiet (ratio {r2.get('value'):.2f})")
