"""An app built with -fsanitize=address, recorded by the uninstrumented
interposer (tests/preload/lp_contend.c, mode contend: 4 threads x 200
acquisitions of one mutex held 50 us). The sanitizer runtime interposes
pthread_mutex_unlock and defines an unversioned __pthread_mutex_unlock with
no real function behind it on glibc >= 2.34; the interposer's unlock hook
bound its direct call to it and the app died at its first unlock (SEGV at
address 0). Now the app runs to its own exit status and its waits and
holds are recorded."""
import os

from lptest import BUILD, check, db, q1, record, skip, tmpdir

prog = os.path.join(BUILD, "tests", "preload", "lp_contend_asan")
if not os.path.exists(prog):
    skip("lp_contend_asan not built (a LATPROF_SANITIZE or fuzz build)")
d = tmpdir()
env = dict(os.environ)
# the runtime comes after latprof's libraries in LD_PRELOAD's order
env["ASAN_OPTIONS"] = "verify_asan_link_order=0:detect_leaks=0"
path = os.path.join(d, "asan.db")
p = record(path, prog, "contend", check_app=None, env=env)
check(p.returncode == 0, f"the ASan app exits 0 under latprof (got {p.returncode})\n"
      f"{p.stderr[-800:] if p.returncode else ''}")
c = db(path)
n = q1(c, "SELECT count(*) FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
          "WHERE l.kind = 'mutex'")
check(n > 0, f"its mutex waits are recorded ({n})")
h = q1(c, "SELECT count(*) FROM lock_holds") if q1(
    c, "SELECT count(*) FROM sqlite_master WHERE name = 'lock_holds'") else 0
check(h > 0, f"and the holds of its contended mutex, through libc's own unlock ({h})")
