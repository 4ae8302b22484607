"""A 4-thread pure-Python NVTX server (tests/real/py_server.py): its
request threads queue on CPython's GIL. latprof must say so: the first
finding that names a cause is gil-contention with >= 50% of request time
(cpu-starved, a symptom, may rank above it on a loaded machine), the first
--locks row is the GIL, and the main thread's Thread.join() (one wait on a
semaphore the worker held for its whole life) is a join, never ranked as
contention. The same server with its stage work in NumPy (which releases
the GIL in BLAS) gets no gil-contention finding."""
import os

import lptest
from lptest import check, db, q1, record, tmpdir
from reallib import findings, found, locks, need_python, rule, script

need_python("nvtx", "numpy")
d = tmpdir()
env = {"OPENBLAS_NUM_THREADS": "1"}

path = os.path.join(d, "py.db")
record(path, *script("py_server.py"), "--work", "python", env=env)
doc = findings(path)
# the first finding that names a cause: on a loaded machine cpu-starved, a
# symptom, may save more (the GIL's saving is its blocked part; waiting for
# a CPU once woken is preempted time, counted there)
SYMPTOMS = ("cpu-starved", "cpu-saturated", "cpu-interference", "tail-outlier")
causes = [f for f in doc["findings"] if f["id"] not in SYMPTOMS]
first = causes[0] if causes else None
check(first is not None and first["id"] == "gil-contention",
      f"pure Python: the first finding that names a cause is gil-contention "
      f"({[(f['id'], round(100 * f['share'], 1)) for f in doc['findings']]})")
check(first["value"] >= 0.5, f"GIL wait is {100 * first['value']:.1f}% of request time (>= 50%)")
ev = {e["key"]: e["value"] for e in first["evidence"]}
check(ev["waiting_threads"] == 4, f"all 4 server threads waited for the GIL ({ev['waiting_threads']})")
conn = db(path)
gil_in_db = q1(conn, "SELECT (SELECT coalesce(sum(dur_ns), 0) FROM cond_waits WHERE class = 1) + "
                     "(SELECT coalesce(sum(dur_ns), 0) FROM lock_waits WHERE class = 1)")
check(0 < ev["wait_ns"] <= gil_in_db, f"GIL wait inside requests {ev['wait_ns']:.0f} ns <= "
      f"all GIL waits in the db {gil_in_db} ns")

lk = locks(path)
top = lk["locks"][0]
check(top["class"] == "gil" and top["name"].startswith("GIL (_PyRuntime"),
      f"first --locks row is the GIL: {top['name']} ({top['class']})")
joins = conn.execute("SELECT w.lock_id, w.dur_ns, l.address FROM lock_waits w JOIN locks l "
                     "ON l.id = w.lock_id WHERE w.class = 3").fetchall()
check(len(joins) >= 1, f"the main thread's Thread.join is a join-class wait ({len(joins)})")
ranked = {int(l["address"], 16) for l in lk["locks"]}
check(not any(j["address"] in ranked for j in joins), "no joined semaphore is ranked in --locks")
check(lk["totals"]["classes"]["join"]["count"] == len(joins), "join waits counted by class")
lc = rule(doc, "lock-contention")
check(lc["state"] == "quiet", f"lock-contention quiet: the join is not contention ({lc.get('value')})")

path2 = os.path.join(d, "np.db")
record(path2, *script("py_server.py"), "--work", "numpy", "--n", "512", "--requests", "60",
       env=env)
doc2 = findings(path2)
g = rule(doc2, "gil-contention")
if lptest.sanitizer():
    # The sanitized interposer runs inside every GIL hand-off (its condition
    # variable and mutex) several times slower, and the waiters wait that
    # much longer: 5.5-11.6% in an ASan build here, 1.8-2.6% in the plain
    # one. The verdict is checked on the plain build; here only that NumPy's
    # threads wait far less than pure Python's.
    check(g["value"] < min(0.2, first["value"] / 4),
          f"NumPy stages ({lptest.sanitizer()} build): GIL wait {100 * g['value']:.1f}% of "
          f"request time, under a quarter of pure Python's {100 * first['value']:.1f}%")
else:
    check(not found(doc2, "gil-contention") and g["state"] == "quiet",
          f"NumPy stages: no gil-contention ({100 * g['value']:.1f}% < 5%)")

# The same pure-Python server beside 2 spinning shells of another program on
# every CPU: the findings stay one account (findings() checks it: savings
# within request time, none under 1%), the GIL is still named, and
# cpu-starved, when listed, advises by whose load it was: the server's own
# runnable threads (the GIL lets one run) against its cores.
import subprocess  # noqa: E402

hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
try:
    path3 = os.path.join(d, "hog.db")
    record(path3, *script("py_server.py"), "--work", "python", env=env)
finally:
    for h in hogs:
        h.kill()
        h.wait()
doc3 = findings(path3)
check(found(doc3, "gil-contention") or rule(doc3, "gil-contention")["counted_in"] is not None,
      f"beside 2 spinning shells: the GIL is still named "
      f"({[(f['id'], round(100 * f['share'], 1)) for f in doc3['findings']]})")
st = found(doc3, "cpu-starved")
if st:
    ev3 = {e["key"]: e["value"] for e in st[0]["evidence"]}
    own = ev3.get("runnable_threads", 0) > ev3.get("cpus_allowed", 0)
    check(("will not help" in st[0]["fix"]) != own and
          ("other processes" in st[0]["summary"]) != own,
          f"cpu-starved advises by whose load: {ev3.get('runnable_threads')} runnable threads "
          f"of the server on {ev3.get('cpus_allowed')} cores: {st[0]['summary']} / "
          f"{st[0]['fix']}")
