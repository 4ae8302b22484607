"""The CUPTI collector's own code on a machine without a GPU: latprof run
--cuda=on on fake_cupti_app, which loads liblatprof_cupti.so the way the CUDA
driver does, over a stand-in libcupti.so.13 (tests/cuda/fake_cupti.c) that
plays CUPTI's part and enforces its start-up rules. Checks that every record
the "GPU" produced is either in the database or counted as dropped, that the
flush at cudaDeviceReset saves what came before it, that the 64 MB-style
buffer limit (LATPROF_CUDA_BUFFER_MB) drops and counts, and that GPU work
lands inside the NVTX request that launched it (one clock).

The stand-in models CUPTI 13 as documented (see fake_cupti.c): buffers
delivered by CUPTI's worker thread, per-thread buffers by default, the
periodic flush returning full buffers only, a forced flush returning
incomplete records (end 0 for a kernel still running), graph kernels that
share the cudaGraphLaunch's correlation id, a second client taking the
buffer callbacks, a subscriber already taken. Each case below failed before
the collector handled it."""
import json
import os
import re
import shutil

from lptest import *

app = os.path.join(BUILD, "tests", "cuda", "fake_cupti_app")
fake = os.path.join(BUILD, "tests", "cuda", "fake")
if not os.path.exists(app):
    skip("fake_cupti_app not built (no CUPTI or NVTX headers)")
d = tmpdir()


def run(mode, name=None, rc=0, **env):
    out = os.path.join(d, (name or mode) + ".db")
    e = {"LD_LIBRARY_PATH": fake, **env}
    p = latprof("run", "--cuda=on", "-o", out, "--", app, mode, env=e, timeout=120)
    check(p.returncode == rc, f"{mode}: --cuda=on exits {rc}: the capture ran\n{p.stderr}")
    check(rc == 2 or "GPU activity not recorded" not in p.stderr,
          f"{mode}: no 'not recorded' line")
    m = re.search(r"launches (\d+) written (\d+)", p.stdout)
    check(m is not None, f"{mode}: the app says what it launched ({p.stdout.strip()})")
    run.stdout = p.stdout
    return db(out), int(m.group(1)), int(m.group(2))


def capture(c):
    return c.execute("SELECT * FROM cuda_capture").fetchone()


# Normal run: 20 requests of 50 launches, flushed at exit.
c, launches, written = run("normal")
cap = capture(c)
check(cap["started"] == 1 and not cap["kinds_failed"],
      "CUPTI started, every kind enabled (the timestamp callback came first)")
check(cap["records"] == written == 2 * launches + 1 and cap["dropped"] == 0,
      f"all {written} records (a launch call and a kernel per launch, one device) "
      "translated, none dropped")
check(cap["buffers"] >= 1 and cap["buffer_denied"] == 0, f"{cap['buffers']} buffer(s) completed")
check(q1(c, "SELECT count(*) FROM kernels") == launches, f"{launches} kernels")
check(q1(c, "SELECT count(*) FROM cuda_api WHERE domain = 'runtime'") == launches,
      f"{launches} runtime API calls")
check(q1(c, "SELECT count(*) FROM gpu_launches WHERE api_name LIKE 'cudaLaunchKernel%' "
            "AND launch_delay_ns = 1000") == launches,
      "each kernel linked to its launch by correlation id, 1 us after it")
inside = q1(c, """SELECT count(*) FROM gpu_launches g JOIN ranges_named r
    ON r.start_thread_id = g.thread_id AND r.name = 'request'
    AND g.api_start_ns >= r.start_ns AND g.end_ns <= r.end_ns""")
check(inside == launches, f"{inside}/{launches} kernels inside the request range that launched "
                          "them: CUPTI stamps with latprof's clock")
check(q1(c, "SELECT count(DISTINCT s.value) FROM kernels k JOIN strings s ON s.id = k.name_id "
            "WHERE s.value = 'tiny(long long)'") == 1, "kernel names demangled")
check(q1(c, "SELECT value FROM meta WHERE key = 'cuda.captured'") == 1, "meta cuda.captured = 1")
p = latprof("report", os.path.join(d, "normal.db"), "--breakdown", check=0)
check("GPU kernel" in p.stdout or "CUDA API" in p.stdout,
      "the breakdown has GPU columns for the requests")

