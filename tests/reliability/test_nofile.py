"""Under a tight RLIMIT_NOFILE latprof takes none of the app's descriptors
where it can, and says so where it cannot. lp_rel_unseen opens /dev/null
until EMFILE under `ulimit -n 8`. Before: the process table's descriptor
sat on fd 3 (the limit leaves no room above 512), so the app opened 4 files
where it opens 5 bare. A process that records (its event log is mapped and
grows through a descriptor) still holds one: the summary says so."""
import os
import re

from lptest import check, q1, tmpdir
from rellib import bare, open_db, relbin, run

d = tmpdir()
prog = relbin("lp_rel_unseen")


def opened(p):
    said = dict(line.split() for line in p.stdout.splitlines())
    return int(said.get("opened", -1)), said.get("errno")


cmd = f"ulimit -n 8 && exec {prog} nofile"
ref = bare("sh", "-c", cmd)
n_bare, e = opened(ref)
check(ref.returncode == 0 and e == "EMFILE" and n_bare > 0,
      f"bare: {n_bare} files opened until EMFILE")

out = os.path.join(d, "nofile.db")
p = run(out, "sh", "-c", cmd)
n, e = opened(p)
check(p.returncode == 0 and e == "EMFILE", f"recorded: exit 0 at EMFILE ({p.returncode})")
check(n == n_bare, f"recorded: the app opened {n} files, as many as bare ({n_bare})")
c = open_db(out)
check(q1(c, "SELECT exit_status FROM processes WHERE exe = ?", prog) == 0,
      "the app's exit status 0 is recorded")
check("held one of" not in p.stderr, f"no descriptor of the app's to own up to: {p.stderr!r}")

# It records a sleep first: its event log holds a descriptor below the limit.
cmd = f"ulimit -n 8 && exec {prog} nofile 30"
n_bare, _ = opened(bare("sh", "-c", cmd))
out = os.path.join(d, "nofile_log.db")
p = run(out, "sh", "-c", cmd)
n, e = opened(p)
c = open_db(out)
low = int(q1(c, "SELECT value FROM meta WHERE key = 'low_fd_logs'"))
check(p.returncode == 0 and low == 1 and n == n_bare - 1,
      f"with an event log: {n} files of bare's {n_bare}, 1 log below the limit ({low})")
check(re.search(r"1 process ran with RLIMIT_NOFILE at or below 512: latprof held one of its "
                r"descriptors", p.stderr), f"and the summary says so: {p.stderr!r}")
