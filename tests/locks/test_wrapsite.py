"""A call site is never libc's thread start when the app's frame below it
is known: tests/locks/lp_wrapsite takes two mutexes through one wrapper
called from one line of each thread's function, so the wrapper and that
call are both shared by two locks and the frame above them is
start_thread/__clone3. Each lock's site (--locks JSON) is the thread
function, `worker`."""
import json
import os

from lptest import BUILD, check, latprof, record, tmpdir

path = os.path.join(tmpdir(), "wrap.db")
record(path, os.path.join(BUILD, "tests", "locks", "lp_wrapsite"), "4", "40")
doc = json.loads(latprof("report", path, "--locks", "--format", "json").stdout)
locks = {x["name"]: x for x in doc["locks"]}
print({k: [s["function"] for s in v["sites"]] for k, v in locks.items()})
for name in ("lock_a", "lock_b"):
    fns = [s["function"] for s in locks.get(name, {}).get("sites", [])]
    check(fns and all(f == "worker" for f in fns),
          f"{name}: its call site is worker, not a thread-start frame ({fns})")
