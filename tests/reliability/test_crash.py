"""The app crashes (SIGSEGV) or calls abort(): latprof run returns 128+N,
the run is imported with the signal, and the report says it crashed."""
import os
import signal

from lptest import check, latprof, q1, tmpdir
from rellib import app, open_db, run

d = tmpdir()
for how, sig in (("segv", signal.SIGSEGV), ("abort", signal.SIGABRT)):
    out = os.path.join(d, f"{how}.db")
    p = run(out, app(), "crash", how)
    check(p.returncode == 128 + sig, f"{how}: latprof exits {p.returncode} (128+{int(sig)})")
    check(f"about to crash: {how}" in p.stdout, f"{how}: the app's output passes through")
    c = open_db(out)
    r = c.execute("SELECT exit_signal, exit_how FROM processes WHERE parent_id IS NULL").fetchone()
    check(r["exit_signal"] == sig, f"{how}: processes.exit_signal = {r['exit_signal']}")
    waits = q1(c, "SELECT count(*) FROM lock_waits")
    check(waits > 0, f"{how}: the {waits} lock waits before the crash are kept")
    rep = latprof("report", out, check=0)
    line = [l for l in rep.stdout.splitlines() if "crash" in l]
    check(any(f"crashed ({sig.name})" in l for l in line),
          f"{how}: report says 'crashed ({sig.name})': {line}")
