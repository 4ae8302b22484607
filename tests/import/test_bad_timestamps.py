"""Records with a zero or inverted timestamp (a source flushed before the
record was complete: CUPTI's forced flush returns kernels still running with
start or end 0) are dropped and counted, in an nsys export and in a Kineto
trace: each capture is generated with and without such records, and every
report and the Chrome export of the two are byte-identical but for the line
that says what was dropped."""
import os

from lptest import check, db, fail, latprof, q1, tmpdir
import kinetogen
import nsysgen

T = tmpdir()
VIEWS = ["", "--kernels", "--memcpy", "--sync", "--cuda-api", "--ranges", "--breakdown",
         "--bottlenecks", "--locks"]
DROPPED = "dropped from the source capture: "


def outputs(path):
    """Every text report and the Chrome export of one database."""
    out = {}
    for v in VIEWS:
        p = latprof("report", path, *([v] if v else []), "--top", "1000")
        if p.returncode != 0:
            fail(f"report {v or '(summary)'} of {path} exited {p.returncode}: {p.stderr}")
        out[v or "summary"] = p.stdout
    chrome = path + ".chrome.json"
    latprof("export", path, "--chrome", chrome, check=0)
    with open(chrome) as f:
        out["chrome"] = f.read()
    return out


def same_but_note(good, bad, label, note):
    lines = [ln for ln in bad["summary"].splitlines() if ln.startswith(DROPPED)]
    check(lines == [DROPPED + note + " with a zero or inverted timestamp (records the source "
                    "flushed before they were complete)"],
          f"{label}: the report says what was dropped and why: {lines}")
    check(not any(DROPPED in o for o in good.values()),
          f"{label}: the capture without such records has no such line")
    for k in good:
        b = "".join(ln for ln in bad[k].splitlines(True) if not ln.startswith(DROPPED))
        check(b == good[k], f"{label}: {k} byte-identical to the capture without them "
                            f"({len(good[k])} bytes)")


def imported(make, name):
    d = os.path.join(T, name)
    os.mkdir(d)
    src = os.path.join(d, "capture" + (".sqlite" if name.startswith("nsys") else ".json"))
    make(src)
    out = os.path.join(d, "out.db")
    latprof("import", src, "-o", out)
    return out


# ---- nsys ----------------------------------------------------------------------------
KERNELS = [(3_000, 8_000, 1, "gemm(float*)"), (20_000, 26_000, 2, "relu(float*)"),
           (40_000, 41_000, 3, "gemm(float*)")]
RUNTIME = [(1_000, 2_000, 4243, 1, "cudaLaunchKernel"), (15_000, 16_000, 4243, 2,
           "cudaLaunchKernel"), (35_000, 36_000, 4243, 3, "cudaLaunchKernel"),
           (50_000, 52_000, 4243, 4, "cudaMemcpyAsync"), (60_000, 70_000, 4243, 5,
           "cudaStreamSynchronize")]
MEMCPYS = [(53_000, 55_000, 4, 4096, 1)]
SYNCS = [(61_000, 69_000, 5, 3)]
NVTX = [(59, 500, 45_000, 4243, "step", None, 0), (59, 800, 30_000, 4243, "forward", None, 0),
        (34, 900, None, 4243, "mark", None, 0)]
OSRT = [(71_000, 75_000, 4243, "pthread_mutex_lock"), (76_000, 79_000, 4243, "usleep")]
# what a forced flush leaves: start 0 with a real end (a 60 s kernel), end 0,
# end before start; of every kind imported
BAD = dict(kernels=[(0, 60_100_000_000, 11, "still_running(float*)"),
                    (90_000, 0, 12, "gemm(float*)"), (95_000, 94_000, 13, "relu(float*)")],
           runtime=[(0, 2_500, 4243, 14, "cudaLaunchKernel"),
                    (97_000, 96_000, 4243, 15, "cudaLaunchKernel")],
           memcpys=[(0, 56_000, 16, 4096, 1)], syncs=[(80_000, 0, 17, 3)],
           nvtx=[(59, 46_000, 0, 4243, "late", None, 0), (34, 0, None, 4243, "mark0", None, 0)],
           osrt=[(0, 77_000, 4243, "pthread_mutex_lock")])


