"""Small Nsight Systems SQLite exports written from NVIDIA's documented
export schema (the tables and columns `nsys export --type sqlite` writes),
in the shapes of several schema versions, with known contents."""
import sqlite3

# globalTid/globalPid: pid in bits 24..47, tid in bits 0..23 (NVIDIA's
# stats scripts decode (globalTid >> 24) & 0xFFFFFF and globalTid & 0xFFFFFF)
def gtid(pid, tid):
    return (1 << 48) | (pid << 24) | tid


def gpid(pid):
    return gtid(pid, 0)


KERNEL_COLS_29 = ("start", "end", "deviceId", "contextId", "streamId", "correlationId",
                  "globalPid", "demangledName", "shortName", "mangledName", "gridX", "gridY",
                  "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory",
                  "dynamicSharedMemory", "registersPerThread")
KERNEL_COLS_324 = KERNEL_COLS_29[:4] + ("greenContextId",) + KERNEL_COLS_29[4:] + (
    "graphId", "clusterX", "clusterY", "clusterZ")


def make(path, schema="3.24.0", product="NVIDIA Nsight Systems", version="2025.5.2.266",
         kernels=(), runtime=(), memcpys=(), syncs=(), nvtx=(), osrt=(), strings=None,
         drop_kernel_col=None, kernel_start_type="INTEGER", duplicate_api=False, gpus=True,
         mem=()):
    """kernels: (start, end, corr, name[, device]); runtime: (start, end, tid, corr, name);
    memcpys: (start, end, corr, bytes, copyKind[, device]); syncs: (start, end, corr,
    syncType[, device]); a device d runs in context d + 1 (syncs: deviceId 0 whatever
    the device, as nsys writes them; the context tells);
    nvtx: (eventType, start, end, tid, text or None, textId or None, domainId);
    osrt: (start, end, tid, name)."""
    pid = 4242
    strs = dict(strings or {})

    def sid(s):
        for k, v in strs.items():
            if v == s:
                return k
        k = len(strs) + 1
        strs[k] = s
        return k

    c = sqlite3.connect(path)
    old = schema.startswith("2.")
    meta = "EXPORT_META_DATA" if old else "META_DATA_EXPORT"
    c.execute(f"CREATE TABLE {meta} (name TEXT, value TEXT)")
    c.executemany(f"INSERT INTO {meta} VALUES (?, ?)", [
        ("EXPORT_PRODUCT_NAME", product), ("EXPORT_PRODUCT_VERSION", version),
        ("EXPORT_SCHEMA_VERSION", schema)])
    c.execute("CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT)")
    c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1, '2025-01-02T03:04:05')")
    c.execute("CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT)")
    c.execute("INSERT INTO PROCESSES VALUES (?, ?, 'gen_app')", (gpid(pid), pid))
    c.execute("INSERT INTO PROCESSES VALUES (?, 7, 'idle_other_process')", (gpid(7),))
    c.execute("CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER)")
    c.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (sid("gen-worker"), gtid(pid, pid + 1)))
    cols = list(KERNEL_COLS_29 if old else KERNEL_COLS_324)
    if drop_kernel_col:
        cols.remove(drop_kernel_col)
    decl = ", ".join(f"{n} {kernel_start_type if n == 'start' else 'INTEGER'}" for n in cols)
    c.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({decl})")
    for (s, e, corr, name, *dev) in kernels:
        d = dev[0] if dev else 0
        row = dict(start=s, end=e, deviceId=d, contextId=d + 1, greenContextId=None, streamId=7,
                   correlationId=corr, globalPid=gpid(pid), demangledName=sid(name),
                   shortName=sid(name.split("(")[0]), mangledName=sid("_Z" + name.split("(")[0]),
                   gridX=4, gridY=1, gridZ=1, blockX=256, blockY=1, blockZ=1,
                   staticSharedMemory=0, dynamicSharedMemory=0, registersPerThread=32,
                   graphId=0, clusterX=0, clusterY=0, clusterZ=0)
        if kernel_start_type == "TEXT":
            row["start"] = f"t{s}"
        c.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(cols)}) VALUES "
                  f"({', '.join('?' * len(cols))})", [row[k] for k in cols])
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass "
              "INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue "
              "INTEGER, callchainId INTEGER)")
    for (s, e, tid, corr, name) in runtime:
        # versioned names (cudaLaunchKernel_v7000) as nsys writes them
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,?,?,?,0,NULL)",
                  (s, e, gtid(pid, tid), corr, sid(name + "_v3020")))
        if duplicate_api:  # schema 2.9: the same call again, eventClass 67, no suffix
            c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,67,?,?,?,0,NULL)",
                      (s - 100, e + 100, gtid(pid, tid), corr, sid(name)))
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId "
              "INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid "
              "INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER)")
    for (s, e, corr, nbytes, kind, *dev) in memcpys:
        d = dev[0] if dev else 0
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,7,?,?,?,?,1,3)",
                  (s, e, d, d + 1, corr, gpid(pid), nbytes, kind))
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, "
              "deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, "
              "globalPid INTEGER, syncType INTEGER, eventId INTEGER)")
    for (s, e, corr, st, *dev) in syncs:
        d = dev[0] if dev else 0
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?,?,0,?,7,?,?,?,NULL)",
                  (s, e, d + 1, corr, gpid(pid), st))
    if nvtx:
        c.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, "
                  "rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid "
                  "INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, "
                  "uint64Value INTEGER, int64Value INTEGER)")
        for (t, s, e, tid, text, text_id, dom) in nvtx:
            c.execute("INSERT INTO NVTX_EVENTS VALUES (?,?,?,NULL,0,NULL,?,?,NULL,?,?,NULL,NULL)",
                      (s, e, t, text, gtid(pid, tid), sid(text_id) if text_id else None, dom))
    if osrt:
        c.execute("CREATE TABLE OSRT_API (start INTEGER, end INTEGER, eventClass INTEGER, "
                  "globalTid INTEGER, nameId INTEGER, returnValue INTEGER, nestingLevel "
                  "INTEGER, callchainId INTEGER)")
        for (s, e, tid, name) in osrt:
            c.execute("INSERT INTO OSRT_API VALUES (?,?,27,?,?,0,0,NULL)",
                      (s, e, gtid(pid, tid), sid(name)))
    if mem:  # (start, address, bytes, op): op 0 allocation, 1 deallocation
        c.execute("CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, "
                  "deviceId INTEGER, contextId INTEGER, address INTEGER, pc INTEGER, bytes "
                  "INTEGER, memKind INTEGER, memoryOperationType INTEGER, name TEXT, "
                  "correlationId INTEGER)")
        for (s, addr, nbytes, op) in mem:
            c.execute("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (?,?,0,1,?,0,?,3,?,NULL,0)",
                      (s, gpid(pid), addr, nbytes, op))
    if gpus:
        c.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, totalMemory INTEGER, "
                  "smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, cuDevice "
                  "INTEGER, clockRate INTEGER, memoryBandwidth INTEGER)")
        c.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'Generated GPU', 16000000000, 40, 8, 6, "
                  "0, 1500000000, 500000000000)")
    c.execute("CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)")
    c.executemany("INSERT INTO StringIds VALUES (?, ?)", strs.items())
    c.commit()
    c.close()
    return pid


