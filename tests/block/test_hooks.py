"""The blocking-call hooks on tests/block/lp_blockprog, which
checks return values, errno and cancellation itself (exit 1 on a
mismatch): each family is recorded once with the right call name, kind of
descriptor, category, result and a duration of at least the ~3 ms the
helper made it wait; the threshold holds; a forked child records into its
own log; latprof's own counter reads are never recorded."""
import os

from lptest import BUILD, check, db, record, tmpdir

PROG = os.path.join(BUILD, "tests", "bin", "lp_blockprog")
d = tmpdir()
DELAY = 3_000_000


def rows(path):
    return db(path).execute(
        "SELECT t.name AS thread, p.pid, b.call, b.fd_kind, b.category, b.result, b.dur_ns, "
        "b.stack_id FROM blocking_calls b JOIN threads t ON t.id = b.thread_id "
        "JOIN processes p ON p.id = t.process_id").fetchall()


def one(rs, thread, call, kind, cat, result):
    """The row of `call` in thread `thread` that waited for the helper."""
    got = [r for r in rs if r["thread"] == thread and r["call"] == call]
    ok = [r for r in got if r["fd_kind"] == kind and r["category"] == cat and
          r["result"] == result and r["dur_ns"] >= 0.9 * DELAY and r["stack_id"]]
    check(len(ok) == 1, f"{thread}: {call} on {kind} -> {cat}, result {result}, >= 2.7 ms, "
          f"with a stack ({[dict(r) for r in got]})")


calls = f"{d}/calls.db"
record(calls, PROG, "calls", f"{d}/data.bin")
rs = rows(calls)
for call in ("nanosleep", "clock_nanosleep", "usleep"):
    one(rs, "sleeps", call, None, "sleep", 0)
one(rs, "pipe", "read", "pipe", "other_block", 8)
for call in ("poll", "ppoll", "select", "pselect", "epoll_wait"):
    one(rs, "pipe", call, None, "poll_wait", 1)
one(rs, "eventfd", "read", "eventfd", "other_block", 8)
one(rs, "socket", "recv", "socket", "socket_io", 1)
one(rs, "socket", "accept", "socket", "socket_io",
    [r["result"] for r in rs if r["call"] == "accept"][0])
check(all(r["result"] >= 0 for r in rs if r["call"] == "accept"), "accept returned a descriptor")
# a futex wait is a wait on the word: a lock wait of kind futex; one thread
# only ever waited on it and no lock frame is on its stack, so class signal
fx = db(calls).execute(
    "SELECT l.kind, w.class, w.flags, w.dur_ns, w.stack_id FROM lock_waits w "
    "JOIN locks l ON l.id = w.lock_id JOIN threads t ON t.id = w.thread_id "
    "WHERE t.name = 'futex'").fetchall()
check(len(fx) == 1 and fx[0]["kind"] == "futex" and fx[0]["class"] == 4 and
      fx[0]["flags"] == 1 and fx[0]["dur_ns"] >= 0.9 * DELAY and fx[0]["stack_id"],
      f"futex: a timed-out (flags 1) signal-class futex lock wait, >= 2.7 ms, with a stack "
      f"({[dict(r) for r in fx]})")
check(not [r for r in rs if r["call"] == "futex"], "futex: no blocking call as well")
one(rs, "signals", "sigwait", None, "other_block", 0)
for call in ("sigwaitinfo", "sigtimedwait"):
    one(rs, "signals", call, None, "other_block", 10)  # SIGUSR1
one(rs, "signals", "sigsuspend", None, "other_block", -4)  # -EINTR
one(rs, "stdio", "fflush", "pipe", "other_block", 0)
check(any(r["call"] == "fsync" and r["fd_kind"] == "file" and r["category"] == "file_io"
          for r in rs), "fsync on a file is file I/O")
check(all(r["dur_ns"] >= 10000 for r in rs), "default threshold: nothing under 10 us")


def own_calls(path):
    """Rows whose call site lies in latprof's own libraries."""
    return db(path).execute(
        "SELECT count(*) FROM blocking_calls b JOIN stacks s ON s.id = b.stack_id "
        "JOIN frames f ON f.id = s.top_frame WHERE f.module LIKE '%liblatprof_%'").fetchone()[0]


