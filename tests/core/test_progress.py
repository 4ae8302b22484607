"""Progress on long work: `latprof import` of a log directory and `latprof
report` show one line on stderr, rewritten in place, when stderr is a
terminal (a pseudo-terminal here), with the work done of its total, the
rate and the time left; nothing when stderr is a pipe or with --quiet, and
never anything on stdout (the report's bytes are the same either way).
LATPROF_PROGRESS_DELAY_MS=0 shows it from the start (by default only work
past its first second shows it), so the sizes here stay small."""
import os
import pty
import re
import select
import subprocess

from lptest import BUILD, LATPROF, check, q1, db, tmpdir

WAITS = 400_000
d = tmpdir()
logs = os.path.join(d, "logs")
os.mkdir(logs)
subprocess.run([os.path.join(BUILD, "tests", "bench", "bench_gen_log"), logs, str(WAITS)],
               check=True, capture_output=True)
env = dict(os.environ, LATPROF_PROGRESS_DELAY_MS="0")


def on_pty(args):
    """(what stderr on a pseudo-terminal showed, stdout bytes, exit status)."""
    m, s = pty.openpty()
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=s,
                         env=env)
    os.close(s)
    seen = b""
    while True:
        r, _, _ = select.select([m], [], [], 0.2)
        if r:
            try:
                chunk = os.read(m, 65536)
            except OSError:  # EIO: the child closed its end
                chunk = b""
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read()
    p.wait()
    os.close(m)
    return seen.decode(errors="replace"), out, p.returncode


def lines(seen, what):
    return re.findall(r"\rlatprof: " + what + r": [^\r]*?\x1b\[K", seen)


NUM = r"[\d.]+ ?[kMG]?"
a = os.path.join(d, "a.db")
seen, out, rc = on_pty([LATPROF, "import", logs, "-o", a])
check(rc == 0, f"import on a pty exits 0 ({rc}: {seen[-300:]})")
check(q1(db(a), "SELECT count(*) FROM lock_waits") == WAITS,
      f"the import holds all {WAITS} waits")
imp = lines(seen, "importing event logs")
check(len(imp) >= 1, f"import shows its progress ({len(imp)} lines)")
pat = re.compile(rf"importing event logs: {NUM}B of {NUM}B \(\d+%\), {NUM}B/s, \d+ s left")
check(all(pat.search(x) for x in imp), f"each line says done of total, rate, time left: {imp[0]!r}")
done = [float(re.search(r"\((\d+)%\)", x).group(1)) for x in imp]
check(done == sorted(done) and done[-1] <= 100, f"the share done only grows: {done}")
check("\r\x1b[K" in seen and seen.index("\r\x1b[K") > seen.index(imp[-1]),
      "the line is erased when the step ends")
check(b"importing" not in out, "nothing on stdout")

piped = subprocess.run([LATPROF, "import", logs, "-o", os.path.join(d, "b.db")], env=env,
                       capture_output=True, text=True)
check(piped.returncode == 0 and "importing event logs" not in piped.stderr
      and "\x1b" not in piped.stderr, f"no progress when stderr is a pipe: {piped.stderr!r}")
seen, out, rc = on_pty([LATPROF, "import", logs, "-o", os.path.join(d, "c.db"), "--quiet"])
check(rc == 0 and "importing event logs" not in seen, f"--quiet hides it: {seen[-200:]!r}")

# report: the scan of the waits, in rows
seen, out, rc = on_pty([LATPROF, "report", a, "--locks"])
check(rc == 0, f"report on a pty exits 0 ({rc})")
grp = lines(seen, "grouping lock waits")
pat = re.compile(rf"grouping lock waits: {NUM} of {NUM} rows \(\d+%\), {NUM} rows/s, \d+ s left")
check(grp and all(pat.search(x) for x in grp), f"report shows rows done of total: {grp[:1]!r}")
total = re.search(rf"of ({NUM}) rows", grp[0]).group(1)
check(total.strip() == "400.0 k", f"the total is the table's {WAITS} rows ({total})")
piped = subprocess.run([LATPROF, "report", a, "--locks"], env=env, capture_output=True)
check(piped.stdout == out, "stdout is the same bytes on a terminal and piped")
check(piped.stderr == b"", f"nothing on a piped stderr: {piped.stderr[:200]!r}")
seen, out, rc = on_pty([LATPROF, "report", a, "--locks", "-q"])
check(rc == 0 and "grouping" not in seen and out == piped.stdout, "report -q hides it")
