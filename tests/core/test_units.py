"""Units are required the same way in every command: a duration or a
percentage without its unit is refused with one `latprof` line and exit 2
(check adds a caret under the fault; 0 alone is 0 in every unit), and the same value with its unit is taken.
run --block-threshold 5 was silently 5 us while check refused 'p99 < 50'."""
import os

from lptest import check, db, latprof, q1, record, sample, skip, tmpdir

d = tmpdir()


def refused(p, what, word, caret=False):
    """Exit 2, one `latprof` line naming word (check adds the expression
    and a caret under the fault on two more lines)."""
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == (3 if caret else 1) and
          lines[0].startswith("latprof") and word in lines[0],
          f"{what}: refused, one line naming {word} ({p.stderr.strip()})")


out = os.path.join(d, "t.db")
p = latprof("run", "-o", out, "--block-threshold", "5", "--", "true")
refused(p, "run --block-threshold 5", "needs a unit")
check(not os.path.exists(out), "nothing recorded for a refused option")
for ok in ("5us", "5ms", "0", "off"):
    p = latprof("run", "-o", out, "--force", "--block-threshold", ok, "--", "sleep", "0.02")
    check(p.returncode == 0, f"run --block-threshold {ok}: taken ({p.stderr.strip()[-120:]})")
# With 5ms the 20 ms sleep is a recorded blocking call; with 50ms it is not.
for thr, want in (("5ms", 1), ("50ms", 0)):
    record(out, "sleep", "0.02", args=("--force", "--block-threshold", thr))
    n = q1(db(out), "SELECT count(*) FROM blocking_calls WHERE dur_ns >= 15000000")
    check(n == want, f"--block-threshold {thr}: {n} recorded sleeps of 20 ms (want {want})")

srv = sample("infer_server")
if not os.path.exists(srv):
    skip("infer_server not built (no NVTX3 headers)")
a, b = os.path.join(d, "a.db"), os.path.join(d, "b.db")
for x in (a, b):
    record(x, srv, "--requests", 40, "--threads", 1)
for opt in ("--threshold", "--noise"):
    refused(latprof("diff", a, b, opt, "5"), f"diff {opt} 5", opt)
    p = latprof("diff", a, b, opt, "5%")
    check(p.returncode in (0, 1, 3), f"diff {opt} 5%: taken (exit {p.returncode})")
    p = latprof("diff", a, b, opt, "0")
    check(p.returncode in (0, 1, 3), f"diff {opt} 0: taken (exit {p.returncode})")
refused(latprof("check", a, "--expect", "p50(request) < 50"), "check 'p50(request) < 50'",
        "unit", caret=True)
p = latprof("check", a, "--expect", "p50(request) < 50s")
check(p.returncode == 0, f"check 'p50(request) < 50s': passes ({p.stdout.strip()})")
