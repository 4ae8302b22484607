"""Nsight Systems exports written by tests/lib/nsysgen.py from the
documented export schema, in the shapes the real files lack: schema 2.9 and
3.24 layouts, OSRT_API lock calls, NVTX domains and nesting, a kernel
launched before the capture, a missing required column, an unknown
producer, a damaged file and wrong column types."""
import hashlib
import json
import sqlite3
import os

from lptest import check, db, latprof, q1, tmpdir
import nsysgen

T = tmpdir()
KERNELS = [(1000, 5000, 1, "k_gemm(float *)"), (6000, 8000, 2, "k_gemm(float *)"),
           (9000, 9500, 3, "k_relu(float *)"), (500, 900, 99, "k_before_capture()")]
TID = 4243
RUNTIME = [(800, 990, TID, 1, "cudaLaunchKernel"), (5800, 5990, TID, 2, "cudaLaunchKernel"),
           (8800, 8990, TID, 3, "cudaLaunchKernel"), (10000, 20000, TID, 10, "cudaStreamSynchronize"),
           (21000, 40000, TID, 11, "cudaMemcpy")]
MEMCPYS = [(22000, 39000, 11, 1 << 20, 1)]
SYNCS = [(10100, 19900, 10, 2)]  # syncType 2 "stream wait", caused by cudaStreamSynchronize
NVTX = [(75, 0, None, TID, "app", None, 1),
        (59, 100, 100000, TID, "request", None, 1),
        (59, 200, 50000, TID, None, "infer", 1),
        (60, 300, 400, TID, "async-io", None, 1),
        (34, 350, None, TID, "checkpoint", None, 1)]
OSRT = [(41000, 42000, TID, "pthread_mutex_lock"), (43000, 45000, TID, "pthread_mutex_lock"),
        (46000, 49000, TID, "pthread_mutex_lock"), (50000, 60000, TID, "pthread_cond_wait"),
        (61000, 62000, TID, "read")]


def one_line_exit2(p, what, must=None):
    lines = p.stderr.strip().splitlines()
    ok = p.returncode == 2 and len(lines) == 1 and (must is None or all(m in lines[0] for m in must))
    check(ok, f"{what}: exit 2 with one line ({lines[:2]}, exit {p.returncode})")


# ---- schema 3.24: the full mapping ---------------------------------------------------------
src = os.path.join(T, "new.sqlite")
nsysgen.make(src, kernels=KERNELS, runtime=RUNTIME, memcpys=MEMCPYS, syncs=SYNCS, nvtx=NVTX,
             osrt=OSRT, mem=[(700, 0x7f0000, 1 << 20, 0), (90000, 0x7f0000, 1 << 20, 1)])
out = os.path.join(T, "new.db")
latprof("import", src, "-o", out, check=0)
c = db(out)
check(q1(c, "SELECT count(*) FROM processes") == 1 and
      q1(c, "SELECT cmdline FROM processes") == "gen_app",
      "only the process that did something is imported, named from PROCESSES")
check(q1(c, "SELECT name FROM threads WHERE tid = ?", TID) == "gen-worker",
      "thread named from ThreadNames (globalTid decoded)")
check(q1(c, "SELECT count(*) FROM kernels") == 4 and q1(c, "SELECT sum(dur_ns) FROM kernels") == 6900,
      "4 kernels, 6900 ns")
# Where the rows came from: the file's digest and a status with the counts.
with open(src, "rb") as f:
    digest = hashlib.sha256(f.read()).hexdigest()
check(q1(c, "SELECT value FROM meta WHERE key = 'import.sha256'") == digest,
      f"meta import.sha256 is the export's SHA-256 ({digest[:12]}...)")
status = q1(c, "SELECT value FROM meta WHERE key = 'cuda.status'") or ""
check(status.startswith("imported from new.sqlite: 4 kernels, 1 memcpys, 0 memsets, 1 syncs, "
                         "5 API calls (1 GPU operations without"), f"meta cuda.status: {status!r}")
# The process spans everything it did: its first API call, range or GPU op.
first = min(q1(c, f"SELECT min(start_ns) FROM {t}") for t in ("cuda_api", "kernels", "ranges"))
check(q1(c, "SELECT start_ns FROM processes") == first,
      f"the process starts at its first event ({q1(c, 'SELECT start_ns FROM processes')}, "
      f"{first})")
