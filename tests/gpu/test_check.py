"""tests/gpu/check.py without a GPU: fnd_gpu --pipeline imitates both modes of
samples/cuda/cuda_pipeline (its ranges, API calls, copy and memory kinds as
real CUPTI structs through the real translator and importer). The checker
must pass slow+fixed, fail when the two are swapped (each mode-specific check
fails), and refuse a database without GPU tables with exit 2, so a GPU
session only runs a checker whose queries are known to work."""
import os
import subprocess
import sys

from lptest import *

prog = os.path.join(BUILD, "tests", "bin", "fnd_gpu")
if not os.path.exists(prog):
    skip("fnd_gpu not built (no CUPTI headers)")
checker = os.path.join(SRC, "tests", "gpu", "check.py")
d = tmpdir()
dbs = {}
for mode in ("slow", "fixed"):
    dbs[mode] = os.path.join(d, f"{mode}.db")
    record(dbs[mode], prog, "--requests", "40", "--pipeline", mode)


def run_check(*paths):
    p = subprocess.run([sys.executable, checker, *paths], capture_output=True, text=True)
    print(p.stdout, end="")
    return p


p = run_check(dbs["slow"], dbs["fixed"])
check(p.returncode == 0 and "gpu: PASS" in p.stdout, "slow then fixed: every check passes")
check(p.stdout.count("FAIL") == 0 and p.stdout.count("ok: ") == 17, "17 checks, all ok")

p = run_check(dbs["fixed"], dbs["slow"])
failed = [l for l in p.stdout.splitlines() if l.startswith("FAIL: ")]
check(p.returncode == 1 and "gpu: FAIL" in p.stdout, "swapped modes: the checker fails")
for what in ("pageable copies", "pinned async copies", "waits less in sync", "request p50 lower"):
    check(sum(what in l for l in failed) == 1, f"swapped modes: '{what}' fails")

# A CPU-only recording: fnd_gpu without CUPTI records is not possible, so a
# database without a 'kernels' table stands in for the wrong file.
cpu = os.path.join(d, "cpu.db")
import sqlite3
sqlite3.connect(cpu).execute("CREATE TABLE meta (key TEXT, value)").connection.commit()
p = run_check(cpu, cpu)
check(p.returncode == 2 and p.stderr.count("\n") == 1 and "check.py:" in p.stderr,
      f"a database without GPU tables: exit 2 with one line ({p.stderr.strip()})")
p = run_check(dbs["slow"])
check(p.returncode == 2, "one database only: usage, exit 2")

# tests/gpu/truth.py (the second-source checks) on the stand-in CUPTI's
# graph and SIGTERM runs (tests/cuda/fake_cupti.c): it passes when the
# program's line matches the capture and fails when a count does not.
app = os.path.join(BUILD, "tests", "cuda", "fake_cupti_app")
truth = os.path.join(SRC, "tests", "gpu", "truth.py")
if os.path.exists(app):
    env = {"LD_LIBRARY_PATH": os.path.join(BUILD, "tests", "cuda", "fake")}
    for mode, rc, line, bad in (
            ("graph", 0, "truth graph launches 20 nodes 50 kernels 1000",
             "truth graph launches 20 nodes 50 kernels 1050"),
            ("sigterm", 143, "truth kill launches 999 kernels 1000",
             "truth kill launches 1000 kernels 1001")):
        out = os.path.join(d, f"truth_{mode}.db")
        latprof("run", "--cuda=on", "-o", out, "--", app, mode, env=env, check=rc)
        for text, want in ((line, 0), (bad, 1)):
            with open(os.path.join(d, "truth.out"), "w") as f:
                f.write(text + "\n")
            p = subprocess.run([sys.executable, truth, out, os.path.join(d, "truth.out")],
                               capture_output=True, text=True, env={**os.environ, "LATPROF": LATPROF})
            print(p.stdout, end="")
            check(p.returncode == want and ("gpu-truth: PASS" if want == 0 else "gpu-truth: FAIL")
                  in p.stdout, f"truth.py {mode}: '{text}' -> exit {p.returncode} (want {want})")