# The columns nsys declares NOT NULL (the 3.24 to 3.25 exports in
# ../shared/realdata); the others may be NULL.
NOT_NULL = {"start", "end", "deviceId", "contextId", "streamId", "demangledName", "shortName",
            "registersPerThread", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
            "staticSharedMemory", "dynamicSharedMemory", "eventClass", "nameId", "returnValue",
            "bytes", "copyKind"}


def decl(cols):
    return ", ".join(f"{n} INTEGER{' NOT NULL' if n in NOT_NULL else ''}" for n in cols)


def make_big(path, n_kernels):
    """An export of n_kernels kernels, as many runtime launches and a tenth as
    many memcpys, written in bulk (benchmarks), with the columns declared as
    nsys declares them."""
    pid, tid = 4242, 4243
    c = sqlite3.connect(path)
    c.execute("PRAGMA journal_mode=OFF")
    c.execute("PRAGMA synchronous=OFF")
    c.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    c.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", [
        ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2025.5.2.266"),
        ("EXPORT_SCHEMA_VERSION", "3.24.0")])
    c.execute("CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)")
    names = [f"kernel_{i}(float *, int)" for i in range(200)]
    c.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(names + ["cudaLaunchKernel_v7000",
                                                                           "cudaMemcpyAsync_v3020"], 1))
    c.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({decl(KERNEL_COLS_324)})")
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (" + decl((
        "start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue",
        "callchainId")) + ")")
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (" + decl((
        "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
        "copyKind", "srcKind", "dstKind")) + ")")
    g, p = gtid(pid, tid), gpid(pid)
    ph = ", ".join("?" * len(KERNEL_COLS_324))
    c.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({ph})", (
        (i * 10000 + 3000, i * 10000 + 8000, 0, 1, None, 7, i + 1, p, 1 + i % 200, 1 + i % 200,
         1 + i % 200, 64, 1, 1, 256, 1, 1, 0, 0, 32, 0, 0, 0, 0) for i in range(n_kernels)))
    c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,?,?,?,0,NULL)", (
        (i * 10000, i * 10000 + 2000, g, i + 1, 201) for i in range(n_kernels)))
    c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,0,1,7,?,?,4096,1,2,3)", (
        (i * 100000 + 9000, i * 100000 + 9500, n_kernels + i + 1, p) for i in range(n_kernels // 10)))
    c.commit()
    c.close()
    return 2 * n_kernels + n_kernels // 10
