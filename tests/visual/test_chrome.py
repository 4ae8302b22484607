"""export --chrome passes the Perfetto-rules checker, has as many slices as
the database has ranges, waits, CUDA API calls and GPU activities, ns-exact
timestamps, and hostile names survive as JSON strings."""
import json
import os
import sys

from lptest import check, db as opendb, latprof, q1, tmpdir
import vislib
from check_chrome_trace import check as check_trace

TABLES = ["ranges", "lock_waits", "cond_waits", "cuda_api", "kernels", "memcpys", "memsets"]


def db_slices(path):
    c = opendb(path)
    have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return sum(q1(c, f"SELECT count(*) FROM {t}") for t in TABLES if t in have)


def export(db, d, name):
    out = os.path.join(d, name)
    p = latprof("export", db, "--chrome", out, check=0)
    check("wrote" in p.stderr, f"{name}: export says what it wrote")
    errs, stats = check_trace(out, db_slices(db))
    check(not errs, f"{name}: Perfetto rules hold, {stats} ({errs[:5]})")
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def main():
    d = tmpdir()
    db = vislib.infer_db(d)
    tr = export(db, d, "infer.json")
    c = opendb(db)
    # one range, exactly: ts/dur in µs with 3 decimals = the recorded ns
    base = tr["otherData"]["base_ns"]
    r = c.execute("SELECT r.start_ns, r.end_ns FROM ranges r JOIN strings s ON s.id = r.name_id "
                  "WHERE s.value = 'infer' ORDER BY r.start_ns LIMIT 1").fetchone()
    xs = [e for e in tr["traceEvents"] if e.get("ph") == "X" and e["name"] == "infer"]
    first = min(xs, key=lambda e: e["ts"])
    check(round(first["ts"] * 1000) == r[0] - base and
          round(first["dur"] * 1000) == r[1] - r[0], "timestamps are ns-exact µs from the base")
    lw = q1(c, "SELECT count(*) FROM lock_waits")
    check(sum(1 for e in tr["traceEvents"] if e.get("cat") == "lock_wait") == lw > 0,
          f"all {lw} lock waits exported")

    # the checker can fail: a stage stretched past its request, a lost flow end
    bad = dict(tr)
    evs = [dict(e) for e in tr["traceEvents"]]
    x = next(e for e in evs if e.get("ph") == "X" and e["name"] == "decode")
    x["dur"] += 10_000_000
    evs.append({"ph": "s", "cat": "cuda_flow", "id": 999999, "pid": 1, "tid": 1, "ts": 0})
    bad["traceEvents"] = evs
    bp = os.path.join(d, "bad.json")
    with open(bp, "w") as f:
        json.dump(bad, f)
    errs, _ = check_trace(bp)
    check(any("overlaps" in e for e in errs) and any("flow" in e for e in errs),
          "checker rejects an improperly nested slice and an unpaired flow")

    db = vislib.hostile_db(d)
    tr = export(db, d, "hostile.json")
    names = {e.get("name") for e in tr["traceEvents"]}
    check("<img src=x onerror=alert(1)>" in names, "hostile range name round-trips through JSON")
    tn = {e["args"]["name"] for e in tr["traceEvents"] if e.get("name") == "thread_name"}
    check("</script>\"'<b>" in tn, "hostile thread name round-trips")

    db = vislib.lock_db(d)
    export(db, d, "lock.json")

    # GPU lanes and flows, from fnd_gpu's CUPTI records (real structs through
    # the real translator and importer; no GPU on this machine)
    gpu = os.path.join(os.environ.get("LP_BUILD", "build"), "tests", "bin", "fnd_gpu")
    if not os.path.exists(gpu):
        print("SKIP-PART: GPU trace: fnd_gpu not built (no CUPTI headers)")
        return 0
    db = os.path.join(d, "gpu.db")
    latprof("run", "-o", db, "--", gpu, "--requests", "20", check=0)
    tr = export(db, d, "gpu.json")
    c = opendb(db)
    links = q1(c, "SELECT count(*) FROM cuda_api a WHERE EXISTS (SELECT 1 FROM kernels k WHERE "
                  "k.correlation_id = a.correlation_id) OR EXISTS (SELECT 1 FROM memcpys m "
                  "WHERE m.correlation_id = a.correlation_id)")
    starts = sum(1 for e in tr["traceEvents"] if e.get("ph") == "s")
    check(links > 0 and starts >= links,
          f"a flow from each launching API call to its GPU work ({starts} flows, {links} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
