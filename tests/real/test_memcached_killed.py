"""Debian's memcached killed with SIGKILL while idle, as a watchdog or the
OOM killer would: every thread is blocked in a system call then, and none
returns, so only the run's table of waits in progress
(format/lp_inflight_format.h) can say where each one was. The second
source is the kernel: just before the kill, the test reads each thread's
blocked system call from /proc/PID/task/TID/syscall. Each thread must have
one wait flagged died (4 | 8), of the kind the kernel named (epoll_wait:
epoll_wait; futex: a condition or lock wait; nanosleep/clock_nanosleep: a
sleep), ending at the process's end, which is its death."""
import os
import signal
import time

from lptest import check, db, tmpdir
from reallib import need_cmd, pidfile_pid, start_memcached, stop, wait_port
from lpaccount import check_account

need_cmd("memcached")
rec, port, pidfile, path = start_memcached(tmpdir())
# the kernel's blocked call numbers (x86-64) and what latprof calls each
KINDS = {232: "epoll", 281: "epoll", 202: "futex", 35: "sleep", 230: "sleep"}
kernel = {}
try:
    check(wait_port(port, rec), f"memcached listens on 127.0.0.1:{port}")
    pid = pidfile_pid(pidfile)
    time.sleep(1.0)  # idle: every thread settles into its wait
    for _ in range(20):  # a thread caught running ("running") is read again
        kernel = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                nr = f.read().split()[0]
            kernel[int(tid)] = KINDS.get(int(nr), nr) if nr.lstrip("-").isdigit() else nr
        if all(k in ("epoll", "futex", "sleep") for k in kernel.values()):
            break
        time.sleep(0.01)
    killed_at = time.monotonic_ns()
    os.kill(pid, signal.SIGKILL)
finally:
    out, err = stop(rec)
check(rec.returncode == 137 and os.path.exists(path),
      f"recorded memcached, killed: exit 137 ({rec.returncode}; {err.strip()[-200:]})")
print(f"kernel: {kernel}")

c = db(path)
proc = c.execute("SELECT id, end_ns, exit_signal FROM processes WHERE pid = ?",
                 (pid,)).fetchone()
check(proc is not None and proc["exit_signal"] == 9 and 0 <= proc["end_ns"] - killed_at <= 2e8,
      f"the process died of SIGKILL and ends at its death, "
      f"{(proc['end_ns'] - killed_at) / 1e6:.1f} ms after the kill" if proc else "no process")
rows = c.execute(
    "SELECT t.tid, 'epoll' AS kind, b.call AS what, b.start_ns + b.dur_ns AS e, b.flags "
    "FROM blocking_calls b JOIN threads t ON t.id = b.thread_id WHERE b.flags & 8 AND "
    "b.call LIKE 'epoll%' UNION ALL "
    "SELECT t.tid, 'sleep', b.call, b.start_ns + b.dur_ns, b.flags FROM blocking_calls b "
    "JOIN threads t ON t.id = b.thread_id WHERE b.flags & 8 AND b.category = 'sleep' "
    "UNION ALL SELECT t.tid, 'futex', 'cond_wait', w.start_ns + w.dur_ns, w.flags "
    "FROM cond_waits w JOIN threads t ON t.id = w.thread_id WHERE w.flags & 8 UNION ALL "
    "SELECT t.tid, 'futex', 'lock_wait', w.start_ns + w.dur_ns, w.flags FROM lock_waits w "
    "JOIN threads t ON t.id = w.thread_id WHERE w.flags & 8").fetchall()
got = {}
for r in rows:
    got.setdefault(r["tid"], []).append(r)
for tid, kind in sorted(kernel.items()):
    mine = got.get(tid, [])
    check(len(mine) == 1 and mine[0]["kind"] == kind and mine[0]["flags"] & 12 == 12 and
          mine[0]["e"] == proc["end_ns"],
          f"thread {tid}, blocked in the kernel in {kind}: one died wait of that kind, to the "
          f"death ({[(r['what'], r['kind']) for r in mine]})")
check(len(kernel) >= 5 and set(got) <= set(kernel),
      f"{len(kernel)} threads, each found ({len(got)}), none other")
# the findings of the run as one account (tests/lib/lpaccount.py)
check_account(path)