# nsysgen names each kernel NAME(...) demangled, _ZNAME mangled.
names = c.execute("SELECT n.value, m.value FROM kernels k JOIN strings n ON n.id = k.name_id "
                  "LEFT JOIN strings m ON m.id = k.mangled_id").fetchall()
check(len(names) == 4 and all(m == "_Z" + n.split("(")[0] for n, m in names),
      f"each kernel keeps its demangled and mangled names ({[tuple(r) for r in names]})")
check(q1(c, "SELECT value FROM meta WHERE key = 'import.unattributed_gpu_ops'") == 1 and
      q1(c, "SELECT count(*) FROM kernels WHERE correlation_id = 99") == 1,
      "the kernel launched before the capture is kept and counted unattributed")
check(sorted(r[0] for r in c.execute("SELECT DISTINCT s.value FROM cuda_api a JOIN strings s ON "
                                      "s.id = a.name_id")) ==
      ["cudaLaunchKernel", "cudaMemcpy", "cudaStreamSynchronize"],
      "API names without nsys's version suffix")
check(q1(c, "SELECT type FROM syncs") == "stream_synchronize",
      "a 'stream wait' sync caused by cudaStreamSynchronize is classified by the API name")
check(q1(c, "SELECT async FROM memcpys") == 0 and q1(c, "SELECT copy_kind FROM memcpys") == "HtoD",
      "cudaMemcpy's copy: synchronous HtoD")
check(q1(c, "SELECT name FROM gpu_devices") == "Generated GPU" and
      q1(c, "SELECT sm_count FROM gpu_devices") == 40, "TARGET_INFO_GPU -> gpu_devices")
rng = {r["name"]: r for r in c.execute("SELECT * FROM ranges_named")}
check(set(rng) == {"request", "infer", "async-io"} and rng["infer"]["parent_id"] == rng["request"]["id"]
      and rng["infer"]["depth"] == 1 and rng["request"]["domain"] == "app",
      "push/pop ranges nest, inline text and textId names, domain from NvtxDomainCreate")
check(rng["async-io"]["flags"] & 2 and rng["async-io"]["parent_id"] is None,
      "start/end range flagged, not nested")
check(q1(c, "SELECT count(*) FROM marks") == 1, "NVTX mark")
check(q1(c, "SELECT group_concat(op || ':' || bytes || ':' || memory_kind) FROM (SELECT * FROM "
            "gpu_allocs ORDER BY ts_ns)") == "alloc:1048576:device,free:1048576:device",
      "CUDA_GPU_MEMORY_USAGE_EVENTS -> gpu_allocs")
check(q1(c, "SELECT count(*), sum(dur_ns) FROM lock_waits") == 3 and
      q1(c, "SELECT sum(dur_ns) FROM lock_waits") == 6000 and
      q1(c, "SELECT count(*) FROM cond_waits") == 1,
      "OSRT pthread_mutex_lock calls -> 3 lock waits (6000 ns), pthread_cond_wait -> cond wait")
check("not recorded in the source capture" in q1(c, "SELECT name FROM locks"),
      "the lock the source never named says so")
p = latprof("report", out, check=0)
check(p.stdout.startswith("imported from Nsight Systems 2025.5.2 export (schema 3.24.0)\n"),
      "report header names the source")
check("dropped while recording: not recorded in the source capture" in p.stdout and
      "0 records" not in p.stdout, "what nsys does not record reads 'not recorded', not 0")
p = latprof("report", out, "--kernels", "--format", "json", check=0)
rows = {r["name"]: r for r in json.loads(p.stdout)["rows"]}
g = rows["k_gemm(float *)"]
check(g["count"] == 2 and g["total_ns"] == 6000 and g["min_ns"] == 2000 and g["max_ns"] == 4000 and
      g["med_ns"] == 3000, "--kernels per name: count 2, total 6000, min 2000, max 4000, median 3000")
p = latprof("report", out, "--counters", check=0)
check("not recorded in the source capture" in p.stdout, "counters: not recorded in the source capture")
for v in ("--locks", "--breakdown", "--sync", "--cuda-api", "--memcpy", "--bottlenecks"):
    latprof("report", out, v, check=0)