# A kind the device does not support: named in cuda_capture.kinds_failed,
# and the capture goes on without it.
c, launches, written = run("normal", "refused", FAKE_CUPTI_REFUSE_MEMCPY2="1")
cap = capture(c)
check(cap["started"] == 1 and cap["kinds_failed"] == "MEMCPY2" and cap["records"] == written,
      f"an unsupported kind is named ({cap['kinds_failed']}) and the rest is recorded")

# cudaDeviceReset discards what was not flushed: the flush at the reset
# saved the records before it; the 5 launches after it are saved by the
# flush at _exit.
c, launches, written = run("reset-exit")
cap = capture(c)
check(q1(c, "SELECT count(*) FROM kernels") == launches + 5,
      f"flush at cudaDeviceReset kept the {launches} kernels before it, _exit the 5 after it")

# Every exit path flushes: 1,000 launches, then SIGTERM (default action),
# _exit, or _exit with 10 kernels still running (the final flush
# synchronizes first, so they come back whole).
for mode, rc in (("sigterm", 128 + 15), ("uexit", 0), ("running", 0)):
    c, launches, written = run(mode, rc=rc)
    cap = capture(c)
    k = q1(c, "SELECT count(*) FROM kernels")
    check(k == launches == 1000 and cap["records"] == written and cap["bad_timestamps"] == 0,
          f"{mode}: all {launches} kernels recorded ({k}), none dropped")
    check(q1(c, "SELECT count(*) FROM cuda_api") == launches, f"{mode}: every launch call kept")

# The synchronize never returns (a kernel that never ends): the final flush
# gives up waiting after its bound, forces the buffers out, and the 10
# kernels still running (end 0) are dropped and counted, never imported as
# kernels that ran from 0 to now.
c, launches, written = run("hung")
cap = capture(c)
check(q1(c, "SELECT count(*) FROM kernels") == launches - 10 and cap["bad_timestamps"] == 10,
      f"hung sync: {launches - 10} kernels kept, the 10 running ones dropped "
      f"({cap['bad_timestamps']} bad timestamps)")
check(q1(c, "SELECT min(start_ns) > 0 AND min(end_ns - start_ns) > 0 FROM kernels") == 1 and
      q1(c, "SELECT min(launch_delay_ns) FROM gpu_launches") == 1000,
      "no kernel with a zero or negative span; launch delays stay 1 us")
check(q1(c, "SELECT value FROM meta WHERE key = 'cuda.dropped_records'") == 10,
      "the 10 dropped kernels are in cuda.dropped_records")

# The forced flush itself never returns (CUPTI stuck): the exit goes on
# after the bound (3 s), and the capture says its records are missing in a
# number it cannot know.
import time
t0 = time.monotonic()
c, launches, written = run("uexit", "flush-hangs", rc=2, FAKE_CUPTI_FLUSH_HANGS="1")
took = time.monotonic() - t0
cap = capture(c)
status = q1(c, "SELECT value FROM meta WHERE key = 'cuda.status'")
check(cap["conflicts"] == "flush_timeout" and "did not finish in time" in status and
      "unknown" in status, f"flush timeout recorded and said: {cap['conflicts']}; {status}")
print(f"note: the run with a hung flush took {took:.1f} s (bound 3 s of waiting at exit)")

# 20 threads touching CUDA: one shared set of buffers, none refused.
c, launches, written = run("threads")
cap = capture(c)
check(q1(c, "SELECT count(*) FROM kernels") == launches == 2000 and cap["buffer_denied"] == 0
      and cap["dropped"] == 0, f"20 threads: {launches} kernels, no buffer refused")
check(q1(c, "SELECT count(DISTINCT thread_id) FROM cuda_api") == 20,
      "the launches belong to the 20 threads")

# CUDA graphs: 20 launches of 50 one-microsecond nodes sharing the launch's
# correlation id. The launch delay is measured once per launch, to the first
# node (1 us), and the nodes are not "kernels shorter than their launch".
c, launches, written = run("graph")
check(q1(c, "SELECT count(*) FROM kernels WHERE graph_id <> 0") == 1000,
      "1000 graph kernel nodes")
p = latprof("report", os.path.join(d, "graph.db"), "--kernels", "--format", "json", check=0)
kj = json.loads(p.stdout)
check(kj["launch_delay"]["count"] == 20 and kj["launch_delay"]["med_ns"] == 1000,
      f"launch delay: 20 launches, median 1 us ({kj['launch_delay']})")
