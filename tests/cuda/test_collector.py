"""The CUPTI collector's own code on a machine without a GPU: latprof run
--cuda=on on fake_cupti_app, which loads liblatprof_cupti.so the way the CUDA
driver does, over a stand-in libcupti.so.13 (tests/cuda/fake_cupti.c) that
plays CUPTI's part and enforces its start-up rules. Checks that every record
the "GPU" produced is either in the database or counted as dropped, that the
flush at cudaDeviceReset saves what came before it, that the 64 MB-style
buffer limit (LATPROF_CUDA_BUFFER_MB) drops and counts, and that GPU work
lands inside the NVTX request that launched it (one clock)."""
import os
import re

from lptest import *

app = os.path.join(BUILD, "tests", "cuda", "fake_cupti_app")
fake = os.path.join(BUILD, "tests", "cuda", "fake")
if not os.path.exists(app):
    skip("fake_cupti_app not built (no CUPTI or NVTX headers)")
d = tmpdir()


def run(mode, name=None, **env):
    out = os.path.join(d, (name or mode) + ".db")
    e = {"LD_LIBRARY_PATH": fake, **env}
    p = latprof("run", "--cuda=on", "-o", out, "--", app, mode, env=e)
    check(p.returncode == 0, f"{mode}: --cuda=on exits 0: the capture ran\n{p.stderr}")
    check("GPU activity not recorded" not in p.stderr, f"{mode}: no 'not recorded' line")
    m = re.search(r"launches (\d+) written (\d+)", p.stdout)
    check(m is not None, f"{mode}: the app says what it launched ({p.stdout.strip()})")
    return db(out), int(m.group(1)), int(m.group(2))


def capture(c):
    return c.execute("SELECT * FROM cuda_capture").fetchone()


# Normal run: 20 requests of 50 launches, flushed at exit.
c, launches, written = run("normal")
cap = capture(c)
check(cap["started"] == 1 and not cap["kinds_failed"],
      "CUPTI started, every kind enabled (the timestamp callback came first)")
check(cap["records"] == written == 2 * launches and cap["dropped"] == 0,
      f"all {written} records translated, none dropped")
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

# cudaDeviceReset then _exit: no atexit flush; the reset's flush saved the
# records before it, and the ones after it are lost with their buffer.
c, launches, written = run("reset-exit")
cap = capture(c)
check(cap["records"] == written and q1(c, "SELECT count(*) FROM kernels") == launches,
      f"flush at cudaDeviceReset: {launches} kernels before it kept, the 5 after it lost")

# Buffers held past the limit (8 MB = two 4 MB buffers): requests denied, the
# records CUPTI could not store counted as dropped, none lost uncounted.
c, launches, written = run("limit", LATPROF_CUDA_BUFFER_MB="8")
cap = capture(c)
check(cap["buffers"] == 2 and cap["buffer_denied"] > 0,
      f"limit: {cap['buffers']} buffers of 4 MB, {cap['buffer_denied']} requests denied")
check(cap["records"] == written and cap["records"] + cap["dropped"] == 2 * launches,
      f"limit: {cap['records']} recorded + {cap['dropped']} dropped = {2 * launches} produced")
p = latprof("report", os.path.join(d, "limit.db"), "--kernels", check=0)
check(f"{cap['dropped']} records dropped by CUPTI" in p.stdout,
      f"the report states the drops: {p.stdout.splitlines()[0]}")

# No usable libcupti (LATPROF_CUPTI names a missing file): the injection
# library still loads and returns success, so cuInit and the app go on; the
# one line says what was not found.
out = os.path.join(d, "nolib.db")
p = latprof("run", "--cuda=on", "-o", out, "--", app, "init",
            env={"LD_LIBRARY_PATH": fake, "LATPROF_CUPTI": "/nonexistent/libcupti.so.13"})
check(p.stdout == "initialized\n", "missing libcupti: InitializeInjection succeeded, the app ran on")
lines = [l for l in p.stderr.splitlines() if "GPU activity not recorded" in l]
check(p.returncode == 2 and len(lines) == 1 and
      "the CUPTI library could not be loaded: LATPROF_CUPTI: /nonexistent/libcupti.so.13" in lines[0],
      f"--cuda=on exits 2 with one line naming the missing library: {lines}")
