"""A statically linked binary and a set-user-ID binary: the loader ignores
LD_PRELOAD for both, so latprof run says plainly that the interposer cannot
attach; the app still runs with its output and exit status unchanged."""
import os
import shutil
import stat

from lptest import check, skip, tmpdir
from rellib import bare, open_db, relbin, run

d = tmpdir()
static = relbin("lp_rel_static")
if not os.path.exists(static):
    skip("lp_rel_static is not built (sanitizer builds cannot link statically)")

out = os.path.join(d, "static.db")
p = run(out, static, "hello")
ref = bare(static, "hello")
check(p.returncode == ref.returncode == 5, f"static: exit status 5 passes ({p.returncode})")
check(p.stdout == ref.stdout, f"static: output unchanged {p.stdout!r}")
check("statically linked: the interposer cannot attach" in p.stderr,
      f"static: warned before the run: {p.stderr.splitlines()[:1]}")
check(p.stderr.index("statically linked") < p.stderr.index("recorded"),
      "static: the warning comes first, the summary after")

# Set-user-ID to another user: only root can make one (chown).
if os.geteuid() != 0:
    skip("the set-user-ID case needs root to chown a binary to another user; "
         "the static case passed")
suid = os.path.join(d, "lp_rel_suid")
shutil.copy(relbin("lp_rel_app"), suid)
os.chown(suid, 65534, 65534)  # nobody
os.chmod(suid, 0o4755)
os.chmod(d, 0o755)
out = os.path.join(d, "suid.db")
p = run(out, suid, "hello")
check(p.returncode == 5, f"setuid: exit status 5 passes ({p.returncode})\n{p.stderr}")
check("hello from" in p.stdout, f"setuid: the app ran {p.stdout!r}")
check("set-user/group-ID: the loader ignores LD_PRELOAD" in p.stderr,
      f"setuid: warned: {p.stderr.splitlines()[:1]}")
# Without the bit, the same binary is recorded normally: the warning is
# about the bit, not the binary.
os.chmod(suid, 0o755)
p = run(os.path.join(d, "plain.db"), suid, "hello")
check(p.returncode == 5 and "warning" not in p.stderr,
      f"the same binary without the set-user-ID bit: no warning ({p.stderr.strip()!r})")