check(kj["graph_launches"] == 20 and kj["graph_kernels"] == 1000,
      "the kernels view counts 20 graph launches of 1000 nodes")
p = latprof("report", os.path.join(d, "graph.db"), "--kernels", check=0)
check("CUDA graphs: 20 launches ran 1000 kernel nodes (50.0 per launch)" in p.stdout,
      "the text view says so")
p = latprof("report", os.path.join(d, "graph.db"), "--bottlenecks", "--format", "json", check=0)
fj = json.loads(p.stdout)
check("small-kernels" not in [f["id"] for f in fj["findings"]],
      "no small-kernels finding telling graph users to replay a CUDA graph")
idle = [f for f in fj["findings"] if f["id"] == "gpu-idle"]
check(not idle or "20 of 20 launches are CUDA graphs already" in idle[0]["summary"],
      f"gpu-idle, if found, knows the launches are graphs: {idle and idle[0]['summary']}")

# Query APIs (cudaGetDevice) are counted, not recorded one by one.
c, launches, written = run("queries")
cap = capture(c)
check(q1(c, "SELECT count(*) FROM cuda_api") == launches and cap["filtered_api"] == 2000,
      f"queries: {launches} launch calls recorded, 2000 cudaGetDevice calls filtered")
row = c.execute("SELECT a.calls, a.total_ns, s.value FROM cuda_api_counts a JOIN strings s "
                "ON s.id = a.name_id").fetchone()
check(row is not None and row[0] == 2000 and row[1] == 2000 * 100 and
      row[2] == "cudaGetDevice_v3020", f"cuda_api_counts: {tuple(row) if row else None}")

# Devices carry their UUID and PCI bus id.
dev = c.execute("SELECT uuid, pci_bus_id FROM gpu_devices").fetchone()
check(dev is not None and dev[0] == "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf" and
      dev[1] == "0000:17:00.0", f"device uuid and PCI bus id: {tuple(dev) if dev else None}")

# Another tool holds CUPTI's subscriber: capture goes on without it.
c, launches, written = run("normal", "subscribed", FAKE_CUPTI_SUBSCRIBED="1")
cap = capture(c)
check(cap["started"] == 1 and q1(c, "SELECT count(*) FROM kernels") == launches and
      cap["conflicts"] == "subscriber",
      f"subscriber taken: all {launches} kernels recorded, conflict '{cap['conflicts']}' noted")

# The PyTorch profiler starts in the process: its callbacks take the buffers
# (ours included). latprof cannot count what it lost, and says so: never
# "0 dropped".
c, launches, written = run("kineto", rc=2)
cap = capture(c)
check("callbacks" in (cap["conflicts"] or ""), f"takeover detected: {cap['conflicts']}")
status = q1(c, "SELECT value FROM meta WHERE key = 'cuda.status'")
check("another CUPTI client" in status and "unknown" in status, f"cuda.status: {status}")
check("callbacks" in q1(c, "SELECT value FROM meta WHERE key = 'cuda.conflicts'"),
      "meta cuda.conflicts")
check("kineto records 15" in run.stdout, "the second client got the records")

# CUPTI's one subscriber: latprof takes it in a plain CUDA process (the
# profiler's subscribe is then refused), leaves it free where PyTorch is
# loaded when CUDA starts (libtorch_cuda), and LATPROF_CUDA_SUBSCRIBE=0/1
# decides when set.
check("kineto subscribe refused" in run.stdout, "a plain process: latprof holds the subscriber")
torch_lib = os.path.join(d, "libtorch_cuda.so")
shutil.copy(os.path.join(fake, "libcupti.so.13"), torch_lib)
c, launches, written = run("kineto", "kineto-torch", rc=2, FAKE_APP_DLOPEN=torch_lib)
check("kineto subscribe ok" in run.stdout,
      "libtorch_cuda loaded: the subscriber is left to the PyTorch profiler")
c, launches, written = run("kineto", "kineto-env", rc=2, LATPROF_CUDA_SUBSCRIBE="0")
check("kineto subscribe ok" in run.stdout, "LATPROF_CUDA_SUBSCRIBE=0 leaves it free")
c, launches, written = run("kineto", "kineto-env1", rc=2, FAKE_APP_DLOPEN=torch_lib,
                           LATPROF_CUDA_SUBSCRIBE="1")
check("kineto subscribe refused" in run.stdout, "LATPROF_CUDA_SUBSCRIBE=1 takes it")

