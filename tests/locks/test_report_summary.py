"""latprof report FILE.db --format json (the default view) on two real
recordings: samples/lock_server (workers queue on a global lock, no NVTX) and
samples/infer_server (NVTX requests and stages). Each document must follow
schemas/report-summary.schema.json and its numbers must match the database:
processes, threads, lock waits, requests."""
import copy
import json
import os

from locklib import SMALL_LOGS, validate
from lptest import SRC, check, db, fail, latprof, q1, record, sample, skip, tmpdir

SCHEMAS = os.path.join(SRC, "schemas")


def load(name):
    with open(os.path.join(SCHEMAS, name)) as f:
        return json.load(f)


SUMMARY = load("report-summary.schema.json")


def _resolve(root, ref):
    """(root, node) a $ref points to; a file part names a sibling in schemas/."""
    fname, _, ptr = ref.partition("#")
    if fname:
        root = load(fname)
    node = root
    for part in filter(None, ptr.split("/")):
        node = node[part]
    return root, node


def _has_file_ref(node):
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and not r.startswith("#"):
            return True
        return any(_has_file_ref(v) for v in node.values())
    return isinstance(node, list) and any(_has_file_ref(v) for v in node)


def subset_errors(doc, root=SUMMARY, node=None, path="$"):
    """Without jsonschema: walk the schema down to the references into the
    sibling files (locks, findings, breakdown members) and check every part
    with lptest.validate against the file it belongs to, so that internal
    '#/$defs/...' references resolve in the right document."""
    node = root if node is None else node
    if "$ref" in node:
        root, node = _resolve(root, node["$ref"])
        return subset_errors(doc, root, node, path)
    if not _has_file_ref(node):
        return validate(doc, root, node, path)
    if not isinstance(doc, dict):
        return [f"{path}: {doc!r} is not an object"]
    props = node.get("properties", {})
    errs = [f"{path}: missing '{k}'" for k in node.get("required", []) if k not in doc]
    for k, v in doc.items():
        if k in props:
            errs += subset_errors(v, root, props[k], f"{path}.{k}")
        elif node.get("additionalProperties") is False:
            errs.append(f"{path}: unexpected '{k}'")
    return errs