check(True, "every view runs on the generated export")

# ---- schema 2.9.1: EXPORT_META_DATA, each API call listed twice ---------------------------
old = os.path.join(T, "old.sqlite")
nsysgen.make(old, schema="2.9.1", version="2022.2.1.31", kernels=KERNELS, runtime=RUNTIME,
             duplicate_api=True, gpus=False)
out_old = os.path.join(T, "old.db")
latprof("import", old, "-o", out_old, check=0)
c = db(out_old)
check(q1(c, "SELECT count(*) FROM cuda_api") == len(RUNTIME) and
      q1(c, "SELECT value FROM meta WHERE key = 'import.api_duplicates'") == len(RUNTIME),
      "schema 2.9.1: each call once (its eventClass 67 twin dropped)")
check(q1(c, "SELECT value FROM meta WHERE key = 'import.schema_version'") == "2.9.1",
      "schema version from EXPORT_META_DATA")
check(q1(c, "SELECT count(*) FROM gpu_devices") == 1 and q1(c, "SELECT name FROM gpu_devices") is None,
      "no TARGET_INFO_GPU: the device is listed, its properties NULL")
p = latprof("report", out_old, "--cuda-api", check=0)
check(p.stdout.startswith("imported from Nsight Systems 2022.2.1 export (schema 2.9.1)"),
      "header of a 2.9.1 export")

# ---- a twin late in the table; copies and memsets async or not by their call -------------
# The importer reads calls as they come and starts again, sorted, at the
# first eventClass 67 twin; the work's async flag is decided from the calls
# as they come. The same answers as SQL over the export decide them here.
late = os.path.join(T, "late.sqlite")
MORE = [(41000, 41500, TID, 12, "cudaMemcpyAsync"), (42000, 43000, TID, 13, "cudaMemset"),
        (44000, 44500, TID, 14, "cudaMemsetAsync"), (45000, 46000, TID, 15, "cuMemcpyDtoH")]
nsysgen.make(late, kernels=KERNELS, runtime=RUNTIME + MORE,
             memcpys=MEMCPYS + [(41100, 41400, 12, 4096, 1), (45100, 45900, 15, 4096, 2)])
with sqlite3.connect(late) as L:
    L.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId "
              "INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid "
              "INTEGER, value INTEGER, bytes INTEGER, memKind INTEGER)")
    gp = L.execute("SELECT globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 1").fetchone()[0]
    L.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,0,1,7,?,?,0,256,2)",
                  [(42100, 42900, 13, gp), (44100, 44400, 14, gp)])
    # the last call again as schema 2.9 lists it: eventClass 67, after every other row
    L.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT start - 100, end + 100, 67, "
              "globalTid, correlationId, nameId, 0, NULL FROM CUPTI_ACTIVITY_KIND_RUNTIME "
              "WHERE correlationId = 15")
    want = dict(L.execute(
        "SELECT m.correlationId, NOT (s.value GLOB 'cu*Mem*' AND s.value NOT GLOB '*Async*') "
        "FROM (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT "
        "correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET) m JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "ON r.correlationId = m.correlationId AND r.eventClass = 0 JOIN StringIds s ON "
        "s.id = r.nameId").fetchall())
out_late = os.path.join(T, "late.db")
p = latprof("import", late, "-o", out_late, check=0)
c = db(out_late)
check(p.returncode == 0 and q1(c, "SELECT count(*) FROM cuda_api") == len(RUNTIME) + len(MORE) and
      q1(c, "SELECT value FROM meta WHERE key = 'import.api_duplicates'") == 1 and
      q1(c, "SELECT count(*) FROM processes") == 1 and q1(c, "SELECT count(*) FROM threads") == 1,
      f"a twin after every other call: each call once, one duplicate, one process\n{p.stderr}")
got = dict(c.execute("SELECT correlation_id, async FROM memcpys UNION ALL "
                     "SELECT correlation_id, async FROM memsets").fetchall())
check(got == want == {11: 0, 12: 1, 13: 0, 14: 1, 15: 0},
      f"async from the launching call's name, as SQL over the export says: {got}")