# The profiler starts after latprof got its buffers back, and disables the
# kinds at its stop: no buffer of latprof's is stranded, but the probe at the
# final flush (a cuCtxGetCurrent of the collector's own) never comes back,
# so the capture is known to have stopped early.
c, launches, written = run("kineto-late")
cap = capture(c)
status = q1(c, "SELECT value FROM meta WHERE key = 'cuda.status'")
check(q1(c, "SELECT count(*) FROM kernels") == launches and cap["conflicts"] == "stopped" and
      "stopped before the exit" in status and "unknown" in status and "at least" in status,
      f"kineto-late: the {launches} kernels before the profiler kept; conflicts "
      f"'{cap['conflicts']}'; {status}")
p = latprof("report", os.path.join(d, "kineto-late.db"), "--kernels", "--format", "json",
            check=0)
check(json.loads(p.stdout)["records_missing_unknown"] is True,
      "the kernels view's JSON says records are missing in an unknown number")
c, launches, written = run("normal", "probe")
check(capture(c)["conflicts"] is None and
      q1(c, "SELECT count(*) FROM cuda_api_counts") == 0,
      "a capture that ran to the end: the probe came back, and is not counted as the app's")
p = latprof("report", os.path.join(d, "probe.db"), "--kernels", "--format", "json", check=0)
check(json.loads(p.stdout)["records_missing_unknown"] is False, "and nothing missing is claimed")

# fork without exec after CUDA started: the child leaves CUPTI alone at its
# exit (a flush there hangs inside libcupti).
c, launches, written = run("fork")
check("child exited 0" in run.stdout, f"the fork child exits at once: {run.stdout.strip()}")
check(q1(c, "SELECT count(*) FROM kernels") == launches, "the parent's kernels are all kept")

# Buffers held past the limit (8 MB = two 4 MB buffers): requests denied, the
# records CUPTI could not store counted as dropped, none lost uncounted.
c, launches, written = run("limit", LATPROF_CUDA_BUFFER_MB="8")
cap = capture(c)
check(cap["buffers"] == 2 and cap["buffer_denied"] > 0,
      f"limit: {cap['buffers']} buffers of 4 MB, {cap['buffer_denied']} requests denied")
check(cap["records"] == written and cap["records"] + cap["dropped"] == 2 * launches + 1,
      f"limit: {cap['records']} recorded + {cap['dropped']} dropped = {2 * launches + 1} "
      "produced")
p = latprof("report", os.path.join(d, "limit.db"), "--kernels", check=0)
check(f"{cap['dropped']} records dropped by CUPTI" in p.stdout,
      f"the report states the drops: {p.stdout.splitlines()[0]}")

# No usable libcupti (LATPROF_CUPTI names a missing file): the injection
# library still loads and returns success, so cuInit and the app go on; the
# one line says what was not found.
out = os.path.join(d, "nolib.db")
p = latprof("run", "--cuda=on", "-o", out, "--", app, "init",
            env={"LD_LIBRARY_PATH": fake, "LATPROF_CUPTI": "/nonexistent/libcupti.so.13"})
check(p.stdout.startswith("initialized "),
      "missing libcupti: InitializeInjection succeeded, the app ran on")
lines = [l for l in p.stderr.splitlines() if "GPU activity not recorded" in l]
check(p.returncode == 2 and len(lines) == 1 and
      "the CUPTI library could not be loaded: LATPROF_CUPTI: /nonexistent/libcupti.so.13" in lines[0],
      f"--cuda=on exits 2 with one line naming the missing library: {lines}")

# Another tool's CUDA_INJECTION64_PATH is kept, and the user is told once:
# latprof records no GPU activity then (here the "other tool" is a copy of
# the collector at another path, so the app still starts).
import shutil
other = os.path.join(d, "other_injection.so")
shutil.copy(os.path.join(BUILD, "lib", "latprof", "liblatprof_cupti.so"), other)
out = os.path.join(d, "other.db")
p = latprof("run", "-o", out, "--", app, "init",
            env={"LD_LIBRARY_PATH": fake, "CUDA_INJECTION64_PATH": other})
check(p.stdout == f"initialized {other}\n", f"the app got the other tool's path: {p.stdout!r}")
lines = [l for l in p.stderr.splitlines() if "CUDA_INJECTION64_PATH" in l]
check(len(lines) == 1 and other in lines[0] and "kept" in lines[0],
      f"one line says the other tool's injection was kept: {lines}")
