"""An interpreter whose layout latprof does not know: a test build of the
interposer (tests/preload/tests.cmake, LATPROF_TEST_PY_VERSION) takes the
CPython running tests/real/py_handler.py for 3.15. Then no wait has Python
frames or a GIL holder, no thread gets threading's name, the run says so once (one py_runtimes row,
'unknown-version'), and nothing else changes: the app runs to its end,
its lock waits are recorded with their native sites, as with the real
build on the same program."""
import json
import os
import sys

from lptest import check, db, q1, record, tmpdir
from reallib import locks, script

d = tmpdir()
fake = os.environ["LP_FAKEPY_LIBDIR"]
runs = {}
for name, env in (("real", {}), ("fake", {"LATPROF_LIBDIR": fake})):
    path, out = os.path.join(d, f"{name}.db"), os.path.join(d, f"{name}.json")
    record(path, sys.executable, script("py_handler.py")[1], "--out", out, "--requests", "20",
           env=env)
    check(os.path.exists(out), f"{name} build: the app ran to its end")
    runs[name] = (db(path), locks(path), json.load(open(out)))

c, lk, me = runs["fake"]
rt = [tuple(r) for r in c.execute("SELECT version, frames FROM py_runtimes")]
check(rt == [("3.15.0", "unknown-version")], f"one note: {rt}")
check(q1(c, "SELECT count(*) FROM py_waits") == 0, "no wait has Python frames or a GIL holder")
check(q1(c, "SELECT count(*) FROM py_frames") == 0, "no Python frame recorded")
check(q1(c, "SELECT count(*) FROM threads WHERE name LIKE 'handler-%'") == 0,
      "no thread name read from threading")
check(q1(runs["real"][0], "SELECT count(*) FROM threads WHERE name LIKE 'handler-%'") == 4,
      "(the real build names the 4 handler threads)")
for name in ("real", "fake"):
    c, lk, me = runs[name]
    check(q1(c, "SELECT count(*) FROM meta WHERE key = 'import.unknown_records' AND value > 0")
          == 0, f"{name}: no record the importer does not know")
    # the handler's lock: the one waited on most (main's Thread.start waits too)
    sem = sorted((l for l in lk["locks"] if l["class"] == "contention" and l["kind"] == "sem"),
                 key=lambda l: -l["count"])
    check(sem and sem[0]["count"] >= 5, f"{name}: the handler's lock waits are recorded "
          f"({sem[0]['count'] if sem else 0})")
    site = sem[0]["sites"][0]
    want_py = name == "real"
    check(site["python"] == want_py and (site["line"] == me["line"]) == want_py,
          f"{name}: the lock's site is {site['where']}")
    check(q1(c, "SELECT count(*) FROM threads") == 5, f"{name}: 5 threads recorded")
    check(lk["totals"]["classes"]["gil"]["count"] > 0, f"{name}: GIL waits recorded")
