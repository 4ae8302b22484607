"""Wait class sync: the host waiting for the GPU. An nsys
export written by nsysgen.py with one sync of each kind the host waits in
(cudaStreamSynchronize exported as syncType 2 "stream wait", as some nsys
versions do; cudaDeviceSynchronize; cudaEventSynchronize) and one
cudaStreamWaitEvent (the GPU waits, not the host), beside three contended
mutex waits. --locks counts the three host syncs as class sync (text, JSON),
never the stream wait, and ranks none of them: the only lock row is the
mutex, class contention. Then the real captures of ../shared/realdata, where
present: class sync equals the host syncs of the source itself."""
import gzip
import json
import os
import sqlite3

from lptest import SRC, check, latprof, tmpdir
import nsysgen

T = tmpdir()
TID = 4243
RUNTIME = [(10000, 20000, TID, 10, "cudaStreamSynchronize"),
           (21000, 31000, TID, 11, "cudaDeviceSynchronize"),
           (32000, 36000, TID, 12, "cudaEventSynchronize"),
           (37000, 37500, TID, 13, "cudaStreamWaitEvent")]
SYNCS = [(10100, 19900, 10, 2), (21100, 30900, 11, 4), (32100, 35900, 12, 1), (37100, 37400, 13, 2)]
HOST = [(9800, 2), (9800, 4), (3800, 1)]  # what the host waited: dur, syncType
OSRT = [(41000, 42000, TID, "pthread_mutex_lock"), (43000, 45000, TID, "pthread_mutex_lock"),
        (46000, 49000, TID, "pthread_mutex_lock")]

src = os.path.join(T, "sync.sqlite")
nsysgen.make(src, runtime=RUNTIME, syncs=SYNCS, osrt=OSRT)
out = os.path.join(T, "sync.db")
latprof("import", src, "-o", out, check=0)
rep = json.loads(latprof("report", out, "--locks", "--format", "json", check=0).stdout)
cls = rep["totals"]["classes"]
want = {"count": len(HOST), "wait_ns": sum(d for d, _ in HOST)}
check(cls["sync"] == want, f"class sync {cls['sync']} = the 3 host syncs {want}, not the stream wait")
check(cls["contention"] == {"count": 3, "wait_ns": 6000}, f"class contention {cls['contention']}")
check([l["class"] for l in rep["locks"]] == ["contention"] and rep["totals"]["contended_locks"] == 1,
      f"only the mutex is ranked: {[(l['name'], l['class']) for l in rep['locks']]}")
text = latprof("report", out, "--locks", check=0).stdout
line = next((l for l in text.splitlines() if l.startswith("Waits by class:")), "")
check("sync 3, 23.4 us" in line, f"the text view: {line!r}")

# ---- the real captures ---------------------------------------------------------------------
REAL = os.path.normpath(os.path.join(os.path.abspath(SRC), "..", "shared", "realdata"))
if not os.path.isdir(REAL):
    print(f"skipped the real captures: {REAL} is absent")
    raise SystemExit(0)


def host_syncs_nsys(path):
    """The source's own sync records less those of cudaStreamWaitEvent calls."""
    c = sqlite3.connect(path)
    if not c.execute("SELECT count(*) FROM sqlite_master WHERE name = "
                     "'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION'").fetchone()[0]:
        return 0, 0
    n, ns = c.execute(
        "SELECT count(*), coalesce(sum(y.end - y.start), 0) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION y "
        "WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON "
        "s.id = r.nameId WHERE r.correlationId = y.correlationId AND r.globalTid / 16777216 = "
        "y.globalPid / 16777216 AND s.value LIKE 'cudaStreamWaitEvent%') AND (y.syncType != 2 OR "
        "EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
        "WHERE r.correlationId = y.correlationId AND r.globalTid / 16777216 = "
        "y.globalPid / 16777216 AND s.value LIKE '%Synchronize%'))").fetchone()
    return n, ns


def host_syncs_kineto(path):
    d = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    ss = [e for e in ev if e.get("cat") == "cuda_sync" and e.get("ph") == "X" and
          (e.get("args") or {}).get("cuda_sync_kind", e.get("name")) != "Stream Wait Event"]
    return len(ss), round(sum(e.get("dur", 0) for e in ss) * 1000)


seen = 0
for kind, fn, ext in (("nsys", host_syncs_nsys, ".sqlite"), ("kineto", host_syncs_kineto, ".gz")):
    d = os.path.join(REAL, kind)
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not f.endswith(ext):
            continue
        n, ns = fn(os.path.join(d, f))
        o = os.path.join(T, f + ".db")
        latprof("import", os.path.join(d, f), "-o", o, check=0)
        got = json.loads(latprof("report", o, "--locks", "--format", "json",
                                 check=0).stdout)["totals"]["classes"]["sync"]
        check(got == {"count": n, "wait_ns": ns}, f"{f}: class sync {got}, the source's {n} host "
              f"syncs, {ns} ns")
        seen += n > 0
check(seen >= 1, f"{seen} real captures hold host syncs")
