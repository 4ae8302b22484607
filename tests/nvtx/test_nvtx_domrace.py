"""One named NVTX domain created and used by several threads at once
(tests/nvtx/lp_nvtx_domrace.c): every nvtxDomainCreateA call is an id of
its own, defined in its creator's log, and a thread may push ranges with a
handle whose definition it reads before. Every range, stage and mark lands
in the one domain row "app" (no "(domain N)" row), the counts are the
program's, and the default request of --breakdown holds all of them.
- ordered: the stretches of the log begin in thread order, the last thread
  and the first create "app", the threads between use the last one's
  handle: the order that split them, every time;
- race: 8 threads released at once per round take the round's handle
  through an unlocked lazy init (the Python nvtx module's get_domain), 100
  rounds, three runs."""
import os

import lptest
from bdlib import breakdown
from lptest import check, q1
from nvtxlib import need

EXE = need(os.path.join(lptest.BUILD, "tests", "nvtx", "lp_nvtx_domrace"))


def run(label, *args):
    d = lptest.tmpdir()
    path = os.path.join(d, "run.db")
    p = lptest.record(path, EXE, *args)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("threads=")), None)
    check(line is not None, f"{label}: the program says what it did ({p.stdout.strip()!r})")
    want = {k: int(v) for k, v in (kv.split("=") for kv in line.split())}
    conn = lptest.db(path)
    doms = sorted(r[0] for r in conn.execute("SELECT name FROM domains"))
    check(doms == ["app"], f"{label}: one domain row, 'app', for {want['creates']} "
          f"nvtxDomainCreateA calls ({doms[:6]}{' ...' if len(doms) > 6 else ''}, "
          f"{len(doms)} rows)")
    per = dict(((r[0], r[1]), r[2]) for r in conn.execute(
        "SELECT domain, name, count(*) FROM ranges_named GROUP BY 1, 2"))
    check(per == {("app", "request"): want["requests"], ("app", "stage"): want["stages"]},
          f"{label}: {want['requests']} requests and {want['stages']} stages, all in 'app' "
          f"({per if len(per) <= 4 else f'{len(per)} (domain, name) pairs'})")
    bad = q1(conn, """SELECT count(*) FROM ranges_named c LEFT JOIN ranges_named p
                      ON p.id = c.parent_id WHERE c.name = 'stage'
                      AND (p.name IS NOT 'request' OR p.domain_id != c.domain_id)""")
    check(bad == 0, f"{label}: every stage's parent is a request of its domain")
    marks = q1(conn, "SELECT count(*) FROM marks m JOIN domains d ON d.id = m.domain_id "
                     "WHERE d.name = 'app'")
    check(marks == want["marks"] and q1(conn, "SELECT count(*) FROM marks") == marks,
          f"{label}: {want['marks']} marks, all in 'app' ({marks})")
    req = breakdown(path)["request"]
    check(req["domain"] == "app" and req["name"] == "request" and
          req["stats"]["n"] == want["requests"],
          f"{label}: the default request is app/request with all {want['requests']} "
          f"({req['domain']}/{req['name']}: {req['stats']['n']})")
    return want


want = run("ordered", "ordered", 6, 50)
check(want["creates"] == 2, "ordered: two handles for 'app'")
for i in range(3):
    run(f"race {i + 1}", "race", 8, 100, 10)
