"""Waits a process died in (the run's table of waits in progress,
format/lp_inflight_format.h): tests/block/lp_blockprog killwait leaves
five threads blocked (a condition wait, a read() on a pipe, a mutex main
holds, a waitpid() on a child, a nanosleep) and dies of a signal it does
not handle, so no code of latprof's runs at its end. Each wait must be in
the database once, flagged unfinished and died (4 | 8), from the time the
thread itself read just before blocking to the process's death: the
program's own clock read just before kill(2), plus the reaper's delay. The
breakdown gives each thread's time from blocking to its death to its wait's
category; the process ends at its death, not at its last record. Checked
for SIGKILL and SIGSEGV.

An image that wrote no log (`sleep` under `timeout -s KILL`) gets the
blocking call it died in too.

The table itself, kept with --keep-logs: after a run, the only slots still
held are the killed image's five; a run whose processes all exit (a shell,
its children, an exec) leaves every slot free. A log directory without the
table imports as before, without those waits."""
import json
import os
import shutil
import struct

from lptest import BUILD, check, db, latprof, record, tmpdir

# Blocking calls are timed in TSC ticks and converted to CLOCK_MONOTONIC
# (preload/lp_blk_clock.h), the program's clock: the converted start of a
# call may read a little before a clock read made just ahead of it (CI54's
# ASan tier: 637 ns). Lock and condition waits read CLOCK_MONOTONIC itself.
TSC_SKEW_NS = 5000

PROG = os.path.join(BUILD, "tests", "bin", "lp_blockprog")
SLOT = struct.Struct("<QQQQQQIIII")  # struct lp_inflight
WANT = {  # thread: (table, condition, the breakdown's category)
    "condidle": ("cond_waits", "1", "cond_wait"),
    "pipeidle": ("blocking_calls", "call = 'read'", "other_block"),
    "lockidle": ("lock_waits", "1", "lock_wait"),
    "waitidle": ("blocking_calls", "call = 'waitpid'", "other_block"),
    "sleepidle": ("blocking_calls", "call = 'nanosleep' AND category = 'sleep'", "sleep"),
}
d = tmpdir()


def held_slots(logdir):
    """(pid, tid, start) of every slot still held in the run's table."""
    with open(os.path.join(logdir, "inflight.lpinf"), "rb") as f:
        head = f.read(4096)
        check(head[:8] == b"LPINF\0\r\n", f"the table's magic ({head[:8]!r})")
        n_slots = struct.unpack_from("<I", head, 20)[0]
        body = f.read(n_slots * SLOT.size)
    out = []
    for i in range(n_slots):
        owner, _image, start = SLOT.unpack_from(body, i * SLOT.size)[:3]
        if owner:
            out.append((owner >> 32, owner & 0xffffffff, start))
    return out


def logdir_of(p):
    for ln in p.stderr.splitlines():
        if "event logs kept in" in ln:
            return ln.split("event logs kept in", 1)[1].split()[0].rstrip(";,")
    check(False, f"--keep-logs names the log directory ({p.stderr})")
    return None


def own_pid(c, proc_id):
    return c.execute("SELECT pid FROM processes WHERE id = ?", (proc_id,)).fetchone()[0]