check(own_calls(calls) == 0, "latprof's own calls are not recorded")

# threshold 0 records every call, with errno-style results
errs = f"{d}/errno.db"
record(errs, PROG, "errno", args=("--block-threshold", "0"))
rs = {(r["call"], r["fd_kind"], r["result"]) for r in rows(errs)}
want = {("write", "pipe", 1), ("read", "pipe", 1), ("read", None, -9), ("recv", "pipe", -88),
        ("nanosleep", None, -22), ("clock_nanosleep", None, 22)}
check(want <= rs, f"--block-threshold 0: every call, failures as -errno ({sorted(rs, key=str)})")
nread = db(errs).execute("SELECT count(*) FROM thread_counters WHERE source = 'exit'").fetchone()[0]
check(own_calls(errs) == 0 and nread > 0,
      f"--block-threshold 0: the counters' {nread} reads of their perf descriptors are not "
      "recorded as the app's")
record(errs, PROG, "errno", args=("--force", "--block-threshold", "1s"))
check(not rows(errs), "--block-threshold 1s: nothing recorded")

fork = f"{d}/fork.db"
record(fork, PROG, "fork")
rs = rows(fork)
main_pid = db(fork).execute("SELECT min(pid) FROM processes").fetchone()[0]
check(any(r["call"] == "read" and r["fd_kind"] == "pipe" and r["pid"] != main_pid and
          r["dur_ns"] >= 0.9 * DELAY for r in rs), "the forked child's blocked read is in its log")
# (the innermost frame may be a sanitizer's interceptor: look down the stack)
tops = {r[0]: r[1] for r in db(fork).execute(
    "SELECT p.pid = ?1, min(sf.depth) FROM blocking_calls b JOIN threads t ON t.id = "
    "b.thread_id JOIN processes p ON p.id = t.process_id JOIN stack_frames sf ON sf.stack_id "
    "= b.stack_id JOIN frames f ON f.id = sf.frame_id WHERE b.call = 'read' AND "
    "f.function = 'blocked_read' GROUP BY 1", (main_pid,))}
check(tops.get(1) is not None and tops.get(1) <= 1 and tops.get(0) == tops.get(1),
      f"parent and child: the read's stack starts in blocked_read, the child's not a stale "
      f"id from the parent's cache (depth of blocked_read by is-parent: {tops})")

cancel = f"{d}/cancel.db"
record(cancel, PROG, "cancel")
rs = rows(cancel)
check(not [r for r in rs if r["thread"] == "cancelled"], "the cancelled read is not recorded")
check(len([r for r in rs if r["thread"] == "sleeps"]) == 3,
      "after a cancellation inside a hook, later calls are recorded")

# The hooks' clock (preload/lp_blk_clock.c: TSC ticks where the TSC is
# invariant and the kernel's clocksource, else CLOCK_MONOTONIC, forced by
# LATPROF_BLOCK_CLOCK=monotonic): each recorded sleep lies inside the
# program's own CLOCK_MONOTONIC bracket of it and lasts at least what it
# asked for, to 1 us + 1e-4 of its length (the precision the clock states).
cpu = open("/proc/cpuinfo").read().split()
with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
    tsc = "constant_tsc" in cpu and "nonstop_tsc" in cpu and f.read().strip() == "tsc"
print(f"block_hooks: invariant TSC as clocksource: {tsc} (the default clock "
      f"{'times calls in TSC ticks' if tsc else 'is CLOCK_MONOTONIC'})")
