"""The pictures agree with the JSON report, on a real recording of a
GIL-bound Python server (tests/real/py_server.py, 4 threads) started through
launchers (sh and env exec'ing each other, two short helper processes):
- every wait of class gil is named "GIL wait" in the breakdown (text, JSON,
  HTML) and in the request timelines, never "cond wait"/"condition wait",
  and the breakdown's GIL time is the program's GIL waits inside requests,
  computed here from the database;
- the HTML's process table is the text report's: launchers folded into the
  image they exec'd, processes without events left out, with the same
  counts in its note;
- the HTML's request timelines are the requests at the report's p50 and p99,
  and draw each wait's run-queue tail (preempted) as a bar;
- utilization.dat (the heatmap) gives each thread's on-CPU and preempted
  time per bin (the rest is waiting), and their totals are the breakdown's
  threads rows: a preempted thread is not drawn busy."""
import html
import json
import os
import re
import sqlite3
import sys

from lptest import SRC, check, latprof, record, tmpdir

from lptest import need_python  # noqa: E402

need_python("nvtx")
d = tmpdir()
db = os.path.join(d, "py.db")
server = os.path.join(SRC, "tests", "real", "py_server.py")
REQ = 120
# sh runs two helpers (processes without events), then execs env, which
# execs Python.
record(db, "sh", "-c", f"/bin/true; /bin/true; exec env '{sys.executable}' '{server}' "
       f"--requests {REQ} --threads 4 --work python")


def report(*args):
    return latprof("report", db, *args, check=0).stdout


bd = json.loads(report("--breakdown", "--format", "json"))
cats = {c["name"]: c["label"] for c in bd["categories"]}
check(cats.get("gil_wait") == "GIL wait", f"the breakdown has a 'GIL wait' category ({cats})")
req = bd["request"]["categories"]
check(bd["request"]["stats"]["n"] == REQ,
      f"{REQ} requests ({bd['request']['stats']['n']} of '{bd['request']['name']}', "
      f"{bd['request']['open_at_exit_skipped']} open at exit)")

# The program's GIL waits inside requests, from the database: waits of
# class gil without their run-queue tail, merged per thread, overlapped
# with each request range on its thread.
c = sqlite3.connect(db)
waits = {}
for t, s, e in c.execute(
        "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0) FROM lock_waits "
        "WHERE class = 1 UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns - "
        "coalesce(runq_ns, 0) FROM cond_waits WHERE class = 1"):
    waits.setdefault(t, []).append((s, e))
merged = {}
for t, iv in waits.items():
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    merged[t] = out
want = 0
for t, s, e in c.execute(
        "SELECT r.start_thread_id, r.start_ns, r.end_ns FROM ranges r JOIN strings n ON "
        "n.id = r.name_id JOIN domains d ON d.id = r.domain_id WHERE n.value = 'request' "
        "AND d.name = 'pysrv'"):
    want += sum(max(0, min(b, e) - max(a, s)) for a, b in merged.get(t, []))
check(want > 0 and req["gil_wait"] == want,
      f"breakdown GIL wait {req['gil_wait']} ns = the db's GIL waits inside requests {want} ns")
ncond = c.execute("SELECT count(*) FROM cond_waits WHERE class = 1").fetchone()[0]
check(ncond > 0, f"the GIL's condition waits were recorded ({ncond})")
fnd = json.loads(report("--bottlenecks", "--format", "json"))
ids = [f["id"] for f in fnd["findings"]]
check("gil-contention" in ids, f"the findings name the GIL ({ids})")
waitcats = ("gil_wait", "lock_wait", "cond_wait", "sleep", "file_io", "socket_io", "poll_wait",
            "other_block")
top = max(waitcats, key=lambda k: req.get(k, 0))
check(top == "gil_wait", f"the breakdown's largest wait category is GIL wait ({top})")
text = report("--breakdown")
heads = [l for l in text.splitlines() if l.startswith("stage ")]
check(any("GIL wait" in h for h in heads), "the text breakdown has a GIL wait column")

out = os.path.join(d, "py.html")
latprof("report", db, "--html", out, check=0)
page = open(out, encoding="utf-8").read()
sec = page[page.index('<section id="breakdown">'):]
sec = sec[:sec.index("</section>")]
check("<th>GIL wait</th>" in sec, "the HTML breakdown has a GIL wait column")
tl = page[page.index('<section id="timeline">'):]
tl = tl[:tl.index("</section>")]
titles = re.findall(r"<title>(.*?)</title>", tl)
gil_items = [t for t in titles if t.startswith("GIL wait: ") or t.startswith("GIL ")]
check(not any(t.startswith("condition wait") for t in titles) or
      c.execute("SELECT count(*) FROM cond_waits WHERE class <> 1").fetchone()[0] > 0,
      "no timeline bar calls a GIL wait a condition wait")
check(len(gil_items) > 0, f"the timelines draw GIL waits as GIL ({len(gil_items)} bars)")
# The timelines' requests are the report's p50 and p99 (nearest rank).
UNIT = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
for label, key in (("median request", "p50_ns"), ("p99 request", "p99_ns")):
    m = re.search(rf"<h3>{label}: ([0-9.]+) (ns|µs|ms|s) at ", tl)
    got = float(m.group(1)) * UNIT[m.group(2)] if m else None
    exp = bd["request"]["stats"][key]
    check(got is not None and abs(got - exp) <= 0.001 * exp + 1,
          f"the {label} timeline is {got} ns, the report's {key} {exp}")

