"""`latprof check` never passes an expectation that cannot mean anything.
Before: `count(finding:lock-contetion) == 0` passed
(measured 0), `count(stage:infr) == 0` passed, and `share(request) < 150`,
`p99(request) < -5ms`, `p99(request) < 0x10ms` were evaluated. Now each is
refused before any verdict: exit 2, one `latprof:` line naming the
expectation and what is wrong (the finding ids of the rule table, the
categories of the breakdown, the stages of the run's requests, the metric's
domain), nothing on stdout. Valid expectations still measure the numbers
the database holds."""
import os
import sqlite3

from lptest import check, latprof, one_error_line, record, sample, skip, tmpdir

srv = sample("infer_server")
if not os.path.exists(srv):
    skip("infer_server not built (no NVTX3 headers)")
d = tmpdir()
run = os.path.join(d, "run.db")
record(run, srv, "--requests", 30, "--threads", 2)
c = sqlite3.connect(run)
n_infer = c.execute("SELECT count(*) FROM ranges_named WHERE name = 'infer'").fetchone()[0]
check(n_infer == 30, f"30 infer ranges recorded ({n_infer})")

refused = [
    ("count(finding:lock-contetion) == 0", "unknown finding 'lock-contetion'", "lock-contention"),
    ("count(finding:nosuch) >= 1", "unknown finding 'nosuch'", "gil-contention"),
    ("share(lock-wiat) < 5%", "unknown category 'lock-wiat'", "lock-wait"),
    ("share(idle-wiat) < 5%", "unknown category 'idle-wiat'", "idle-wait"),
    ("share(jion-wait) < 5%", "unknown category 'jion-wait'", "join-wait"),
    ("total(gpu-kernal) < 1s", "unknown category 'gpu-kernal'", "gpu-kernel"),
    ("count(stage:infr) == 0", "no stage 'infr'", "infer"),
    ("p99(stage:nosuch) < 1s", "no stage 'nosuch'", "decode"),
    ("count(range:nosuch) == 0", "no range named 'nosuch'", None),
    ("share(request) < 150", "a share is 0 to 1", None),
    ("share(stage:infer) < 150%", "a share is 0% to 100%", None),
    ("p99(request) < -5ms", "cannot be negative", None),
    ("count(request) > -1", "cannot be negative", None),
    ("p99(request) < 0x10ms", "not hex", None),
    ("count(request) == 1.5", "a count is a whole number", None),
]
for expr, why, hint in refused:
    p = latprof("check", run, "--expect", expr)
    one_error_line(p, f"check '{expr}'")
    line = p.stderr.strip()
    check(f"'{expr}'" in line and why in line and (hint is None or hint in line),
          f"'{expr}': the line names the expectation and '{why}'"
          + (f", and '{hint}'" if hint else ""))
    check(p.stdout == "", f"'{expr}': no verdict printed")

# A long unknown name is cut in the line, never past the message's buffer.
for sel in ("finding:" + "x" * 3000, "y" * 3000):
    expr = f"count({sel}) == 0" if sel.startswith("finding") else f"share({sel}) < 5%"
    p = latprof("check", run, "--expect", expr)
    one_error_line(p, f"check with a {len(sel)}-character unknown name")

# One bad expectation among good ones: no verdicts at all.
p = latprof("check", run, "--expect", "count(request) == 30", "--expect",
            "count(finding:lock-contetion) == 0")
one_error_line(p, "a good and a bad expectation together")
check(p.stdout == "", "no verdict is printed for the good one either")
exp = os.path.join(d, "exp.txt")
with open(exp, "w") as f:
    f.write("# gates\ncount(request) == 30\nshare(sleeep) < 1%\n")
p = latprof("check", run, "--expect-file", exp)
one_error_line(p, "--expect-file with an unknown category on line 3")
check(f"{exp}:3" in p.stderr, "the line names file:line")

# Valid ones are still evaluated, with the database's numbers.
p = latprof("check", run, "--expect", "count(finding:lock-contention) == 0", "--expect",
            f"count(stage:infer) == {n_infer}", "--expect", "count(range:infer) == 30",
            "--expect", "share(request) <= 100%", "--expect", "share(lock-wait) <= 1",
            "--expect", "p50(request) < 1e3s", "--expect", "count(lock:no_such_lock) == 0")
check(p.returncode == 0 and p.stdout.count("PASS") == 7,
      f"7 valid expectations pass (a lock never contended counts 0: the database "
      f"cannot tell it from a typo)\n{p.stdout}{p.stderr}")
check(f"measured {n_infer}" in p.stdout, f"count(stage:infer) measured {n_infer}")
