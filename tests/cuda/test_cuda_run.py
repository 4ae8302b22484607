"""latprof run on samples/cuda. Without a GPU/driver: the app's
exit status passes through, one clear line says GPU activity was not
recorded and why, the CPU side is recorded, --cuda=on exits 2, --cuda=off
stays silent. With a GPU: checks that kernels were captured (tests/gpu/run.sh
does the full GPU checks)."""
import os
import sys

from lptest import *

app = sample("cuda_pipeline")
if not os.path.exists(app):
    skip("samples/cuda not built (no nvcc)")
d = tmpdir()

# The app alone: its own exit status is the reference.
import subprocess
alone = subprocess.run([app, "--requests", "4"], capture_output=True, text=True)
gpu = alone.returncode == 0

db1 = os.path.join(d, "auto.db")
p = record(db1, app, "--requests", "4", check_app=alone.returncode)
print(p.stderr, end="")
c = db(db1)
check(q1(c, "SELECT count(*) FROM processes") == 1, "the app's process is recorded")
check(q1(c, "SELECT exit_status FROM processes") == alone.returncode,
      f"exit status {alone.returncode} recorded and passed through")
has_nvtx = os.path.exists(os.path.join(BUILD, "lib", "latprof", "liblatprof_nvtx.so"))
if has_nvtx:
    check(q1(c, "SELECT count(*) FROM ranges_named WHERE name = 'init'") == 1,
          "NVTX range 'init' around CUDA start-up is recorded")
lines = [l for l in p.stderr.splitlines() if "GPU activity not recorded" in l]
if gpu:
    check(q1(c, "SELECT value FROM meta WHERE key = 'cuda.captured'") == 1, "GPU data captured")
    check(q1(c, "SELECT count(*) FROM kernels") >= 4 * 3, "3 kernels per request")
    check(not lines, "no 'not recorded' line when captured")
    sys.exit(0)

check(len(lines) == 1, "exactly one 'GPU activity not recorded' line")
line = lines[0]
check(line.startswith("latprof: GPU activity not recorded: ") and
      line.endswith("; CPU recording is complete"), "the line says what and that CPU data is whole")
status = q1(c, "SELECT value FROM meta WHERE key = 'cuda.status'")
check(status.startswith("not captured: ") and status[len("not captured: "):] in line,
      f"the line gives the recorded reason: {status}")
check(q1(c, "SELECT value FROM meta WHERE key = 'cuda.captured'") == 0, "meta cuda.captured = 0")
check(q1(c, "SELECT value FROM meta WHERE key = 'cuda.used'") == 1,
      "the app is known to have used CUDA (libcudart in modules)")
check(q1(c, "SELECT count(*) FROM modules WHERE path LIKE '%libcudart.so%'") >= 1,
      "libcudart is in the modules table")
check(q1(c, "SELECT count(*) FROM cuda_capture WHERE started = 0 AND message IS NOT NULL") == 1,
      "cuda_capture row says why")
check(q1(c, "SELECT count(*) FROM kernels") == 0, "no invented GPU rows")

db2 = os.path.join(d, "on.db")
p2 = latprof("run", "--cuda=on", "-o", db2, "--", app, "--requests", "4")
check(p2.returncode == 2, f"--cuda=on without a capture exits 2 (got {p2.returncode})")
check(os.path.exists(db2), "--cuda=on still writes the CPU recording")
check(sum("GPU activity not recorded" in l for l in p2.stderr.splitlines()) == 1,
      "--cuda=on prints the line once")

db3 = os.path.join(d, "off.db")
p3 = latprof("run", "--cuda=off", "-o", db3, "--", app, "--requests", "4")
check(p3.returncode == alone.returncode, "--cuda=off passes the app's status through")
check("GPU activity not recorded" not in p3.stderr, "--cuda=off prints no GPU line")

# A program that never touches CUDA: nothing to say in auto mode.
db4 = os.path.join(d, "cpu.db")
p4 = latprof("run", "-o", db4, "--", "/bin/true")
check(p4.returncode == 0 and "GPU activity" not in p4.stderr,
      "no GPU line for a program without CUDA")
check(q1(db(db4), "SELECT value FROM meta WHERE key = 'cuda.used'") == 0, "cuda.used = 0")
