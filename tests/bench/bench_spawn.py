"""Per-process start cost: process-heavy programs, bare vs under
`latprof run`, interleaved rounds, medians; figures only, never a failure.

  spawn    sh -c 'for i in $(seq 200); do /bin/true; done'      (target <= 2x)
  forks    bench_fork 2000: fork, child exits, wait; logs on TMPDIR, whose
           filesystem is printed (the issue measured ext4)       (target <= 2x)
  python   python3 -c pass through a shim (two bash scripts)     (target <= 1.5x)

Each line gives the app's own time, bare and under latprof: wall and CPU
(user + system of the app and its descendants), as bash's `time` around
the app measures them to the millisecond in both runs (the summary line's
`in N s` has 10 ms steps, a tenth of a spawn loop); CPU time is the steadier
figure on a loaded machine. Then the whole `latprof run` (with import and
report).
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LATPROF = os.environ.get("LATPROF", "latprof")
BUILD = os.environ.get("LP_BUILD", "build")
BENCH = os.path.join(BUILD, "tests", "bench")
ROUNDS = int(os.environ.get("LP_BENCH_ROUNDS", "5"))


def timed(cmd, env):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        print(f"bench: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
        sys.exit(1)
    return wall, p


def fstype(path):
    p = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    return p.stdout.strip() or "?"


# The app under bash's `time`: wall, user and system seconds (ms steps) of
# the app and everything it started, the same wrapper bare and recorded.
TIMED = ["bash", "-c", 'TIMEFORMAT="lpbench-time %3R %3U %3S"; time "$@"', "lpbench"]


def app_times(p):
    m = re.search(r"lpbench-time ([0-9.]+) ([0-9.]+) ([0-9.]+)", p.stderr)
    if not m:
        print(f"bench: no time line in\n{p.stderr}")
        sys.exit(1)
    return float(m.group(1)), float(m.group(2)) + float(m.group(3))


def fmt(xs):
    return ", ".join(f"{x:.3f}" for x in xs)


def compare(title, cmd, target, tmp):
    env = {**os.environ, "TMPDIR": tmp}
    db = os.path.join(tmp, "b.db")
    bare, bare_cpu, app, app_cpu, whole = [], [], [], [], []
    for _ in range(ROUNDS):
        w, c = app_times(timed([*TIMED, *cmd], env)[1])
        bare.append(w)
        bare_cpu.append(c)
        wall, p = timed([LATPROF, "run", "--force", "-o", db, "--", *TIMED, *cmd], env)
        w, c = app_times(p)
        app.append(w)
        app_cpu.append(c)
        whole.append(wall)
    med = statistics.median
    b, a, w = med(bare), med(app), med(whole)
    bc, ac = med(bare_cpu), med(app_cpu)
    print(f"=== bench: {title} ===")
    print(f"TMPDIR               {tmp} ({fstype(tmp)}), {ROUNDS} rounds interleaved")
    print(f"bare                 {b:8.3f} s   (rounds: {fmt(bare)})")
    print(f"app under latprof    {a:8.3f} s   (rounds: {fmt(app)})")
    print(f"bare CPU             {bc:8.3f} s   (rounds: {fmt(bare_cpu)})")
    print(f"app CPU under latprof {ac:7.3f} s   (rounds: {fmt(app_cpu)})")
    print(f"whole latprof run    {w:8.3f} s   (with import and report)")
    print(f"ratio                {a / b:8.2f}x  app, {ac / bc:.2f}x app CPU, {w / b:.2f}x whole "
          f"(target <= {target}x)")
    print("=== end ===")


def main():
    what = sys.argv[1:] or ["spawn", "forks", "python"]
    # On the build tree's filesystem (ext4 in CI), not a tmpfs /tmp.
    tmp = tempfile.mkdtemp(prefix="lpbench-spawn-", dir=os.path.abspath(BUILD))
    try:
        if "spawn" in what:
            compare("spawn loop, 200 x /bin/true from sh",
                    ["sh", "-c", "for i in $(seq 200); do /bin/true; done"], 2, tmp)
        if "forks" in what:
            compare("2,000 forks, each child exits at once",
                    [os.path.join(BENCH, "bench_fork"), "2000"], 2, tmp)
        if "python" in what:
            py = shutil.which("python3")
            shim1, shim2 = os.path.join(tmp, "python3"), os.path.join(tmp, "python3-real")
            with open(shim1, "w") as f:
                f.write(f'#!/bin/bash\nexec "{shim2}" "$@"\n')
            with open(shim2, "w") as f:
                f.write(f'#!/bin/bash\nexec "{py}" "$@"\n')
            os.chmod(shim1, 0o755)
            os.chmod(shim2, 0o755)
            compare("python3 -c pass through a two-script shim", [shim1, "-c", "pass"], 1.5, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
