"""The six real captures of ../shared/realdata (README there) imported and
checked against their own data: row counts and totals per table equal the
source, per-kernel count/total/mean/min/max/median equal SQL over the nsys
export (what `nsys stats --report cuda_gpu_kern_sum` prints), and every
report, plot, export and diff runs on the result."""
import gzip
import json
import os
import sqlite3
import sys
from decimal import Decimal

from lptest import SRC, check, db, fail, latprof, q1, sha256, skip, tmpdir

REAL = os.path.normpath(os.path.join(os.path.abspath(SRC), "..", "shared", "realdata"))
if not os.path.isdir(REAL):
    skip(f"{REAL} is absent: the real nsys/Kineto captures are not on this machine")

NSYS = sorted(os.path.join(REAL, "nsys", f) for f in os.listdir(os.path.join(REAL, "nsys"))
              if f.endswith(".sqlite"))
KINETO = sorted(os.path.join(REAL, "kineto", f) for f in os.listdir(os.path.join(REAL, "kineto"))
                if f.endswith(".json.gz") or f.endswith(".json"))
if not NSYS or not KINETO:
    skip(f"{REAL} holds no nsys exports or no Kineto traces")

T = tmpdir()
VIEWS = ["", "--locks", "--breakdown", "--ranges", "--counters", "--kernels", "--memcpy",
         "--sync", "--cuda-api", "--bottlenecks"]


def imported(src):
    out = os.path.join(T, os.path.basename(src) + ".db")
    latprof("import", src, "-o", out, check=0)
    return out


def has(conn, table):
    return q1(conn, "SELECT count(*) FROM sqlite_master WHERE name = ?", table) > 0


def every_report(path, origin):
    for v in VIEWS:
        p = latprof("report", path, *([v] if v else []), "--top", "1000")
        if p.returncode != 0:
            fail(f"report {v or '(summary)'} on {path} exited {p.returncode}: {p.stderr}")
        if not p.stdout.startswith(origin + "\n"):
            fail(f"report {v} on {path} does not open with '{origin}': {p.stdout[:200]}")
        for fmt in ("json", "csv"):
            p = latprof("report", path, *([v] if v else []), "--format", fmt)
            if p.returncode != 0:
                fail(f"report {v} --format {fmt} on {path}: {p.stderr}")
    # One name for every capture: --force replaces the previous one's.
    latprof("report", path, "--html", os.path.join(T, "r.html"), "--force", check=0)
    latprof("export", path, "--chrome", os.path.join(T, "t.json"), "--force", check=0)
    latprof("plot", path, "-o", os.path.join(T, "plots-" + os.path.basename(path)), check=0)
    check(True, f"every report, --html, export --chrome and plot run on {os.path.basename(path)}")


# ---- Nsight Systems exports ------------------------------------------------------------

def nsys_api_calls(src):
    """Calls, once each: schema 2.9 lists a call twice under one correlation id."""
    n = 0
    for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
        if has(src, t):
            n += q1(src, f"SELECT count(*) FROM (SELECT DISTINCT globalTid, correlationId FROM {t} "
                         f"WHERE correlationId <> 0)")
            n += q1(src, f"SELECT count(*) FROM {t} WHERE correlationId = 0")
    return n


