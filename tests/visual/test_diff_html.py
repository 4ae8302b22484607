"""latprof diff --format html on real recordings of samples/infer_server:
a 30% slower infer stage (--slow-stage infer --slow-pct 30) is marked as a
regression in the DOM Chromium builds (CSS class and text), the verdict,
stages, charts, locks, GPU and findings sections are there, the latency CDF
and stage bars overlay base and new as SVG, no external URL, exit status 1
as with the other formats, -o refuses to overwrite without --force, hostile
recorded names show as text, and without gnuplot the page says how to get
the charts."""
import json
import os
import re
import sqlite3
import sys

from lptest import check, latprof, realtime, record, sample, skip, tmpdir
import vislib
from test_html import no_external

srv = sample("infer_server")
if not os.path.exists(srv):
    skip("infer_server not built (no NVTX3 headers)")
d = tmpdir()
# 12 runs a side: the diff's bootstrap resamples runs, so one run the
# hypervisor stretched 2.5x (CI: base infer medians [3.83, 1.5, 1.5, 1.5] ms
# for a programmed 1.5) lands in half or more of a 4-run resample's draws a
# quarter of the time and rightly hides a 30% change; among 12 runs it
# does so about once in 5,000 resamples (by hand: one base run slowed 150% on
# purpose, 4 runs "unchanged" [-48%, +30%], 8 runs p 0.095, 12 runs
# REGRESSION [+29.9%, +30.0%]).
RUNS, REQ = 12, 40
# Stages shorter than a scheduler slice (as tests/diff/test_diff_infer.py),
# two threads sharing a lock inside infer so that lock changes show too.
COSTS = ["--decode-us", 300, "--pre-us", 200, "--infer-us", 1500, "--post-us", 200,
         "--locked-frac", 0.15, "--locked-stage", "infer", "--locked-us", 200]


