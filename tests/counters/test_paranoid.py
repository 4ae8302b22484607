"""Strict kernel.perf_event_paranoid: recorded as an unprivileged user, the
kernel-mode-only events (context switches, migrations) are unavailable with
a reason naming the setting, user-mode ones still count, and `latprof run`
prints one line about it."""
import os
import shutil
import subprocess
import sys

from lptest import LATPROF, check, db, sample, skip, tmpdir

demo = sample("counters_demo")
if not os.path.exists(demo):
    skip("counters_demo not built")
try:
    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
except OSError:
    skip("no /proc/sys/kernel/perf_event_paranoid")
if paranoid < 2:
    skip(f"perf_event_paranoid={paranoid} is not strict")
if os.geteuid() != 0 or not shutil.which("setpriv"):
    skip("needs root and setpriv to record as an unprivileged user")
d = tmpdir()
os.chmod(d, 0o777)
path = os.path.join(d, "p.db")
env = dict(os.environ, TMPDIR=d, HOME=d)
p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", LATPROF,
                    "run", "-o", path, "--", demo, "5", "64", "100", "100"],
                   capture_output=True, text=True, env=env)
if p.returncode != 0:
    skip(f"cannot record as nobody here: {p.stderr.strip()[:200]}")
c = db(path)
cfg = c.execute("SELECT * FROM counter_config").fetchone()
if cfg["no_libpfm"]:
    skip("built without libpfm4")
ev = {r["name"]: r for r in c.execute("SELECT * FROM counter_events")}
check(cfg["paranoid"] == paranoid, f"config records perf_event_paranoid={paranoid}")
if cfg["denied"]:
    check(all(not r["available"] for r in ev.values()), "everything refused: all unavailable")
else:
    check(cfg["user_only"] == 1, "counting forced to user mode")
    for e in ("context-switches", "cpu-migrations"):
        check(not ev[e]["available"] and "perf_event_paranoid" in ev[e]["reason"],
              f"{e}: unavailable, reason names the setting")
        check(c.execute("SELECT count(*) FROM range_counters WHERE event_id = ?",
                        (ev[e]["id"],)).fetchone()[0] == 0, f"{e}: no zeros stored")
    check(ev["minor-faults"]["available"], "minor faults still counted")
lines = [l for l in p.stderr.splitlines() if "kernel.perf_event_paranoid=" in l]
check(len(lines) == 1, "latprof run prints one line naming kernel.perf_event_paranoid")
