"""The disk fills while recording. Three ways: a 1 MiB tmpfs holding the
logs (a real ENOSPC; needs an unprivileged user+mount namespace), a 1 MiB
log (LATPROF_LOG_MB=1, chunks run out) and RLIMIT_FSIZE of 512 KiB on the app
(the log must stay under it: no SIGXFSZ). Each time: the app's output and
exit status are unchanged, every event is either in the database or counted
as dropped, `latprof run` reports the loss, the import keeps what was written.
Figure: events kept / events dropped / events unaccounted (target 0)."""
import os
import re
import shutil
import subprocess

from lptest import LATPROF, check, fail, tmpdir
from rellib import app, bare, event_counts, meta, open_db

N, PAD = 20000, 200
d = tmpdir()
ref = bare(app(), "events", os.path.join(d, "bare.side"), 1, N, PAD)
check(ref.returncode == 0, f"bare run: exit 0, output {ref.stdout.strip()!r}")
expect_out = ref.stdout.replace("recorder=no", "recorder=yes")


def lp_cmd(out, side, pre=()):
    return [LATPROF, "run", "-o", out, "--", *pre, app(), "events", side, "1", str(N), str(PAD)]


def verify(name, p, out):
    check(p.returncode == 0, f"{name}: exit status unchanged (0, got {p.returncode})\n{p.stderr}")
    check(p.stdout == expect_out, f"{name}: app output unchanged ({p.stdout.strip()!r})")
    c = open_db(out)
    evs = event_counts(c).get(0, [])
    kept = len(evs)
    dropped = int(meta(c, "dropped_records"))
    chunks = int(meta(c, "dropped_chunks"))
    m = re.search(r"\((\d+) records dropped[,)]", p.stderr)
    check(m and int(m.group(1)) == dropped,
          f"{name}: latprof run's summary reports the {dropped} dropped records: "
          f"{m.group(0) if m else p.stderr!r}")
    check(0 < kept < N, f"{name}: the import kept what was written ({kept} of {N})")
    check(evs == list(range(kept)), f"{name}: the kept events are the first {kept}, in order")
    # Besides our events only the exit-time records (module list, process
    # exit) can be dropped: a few dozen at most.
    other = kept + dropped - N
    unaccounted = max(0, N - kept - dropped)
    print(f"FIGURE diskfull[{name}]: {N} events: {kept} kept ({100.0 * kept / N:.1f}%), "
          f"{N - kept} lost and counted; dropped_records={dropped} "
          f"(incl. {other} exit-time records), dropped_chunks={chunks}, "
          f"unaccounted {unaccounted}")
    check(unaccounted == 0 and other <= 64,
          f"{name}: every lost event is counted (unaccounted {unaccounted}, other {other})")


# 1. A real full filesystem.
mnt = os.path.join(d, "tmpfs")
os.mkdir(mnt)
out = os.path.join(d, "tmpfs.db")
unshare = shutil.which("unshare")
probe = subprocess.run([unshare or "false", "-Urm", "true"], capture_output=True)
if probe.returncode != 0:
    print("SKIP part: no user+mount namespace here (unshare -Urm failed): "
          "the tmpfs variant needs one; the other two still run")
else:
    script = 'mount -t tmpfs -o size=1m tmpfs "$1" && shift && TMPDIR="$0" exec "$@"'
    p = subprocess.run([unshare, "-Urm", "sh", "-c", script, mnt, mnt,
                        *lp_cmd(out, os.path.join(d, "tmpfs.side"))],
                       capture_output=True, text=True, env={**os.environ, "LATPROF_LOG_MB": "64"})
    verify("tmpfs 1 MiB", p, out)
    check(int(meta(open_db(out), "dropped_chunks")) > 0,
          "tmpfs: the full disk shows up as failed chunk reservations")

# 2. The log itself is full.
out = os.path.join(d, "logmb.db")
p = subprocess.run(lp_cmd(out, os.path.join(d, "logmb.side")), capture_output=True, text=True,
                   env={**os.environ, "LATPROF_LOG_MB": "1"})
verify("LATPROF_LOG_MB=1", p, out)

# 3. RLIMIT_FSIZE on the app (prlimit execs it with the limit set).
prlimit = shutil.which("prlimit")
if not prlimit:
    fail("prlimit (util-linux) is missing")
out = os.path.join(d, "fsize.db")
p = subprocess.run(lp_cmd(out, os.path.join(d, "fsize.side"),
                          pre=(prlimit, f"--fsize={512 * 1024}")),
                   capture_output=True, text=True, env={**os.environ, "LATPROF_LOG_MB": "64"})
verify("RLIMIT_FSIZE 512 KiB", p, out)
shutil.rmtree(d)
