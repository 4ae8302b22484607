"""Tail attribution, the findings and the HTML page say which Python lock
the slowest requests waited on (tests/real/py_tail.py: requests queue on
cache_lock behind a refresher that holds it for 40 ms now and then): a
heap lock no symbol names is named by its Python call site, the file and
line the program records at its acquire. The slowest request's largest
wait (report --breakdown, text, JSON and HTML) is that lock wait, at that
site, inside one of the acquires the program timed itself."""
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

# The slowest request's largest wait: the lock wait at the acquire's line,
# inside one acquire the program timed (its run-queue tail left out, so
# it may end before the acquire returned).
site = f"py_tail.py:{me['line']} {me['function']}"
slow = bd["slowest"][0]
w = slow["largest_wait"]
check(w is not None and w["category"] == "lock_wait" and w["python"] and w["site"] == site
      and w["source"] == "with cache_lock:",
      f"slowest request {slow['range_id']} ({slow['latency_ns'] / 1e6:.1f} ms): largest wait "
      f"{w and w['category']} at {w and w['site']!r} ({w and w['source']!r}), want {site!r}")
inside = [a for a in me["acquires"] if a[0] <= w["start_ns"] and
          w["start_ns"] + w["wait_ns"] <= a[1]]
check(len(inside) == 1 and 0 < w["wait_ns"] <= slow["latency_ns"],
      f"its {w['wait_ns'] / 1e6:.2f} ms lie inside the program's own acquire "
      f"({[(a[1] - a[0]) / 1e6 for a in inside]} ms) and inside the request")
text = latprof("report", path, "--breakdown", env={"COLUMNS": "120"}).stdout
rows = text.split("Their largest waits", 1)[-1].splitlines()
row = next((r for r in rows if r.split()[:1] == [str(slow["range_id"])]), "")
check("lock wait" in row and site in row and max(len(r) for r in rows) <= 120,
      f"text: the row of request {slow['range_id']} names the lock wait at {site}: {row.strip()!r}")
sec = page.split('id="slowest"', 1)[-1].split("</section>", 1)[0]
check(f'<code title="with cache_lock:">{site}</code>' in sec,
      "HTML: the slowest requests' table names the site, its line as the title")
