"""Imported captures (../shared/realdata): every section counts the same
requests and names its totals for what they are. The breakdown, the
default report and the findings count the request range over all the
capture's processes (the two-GPU fastvideo capture names 'aten::mul' in two
processes: 308 ranges each), as many as the database holds; a finding's
"out of X of Y" never gives the request time under another total's name
(it said "155.328 ms of GPU copy time" beside "1880.842 ms of copies")."""
import json
import os
import re
import sqlite3

from lptest import SRC, check, latprof, skip, tmpdir

REAL = os.path.normpath(os.path.join(os.path.abspath(SRC), "..", "shared", "realdata"))
if not os.path.isdir(REAL):
    skip(f"{REAL} is absent (real GPU captures, see its README)")
d = tmpdir()
CAPS = ["nsys/fastvideo_h100x2_window1s_nsys2026.2.sqlite",
        "nsys/saxpy-mpi-cuda_a100_nsys2022.2.sqlite",
        "kineto/alexnet_a100.pt.trace.json.gz"]
for cap in CAPS:
    name = os.path.basename(cap).split(".")[0]
    db = os.path.join(d, name + ".db")
    latprof("import", "-o", db, os.path.join(REAL, cap), check=0)

    def js(*a):
        return json.loads(latprof("report", db, *a, "--format", "json", check=0).stdout)

    bd, fnd, summ = js("--breakdown"), js("--bottlenecks"), js()
    if not bd["has_ranges"]:
        print(f"skip part: {name} has no NVTX ranges")
        continue
    req = bd["request"]
    c = sqlite3.connect(db)
    want = c.execute(
        "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name_id LEFT JOIN domains "
        "dm ON dm.id = r.domain_id WHERE s.value = ? AND coalesce(dm.name, '') = ? AND "
        "r.end_ns > r.start_ns", (req["name"], req["domain"] or "")).fetchone()[0]
    nproc = c.execute(
        "SELECT count(DISTINCT r.process_id) FROM ranges r JOIN strings s ON s.id = r.name_id "
        "WHERE s.value = ?", (req["name"],)).fetchone()[0]
    n = req["stats"]["n"]
    check(n == want, f"{name}: the breakdown counts every '{req['name']}' range of the "
          f"{nproc} process(es): {n} of {want}")
    check(fnd["requests"]["count"] == n and fnd["requests"]["total_ns"] == req["stats"]["total_ns"],
          f"{name}: the findings judge the same {n} requests, {req['stats']['total_ns']} ns")
    check(summ["breakdown"]["request"]["stats"]["n"] == n, f"{name}: the default view too")
    text = latprof("report", db, check=0).stdout
    m = re.search(r"Requests: (\d+) instances?", text)
    check(m and int(m.group(1)) == n, f"{name}: the text report says {n} requests")
    for f in fnd["findings"]:
        ev = {e["key"]: e["value"] for e in f["evidence"]}
        check(f["saving_ns"] <= f["basis_ns"] <= fnd["scope_ns"],
              f"{name} {f['id']}: saving <= basis <= the time judged")
        if f["basis_ns"] == fnd["scope_ns"] and f["basis"] != "request time":
            # a basis that equals the scope by coincidence must be that total
            total = {"GPU copy time": ev.get("copy_ns")}.get(f["basis"])
            check(total is None or total == f["basis_ns"],
                  f"{name} {f['id']}: '{f['basis']}' is {total} ns, not the request time")
        if "copy_ns" in ev:
            check(f["basis"] != "GPU copy time" or f["basis_ns"] == ev["copy_ns"],
                  f"{name} {f['id']}: 'out of {f['basis_ns']} ns of {f['basis']}' "
                  f"(copies: {ev['copy_ns']} ns)")