check(q1(c, "SELECT records FROM cuda_capture") == len(RUNTIME) + len(MORE),
      "cuda_capture.records: the process's API calls")
check(not [f for f in os.listdir(T) if f.startswith("late.db") and f != "late.db"],
      "the attempt given up left no file behind")

# ---- refusals: one line, exit 2, nothing written ------------------------------------------
bad = os.path.join(T, "nocol.sqlite")
nsysgen.make(bad, kernels=KERNELS, runtime=RUNTIME, drop_kernel_col="correlationId")
o = os.path.join(T, "nocol.db")
one_line_exit2(latprof("import", bad, "-o", o), "a required column missing",
               ["CUPTI_ACTIVITY_KIND_KERNEL", "correlationId"])
check(not os.path.exists(o), "nothing written")

opt = os.path.join(T, "noopt.sqlite")
nsysgen.make(opt, kernels=KERNELS, runtime=RUNTIME, drop_kernel_col="registersPerThread")
latprof("import", opt, "-o", os.path.join(T, "noopt.db"), check=0)
check(True, "an optional column missing imports")

other = os.path.join(T, "other.sqlite")
nsysgen.make(other, product="Some Other Profiler", kernels=KERNELS)
one_line_exit2(latprof("import", other, "-o", os.path.join(T, "other.db")), "an unknown producer",
               ["Some Other Profiler"])

typed = os.path.join(T, "typed.sqlite")
nsysgen.make(typed, kernels=KERNELS, runtime=RUNTIME, kernel_start_type="TEXT")
one_line_exit2(latprof("import", typed, "-o", os.path.join(T, "typed.db")),
               "a column of the wrong type", ["start"])

with open(src, "rb") as f:
    whole = f.read()
