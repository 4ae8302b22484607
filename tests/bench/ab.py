"""A/B: two latprof binaries on the same inputs, interleaved, in one run.

    python3 tests/bench/ab.py BASE/bin/latprof NEW/bin/latprof [ROUNDS]

Times `report --breakdown` and `--ranges` (JSON) on the 10 M-range
database of bench_breakdown.py (LP_BENCH_DB, generated there when
missing) and `latprof import` of bench_gen_log's 1 M lock waits
(LP_BENCH_IMPORT_WAITS), alternating the binaries round by round so both
see the same machine load. Prints the median CPU seconds of each and the
ratio new/base (< 1: faster). Not a ctest: a tool for "no slower than the
previous commit" (tests/README.md); it never fails on the figures.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("LP_BUILD", "build")


def cpu_of(argv):
    """CPU seconds (user + sys) of one child run, from its own rusage."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execv(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"ab: {' '.join(argv)} failed ({status})")
    return ru.ru_utime + ru.ru_stime


def ab(name, base, new, args_of, rounds):
    t = {base: [], new: []}
    for r in range(rounds):
        for b in ((base, new) if r % 2 == 0 else (new, base)):
            t[b].append(cpu_of([b, *args_of(b)]))
    mb, mn = statistics.median(t[base]), statistics.median(t[new])
    print(f"ab: {name}: base {mb:.3f} s CPU, new {mn:.3f} s CPU (medians of {rounds}), "
          f"ratio new/base {mn / mb:.3f}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base, new = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    db = os.environ.get("LP_BENCH_DB") or os.path.join(tempfile.gettempdir(), "lp-ab-bench.db")
    if not os.path.exists(db):
        env = dict(os.environ, LP_BENCH_DB=db, LATPROF=new)
        subprocess.run([sys.executable, os.path.join(HERE, "bench_breakdown.py")], env=env,
                       check=True)
    subprocess.run(["cat", db], stdout=subprocess.DEVNULL, check=True)  # page cache
    for view in ("--breakdown", "--ranges"):
        ab(f"report {view} (10 M ranges)", base, new,
           lambda b, v=view: ["report", db, v, "--format", "json"], rounds)
    d = tempfile.mkdtemp(prefix="lp-ab-")
    logs = os.path.join(d, "logs")
    os.mkdir(logs)
    n = os.environ.get("LP_BENCH_IMPORT_WAITS", "1000000")
    subprocess.run([os.path.join(BUILD, "tests", "bench", "bench_gen_log"), logs, n], check=True,
                   stdout=subprocess.DEVNULL)
    ab(f"import ({n} lock waits)", base, new,
       lambda b: ["import", "--force", logs, "-o", os.path.join(d, "import.db")], rounds)
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
