"""An existing output is never overwritten without --force; -o expands %p
(the app's pid) and %q{VAR} (an environment variable)."""
import glob
import os
import shutil

from corelib import helper, lock_server, one_error_line, open_db, sha256
from lptest import check, latprof, q1, record, tmpdir

d = tmpdir()
out = os.path.join(d, "run.db")
record(out, helper(), "exit", "0")
before = sha256(out)
marker = os.path.join(d, "app-ran")
p = latprof("run", "-o", out, "--", "touch", marker)
one_error_line(p, "run onto an existing output without --force")
check(sha256(out) == before, "the existing database is unchanged")
check(not os.path.exists(marker), "the app was not started")

record(out, lock_server(), "--threads", "2", "--requests", "20", args=("--force",))
c = open_db(out)
cmd = q1(c, "SELECT cmdline FROM processes WHERE parent_id IS NULL")
check(cmd is not None and "lock_server" in cmd, f"--force replaced the database ({cmd!r})")

# %p: the app's pid.
record(os.path.join(d, "pid-%p.db"), helper(), "exit", "0")
files = glob.glob(os.path.join(d, "pid-*.db"))
check(len(files) == 1, f"%p produced one file ({files})")
pid = int(os.path.basename(files[0])[4:-3])
c = open_db(files[0])
n = q1(c, "SELECT count(*) FROM processes WHERE pid = ? AND parent_id IS NULL", pid)
check(n == 1, f"%p is the app's pid ({pid})")

# %q{VAR}: one file per rank.
for rank in ("0", "1"):
    record(os.path.join(d, "rank%q{LP_TEST_RANK}.db"), helper(), "exit", "0",
           env={"LP_TEST_RANK": rank})
    check(os.path.exists(os.path.join(d, f"rank{rank}.db")), f"%q{{LP_TEST_RANK}} -> rank{rank}.db")
env = dict(os.environ)
env.pop("LP_TEST_RANK", None)
p = latprof("run", "-o", os.path.join(d, "x%q{LP_TEST_UNSET_VAR}.db"), "--", "true")
one_error_line(p, "%q{VAR} with VAR unset")
shutil.rmtree(d, ignore_errors=True)  # kept on failure: fail() exits first
