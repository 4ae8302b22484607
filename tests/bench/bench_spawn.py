"""Per-process start cost (issue 18): process-heavy programs, bare vs under
`latprof run`, interleaved rounds, medians; figures only, never a failure.

  spawn    sh -c 'for i in $(seq 200); do /bin/true; done'      (target <= 2x)
  forks    bench_fork 2000: fork, child exits, wait; logs on TMPDIR, whose
           filesystem is printed (the issue measured ext4)       (target <= 2x)
  python   python3 -c pass through a shim (two bash scripts)     (target <= 1.5x)

Each line gives the app's own time under latprof (the `in N s` of its
summary line: fork to exit of the app, what a user of the app waits for)
and the whole `latprof run` (that plus import and report).
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


def compare(title, cmd, target, tmp):
    env = {**os.environ, "TMPDIR": tmp}
    db = os.path.join(tmp, "b.db")
    bare, app, whole = [], [], []
    for _ in range(ROUNDS):
        bare.append(timed(cmd, env)[0])
        wall, p = timed([LATPROF, "run", "--force", "-o", db, "--", *cmd], env)
        m = re.search(r" in ([0-9.]+) s ", p.stderr)
        app.append(float(m.group(1)) if m else wall)
        whole.append(wall)
    b, a, w = statistics.median(bare), statistics.median(app), statistics.median(whole)
    print(f"=== bench: {title} ===")
    print(f"TMPDIR               {tmp} ({fstype(tmp)}), {ROUNDS} rounds interleaved")
    print(f"bare                 {b:8.3f} s   (rounds: {', '.join(f'{x:.3f}' for x in bare)})")
    print(f"app under latprof    {a:8.3f} s   (rounds: {', '.join(f'{x:.3f}' for x in app)})")
    print(f"whole latprof run    {w:8.3f} s   (with import and report)")
    print(f"ratio                {a / b:8.2f}x  app, {w / b:.2f}x whole (target <= {target}x)")
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