def nsys_kernel_stats(src, by_device):
    """Per kernel name (and device, when the export has more than one, as
    latprof's per-device views split them)."""
    dev = "k.deviceId" if by_device else "NULL"
    rows = src.execute(f"SELECT s.value, {dev}, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       "JOIN StringIds s ON s.id = k.demangledName ORDER BY 1, 2, 3").fetchall()
    out = {}
    for name, d_id, d in rows:
        out.setdefault((name, d_id), []).append(d)
    stats = {}
    for name, v in out.items():
        n = len(v)
        med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
        stats[name] = dict(count=n, total=sum(v), mean=sum(v) / n, min=v[0], max=v[-1], med=med)
    return stats


def check_nsys(path):
    name = os.path.basename(path)
    out = imported(path)
    src = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    c = db(out)
    meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
    check(meta["import.source"] == "nsys" and meta["import.sha256"] == sha256(path),
          f"{name}: meta names the source and its sha256")
    tabs = {"kernels": "CUPTI_ACTIVITY_KIND_KERNEL", "memcpys": "CUPTI_ACTIVITY_KIND_MEMCPY",
            "memsets": "CUPTI_ACTIVITY_KIND_MEMSET", "syncs": "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"}
    for ours, theirs in tabs.items():
        want = q1(src, f"SELECT count(*), sum(end - start) FROM {theirs}") if has(src, theirs) else 0
        got = q1(c, f"SELECT count(*) FROM {ours}")
        exp_n = q1(src, f"SELECT count(*) FROM {theirs}") if has(src, theirs) else 0
        exp_t = (q1(src, f"SELECT coalesce(sum(end - start), 0) FROM {theirs}")
                 if has(src, theirs) else 0)
        got_t = q1(c, f"SELECT coalesce(sum(dur_ns), 0) FROM {ours}")
        check(got == exp_n and got_t == exp_t,
              f"{name}: {ours} {got} rows, {got_t} ns = source {exp_n} rows, {exp_t} ns")
    api = nsys_api_calls(src)
    check(q1(c, "SELECT count(*) FROM cuda_api") == api,
          f"{name}: {api} API calls, each once")
    nvtx = (q1(src, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71)")
            if has(src, "NVTX_EVENTS") else 0)
    marks = (q1(src, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (34, 65)")
             if has(src, "NVTX_EVENTS") else 0)
    check(q1(c, "SELECT count(*) FROM ranges") == nvtx and q1(c, "SELECT count(*) FROM marks") == marks,
          f"{name}: {nvtx} NVTX ranges and {marks} marks")
    # per kernel name: what nsys stats --report cuda_gpu_kern_sum prints
    devs = q1(src, "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    want = nsys_kernel_stats(src, devs > 1)
    p = latprof("report", out, "--kernels", "--format", "json", "--top", "1000000", check=0)
    j = json.loads(p.stdout)
    rows = {(r["name"], r.get("device")): r for r in j["rows"]}
    check(set(rows) == set(want) and j["by_device"] == (devs > 1),
          f"{name}: --kernels lists the {len(want)} kernel names{' per device' if devs > 1 else ''} "
          "of the export")
    for k, w in want.items():
        r = rows[k]
        if not (r["count"] == w["count"] and r["total_ns"] == w["total"] and r["min_ns"] == w["min"]
                and r["max_ns"] == w["max"] and abs(r["avg_ns"] - w["mean"]) <= 0.05
                and abs(r["med_ns"] - w["med"]) <= 0.5):
            fail(f"{name}: kernel {k}: latprof {r} vs SQL over the export {w}")
    check(True, f"{name}: count, total, mean, min, max, median per kernel equal SQL over the export")
    if has(src, "CUPTI_ACTIVITY_KIND_RUNTIME"):
        allocs = 0 if has(src, "CUDA_GPU_MEMORY_USAGE_EVENTS") else q1(
            src, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
            "WHERE s.value GLOB 'cudaMalloc*' OR s.value GLOB 'cudaFree*' OR s.value GLOB 'cuMemAlloc*' "
            "OR s.value GLOB 'cuMemFree*'")
        check(int(meta["import.unsized_alloc_calls"]) == allocs,
              f"{name}: {allocs} allocation calls without memory-usage events, counted")
    if devs > 1 and has(src, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
        # a sync's device is its context's (the rows' own deviceId is 0 throughout)
        want = dict(((d, ), (n, t)) for d, n, t in src.execute(
            "SELECT x.deviceId, count(*), sum(y.end - y.start) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION y "
            "JOIN (SELECT DISTINCT globalPid, contextId, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL) x "
            "USING (globalPid, contextId) GROUP BY 1"))
        p = latprof("report", out, "--sync", "--format", "json", "--top", "1000000", check=0)
        got = {}
        for r in json.loads(p.stdout)["rows"]:
            if r["type"] != "synchronous memcpy":
                n, t = got.get((r["device"], ), (0, 0))
                got[(r["device"], )] = (n + r["count"], t + r["total_ns"])
        check(got == want, f"{name}: --sync per device (by context) = SQL over the export: {got}")
    if has(src, "CUPTI_ACTIVITY_KIND_RUNTIME"):
        orphans = q1(src, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS "
                          "(SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = "
                          "k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24))")
        got = q1(c, "SELECT count(*) FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM cuda_api a "
                    "WHERE a.process_id = k.process_id AND a.correlation_id = k.correlation_id)")
        check(got == orphans, f"{name}: {orphans} kernels launched before the capture kept, unattributed")
    ver = meta["import.producer_version"].split(".")
    every_report(out, f"imported from Nsight Systems {'.'.join(ver[:3])} export "
                      f"(schema {meta['import.schema_version']})")
    return out


# ---- Kineto traces -------------------------------------------------------------------------

def check_kineto(path):
    name = os.path.basename(path)
    out = imported(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f, parse_float=Decimal)
    c = db(out)
    meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
    check(meta["import.source"] == "kineto" and meta["import.sha256"] == sha256(path),
          f"{name}: meta names the source and its sha256")
    ev = [e for e in trace["traceEvents"] if e.get("ph") == "X" and isinstance(e.get("pid"), int)]

    def of(*cats):
        return [e for e in ev if str(e.get("cat", "")).lower() in cats]

    def total_ns(es):
        return sum(int((Decimal(e.get("dur", 0)) * 1000).to_integral_value()) for e in es)

    pairs = [("kernels", ("kernel",)), ("memcpys", ("gpu_memcpy", "memcpy")),
             ("memsets", ("gpu_memset", "memset")), ("syncs", ("cuda_sync",))]
    for ours, cats in pairs:
        es = of(*cats)
        got_n = q1(c, f"SELECT count(*) FROM {ours}")
        got_t = q1(c, f"SELECT coalesce(sum(dur_ns), 0) FROM {ours}")
        if got_n != len(es) or abs(got_t - total_ns(es)) > len(es):
            fail(f"{name}: {ours} {got_n} rows {got_t} ns, trace {len(es)} events {total_ns(es)} ns")
        check(True, f"{name}: {ours} {got_n} rows, {got_t} ns as in the trace")
    for dom, cats in (("runtime", ("cuda_runtime", "runtime")), ("driver", ("cuda_driver", "driver"))):
        n = q1(c, "SELECT count(*) FROM cuda_api WHERE domain = ?", dom)
        check(n == len(of(*cats)), f"{name}: {n} {dom} API calls")
    for dom in ("user_annotation", "cpu_op", "python_function", "gpu_user_annotation"):
        cats = (dom, "operator") if dom == "cpu_op" else (dom,)
        n = q1(c, "SELECT count(*) FROM ranges r JOIN domains d ON d.id = r.domain_id WHERE d.name = ?",
               dom)
        check(n == len(of(*cats)), f"{name}: {n} {dom} ranges")
    devs = trace.get("deviceProperties", [])
    check(q1(c, "SELECT count(*) FROM gpu_devices") == len(devs), f"{name}: {len(devs)} devices")
    steps = [e for e in of("user_annotation") if str(e.get("name", "")).startswith("ProfilerStep#")]
    if steps:
        check(meta.get("import.default_request") == "ProfilerStep",
              f"{name}: ProfilerStep#N is the default request")
        p = latprof("report", out, "--breakdown", "--format", "json", check=0)
        bd = json.loads(p.stdout)
        req = bd["request"]
        check(req["name"] == "ProfilerStep" and req["stats"]["n"] == len(steps),
              f"{name}: the {len(steps)} ProfilerStep#N ranges are the requests")
        # the steps hold their operators: stages exist
        check(q1(c, "SELECT count(*) FROM ranges r JOIN ranges p ON p.id = r.parent_id JOIN strings "
                    "s ON s.id = p.name_id WHERE s.value = 'ProfilerStep'") > 0,
              f"{name}: ranges nest under ProfilerStep")
    every_report(out, f"imported from PyTorch profiler (Kineto) trace "
                      f"(schema {meta.get('import.schema_version', 'unknown')})")
    return out


nsys_dbs = [check_nsys(p) for p in NSYS]
kineto_dbs = [check_kineto(p) for p in KINETO]

# diff of two imported captures compares stages and kernels by name; a
# capture without NVTX ranges has no requests, which diff says in one line
with_ranges = [d for d in nsys_dbs + kineto_dbs if q1(db(d), "SELECT count(*) FROM ranges")]
without = [d for d in nsys_dbs + kineto_dbs if d not in with_ranges]
# pairs that share a request name (Kineto's ProfilerStep), and each with itself
steps = [d for d in with_ranges if q1(db(d), "SELECT value FROM meta WHERE key = 'import.default_request'")]
pairs = [(a, b) for a in steps for b in steps if a != b] + [(d, d) for d in with_ranges]
for a, b in pairs:
    p = latprof("diff", a, b)
    if p.returncode not in (0, 1, 3):  # 3: inconclusive (one capture a side)
        fail(f"diff {a} {b} exited {p.returncode}: {p.stderr}")
    if "kernel" not in p.stdout.lower():
        fail(f"diff {a} {b} shows no kernel comparison:\n{p.stdout}")
check(len(pairs) >= 5, f"diff runs on {len(pairs)} pairs of imported captures, kernels compared by name")
for d in without:
    p = latprof("diff", d, d)
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "no NVTX ranges" in p.stderr,
          f"diff of {os.path.basename(d)} (no NVTX ranges): one line, exit 2")