def nsys_capture(bad):
    def make(path):
        kw = dict(kernels=KERNELS, runtime=RUNTIME, memcpys=MEMCPYS, syncs=SYNCS, nvtx=NVTX,
                  osrt=OSRT)
        if bad:
            # interleaved as a capture holds them: by start time
            kw = {k: sorted(list(v) + BAD[k], key=lambda r: r[1] if k == "nvtx" else r[0])
                  for k, v in kw.items()}
        nsysgen.make(path, **kw)
    return make


good = imported(nsys_capture(False), "nsys-good")
bad = imported(nsys_capture(True), "nsys-bad")
c = db(bad)
check(q1(c, "SELECT value FROM meta WHERE key = 'import.dropped_bad_time'") == 10 and
      q1(c, "SELECT value FROM meta WHERE key = 'import.dropped_bad_time_detail'") ==
      "3 kernels, 1 memcpy, 1 sync, 2 API calls, 2 ranges or marks, 1 OS runtime call",
      "nsys: the 10 records with a zero or inverted timestamp dropped and counted by kind")
check(q1(c, "SELECT count(*) FROM kernels") == 3 and q1(c, "SELECT max(dur_ns) FROM kernels") ==
      6_000 and q1(c, "SELECT min(start_ns) FROM cuda_api") == 1_000,
      "nsys: 3 kernels kept, the longest 6 us (not the 60.1 s of a zero start)")
check(q1(db(good), "SELECT value FROM meta WHERE key = 'import.dropped_bad_time'") == 0,
      "nsys: nothing dropped from the capture without them")
same_but_note(outputs(good), outputs(bad), "nsys",
              "3 kernels, 1 memcpy, 1 sync, 2 API calls, 2 ranges or marks, 1 OS runtime call")


# ---- Kineto --------------------------------------------------------------------------
def kineto_capture(bad):
    def make(path):
        t = kinetogen.training("current", steps=3)
        if bad:
            # a zero start is ts 0 on Kineto's epoch clock (dur then the whole
            # epoch); a zero end a negative dur
            t.corr += 100
            g = {"device": 0, "context": 1, "stream": 7, "correlation": t.corr}
            t.ev.append(("X", "kernel", "still_running(float*)", 0, 7, 0,
                         t.base + 2_000_000, g))
            t.ev.append(("X", "kernel", "gemm_kernel(float*)", 0, 7, t.base + 2_500_000,
                         -(t.base + 2_500_000), dict(g, correlation=t.corr + 1)))
            t.ev.append(("X", "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, 7, 0,
                         t.base + 5_000, dict(g, correlation=t.corr + 2, bytes=64)))
            t.ev.append(("X", "gpu_memset", "Memset (Device)", 0, 7, t.base + 2_600_000, -5_000,
                         dict(g, correlation=t.corr + 3, bytes=64)))
            t.ev.append(("X", "cuda_runtime", "cudaLaunchKernel", kinetogen.PID, kinetogen.TID, 0,
                         t.base + 3_000, {"cbid": 211, "correlation": t.corr + 4}))
            t.ev.append(("X", "cpu_op", "aten::late", kinetogen.PID, kinetogen.TID,
                         t.base + 2_700_000, -1_000, {}))
        t.write(path)
    return make


good = imported(kineto_capture(False), "kineto-good")
bad = imported(kineto_capture(True), "kineto-bad")
c = db(bad)
check(q1(c, "SELECT value FROM meta WHERE key = 'import.dropped_bad_time'") == 6 and
      q1(c, "SELECT value FROM meta WHERE key = 'import.dropped_bad_time_detail'") ==
      "2 kernels, 1 memcpy, 1 memset, 1 API call, 1 range or mark",
      "Kineto: the 6 events with a zero or inverted timestamp dropped and counted by kind")
check(q1(c, "SELECT count(*) FROM kernels") == 6 and
      q1(c, "SELECT max(dur_ns) FROM kernels") == 150_123 and
      q1(c, "SELECT value FROM meta WHERE key = 'import.skipped_events'") ==
      q1(db(good), "SELECT value FROM meta WHERE key = 'import.skipped_events'"),
      "Kineto: the 6 kernels of the trace kept, the longest 150.123 us; dropped is not skipped")
same_but_note(outputs(good), outputs(bad), "Kineto",
              "2 kernels, 1 memcpy, 1 memset, 1 API call, 1 range or mark")
