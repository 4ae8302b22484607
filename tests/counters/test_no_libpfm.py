"""libpfm4 absent at build time: configure a second build tree with libpfm4
hidden; CMake says counters are off, everything builds, liblatprof_core does
not need libpfm, and a recording lists the requested events as unavailable
(never 0)."""
import os
import subprocess
import sys

from lptest import BUILD, SRC, check, db, skip, tmpdir

d = tmpdir()
b = os.path.join(d, "build")
cfg = subprocess.run(["cmake", "-S", SRC, "-B", b, "-DLIBPFM_LIB=LIBPFM_LIB-NOTFOUND",
                      "-DLIBPFM_INCLUDE=LIBPFM_INCLUDE-NOTFOUND"],
                     capture_output=True, text=True)
check(cfg.returncode == 0, "configure without libpfm4")
check("CPU counters are off" in cfg.stdout, "the configure output says counters are off")
mk = subprocess.run(["make", "-C", b, f"-j{os.cpu_count() or 2}"], capture_output=True, text=True)
if mk.returncode != 0:
    print(mk.stdout[-3000:], mk.stderr[-3000:], file=sys.stderr)
check(mk.returncode == 0, "everything builds without libpfm4")
core = os.path.join(b, "lib", "latprof", "liblatprof_core.so")
ldd = subprocess.run(["ldd", core], capture_output=True, text=True).stdout
check("libpfm" not in ldd, "liblatprof_core.so does not link libpfm")
demo = os.path.join(b, "samples", "counters_demo")
if not os.path.exists(demo):
    skip("counters_demo not built (no NVTX3 headers)")
path = os.path.join(d, "n.db")
p = subprocess.run([os.path.join(b, "bin", "latprof"), "run", "-o", path, "--", demo, "3", "16",
                    "100", "100"], capture_output=True, text=True)
check(p.returncode == 0, "recording works")
c = db(path)
ev = c.execute("SELECT name, available, reason FROM counter_events").fetchall()
check(ev and all(not r["available"] and "without libpfm4" in r["reason"] for r in ev),
      "events recorded as unavailable: built without libpfm4")
check(c.execute("SELECT count(*) FROM counter_values").fetchone()[0] == 0, "no values, no zeros")
check("without libpfm4" in p.stderr, "latprof run says so")
