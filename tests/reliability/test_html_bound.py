"""The HTML report stays bounded whatever the run's size.
Synthetic databases in the real schema (schemas/*.sql), generated here:
requests with stages on 8 threads, every 100th one slow. The page of a run
8x larger must be no larger (beyond a few KB of numbers), far below 20 MB;
the latency chart draws a bounded sample and the page says so; a run with
1,000 distinct stage names shows 200 of them and says how many it left out.
Time is printed, not asserted (the bound is by construction: what is drawn
is capped; see docs/reliability.md); the 20 M-range figure (0.46 MB in
19-20 s on 2 cores) is measured by hand with LP_HTML_RANGES=20000000."""
import os
import re
import resource
import subprocess
import time

from lptest import LATPROF, check, schema_db, tmpdir

d = tmpdir()
STAGES = [("decode", 2_100_000), ("infer", 6_400_000), ("post", 700_000)]


def generate(path, nranges, nnames=len(STAGES)):
    """nranges ranges: requests of 1 + 3 stages; stage names cycle through
    nnames distinct names (the 3 real ones, then stage-N)."""
    per = 1 + len(STAGES)
    c = schema_db(path)
    c.execute("INSERT INTO meta VALUES ('generator', 'tests/reliability/test_html_bound.py')")
    c.execute("INSERT INTO processes(id, pid, ppid, start_ns, end_ns) VALUES (1, 42, 1, ?, ?)",
              (999_000_000, 10**15))
    c.executemany("INSERT INTO threads(id, process_id, tid, name) VALUES (?, 1, ?, ?)",
                  [(i + 1, 42 + i, f"worker-{i}") for i in range(8)])
    names = ["request"] + [s[0] for s in STAGES] + [f"stage-{i}" for i in range(nnames)]
    c.executemany("INSERT INTO strings(id, value) VALUES (?, ?)",
                  [(i + 1, v) for i, v in enumerate(names)])
    c.execute("INSERT INTO domains(id, process_id, name) VALUES (1, 1, '')")

    def rows():
        rid, t_next = 0, [1_000_000_000] * 8
        for r in range(nranges // per):
            th = r % 8
            jit = (r * 2654435761) % 1000
            t = start = t_next[th]
            rid += 1
            req = rid
            kids = []
            for i, (_, cost) in enumerate(STAGES):
                dur = cost + cost * jit // 10_000 + (20_000_000 if r % 100 == 0 else 0)
                k = (r * len(STAGES) + i) % nnames
                name_id = 2 + i if nnames == len(STAGES) else 2 + len(STAGES) + k
                rid += 1
                kids.append((rid, name_id, t, t + dur, th + 1, req, 1))
                t += dur + 2_000
            yield (req, 1, start, t + 3_000, th + 1, None, 0)
            yield from kids
            t_next[th] = t + 13_000

    c.executemany("INSERT INTO ranges(id, process_id, domain_id, name_id, start_ns, end_ns, "
                  "start_thread_id, end_thread_id, parent_id, depth) "
                  "VALUES (?1, 1, 1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)", rows())
    c.executescript("CREATE INDEX ranges_start ON ranges(start_ns);"
                    "CREATE INDEX ranges_name ON ranges(name_id);"
                    "CREATE INDEX ranges_parent ON ranges(parent_id);")
    c.commit()
    c.close()


def html(db):
    out = db + ".html"
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([LATPROF, "report", db, "--html", out], capture_output=True, text=True)
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    check(p.returncode == 0, f"report --html on {db}\n{p.stderr}")
    with open(out) as f:
        page = f.read()
    return page, secs, rss


big = int(os.environ.get("LP_HTML_RANGES", 0))
if big:  # by hand: one size, figures only
    db = os.path.join(d, "big.db")
    t0 = time.perf_counter()
    generate(db, big)
    print(f"generated {big} ranges in {time.perf_counter() - t0:.0f} s")
    page, secs, rss = html(db)
    print(f"html of {big} ranges: {len(page) / 2**20:.2f} MB in {secs:.1f} s, "
          f"max RSS {rss:.0f} MB")
    raise SystemExit(0)

sizes = {}
for n in (40_000, 320_000):
    db = os.path.join(d, f"r{n}.db")
    generate(db, n)
    page, secs, rss = html(db)
    sizes[n] = len(page)
    print(f"html of {n} ranges: {len(page) / 1024:.0f} KB in {secs:.1f} s, max RSS {rss:.0f} MB")
check(sizes[320_000] < 20 * 2**20, f"the page is under 20 MB ({sizes[320_000]} bytes)")
check(sizes[320_000] <= sizes[40_000] + 64 * 1024,
      f"8x the ranges, no bigger page: {sizes[40_000]} -> {sizes[320_000]} bytes")
check("draws 80000 requests as a sample" in page,
      "the page says the latency chart is a sample of the 80000 requests")
at = page.find("<text>Request latency over time</text>")
if at >= 0:
    svg = page[page.rfind("<svg", 0, at):page.find("</svg>", at)]
    n = len(re.findall(r"<use xlink:href='#gpPt6'", svg))  # pt 7: the filled circle
    check(0 < n <= 2 * 1000 + 200 + 10, f"the latency chart draws {n} points of 80000 requests")
else:
    print("no latency chart in the page (gnuplot missing?): point count not checked")

# Per-request stage names: 1,000 distinct stages, 200 shown, the rest named.
db = os.path.join(d, "names.db")
generate(db, 40_000, nnames=1000)
page, secs, rss = html(db)
m = re.search(r"(\d+) more stages \(the smallest shares\) not shown", page)
table = page[page.find("<h2>Request breakdown</h2>"):]
table = table[:table.find("</table>")]
rows = table.count("<tr><td")  # stage rows (the request row is <tr class="req">)
check(rows == 200, f"1000 stages: the breakdown table shows 200 stage rows ({rows})")
# 1000 named stages plus the request's own time outside them
check(m and int(m.group(1)) == 801, f"... and says how many more ({m and m.group(0)})")
check(len(page) < 2 * 2**20, f"1000 stages: the page stays small ({len(page)} bytes)")