def jsonschema_errors(doc):
    """[] / violations with the jsonschema package; None when it is missing.
    The sibling schemas go into a registry under their $id, so no $ref is
    ever fetched over the network."""
    try:
        import jsonschema
    except ImportError:
        return None
    sibs = [load(n) for n in sorted(os.listdir(SCHEMAS)) if n.endswith(".schema.json")]
    try:
        from referencing import Registry, Resource
    except ImportError:  # jsonschema < 4.18
        res = jsonschema.RefResolver.from_schema(SUMMARY, store={s["$id"]: s for s in sibs})
        v = jsonschema.Draft202012Validator(SUMMARY, resolver=res)
    else:
        reg = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in sibs)
        v = jsonschema.Draft202012Validator(SUMMARY, registry=reg)
    return [f"{'.'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in v.iter_errors(doc)]


def check_schema(doc, what):
    errs = subset_errors(doc)
    if errs:
        fail(f"{what} does not follow report-summary.schema.json (built-in check):\n"
             + "\n".join(errs[:20]))
    js = jsonschema_errors(doc)
    if js:
        fail(f"{what} does not follow report-summary.schema.json (jsonschema):\n"
             + "\n".join(js[:20]))
    how = "built-in structural check" + (" and jsonschema" if js is not None else
                                         "; jsonschema not importable, so only that")
    print(f"ok: {what} follows report-summary.schema.json ({how})")
    return js is not None


def must_reject(doc, what):
    """A broken document fails both checks: neither can pass everything."""
    errs = subset_errors(doc)
    js = jsonschema_errors(doc)
    check(errs and (js is None or js), f"schema rejects {what} ({(errs or ['?'])[0]})")


def report(path):
    p = latprof("report", path, "--format", "json", check=0)
    doc = json.loads(p.stdout)
    check(doc["format"] == "latprof.report.summary" and doc["version"] == 1,
          "default JSON report is latprof.report.summary version 1")
    return doc


def check_run(doc, conn, what):
    run = doc["run"]
    procs = conn.execute("SELECT pid, ppid, exit_status, log_closed, start_ns, "
                         "(SELECT count(*) FROM threads t WHERE t.process_id = p.id) "
                         "FROM processes p ORDER BY start_ns, id").fetchall()
    check(len(run["processes"]) == len(procs) >= 1,
          f"{what}: {len(procs)} process(es) as in the db")
    for jp, (pid, ppid, status, closed, start, nthr) in zip(run["processes"], procs):
        check((jp["pid"], jp["ppid"], jp["threads"], jp["start_ns"]) == (pid, ppid, nthr, start),
              f"{what}: pid {pid}: ppid, {nthr} threads, start as in the db")
        check(jp["exit_status"] == status == 0 and jp["log_closed"] is bool(closed) is True,
              f"{what}: pid {pid} exited 0 and closed its log")
    threads = q1(conn, "SELECT count(*) FROM threads")
    check(run["threads"] == threads >= 2, f"{what}: {threads} threads as in the db")
    start = q1(conn, "SELECT min(start_ns) FROM processes")
    check(run["start_ns"] == start and run["duration_ns"] == run["end_ns"] - start > 0,
          f"{what}: duration {run['duration_ns'] / 1e6:.1f} ms = end - earliest start")
    waits = q1(conn, "SELECT count(*) FROM lock_waits")
    wait_ns = q1(conn, "SELECT coalesce(sum(dur_ns), 0) FROM lock_waits")
    tot = doc["locks"]["totals"]
    check(run["lock_waits"] == tot["lock_waits"] == waits and tot["lock_wait_ns"] == wait_ns,
          f"{what}: {waits} lock waits, {wait_ns / 1e6:.2f} ms, in run and locks as in the db")
    check(run["cond_waits"] == tot["cond_waits"] == q1(conn, "SELECT count(*) FROM cond_waits"),
          f"{what}: {run['cond_waits']} cond waits as in the db")
    dropped = q1(conn, "SELECT coalesce(sum(dropped_records), 0) FROM processes")
    check(run["dropped_records"] == dropped, f"{what}: {dropped} dropped records as in the db")
    check(run["gpu"]["captured"] is False, f"{what}: no GPU data captured")
    return waits, wait_ns


d = tmpdir()

# ---- lock_server: a global lock, no NVTX ranges --------------------------
srv = sample("lock_server")
if not os.path.exists(srv):
    fail(f"{srv} not built")
path = os.path.join(d, "lock.db")
record(path, srv, "--threads", 3, "--requests", 300, "--work-us", 200, env=SMALL_LOGS)
conn = db(path)
doc = report(path)
had_js = check_schema(doc, "lock_server report")
waits, wait_ns = check_run(doc, conn, "lock_server")
check(waits > 0, "lock_server contended on its global lock")
check("breakdown" not in doc, "no NVTX ranges: no breakdown member")
locks = doc["locks"]["locks"]
check(locks and locks[0]["symbol"] == "model_lock"
      and locks[0]["count"] == q1(conn, "SELECT count(*) FROM lock_waits w JOIN locks l "
                                  "ON l.id = w.lock_id WHERE l.address = ?",
                                  int(locks[0]["address"], 16)),
      f"top lock is model_lock with its waits as in the db ({locks[0]['count'] if locks else 0})")
check(doc["findings"]["requests"] is None and doc["findings"]["scope"] == "threads",
      "no requests: findings are shares of thread time")

bad = copy.deepcopy(doc)
del bad["run"]["threads"]
must_reject(bad, "a run without 'threads'")
bad = copy.deepcopy(doc)
bad["locks"]["totals"]["lock_waits"] = "26"
must_reject(bad, "locks.totals.lock_waits as a string")

# ---- infer_server: NVTX requests and stages ------------------------------
srv = sample("infer_server")
if not os.path.exists(srv):
    skip("infer_server not built (no NVTX3 headers); lock_server part passed")
REQ = 60
path = os.path.join(d, "infer.db")
# Stage costs from tests/diff/test_diff_infer.py: short, so the run is quick.
record(path, srv, "--requests", REQ, "--threads", 2, "--decode-us", 600, "--pre-us", 500,
       "--infer-us", 1500, "--post-us", 300, env=SMALL_LOGS)
conn = db(path)
doc = report(path)
check_schema(doc, "infer_server report")
check_run(doc, conn, "infer_server")
bd = doc.get("breakdown")
if bd is None:
    fail("infer_server recorded NVTX ranges but the report has no breakdown")
req = bd["request"]
db_req = q1(conn, "SELECT count(*) FROM ranges_named WHERE name = 'request' AND depth = 0")
check(req["name"] == "request" and req["stats"]["n"] == db_req == REQ,
      f"breakdown: {req['stats']['n']} requests = 'request' ranges in the db = {REQ}")
db_total = q1(conn, "SELECT sum(end_ns - start_ns) FROM ranges_named "
              "WHERE name = 'request' AND depth = 0")
check(req["stats"]["total_ns"] == db_total,
      f"breakdown: request time {db_total / 1e6:.1f} ms as in the db")
for st in bd["stages"]:
    if st["unattributed"]:
        continue
    n = q1(conn, "SELECT count(*) FROM ranges_named WHERE name = ? AND depth = 1", st["name"])
    check(st["instances"] == n == REQ, f"breakdown: stage {st['name']}: {n} instances")
check(doc["findings"]["requests"]["count"] == REQ, f"findings count {REQ} requests")

bad = copy.deepcopy(doc)
bad["breakdown"]["format"] = "latprof.report.breakdown"
must_reject(bad, "breakdown carrying its own 'format'")
bad = copy.deepcopy(doc)
bad["breakdown"]["stages"][0]["stats"].pop("n")
must_reject(bad, "a stage without stats.n")
print("schema checks ran:", "built-in and jsonschema" if had_js else "built-in only")
