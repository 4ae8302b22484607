"""Tail attribution, the findings and the HTML page say which Python lock
the slowest requests waited on (tests/real/py_tail.py: requests queue on
cache_lock behind a refresher that holds it for 40 ms now and then): a
heap lock no symbol names is named by its Python call site, the file and
line the program records at its acquire."""
import json
import os

from lptest import check, latprof, record, tmpdir
from reallib import need_python, script

need_python("nvtx")
d = tmpdir()
path, out = os.path.join(d, "tail.db"), os.path.join(d, "tail.json")
record(path, *script("py_tail.py"), "--out", out, "--requests", "300")
me = json.load(open(out))
want = f"Python lock at py_tail.py:{me['line']} {me['function']}"
bd = json.loads(latprof("report", path, "--breakdown", "--format", "json").stdout)
tail = bd["tail"]
check(tail["stage"]["name"] == "infer" and tail["category"]["name"] == "lock_wait",
      f"the tail grows in infer's lock wait ({tail['stage']['name']}, {tail['category']['name']})")
check(tail["lock"]["name"] == want, f"tail attribution names {tail['lock']['name']}")
html = os.path.join(d, "tail.html")
latprof("report", path, "--html", html)
page = open(html, encoding="utf-8").read()
check(want in page and f"py_tail.py:{me['line']} {me['function']}" in page,
      "the HTML page names the lock and its Python call site")