# Preempted time in the timelines: each wait's run-queue tail is a bar.
# The p99 request's bars against the database: the waits of its threads
# (the threads that ran it and its stages) with a run-queue tail inside
# its span.
p99 = bd["request"]["stats"]["p99_ns"]
rid, rs, re_ = c.execute(
    "SELECT r.id, r.start_ns, r.end_ns FROM ranges r JOIN strings n ON n.id = r.name_id "
    "WHERE n.value = 'request' AND r.end_ns - r.start_ns = ? ORDER BY r.start_ns, r.id",
    (p99,)).fetchone()
ths = [t for (t,) in c.execute(
    "SELECT DISTINCT start_thread_id FROM ranges WHERE id = ?1 OR parent_id = ?1", (rid,))]
q = " UNION ALL ".join(
    f"SELECT count(*) FROM {t} WHERE runq_ns > 0 AND runq_ns <= dur_ns AND start_ns < ? AND "
    f"start_ns + dur_ns > ? AND thread_id IN ({','.join('?' * len(ths))})"
    for t in ("lock_waits", "cond_waits", "blocking_calls"))
nrunq = sum(n for (n,) in c.execute(q, [re_, rs, *ths] * 3))
sec99 = tl[tl.index("<h3>p99 request"):]
bars = re.findall(r"<title>preempted \(run queue\) [^<]*</title>", sec99)
check(len(bars) == nrunq, f"the p99 timeline draws {len(bars)} run-queue bars, the database "
      f"holds {nrunq} waits with a run-queue tail in that request's threads and span")

# Processes: the HTML's rows are the text report's.
rows_txt = []
lines = report().splitlines()
i = next(k for k, l in enumerate(lines) if l.lstrip().startswith("pid ") and "command" in l)
for l in lines[i + 1:]:
    m = re.match(r"^\s+(\d+)\s+\d+\s+\d+\s+\S+ \S+\s+.*?\s{2}(.*)$", l)
    if not m:
        break
    rows_txt.append(int(m.group(1)))
folded = re.search(r"\((\d+) launcher images? folded, (\d+) process(?:es)? without", report())
summ = page[page.index('<section id="summary">'):]
summ = summ[:summ.index("</section>")]
rows_html = [int(p) for p in re.findall(r'<tr><td>(\d+)</td><td class="l cmd">', summ)]
note = re.search(r"(\d+) launcher images? folded, (\d+) process(?:es)? without", summ)
check(rows_html == rows_txt and len(rows_html) == 1,
      f"HTML process rows {rows_html} = the text report's {rows_txt}")
# Launcher images: sh, its two forks before each exec'd /bin/true, env.
check(folded and note and folded.groups() == note.groups() and
      note.groups() == ("4", "2"),
      f"HTML and text fold the same: 4 launcher images (sh, 2 forks of sh, env), 2 helpers "
      f"({note.groups() if note else None}, text {folded.groups() if folded else None})")
via = re.search(r"\(via ([^)]*)\)", html.unescape(summ))
check(via and via.group(1) == "sh > env", f"the server's row says via sh > env ({via and via.group(1)})")
allp = json.loads(report("--processes", "--format", "json"))["run"]["processes"]
check(len(allp) == 7, f"--processes lists all 7 process images ({len(allp)})")

# The heatmap: utilization.dat's on-CPU (index 0) and preempted (index 1)
# fractions, summed over the bins of each server thread, are that thread's
# on_cpu and preempted in the breakdown's threads rows (task-clock spread
# over the thread's time outside waits; rounding and bin edges within 2%).
plots = os.path.join(d, "plots")
latprof("plot", db, "-o", plots, check=0)
gp = open(os.path.join(plots, "utilization.gp")).read()
dat = open(os.path.join(plots, "utilization.dat")).read()
check("set multiplot" in gp and "index 1" in gp, "the heatmap has an on-CPU and a preempted panel")
binns = int(re.search(r"time bin of (\d+) ns", dat).group(1))
blocks = [[[float(x) for x in l.split()] for l in b.splitlines() if l and not l.startswith("#")]
          for b in dat.split("\n\n\n")]
check(len(blocks) == 2 and len(blocks[0]) == len(blocks[1]),
      f"utilization.dat holds two matrices of the same lanes ({[len(b) for b in blocks]})")
tics = re.search(r"set ytics \((.*?)\) noenhanced", gp).group(1)
names = [m.group(1) for m in re.finditer(r"'((?:[^']|'')*)' \d+", tics)]
server = [t for t in bd["threads"] if t["cpu_ns"] is not None and
          names.count(f"CPU {t['name']} {t['tid']}") == 1 and t["name"] not in ("sh", "env")]
check(len(server) >= 5, f"the heatmap draws the server's main and 4 worker threads ({len(server)})")
for t in server:
    i = names.index(f"CPU {t['name']} {t['tid']}")
    on, pre = sum(blocks[0][i]) * binns, sum(blocks[1][i]) * binns
    c = t["categories"]
    tol = 0.02 * t["time_ns"] + 2 * binns
    # Task-clock that ran inside waits overflows a bin's time outside
    # waits: the heatmap puts it in the lane's spare bins, so that the lane
    # adds up to the thread's row as the breakdown caps it (lp_timeseries.c).
    check(abs(on - c["on_cpu"]) <= tol and abs(pre - c["preempted"]) <= tol,
          f"thread {t['tid']}: heatmap on-CPU {on:.0f} / preempted {pre:.0f} ns against the "
          f"breakdown's {c['on_cpu']} / {c['preempted']} ns (within {tol:.0f})")
    check(all(a + b <= 1.0001 for a, b in zip(blocks[0][i], blocks[1][i])),
          f"thread {t['tid']}: on-CPU + preempted never exceed a bin")