def infer_p50s(dbs):
    """The infer stage's median per run, ms: how far the machine stretched
    the programmed 1.5 ms (2 ms on the slow side)."""
    out = []
    for db in dbs:
        c = sqlite3.connect(db)
        v = sorted(r[0] for r in c.execute(
            "SELECT r.end_ns - r.start_ns FROM ranges r JOIN strings s ON s.id = r.name_id "
            "WHERE s.value = 'infer'"))
        c.close()
        out.append(round(v[len(v) // 2] / 1e6, 2) if v else None)
    return out


def record_sides(attempt):
    """RUNS recordings per side, interleaved so load drift on a shared
    machine hits both sides alike."""
    base, new = [], []
    for i in range(RUNS):
        for side, extra, tag in ((base, [], "base"), (new, ["--slow-stage", "infer",
                                                              "--slow-pct", 30], "new")):
            db = os.path.join(d, f"{tag}{i}-{attempt}.db")
            # real-time priority where allowed: the neighbours' load would hide the change
            record(db, *realtime(), srv, "--requests", REQ, "--threads", 2, "--seed", i + 1,
                   *COSTS, *extra)
            side.append(db)
    return ["--base", *base, "--new", *new], base, new


# A run the machine stretched (hypervisor steal, even at real-time priority:
# one CI run measured infer medians of 1.5-4.3 ms for a programmed 1.5 ms)
# widens the interval between runs past the change; as nvtxlib's
# record_stages does, one such recording is retried, its figures printed,
# before the test fails.
out = os.path.join(d, "diff.html")
for attempt in range(2):
    sides, base, new = record_sides(attempt)
    if os.path.exists(out):  # the failed attempt's page
        os.unlink(out)
    p = latprof("diff", *sides, "--format", "html", "-o", out)
    if p.returncode == 1:
        break
    print(f"note: attempt {attempt + 1}: diff exited {p.returncode}; infer p50 per run, ms: base "
          f"{infer_p50s(base)}, new {infer_p50s(new)} (load {os.getloadavg()[0]:.1f})")
check(p.returncode == 1, f"30% slower infer: diff --format html exits 1 (got {p.returncode}) "
      f"{p.stderr.strip()}")
check(p.stdout == "", "with -o nothing goes to stdout")
j = latprof("diff", *sides, "--format", "json")
check(j.returncode == 1, "the json format agrees: exit 1")
for r in json.loads(j.stdout)["rows"]:
    print(f"  {r['scope']:12} {r['metric']:5} {(r['rel_change'] or 0):+7.1%} p_holm {r['p_holm']} "
          f"{r['verdict']}")
with open(out, encoding="utf-8") as f:
    html = f.read()
no_external(html, "diff page")
dom = vislib.dump_dom(out)

for s in ["verdict", "stages", "charts", "locks", "gpu", "findings"]:
    check(f'id="{s}"' in dom, f"section #{s} in the DOM")
check(re.search(r'class="verdict bad" data-state="regression"><b>\d+ regressions?', dom) is not None,
      "the verdict banner counts the regressions")
check("exits with status <b>1</b>" in dom and "Holm-Bonferroni" in dom,
      "the banner states the exit status and the Holm-Bonferroni correction")

# Every row of the per-metric tables carries the verdict json gives it.
want = {(r["scope"], r["metric"]): r["verdict"] for r in json.loads(j.stdout)["rows"]}
cls = {"regression": "regression", "improvement": "improvement", "unchanged": "unchanged",
       "not enough data": "notenough"}
seen = {}
for part in dom.split('<h3 id="metric-')[1:]:
    metric = part[:part.index('"')]
    table = part[:part.index("</table>")]
    for c, name, rest in re.findall(r'<tr class="([^"]*)"><td class="l">([^<]*)</td>(.*?)</tr>',
                                    table):
        scope = "request" if name == "(request)" else name
        seen[(scope, metric)] = (c.split()[0], rest)
check(set(seen) == set(want), f"a table row per stage and metric ({len(seen)} of {len(want)})")
check(all(seen[k][0] == cls[v] for k, v in want.items()),
      "each row's class is its verdict: " +
      ", ".join(f"{k[0]} {k[1]} {v}" for k, v in want.items() if v != "unchanged"))
reg = [k for k, v in want.items() if v == "regression"]
check(all("REGRESSION" in seen[k][1] for k in reg), "regression rows say REGRESSION in text")
check(any(k[0] == "infer" for k in reg), f"the slowed infer stage is marked as a regression")
check(sum(seen[k][0] == "regression" for k in seen) == len(reg) and
      dom.count("REGRESSION") == len(reg), "no other row is marked")
for stage in ["decode", "preprocess", "postprocess"]:
    check(f">{stage}<" in dom, f"stage {stage} shown")
check(re.search(r"<td class=\"l\">infer_lock</td>", dom) is not None,
      "the contended lock's change is listed")
gpu = dom[dom.index('id="gpu"'):dom.index('id="findings"')]
check(re.search(r"No GPU data on both sides|No kernel recorded on either side", gpu),
      "no GPU: the GPU section says so, without an empty table")

for c in ["latency_cdf", "stage_bars"]:
    m = re.search(rf'<figure id="chart-{c}">\s*<svg[^>]*viewBox="0 0 (\d+) (\d+)"(.*?)</svg>',
                  dom, re.S)
    check(m and int(m.group(1)) > 0, f"chart {c} rendered as inline <svg>")
    titles = re.findall(r'<g id="gnuplot_plot_\d+[a-z]*"[^>]*>\s*<title>([^<]*)</title>',
                        m.group(3))
    want = ["base", "new"] if c == "latency_cdf" else ["base p50", "new p50", "base p99",
                                                        "new p99"]
    check(titles == want, f"chart {c} overlays base and new: series {titles}")

# -o: no overwrite without --force
p = latprof("diff", *sides, "--format", "html", "-o", out)
check(p.returncode == 2 and "--force" in p.stderr, "an existing -o file is refused without --force")
os.unlink(os.path.join(d, "diff.html"))
open(out, "w").close()
p = latprof("diff", *sides, "--format", "html", "--output", out, "--force")
check(p.returncode == 1 and os.path.getsize(out) > 1000, "--force overwrites it")

# Same program on both sides: exit 0, no regression row.
same = os.path.join(d, "same.html")
p = latprof("diff", base[0], base[1], "--format", "html", "-o", same)
with open(same, encoding="utf-8") as f:
    page = f.read()
check(p.returncode in (0, 1, 3), "same program: diff ran")
STATE = {0: "no regression", 1: "regression", 3: "inconclusive"}
check(f'data-state="{STATE.get(p.returncode)}"><b>' in page and
      (p.returncode == 0) == ("><b>No regression" in page),
      f"the banner agrees with exit status {p.returncode}")

# Hostile recorded names.
h1, h2 = vislib.hostile_db(d), os.path.join(d, "hostile2.db")
record(h2, vislib.HOSTILE)
out = os.path.join(d, "hostile.html")
p = latprof("diff", h1, h2, "--format", "html", "-o", out)
check(p.returncode in (0, 1, 3), f"hostile diff ran ({p.stderr.strip()})")
with open(out, encoding="utf-8") as f:
    no_external(f.read(), "hostile diff page")
dom = vislib.dump_dom(out)
check("<img" not in dom.lower() and "data-pwned" not in dom, "no element or attribute from a name")
check(len(re.findall(r"<script", dom, re.I)) == 0, "no <script> element in the DOM")
check("&lt;img src=x onerror=alert(1)&gt;" in dom, "the <img> stage name shows as text")
check("&lt;/script&gt;&lt;script&gt;document.body.dataset.pwned=2&lt;/script&gt;" in dom,
      "the </script> stage name shows as text")
check("req\"&lt;svg onload=" in dom and "<svg onload" not in dom.lower(),
      "the request name shows as text")

# Without gnuplot the page says how to get the charts.
out = os.path.join(d, "nogp.html")
latprof("diff", *sides, "--format", "html", "-o", out, env={"PATH": "/nonexistent"})
with open(out, encoding="utf-8") as f:
    page = f.read()
check('id="charts-missing"' in page and "gnuplot-nox" in page and "<svg" not in page
      and 'id="stages"' in page, "without gnuplot: a note on getting the charts, the rest kept")
sys.exit(0)