cut = os.path.join(T, "cut.sqlite")
with open(cut, "wb") as f:
    f.write(whole[: len(whole) // 2])
keep = os.path.join(T, "keep.db")
with open(keep, "w") as f:
    f.write("earlier result")
one_line_exit2(latprof("import", cut, "-o", keep, "--force"), "a truncated export")
check(open(keep).read() == "earlier result", "the earlier output is left as it was")

plain = os.path.join(T, "plain.sqlite")
import sqlite3
sqlite3.connect(plain).execute("CREATE TABLE t (x)").connection.commit()
one_line_exit2(latprof("import", plain, "-o", os.path.join(T, "plain.db")), "an SQLite file that is no export",
               ["StringIds"])

# ---- OSRT_API blocking calls feed the breakdown's off-CPU categories ---------------------
# Known calls inside four 'request' ranges and one outside; the expected
# category sums come from SQL over the export, by the mapping docs/schema.md
# states: the call decides (sleep, poll, fsync, socket-only calls); nsys
# records no descriptor, so read/write-like calls are 'unknown' -> other_block.
CATEGORY = {"nanosleep": "sleep", "usleep": "sleep", "recv": "socket_io", "sendmsg": "socket_io",
            "read": "other_block", "__pread64_chk": "other_block", "pthread_join": "join_wait",
            "poll": "poll_wait", "epoll_wait": "poll_wait", "fsync": "file_io"}
blk_nvtx, blk_osrt = [], []
for i in range(4):
    b = 1000 + i * 100000
    blk_nvtx.append((59, b, b + 90000, TID, "request", None, 0))
    blk_osrt += [(b + 1000, b + 11000 + i * 100, TID, "nanosleep"), (b + 12000, b + 12500, TID, "usleep"),
                 (b + 13000, b + 16000, TID, "recv"), (b + 16500, b + 17000, TID, "sendmsg"),
                 (b + 18000, b + 20000 + i * 7, TID, "read"), (b + 20500, b + 21500, TID, "__pread64_chk"),
                 (b + 22000, b + 32000, TID, "poll"), (b + 33000, b + 34000, TID, "epoll_wait"),
                 (b + 35000, b + 36000, TID, "fsync"), (b + 37000, b + 39000, TID, "pthread_join"),
                 (b + 40000, b + 41000, TID, "open64"), (b + 42000, b + 43000, TID, "pthread_mutex_lock")]
blk_osrt.append((500000, 600000, TID, "nanosleep"))  # outside every request
blk = os.path.join(T, "osrt.sqlite")
nsysgen.make(blk, nvtx=blk_nvtx, osrt=blk_osrt, kernels=[(500, 600, 1, "k()")],
             runtime=[(400, 450, TID, 1, "cudaLaunchKernel")])
s = sqlite3.connect(blk)
s.create_function("cat", 1, lambda n: CATEGORY.get(n))
src_cat = dict(s.execute(
    "SELECT cat(v.value), sum(o.end - o.start) FROM OSRT_API o JOIN StringIds v ON v.id = o.nameId "
    "JOIN NVTX_EVENTS r ON o.start >= r.start AND o.end <= r.end AND r.text = 'request' "
    "WHERE cat(v.value) IS NOT NULL GROUP BY 1").fetchall())
src_n = s.execute("SELECT count(*) FROM OSRT_API o JOIN StringIds v ON v.id = o.nameId "
                  "WHERE cat(v.value) IS NOT NULL").fetchone()[0]
blk_db = os.path.join(T, "osrt.db")
latprof("import", blk, "-o", blk_db, check=0)
c = db(blk_db)
check(q1(c, "SELECT count(*) FROM blocking_calls") == src_n == 41 and
      q1(c, "SELECT value FROM meta WHERE key = 'import.blocking_calls'") == src_n,
      f"OSRT blocking calls -> blocking_calls: {src_n} rows (open64 and the lock call are not)")
check(q1(c, "SELECT group_concat(DISTINCT call) FROM (SELECT call FROM blocking_calls WHERE "
            "category = 'other_block' ORDER BY call)") == "pread,pthread_join,read",
      "nsys names under the interposer's call names (__pread64_chk -> pread)")
check(q1(c, "SELECT count(*) FROM blocking_calls WHERE fd IS NOT NULL") == 0 and
      q1(c, "SELECT group_concat(DISTINCT fd_kind) FROM (SELECT fd_kind FROM blocking_calls WHERE "
            "call IN ('read', 'pread', 'fsync') ORDER BY 1)") == "unknown" and
      q1(c, "SELECT group_concat(DISTINCT fd_kind) FROM blocking_calls WHERE call IN ('recv', "
            "'sendmsg')") == "socket" and
      q1(c, "SELECT count(*) FROM blocking_calls WHERE call IN ('nanosleep', 'poll', 'pthread_join') "
            "AND fd_kind IS NOT NULL") == 0,
      "no descriptor recorded: fd NULL, fd_kind 'unknown' unless the call is socket-only")
p = latprof("report", blk_db, "--breakdown", "--format", "json", check=0)
bd = json.loads(p.stdout)["request"]["categories"]
got = {k: bd[k] for k in ("sleep", "file_io", "socket_io", "poll_wait", "other_block", "join_wait")}
check(got == src_cat, f"breakdown categories of the requests equal SQL over OSRT_API: {got} vs {src_cat}")
check(bd["lock_wait"] == 4000, "the lock call stays a lock wait (4 x 1000 ns)")
p = latprof("report", blk_db, "--locks", "--format", "json", check=0)
check(json.loads(p.stdout)["totals"]["classes"]["join"]["count"] == 4,
      "pthread_join calls count as the 'join' wait class")

# ---- per-device views: a 2-GPU export ------------------------------------------------------
# The same kernels, copies and syncs on devices 0 and 1 (context d + 1; the
# sync rows say deviceId 0 for both, as nsys writes them). Each view's rows
# per device equal SQL over the export's own tables.
check(json.loads(latprof("report", out, "--kernels", "--format", "json", check=0).stdout)["by_device"]
      is False and "device" not in rows["k_gemm(float *)"], "one device: rows are not split")
d_k, d_rt, d_mc, d_sy, corr = [], [], [], [], 0
for dev in (0, 1):
    for i in range(3 + dev):  # device 1 gets one more of each
        t = 1000000 * (dev + 1) + i * 10000
        for name, dur in (("k_gemm(float *)", 2000 + 100 * i + dev), ("k_relu(float *)", 500 + i)):
            corr += 1
            d_rt.append((t, t + 100, TID, corr, "cudaLaunchKernel"))
            d_k.append((t + 300, t + 300 + dur, corr, name, dev))
            t += 3000
        corr += 1
        d_rt.append((t, t + 200, TID, corr, "cudaMemcpyAsync"))
        d_mc.append((t + 300, t + 1300 + 10 * i, corr, 4096 << dev, 1, dev))
        corr += 1
        d_rt.append((t + 1400, t + 3000 + dev, TID, corr, "cudaStreamSynchronize"))
        d_sy.append((t + 1500, t + 2900 + dev, corr, 3, dev))
        corr += 1
        d_rt.append((t + 3100, t + 3150, TID, corr, "cudaGetDevice"))  # no GPU work
two = os.path.join(T, "two.sqlite")
nsysgen.make(two, kernels=d_k, runtime=d_rt, memcpys=d_mc, syncs=d_sy)
two_db = os.path.join(T, "two.db")
latprof("import", two, "-o", two_db, check=0)
s = sqlite3.connect(two)
# the device of a context, of a correlation id: from the export's GPU tables
s.executescript(
    "CREATE TEMP VIEW ctxdev AS SELECT DISTINCT contextId, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL;"
    "CREATE TEMP VIEW corrdev AS SELECT correlationId, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION "
    "SELECT correlationId, deviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION SELECT y.correlationId, "
    "x.deviceId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION y JOIN ctxdev x USING (contextId);")


def view(v, key):
    j = json.loads(latprof("report", two_db, v, "--format", "json", check=0).stdout)
    check(j["by_device"] is True and j["devices"] == 2, f"{v}: two devices, rows by device")
    return {(r[key], r["device"]): (r["count"], r["total_ns"], r["min_ns"], r["max_ns"]) for r in j["rows"]}


STAT = "count(*), sum(end - start), min(end - start), max(end - start)"
want = {(n, d): tuple(r) for n, d, *r in s.execute(
    f"SELECT v.value, k.deviceId, {STAT} FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds v ON "
    "v.id = k.demangledName GROUP BY 1, 2")}
got = view("--kernels", "name")
check(got == want and len(got) == 4, f"--kernels per name and device = SQL over the export: {got}")
want = {(d, ): tuple(r) for d, *r in s.execute(
    f"SELECT deviceId, {STAT} FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1")}
got = {(d, ): v for (_, d), v in view("--memcpy", "copy_kind").items()}
check(got == want and len(got) == 2, f"--memcpy per device = SQL over the export: {got}")
want = {(d, ): tuple(r) for d, *r in s.execute(
    f"SELECT x.deviceId, {STAT} FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION JOIN ctxdev x USING "
    "(contextId) GROUP BY 1")}
got = {(d, ): v for (_, d), v in view("--sync", "type").items()}
check(got == want and len(got) == 2 and want[(1, )][0] == 4,
      f"--sync per device (by context; the rows' deviceId is 0) = SQL over the export: {got}")
want = {(n[:-len("_v3020")], d): tuple(r) for n, d, *r in s.execute(
    f"SELECT v.value, c.deviceId, {STAT} FROM CUPTI_ACTIVITY_KIND_RUNTIME a JOIN StringIds v ON "
    "v.id = a.nameId LEFT JOIN corrdev c USING (correlationId) GROUP BY 1, 2")}
got = view("--cuda-api", "name")
check(got == want and got[("cudaGetDevice", None)][0] == 7 and len(got) == 7,
      f"--cuda-api per device (of the call's GPU work; none: null) = SQL over the export: {got}")
p = latprof("report", two_db, "--kernels", check=0)
check(" Dev  Name" in p.stdout and "one row per device of 2" in p.stdout, "text: a Dev column")
p = latprof("report", two_db, "--cuda-api", "--format", "csv", check=0)
lines = p.stdout.splitlines()
check(lines[0].endswith(",name,device") and any(l.endswith("cudaGetDevice,") for l in lines),
      "CSV: a device column, empty for calls without GPU work")
page = os.path.join(T, "two.html")
latprof("report", two_db, "--html", page, check=0)
html = open(page).read()
check(html.count("<th>device</th>") == 2 and "<td class=\"l\">k_relu(float *)</td><td>1</td><td>4</td>" in html,
      "HTML: kernel and memcpy tables with a device column (k_relu on device 1: 4 launches)")

# ---- allocation calls without CUDA_GPU_MEMORY_USAGE_EVENTS --------------------------------
# nsys's runtime rows carry no size, address or device: no gpu_allocs row is
# made up; the calls are counted and the header says what is missing.
al_rt = RUNTIME + [(50000, 51000, TID, 20, "cudaMalloc"), (52000, 52500, TID, 21, "cudaMallocAsync"),
                   (90000, 91000, TID, 22, "cudaFree"), (92000, 92100, TID, 23, "cudaFreeAsync")]
al = os.path.join(T, "alloc.sqlite")
nsysgen.make(al, kernels=KERNELS, runtime=al_rt)
al_db = os.path.join(T, "alloc.db")
latprof("import", al, "-o", al_db, check=0)
c = db(al_db)
want = sqlite3.connect(al).execute(
    "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE "
    "s.value GLOB 'cudaMalloc*' OR s.value GLOB 'cudaFree*'").fetchone()[0]
check(q1(c, "SELECT count(*) FROM gpu_allocs") == 0 and want == 4 and
      q1(c, "SELECT value FROM meta WHERE key = 'import.unsized_alloc_calls'") == want,
      f"no memory-usage events: {want} allocation calls counted, no gpu_allocs row invented")
p = latprof("report", al_db, "--cuda-api", check=0)
check("GPU allocation sizes and addresses (no CUDA_GPU_MEMORY_USAGE_EVENTS: 4 allocation API calls"
      in p.stdout.splitlines()[1], "the header says the sizes are not recorded in the source capture")
check(q1(db(out), "SELECT value FROM meta WHERE key = 'import.unsized_alloc_calls'") == 0,
      "with memory-usage events: nothing said missing")

# ---- the process spans its GPU work -------------------------------------------------------
# The last thing the process did is a kernel running long after its launch
# returned: the process ends when that kernel ends, starts at its first call.
gl_src = os.path.join(T, "gpu_last.sqlite")
nsysgen.make(gl_src, kernels=[(1000, 5000, 1, "k_a(float *)"), (6000, 300000, 2, "k_long(float *)")],
             runtime=[(800, 990, TID, 1, "cudaLaunchKernel"), (5800, 5990, TID, 2, "cudaLaunchKernel")])
gl_db = os.path.join(T, "gpu_last.db")
latprof("import", gl_src, "-o", gl_db, check=0)
c = db(gl_db)
span = c.execute("SELECT start_ns, end_ns FROM processes").fetchall()
check([tuple(r) for r in span] == [(800, 300000)],
      f"one process from its first call (800) to its last kernel's end (300000): {[tuple(r) for r in span]}")

# ---- correlation ids are per process ------------------------------------------------------
# A second process (pid 7) makes an API call with correlation id 50; a kernel
# of the first process carries id 50 too but no call of its own launched it:
# it is unattributed (with the kernel launched before the capture: 2), as
# the join on (process, correlation id) says.
tp_src = os.path.join(T, "two_proc.sqlite")
nsysgen.make(tp_src, kernels=KERNELS + [(95000, 96000, 50, "k_orphan(float *)")],
             runtime=RUNTIME)
L = sqlite3.connect(tp_src)
L.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (94000, 94500, 0, ?, 50, "
          "(SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1), 0, NULL)",
          (nsysgen.gtid(7, 8),))
L.commit()
L.close()
tp_db = os.path.join(T, "two_proc.db")
p = latprof("import", tp_src, "-o", tp_db, check=0)
c = db(tp_db)
orphans = q1(c, "SELECT count(*) FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM cuda_api a WHERE "
                "a.process_id = k.process_id AND a.correlation_id = k.correlation_id)")
check(q1(c, "SELECT count(*) FROM processes") == 2 and orphans == 2 and
      q1(c, "SELECT value FROM meta WHERE key = 'import.unattributed_gpu_ops'") == 2,
      f"two processes; unattributed GPU ops counted per process: 2 (SQL says {orphans}, meta "
      f"{q1(c, 'SELECT value FROM meta WHERE key = ?', 'import.unattributed_gpu_ops')})")
