"""latprof diff on runs annotated with request ranges only (no stage ranges
below them): every range is outermost, so the scan's array of outermost
rows is exactly full. Two names: 50 'request' and 3 'warmup' ranges; diff
picks 'request' (the most frequent) and compares it alone. Base requests
take 1 ms each, new ones 2 ms: p50 1 ms -> 2 ms, +100%, a regression
(exit 1), no stage rows. Under the asan tier this also checks that the
diff reads neither past the outermost rows nor past the name counts."""
import json
import os

from lptest import check, latprof, schema_db, tmpdir

d = tmpdir()
N, WARM = 50, 3


def make(path, req_ns):
    c = schema_db(path, ("core.sql", "nvtx.sql"))
    c.execute("INSERT INTO processes (id, pid, ppid, start_ns) VALUES (1, 100, 1, 0)")
    c.execute("INSERT INTO threads (id, process_id, tid, start_ns) VALUES (1, 1, 100, 0)")
    c.executemany("INSERT INTO strings VALUES (?, ?)", [(1, "warmup"), (2, "request")])
    rows, t = [], 1000
    for i in range(WARM + N):
        name, dur = (1, 5000000) if i < WARM else (2, req_ns)
        rows.append((i + 1, name, t, t + dur))
        t += dur + 1000
    c.executemany("INSERT INTO ranges (id, process_id, name_id, start_ns, end_ns, "
                  "start_thread_id, depth) VALUES (?, 1, ?, ?, ?, 1, 0)", rows)
    c.commit()
    c.close()


a, b = os.path.join(d, "a.db"), os.path.join(d, "b.db")
make(a, 1000000)
make(b, 2000000)
p = latprof("diff", a, b, "--metric", "p50", "--format", "json")
check(p.returncode == 1, f"diff exits 1 on a regression ({p.returncode}: {p.stderr.strip()})")
j = json.loads(p.stdout)
check(j["request"] == "request", f"the most frequent outermost name is the request: {j['request']}")
check(j["base"]["requests"] == N and j["new"]["requests"] == N,
      f"{N} requests a side: {j['base']['requests']}, {j['new']['requests']}")
scopes = [r["scope"] for r in j["rows"]]
check(scopes == ["request"], f"one row, the request's (no stages): {scopes}")
r = j["rows"][0]
check(r["metric"] == "p50" and r["base_ns"] == 1000000 and r["new_ns"] == 2000000 and
      r["rel_change"] == 1.0,
      f"p50 {r['base_ns']} -> {r['new_ns']} ns, {r['rel_change']:+.3f}")
check(r["verdict"] == "regression" and j["regressions"] == 1,
      f"a regression: {r['verdict']}, {j['regressions']} regression(s)")
