"""Waits inside a C extension carry the Python frames that called it:
onnxruntime under a ThreadPoolExecutor (tests/real/py_pool_ext.py, an
intra-op pool that does not spin, so a caller waits for it inside
onnxruntime). Every lock and condition wait whose native stack runs
through libonnxruntime, on a thread that runs Python, has Python frames,
and they include infer() at the line where the program itself says it
calls InferenceSession.run."""
import json
import os

from lptest import check, db, record, tmpdir
from reallib import need_python, script

need_python("numpy", "onnx", "onnxruntime")
d = tmpdir()
path, out = os.path.join(d, "pool.db"), os.path.join(d, "pool.json")
record(path, *script("py_pool_ext.py"), "--out", out, "--requests", "600",
       env={"OPENBLAS_NUM_THREADS": "1"})
me = json.load(open(out))
c = db(path)
rows = c.execute(
    "WITH w AS (SELECT thread_id, start_ns, stack_id FROM lock_waits UNION ALL "
    "SELECT thread_id, start_ns, stack_id FROM cond_waits), "
    "ext AS (SELECT DISTINCT w.thread_id, w.start_ns FROM w JOIN stack_frames sf ON "
    "sf.stack_id = w.stack_id JOIN frames f ON f.id = sf.frame_id "
    "WHERE f.module LIKE '%onnxruntime%') "
    "SELECT ext.thread_id, pw.py_stack_id, (SELECT count(*) FROM py_stack_frames x "
    "JOIN py_frames pf ON pf.id = x.frame_id WHERE x.stack_id = pw.py_stack_id AND "
    "pf.function = ? AND pf.file = ? AND pf.line = ?) FROM ext LEFT JOIN py_waits pw ON "
    "pw.thread_id = ext.thread_id AND pw.start_ns = ext.start_ns WHERE ext.thread_id IN "
    "(SELECT thread_id FROM py_waits WHERE py_stack_id IS NOT NULL)",
    (me["function"], me["file"], me["line"])).fetchall()
check(len(rows) >= 5, f"{len(rows)} lock/condition waits inside onnxruntime on Python threads (>= 5)")
framed = [r for r in rows if r[1]]
check(len(framed) == len(rows), f"all {len(rows)} carry Python frames ({len(framed)})")
at = [r for r in rows if r[2]]
check(len(at) == len(rows), f"all {len(rows)} include infer() at "
      f"{os.path.basename(me['file'])}:{me['line']}, where the program calls the extension "
      f"({len(at)})")
threads = {r[0] for r in rows}
check(len(threads) >= 2, f"on {len(threads)} pool threads")
names = [c.execute("SELECT name FROM threads WHERE id = ?", (t,)).fetchone()[0] for t in threads]
check(all(n.startswith("ThreadPoolExecutor-") for n in names),
      f"the pool threads have the executor's names: {sorted(names)}")
