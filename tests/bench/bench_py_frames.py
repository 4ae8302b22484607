"""Cost of Python frames per recorded wait (docs/python.md; target <= 2 us):
tests/bench/py_cond_loop.py makes 20,000 condition waits that time out at
once, 16 Python frames deep, each a recorded wait. Rounds alternate three
runs of it: bare, under latprof, and under latprof with the interposer's
test build that reads no Python frames (tests/fakepy: the same recording
otherwise). The cost is the latprof run's best CPU ns per wait less the
test build's; the bare figure shows what the rest of a recorded wait costs.
Thread CPU time, so a loaded machine's waiting for a CPU does not count.
Fails only when the best cost is above the target by more than the noise
margin (the spread of the test build's rounds)."""
import os
import subprocess
import sys

LATPROF = os.environ.get("LATPROF", "latprof")
BUILD = os.environ.get("LP_BUILD", "build")
ROUNDS = int(os.environ.get("LP_BENCH_ROUNDS", "5"))
LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_cond_loop.py")
FAKE = os.path.join(BUILD, "tests", "fakepy")
TARGET_NS = 2000


def run(kind, tmp):
    cmd = [sys.executable, LOOP, "20000", "3"]
    env = dict(os.environ)
    if kind != "bare":
        cmd = [LATPROF, "run", "-f", "-o", os.path.join(tmp, "b.db"), "--", *cmd]
        if kind == "fake":
            env["LATPROF_LIBDIR"] = FAKE
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return float(p.stdout.split()[-1])


if not os.path.isdir(FAKE):
    print(f"SKIP: {FAKE} not built")
    sys.exit(77)
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    got = {"bare": [], "latprof": [], "fake": []}
    for _ in range(ROUNDS):
        for k in got:
            got[k].append(run(k, tmp))
best = {k: min(v) for k, v in got.items()}
cost = best["latprof"] - best["fake"]
noise = max(got["fake"]) - best["fake"]
print(f"bare          {best['bare']:9.0f} ns CPU per wait (ctypes call, glibc)")
print(f"no frames     {best['fake']:9.0f} ns  (+{best['fake'] - best['bare']:.0f} ns: the "
      f"recorded wait without Python frames)")
print(f"with frames   {best['latprof']:9.0f} ns")
print(f"python frames {cost:9.0f} ns per recorded wait, 16 frames (target <= {TARGET_NS} ns; "
      f"noise {noise:.0f} ns)")
sys.exit(0 if cost <= TARGET_NS + noise else 1)
