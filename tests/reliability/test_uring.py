"""An io_uring wait is a blocking call. lp_rel_unseen waits 3 times in
io_uring_enter(IORING_ENTER_GETEVENTS, min_complete 1) through syscall(),
as liburing's callers and hand-written rings do, for 140 ms each (the
kernel's timeout ends it with ETIME); lp_rel_uringapp makes the same waits
through a library's exported io_uring_enter2 (as liburing exports it), which
itself calls syscall(): one record per wait, not two. Before: 420 ms of
waiting, nothing recorded."""
import os

from lptest import check, q1, skip, tmpdir
from rellib import bare, open_db, relbin, run

N, MS = 3, 140
d = tmpdir()
prog = relbin("lp_rel_unseen")
ref = bare(prog, "uring", N, MS)
if ref.returncode == 3:
    skip(f"io_uring is not permitted here ({ref.stdout.strip()}; "
         "/proc/sys/kernel/io_uring_disabled, or a seccomp filter)")
check(ref.returncode == 0, f"bare: {N} waits end in ETIME ({ref.stdout} {ref.stderr})")

out = os.path.join(d, "uring.db")
p = run(out, prog, "uring", N, MS)
check(p.returncode == 0,
      f"recorded: every wait still returns -1 with errno ETIME, exit 0 ({p.returncode}: "
      f"{p.stdout})")
said = dict(line.split() for line in p.stdout.splitlines())
c = open_db(out)
rows = c.execute("SELECT dur_ns, result, category, fd FROM blocking_calls "
                 "WHERE call = 'io_uring_enter' ORDER BY start_ns").fetchall()
check(len(rows) == N, f"{N} io_uring_enter waits recorded ({len(rows)})")
check(all(r[1] == -62 and r[2] == "poll_wait" and r[3] is not None and r[3] >= 0 for r in rows),
      f"each with result -ETIME, category poll_wait and the ring's descriptor "
      f"({[tuple(r) for r in rows]})")
total = sum(r[0] for r in rows) / 1e6
waited = float(said["waited_ms"])
check(all(r[0] >= MS * 1e6 * 0.95 for r in rows) and total <= waited * 1.01,
      f"each lasted its {MS} ms timeout, and together {total:.1f} ms of the {waited:.1f} ms "
      "the program timed")

# Through a library's exported io_uring_enter2, which calls syscall() itself.
prog = relbin("lp_rel_uringapp")
out = os.path.join(d, "uringlib.db")
p = run(out, prog, "uring", N, MS)
check(p.returncode == 0, f"through the library: exit 0, ETIME each ({p.returncode}: {p.stdout})")
c = open_db(out)
rows = c.execute("SELECT dur_ns, result FROM blocking_calls WHERE call = 'io_uring_enter'"
                 ).fetchall()
check(len(rows) == N and all(r[0] >= MS * 1e6 * 0.95 and r[1] == -62 for r in rows),
      f"through the library: {N} waits, one record each ({[tuple(r) for r in rows]})")
