"""The blocking-call hooks (issue 16) on tests/block/lp_blockprog, which
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
one(rs, "futex", "futex", None, "other_block", -110)  # -ETIMEDOUT
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
