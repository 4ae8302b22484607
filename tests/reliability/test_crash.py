"""The app crashes (SIGSEGV) or calls abort(): latprof run returns 128+N,
the run is imported with the signal, and the report says it crashed."""
import os
import signal

from lptest import check, latprof, q1, tmpdir
from rellib import app, open_db, run

d = tmpdir()
SURE = 5  # lp_rel_app's REL_SURE_WAITS
for how, sig in (("segv", signal.SIGSEGV), ("abort", signal.SIGABRT)):
    out = os.path.join(d, f"{how}.db")
    p = run(out, app(), "crash", how)
    check(p.returncode == 128 + sig, f"{how}: latprof exits {p.returncode} (128+{int(sig)})")
    check(f"about to crash: {how}" in p.stdout, f"{how}: the app's output passes through")
    c = open_db(out)
    r = c.execute("SELECT exit_signal, exit_how FROM processes WHERE parent_id IS NULL").fetchone()
    check(r["exit_signal"] == sig, f"{how}: processes.exit_signal = {r['exit_signal']}")
    # The app's counts: rel_lock taken 3 x 300 times, 5 waits on
    # rel_sure_lock for sure, 1 process of 1 + 3 + 5 threads.
    check(f"sure_waits {SURE}" in p.stdout, f"{how}: the app made {SURE} sure waits")
    sure = q1(c, "SELECT count(*) FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
                 "WHERE l.name = 'rel_sure_lock'")
    check(sure == SURE, f"{how}: the {SURE} sure lock waits before the crash are kept ({sure})")
    waits = q1(c, "SELECT count(*) FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
                  "WHERE l.name = 'rel_lock'")
    check(0 < waits <= 900, f"{how}: {waits} waits on rel_lock, of its 900 lock calls")
    procs, threads = q1(c, "SELECT count(*) FROM processes"), q1(c, "SELECT count(*) FROM threads")
    check(procs == 1 and threads == 9, f"{how}: 1 process ({procs}), 9 threads ({threads})")
    rep = latprof("report", out, check=0)
    line = [l for l in rep.stdout.splitlines() if "crash" in l]
    check(any(f"crashed ({sig.name})" in l for l in line),
          f"{how}: report says 'crashed ({sig.name})': {line}")
