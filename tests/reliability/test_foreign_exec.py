"""A child that cannot load latprof's 64-bit interposer is named with the
true reason, and the loader says nothing on the app's stderr. Before: two
"ERROR: ld.so: object ... cannot be preloaded" lines on the app's own
stderr for a 32-bit child (wrong ELF class) or one exec'd in a chroot (no
such file there), and the summary blamed RLIMIT_NOFILE."""
import os
import re
import shutil
import subprocess

from lptest import check, q1, skip, tmpdir
from rellib import bare, open_db, relbin, run

d = tmpdir()
done = []


def quiet(p, what):
    app_err = [ln for ln in p.stderr.splitlines() if not ln.startswith("latprof: ")]
    check(not app_err, f"{what}: nothing on the app's stderr ({app_err})")


def named(p, c, path, why, text):
    rows = c.execute("SELECT pid, exec_unrecorded FROM processes WHERE exec_path = ?",
                     (path,)).fetchall()
    check(len(rows) == 1 and rows[0][1] == why,
          f"processes.exec_unrecorded of the image that exec'd {path}: {why} "
          f"({[tuple(r) for r in rows]})")
    m = re.search(r"not recorded: pid (\d+), which exec'd (\S+): (.*)", p.stderr)
    check(m and int(m.group(1)) == rows[0][0] and m.group(2) == path and text in m.group(3)
          and "RLIMIT_NOFILE" not in m.group(3),
          f"the summary names pid {rows and rows[0][0]} and says '{text}': {p.stderr!r}")


# 32-bit: a child of sh.
prog32 = relbin("lp_rel_unseen32")
if os.path.exists(prog32):
    ref = bare("sh", "-c", f"{prog32} tiny 5; echo rc=$?")
    out = os.path.join(d, "m32.db")
    p = run(out, "sh", "-c", f"{prog32} tiny 5; echo rc=$?")
    check(p.returncode == 0 and p.stdout == ref.stdout == "tiny\nrc=5\n",
          f"32-bit child: its output and exit status 5 as bare ({p.stdout!r})")
    quiet(p, "32-bit child")
    named(p, open_db(out), prog32, "elf-class", "is a 32-bit program")
    done.append("32-bit")
else:
    print("lp_rel_unseen32 not built (no gcc-multilib, or a sanitizer build): 32-bit case "
          "skipped")

# chroot: a dynamic 64-bit program with its libraries, latprof's absent
# (echo: a sanitizer build's own programs need /proc, which the root lacks).
if os.geteuid() == 0 and shutil.which("chroot") and shutil.which("echo"):
    root = os.path.join(d, "root")
    prog = os.path.realpath(shutil.which("echo"))
    libs = re.findall(r"(/\S+) \(0x", subprocess.run(["ldd", prog], capture_output=True,
                                                     text=True).stdout)
    for f in [prog] + libs:
        dst = root + os.path.realpath(f) if f != prog else os.path.join(root, "prog")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(f, dst)
        if f != prog and os.path.realpath(f) != f:  # the name ld.so looks for
            os.makedirs(os.path.dirname(root + f), exist_ok=True)
            if not os.path.exists(root + f):
                os.symlink(os.path.realpath(f), root + f)
    ref = bare("chroot", root, "/prog", "tiny")
    check(ref.returncode == 0 and ref.stdout == "tiny\n", f"bare chroot: runs ({ref.stderr})")
    out = os.path.join(d, "chroot.db")
    p = run(out, "chroot", root, "/prog", "tiny")
    check(p.returncode == 0 and p.stdout == "tiny\n",
          f"chrooted child: its output and exit status 0 as bare ({p.returncode} {p.stdout!r})")
    quiet(p, "chrooted child")
    named(p, open_db(out), "/prog", "chroot", "in a chroot where latprof's library is absent")
    done.append("chroot")
else:
    print("not root, or no chroot(8): chroot case skipped")

if not done:
    skip("neither a 32-bit build nor chroot(8) as root here: nothing to check")
print(f"checked: {', '.join(done)}")
