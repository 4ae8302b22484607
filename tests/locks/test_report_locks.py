"""latprof report --locks on a real recording: 4 threads contend on a global
`pthread_mutex_t model_lock`, then on a heap mutex. Every number the report
prints is recomputed here from the database, in text, JSON and CSV."""
import csv
import io
import json
import os
import re
import sys

from locklib import SMALL_LOGS, check_schema, lockprog, source_line
from lptest import check, db, fail, latprof, q1, record, tmpdir

d = tmpdir()
path = os.path.join(d, "locks.db")
record(path, lockprog(), env=SMALL_LOGS)
conn = db(path)

# ---- JSON: schema, then every number against the database ----------------
p = latprof("report", path, "--locks", "--format", "json", check=0)
rep = json.loads(p.stdout)
check_schema(rep, "--locks JSON")

tot = rep["totals"]
check(tot["lock_waits"] == q1(conn, "SELECT count(*) FROM lock_waits") > 0,
      f"total lock waits {tot['lock_waits']} = rows in lock_waits")
check(tot["lock_wait_ns"] == q1(conn, "SELECT sum(dur_ns) FROM lock_waits"), "total wait = sum(dur_ns)")
check(tot["contended_locks"] == q1(conn, "SELECT count(DISTINCT lock_id) FROM lock_waits"),
      f"{tot['contended_locks']} contended locks")
check(tot["cond_waits"] == q1(conn, "SELECT count(*) FROM cond_waits"), "cond waits counted apart")
spans = conn.execute("SELECT COALESCE(t.start_ns, p.start_ns), COALESCE(t.end_ns, p.end_ns) "
                     "FROM threads t JOIN processes p ON p.id = t.process_id").fetchall()
thread_time = sum(e - s for s, e in spans if s is not None and e is not None and e > s)
check(tot["thread_time_basis"] == "threads" and tot["thread_time_ns"] == thread_time > 0,
      f"thread time {thread_time} ns = sum of thread lifetimes")

locks = rep["locks"]
check(len(locks) == 2, f"two contended locks reported ({len(locks)})")
check([l["total_ns"] for l in locks] == sorted((l["total_ns"] for l in locks), reverse=True),
      "locks ordered by total wait")
by_sym = {l["symbol"]: l for l in locks}
model = by_sym.get("model_lock")
if not model:
    fail(f"no lock named model_lock: {[l['name'] for l in locks]}")
check(model["name"] == "model_lock" and model["module"].endswith("lp_lockprog"),
      f"global mutex named '{model['name']}' in {model['module']}")