def killed(sig):
    run, times = f"{d}/kill{sig}.db", f"{d}/times{sig}.txt"
    p = record(run, PROG, "killwait", times, str(sig), args=("--keep-logs",),
               check_app=128 + sig)
    with open(times) as f:
        own = {k: int(v) for k, v in (ln.split() for ln in f)}
    # its threads' counters were never read (that happens as a thread ends):
    # not a failure to open them (RLIMIT_NOFILE)
    check("RLIMIT_NOFILE" not in p.stderr,
          f"SIG{sig}: the killed threads' missing counters are not blamed on the fd limit "
          f"({p.stderr.strip()!r})")
    c = db(run)
    proc = c.execute("SELECT id, end_ns, exit_signal, log_closed FROM processes "
                     "WHERE cmdline LIKE '%killwait%'").fetchone()
    check(proc["exit_signal"] == sig and proc["log_closed"] == 0,
          f"SIG{sig}: the process died of it, its log unclosed ({dict(proc)})")
    # its end is its death, as its reaper saw it: after the kill, by the
    # kernel's tear-down and the reaper's wake-up (~1 ms idle, tens loaded)
    check(0 <= proc["end_ns"] - own["kill"] <= 100e6,
          f"SIG{sig}: the process ends {(proc['end_ns'] - own['kill']) / 1e6:.2f} ms after "
          f"the program's last clock read")
    for name, (table, cond, _) in WANT.items():
        got = c.execute(f"SELECT w.start_ns, w.dur_ns, w.flags FROM {table} w JOIN threads t "
                        f"ON t.id = w.thread_id WHERE t.name = ? AND {cond}", (name,)).fetchall()
        check(len(got) == 1 and got[0]["flags"] & 12 == 12,
              f"SIG{sig} {name}: one row in {table}, unfinished and died "
              f"({[dict(r) for r in got]})")
        if len(got) != 1:
            continue
        span = own["kill"] - own[name]
        start, dur = got[0]["start_ns"], got[0]["dur_ns"]
        check(own[name] - TSC_SKEW_NS <= start <= own[name] + 0.05 * span,
              f"SIG{sig} {name}: starts just after the thread's own clock read "
              f"({start - own[name]} ns)")
        check(start + dur == proc["end_ns"] and span <= dur <= span + 100e6,
              f"SIG{sig} {name}: lasted {dur / 1e6:.2f} ms, to the process's end; the "
              f"program's own clocks say {span / 1e6:.2f} ms to its kill(2)")
    meta = dict(c.execute("SELECT key, value FROM meta WHERE key LIKE 'import.died%'"))
    # plus, when latprof run reaped it before it finished, the pause() of
    # waitidle's child, killed with it (PR_SET_PDEATHSIG), which has no log
    kid = c.execute("SELECT count(*) FROM blocking_calls b JOIN threads t ON t.id = "
                    "b.thread_id JOIN processes p ON p.id = t.process_id WHERE p.ppid = ? "
                    "AND b.flags = 12", (own_pid(c, proc["id"]),)).fetchone()[0]
    check(meta.get("import.died_waits") == 5 + kid and
          meta.get("import.died_waits_no_death", 0) == 1 - kid,
          f"SIG{sig}: five waits found, and the child's one ({kid}) or it had no known "
          f"death ({meta})")
    doc = json.loads(latprof("report", run, "--breakdown", "--format", "json",
                             check=0).stdout)
    for t in doc["threads"]:
        if t["name"] in WANT:
            # the thread's time before it blocked is its own (on a loaded
            # host, tens of ms from its start): the wait must cover the rest
            cats, want = t["categories"], WANT[t["name"]][2]
            top, span = max(cats, key=cats.get), own["kill"] - own[t["name"]]
            check(top == want and cats[want] >= span,
                  f"SIG{sig} {t['name']}: {want} is its largest category and covers the "
                  f"{span / 1e6:.2f} ms from its own clock read before blocking to the kill "
                  f"({cats})")
    logs = logdir_of(p)
    held = held_slots(logs)
    pid = c.execute("SELECT pid FROM processes WHERE id = ?", (proc["id"],)).fetchone()[0]
    # waitidle's child dies of SIGKILL with it (PR_SET_PDEATHSIG): its slot stays held too
    dead = {pid} | {r[0] for r in c.execute("SELECT pid FROM processes WHERE ppid = ?", (pid,))}
    waiting = [h for h in held if h[0] == pid and h[2] > 1]
    check(len(waiting) == 5 and {h[0] for h in held} <= dead,
          f"SIG{sig}: only the killed image and its child hold slots, the image its five "
          f"waits ({held}; image and child {sorted(dead)})")
    return logs, run


logs, run = killed(9)
killed(11)

# Without the table (a directory from before it, or it could not be made)
# the run imports as before, without the waits the process died in.
os.unlink(os.path.join(logs, "inflight.lpinf"))
bare = f"{d}/bare.db"
latprof("import", logs, "-o", bare, check=0)
n = db(bare).execute("SELECT count(*) FROM lock_waits WHERE flags & 8").fetchone()[0]
check(n == 0, f"without the table, no wait is said to be died in ({n})")
shutil.rmtree(logs, ignore_errors=True)

# An image that wrote no log (it records nothing but its life: `sleep`),
# killed in its one blocking call by its parent (`timeout`, whose wait
# status record dates the death).
t = f"{d}/timeout.db"
# timeout kills its whole group, itself too: --wait=all, so that latprof
# reaps `sleep` even when it ends after timeout. The 0.3 s count from
# timeout's start: `sleep` starts later (CI's loaded ASan tier: 279.6 ms of
# sleep in a life of 284.9 ms), so the sleep is held to its own life.
record(t, "timeout", "-s", "KILL", "0.3", "sleep", "5", args=("--wait=all",), check_app=137)
c = db(t)
rows = c.execute("SELECT b.call, b.category, b.dur_ns, b.flags, p.log_closed, p.exit_signal, "
                 "p.end_ns - p.start_ns AS life FROM blocking_calls b JOIN threads th ON "
                 "th.id = b.thread_id JOIN processes p ON p.id = th.process_id "
                 "WHERE p.cmdline LIKE 'sleep%'").fetchall()
check(len(rows) == 1 and rows[0]["category"] == "sleep" and rows[0]["flags"] == 12 and
      rows[0]["exit_signal"] == 9 and 0.2e9 <= rows[0]["dur_ns"] <= 0.5e9 and
      rows[0]["life"] - 0.03e9 <= rows[0]["dur_ns"] <= rows[0]["life"],
      f"sleep killed by timeout after 0.3 s: one sleep of about 0.3 s, died in "
      f"({[dict(r) for r in rows]})")

# Processes that exit, exec and fork give their slots back.
p = record(f"{d}/sh.db", "sh", "-c", "sleep 0.05 & wait; sh -c 'sleep 0.05; true'; "
           f"{PROG} exitwait {d}/ew.txt", args=("--keep-logs",))
logs = logdir_of(p)
held = held_slots(logs)
# exitwait's waitidle child dies of SIGKILL with its thread (PR_SET_PDEATHSIG)
c = db(f"{d}/sh.db")
ew = c.execute("SELECT pid FROM processes WHERE cmdline LIKE ?",
               (f"{PROG} exitwait%",)).fetchone()[0]
dead = {r[0] for r in c.execute("SELECT pid FROM processes WHERE ppid = ?", (ew,))}
check(len(dead) == 1 and {h[0] for h in held} <= dead,
      f"processes that exit, exec or fork leave no slot held: exitwait (pid {ew}) and its "
      f"four waiting threads none, only its killed child ({held}; child {sorted(dead)})")
shutil.rmtree(logs, ignore_errors=True)