ASKED = [3_000_000] + [2_000_000] * 10 + [100_000_000]
for clock in ("default", "monotonic"):
    out, path = f"{d}/clock-{clock}.txt", f"{d}/clock-{clock}.db"
    record(path, PROG, "clock", out,
           env={"LATPROF_BLOCK_CLOCK": clock} if clock == "monotonic" else None)
    with open(out) as f:
        brackets = [tuple(map(int, ln.split())) for ln in f]
    recs = db(path).execute(
        "SELECT b.start_ns AS start, b.dur_ns AS dur FROM blocking_calls b JOIN threads t ON "
        "t.id = b.thread_id WHERE t.name = 'clock' AND b.call = 'nanosleep'").fetchall()
    check(len(brackets) == len(ASKED) and len(recs) == len(ASKED),
          f"{clock} clock: {len(ASKED)} sleeps bracketed and recorded ({len(brackets)}, "
          f"{len(recs)})")
    worst = 0
    for (before, after), asked in zip(brackets, ASKED):
        tol = 1000 + (after - before) // 10000
        inside = [r for r in recs if r["start"] >= before - tol and
                  r["start"] + r["dur"] <= after + tol and r["dur"] >= asked - tol]
        check(len(inside) == 1, f"{clock} clock: the {asked / 1e6:g} ms sleep in "
              f"[{before}, {after}] is recorded inside it, >= {asked} ns, to {tol} ns "
              f"({[dict(r) for r in recs if r['start'] < after and r['start'] + r['dur'] > before]})")
        if inside:
            r = inside[0]
            worst = max(worst, before - r["start"], r["start"] + r["dur"] - after, asked - r["dur"])
    print(f"block_hooks: {clock} clock: {len(recs)} sleeps inside their brackets; the worst "
          f"excursion past a bracket or under the asked time: {worst} ns")

# A call that never left the CPU is not a wait, however long (preload/
# lp_block.c, collector/lp_rseq.h): 20 reads of 4 MB from /dev/zero are
# kernel work on the CPU. latprof run's probe found whether this kernel
# clears an armed rseq area on a switch; with it, the reads recorded are at
# most the context switches the kernel counted for the thread across them
# (/proc/thread-self/status, the second source); without (off), every read
# over 10 us is recorded, as a wait it was not.
try:
    import ctypes
    rseq = ctypes.c_uint.in_dll(ctypes.CDLL(None), "__rseq_size").value > 0
except (OSError, ValueError):
    rseq = False
probe = record(f"{d}/env.db", "sh", "-c", "echo $LATPROF_BLOCK_SWITCH").stdout.strip()
check(probe == ("rseq" if rseq else "off"),
      f"latprof run's probe: LATPROF_BLOCK_SWITCH={probe} (glibc registered rseq: {rseq})")
for mode in ("rseq", "off") if rseq else ("off",):
    out, path = f"{d}/zero-{mode}.txt", f"{d}/zero-{mode}.db"
    record(path, PROG, "zero", out, env={"LATPROF_BLOCK_SWITCH": mode})
    with open(out) as f:
        switches = int(f.read().split()[1])
    n = db(path).execute(
        "SELECT count(*) FROM blocking_calls b JOIN threads t ON t.id = b.thread_id "
        "WHERE t.name = 'zeroread' AND b.call = 'read'").fetchone()[0]
    print(f"block_hooks: LATPROF_BLOCK_SWITCH={mode}: {n} of 20 on-CPU reads of /dev/zero "
          f"recorded; the kernel counted {switches} context switches across them")
    if mode == "rseq":
        # The kernel may clear the area on other returns to user space too
        # (task work such as the scheduler's mm_cid compaction, every 100 ms
        # of a task's run): such a call is timed as without rseq. 20 reads
        # take some 10 ms: one such read at most.
        check(n <= switches + 1, f"rseq: no read recorded that did not leave the CPU ({n} "
              f"recorded, {switches} switches)")
    else:
        check(n == 20, f"off: each read over the threshold is recorded ({n} of 20)")

# Waiting for another process's file lock (a PHP session file, a job
# queue's lock file): flock, fcntl(F_SETLKW) and lockf(F_LOCK), each held
# 30 ms more by a forked child. Each wait is one other_block call on a file;
# the child's own non-waiting lock calls pass through unrecorded.
path = f"{d}/filelock.db"
record(path, PROG, "filelock", f"{d}/locked.dat")
rs = [r for r in rows(path) if r["thread"] == "filelock"]
for call in ("flock", "fcntl", "lockf"):
    got = [r for r in rs if r["call"] == call]
    check(len(got) == 1 and got[0]["category"] == "other_block" and got[0]["fd_kind"] == "file"
          and got[0]["result"] == 0 and got[0]["dur_ns"] >= 1e6,
          f"filelock: {call} waited for the child's lock: one other_block call on a file, "
          f">= 1 ms ({[dict(r) for r in got]})")
check(not [r for r in rows(path) if r["call"] in ("flock", "fcntl", "lockf") and
           r["thread"] != "filelock"], "the child's own lock calls, which never wait, are not recorded")