def nearest(v, q):
    v = sorted(v)
    k = max(1, -(-int(q * len(v) * 1000) // 1000))  # ceil(q n) without float noise
    return v[min(k, len(v)) - 1]


for l in locks:
    lid = q1(conn, "SELECT id FROM locks WHERE address = ?", int(l["address"], 16))
    durs = [r[0] for r in conn.execute("SELECT dur_ns FROM lock_waits WHERE lock_id = ?", (lid,))]
    what = l["name"][:30]
    check(l["count"] == len(durs) and l["total_ns"] == sum(durs) and l["max_ns"] == max(durs),
          f"{what}: {l['count']} waits, total {l['total_ns']} ns, max {l['max_ns']} ns as in the db")
    check(abs(l["mean_ns"] - sum(durs) / len(durs)) < 0.1, f"{what}: mean {l['mean_ns']:.1f} ns")
    check(l["p50_ns"] == nearest(durs, 0.5) and l["p99_ns"] == nearest(durs, 0.99),
          f"{what}: p50 {l['p50_ns']} p99 {l['p99_ns']} (nearest rank)")
    check(abs(l["share"] - sum(durs) / thread_time) < 1e-6, f"{what}: share {l['share']:.4f}")
    check(sum(w["count"] for w in l["waiters"]) == l["count"], f"{what}: waiter counts add up")
    # Which workers queue depends on scheduling (a worker that runs alone
    # on a loaded machine never waits), so: only named workers, and several.
    names = {w["name"] for w in l["waiters"]}
    check(names <= {f"worker-{i}" for i in range(4)} and len(names) >= 2,
          f"{what}: named workers wait on it ({sorted(names)})")
    check(sum(o["count"] for o in l["owners"]) + l["owner_unknown"] == l["count"],
          f"{what}: owners + unknown = waits ({l['owner_unknown']} unknown)")
    check(sum(s["count"] for s in l["sites"]) == l["count"] and l["sites_total"] == 1,
          f"{what}: one call site holds every wait "
          f"({l['sites_total']}: {[(x.get('where'), x['count']) for x in l['sites']]})")

want = source_line("pthread_mutex_lock(m)", "lp_worker")
site = model["sites"][0]
check(site["function"] == "lp_worker" and site["file"].endswith("tests/locks/lp_lockprog.c")
      and site["line"] == want, f"model_lock site '{site['where']}' (want line {want})")

heap = next(l for l in locks if l["symbol"] is None)
hline = source_line("pthread_mutex_lock(heap_lock)", "lp_heap_update")
m = re.fullmatch(r"(0x[0-9a-f]+) \(heap\) at lp_heap_update (\S+):(\d+)", heap["name"])
check(m and m.group(1) == heap["address"] and int(m.group(3)) == hline and heap["module"] is None,
      f"heap lock shown as '{heap['name']}'")

# ---- --top cuts every table ------------------------------------------------
top1 = json.loads(latprof("report", path, "--locks", "--top", "1", "--format", "json",
                          check=0).stdout)
check(len(top1["locks"]) == 1 and top1["locks"][0]["name"] == locks[0]["name"] and
      len(top1["locks"][0]["waiters"]) == 1 and top1["totals"] == tot,
      "--top 1: one lock, one waiter, same totals")

# ---- CSV -------------------------------------------------------------------
p = latprof("report", path, "--locks", "--format", "csv", check=0)
rows = list(csv.DictReader(io.StringIO(p.stdout, newline="")))
check(len(rows) == len(locks), f"CSV: {len(rows)} rows")
for r, l in zip(rows, locks):
    check(r["name"] == l["name"] and int(r["count"]) == l["count"] and
          int(r["total_ns"]) == l["total_ns"] and int(r["p99_ns"]) == l["p99_ns"] and
          r["address"] == l["address"] and r["top_site"] == l["sites"][0]["where"],
          f"CSV row {r['rank']} matches JSON")

# ---- text: aligned table ---------------------------------------------------
p = latprof("report", path, "--locks", check=0)
lines = p.stdout.splitlines()
hdr = next(i for i, s in enumerate(lines) if re.match(r"\s+#\s+lock\s", s))
table = lines[hdr:hdr + 1 + len(locks)]
check(len({len(s) for s in table}) == 1 and all(s.endswith("%") for s in table[1:]),
      "text: table rows are equally wide and right-aligned")
col = table[0].index("waits") + len("waits")
check(all(s[:col].rstrip() and s[col - 1] != " " for s in table),
      "text: the waits column is right-aligned under its header")
check(str(model["count"]) in table[1 if locks[0] is model else 2].split(),
      "text: model_lock's count is in its row")
check(not any(s != s.rstrip() for s in lines), "text: no trailing blanks")

# ---- run summary (no view flag) ------------------------------------------
p = latprof("report", path, check=0)
pid = q1(conn, "SELECT pid FROM processes")
check(re.search(rf"^\s+{pid}\s+\d+\s+5\s+.*exit 0 ", p.stdout, re.M) is not None,
      "summary: the process, its 5 threads and exit 0")
check("no GPU data" in p.stdout and "model_lock" in p.stdout, "summary: GPU line and top locks")
sj = json.loads(latprof("report", path, "--format", "json", check=0).stdout)
check_schema(sj["locks"], "summary JSON's locks member")
gpu = bool(int(q1(conn, "SELECT value FROM meta WHERE key = 'cuda.captured'") or 0))
check(sj["run"]["processes"][0]["exit_status"] == 0 and sj["run"]["gpu"]["captured"] == gpu is False,
      "summary JSON: exit status 0, no GPU")

# ---- -o writes a file; never over the database ----------------------------
out = os.path.join(d, "r.json")
latprof("report", path, "--locks", "--format", "json", "-o", out, check=0)
with open(out) as f:
    check(json.load(f) == rep, "-o writes the same JSON")

# ---- an uncontended run records nothing to report -------------------------
calm = os.path.join(d, "calm.db")
record(calm, lockprog(), "none", env=SMALL_LOGS)
cj = json.loads(latprof("report", calm, "--locks", "--format", "json", check=0).stdout)
check(cj["locks"] == [] and cj["totals"]["lock_waits"] == 0 ==
      q1(db(calm), "SELECT count(*) FROM lock_waits"), "uncontended: no locks, zero waits")
check("No contended lock" in latprof("report", calm, "--locks", check=0).stdout,
      "uncontended: the text says so")
sys.exit(0)
