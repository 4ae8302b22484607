"""A real server whose requests wait on sockets and the disk:
PostgreSQL from Debian under pgbench over a Unix socket. Its backends must
show that waiting as blocking calls (socket I/O, poll waits for the client,
file I/O for the WAL), not as CPU; and their on-CPU time must agree with
the kernel's own accounting within 10% (the postmaster's cutime+cstime:
the CPU of the backends it reaped, /proc/PID/stat).
Needs root (the server runs as user postgres) and postgresql installed."""
import glob
import json
import os
import shutil
import subprocess

from lptest import LATPROF, SRC, check, db, fail, sanitizer, skip, tmpdir

if os.geteuid() != 0 or not glob.glob("/usr/lib/postgresql/*/bin/pgbench") or \
        not shutil.which("runuser"):
    skip("needs root, runuser and Debian's postgresql (pgbench)")
if sanitizer():
    skip(f"{sanitizer()} build: the sanitizer runtime preloaded into postgres stalls its shutdown")
d = tmpdir()
os.chmod(d, 0o755)
w = os.path.join(d, "pg")
p = subprocess.run([os.path.join(SRC, "tests", "block", "pgbench_run.sh"), "6"],
                   env={**os.environ, "D": w, "LATPROF": LATPROF}, capture_output=True,
                   text=True, timeout=240)
if p.returncode != 0 or not os.path.exists(f"{w}/pg.db"):
    fail(f"pgbench_run.sh exited {p.returncode}\n{p.stdout}\n{p.stderr}")
tick = os.sysconf("SC_CLK_TCK")
proc = {int(a): int(b) / tick for a, b in (ln.split() for ln in open(f"{w}/proc_cpu.txt"))}
before, after = (int(x) / tick for x in open(f"{w}/pm_cpu.txt").read().split())
s0, s1 = (int(x) for x in open(f"{w}/steal.txt").read().split())
# The hypervisor's stolen time: task-clock counts it as running, the
# kernel's utime+stime do not. No thread can have had more stolen from it
# than the whole machine over the run, so that is the most on-CPU may
# exceed the kernel's figure by beyond the 10%.
steal = (s1 - s0) / tick
print(f"steal over the run: {steal:.3f} s (all CPUs)")
check(len(proc) == 4, f"4 backends served pgbench ({sorted(proc)})")
doc = subprocess.run([LATPROF, "report", f"{w}/pg.db", "--breakdown", "--format", "json"],
                     capture_output=True, text=True, check=True).stdout
threads = {t["tid"]: t for t in json.loads(doc)["threads"]}
total_on = 0.0
for pid, cpu_s in sorted(proc.items()):
    t = threads.get(pid)
    check(t is not None, f"backend {pid} recorded")
    c, life = t["categories"], t["time_ns"]
    on, cpu = c["on_cpu"] / 1e9, (t["cpu_ns"] or 0) / 1e9
    total_on += cpu
    # The thread's task-clock (cpu_ns) is what /proc's utime+stime count;
    # /proc's figure is the last sample before the backend ended, a lower
    # bound: the sampler forks pgrep and awk every 0.1 s, and on a loaded
    # machine its last sample can come long before the end (0.080 s read
    # against 0.101 s counted). So at least that here, and the upper bound
    # from the exact total below (the postmaster's reaped children).
    check(0.9 * cpu_s <= cpu,
          f"backend {pid}: on-CPU {cpu:.3f} s (task-clock) at least 90% of its last /proc "
          f"utime+stime sample {cpu_s:.3f} s")
    # The on_cpu category is that CPU outside recorded calls; the kernel's
    # CPU inside them (copying WAL pages in write(), a send() waking
    # pgbench) is those calls' I/O time: 0.88-0.95 of it outside in CI.
    io = (c["file_io"] + c["socket_io"]) / 1e9
    check(on <= cpu * 1.001 and on + io >= 0.9 * cpu_s,
          f"backend {pid}: on-CPU outside recorded calls {on:.3f} s, at most its task-clock, "
          f"and with its file and socket I/O ({io:.3f} s) at least 90% of /proc's {cpu_s:.3f} s")
    # Of the time it was not kept off a CPU by others: on a loaded machine
    # the preempted share grows (the waits keep their length), and 0.3 of
    # the whole life no longer holds (1723 of 6004 ms at load 15).
    waiting, ran = c["socket_io"] + c["poll_wait"], life - c["preempted"]
    check(c["socket_io"] > 0 and c["file_io"] > 0 and waiting > 0.3 * ran,
          f"backend {pid}: waits on the client (socket I/O {c['socket_io'] / 1e6:.0f} ms + poll "
          f"{c['poll_wait'] / 1e6:.0f} ms of {ran / 1e6:.0f} ms not preempted) and the WAL "
          f"(file I/O {c['file_io'] / 1e6:.0f} ms)")
    check(c["cpu_or_preempted"] == 0 and c["on_cpu"] < 0.5 * life,
          f"backend {pid}: mostly off the CPU, and never called cpu ({c['on_cpu'] / 1e6:.0f} ms "
          f"on-CPU)")
kernel = after - before
check(0.9 * kernel <= total_on <= 1.1 * kernel + steal,
      f"the backends' on-CPU (task-clock) {total_on:.3f} s within 10% of the kernel's "
      f"{kernel:.3f} s "
      f"(postmaster cutime+cstime over the run, every backend reaped; + steal {steal:.3f} s)")
calls = {r[0] for r in db(f"{w}/pg.db").execute(
    "SELECT call || '/' || coalesce(fd_kind, '-') FROM blocking_calls")}
check({"epoll_wait/-", "fdatasync/file"} <= calls or {"epoll_wait/-", "fsync/file"} <= calls,
      f"the backends' calls include epoll_wait and a WAL sync ({sorted(calls)[:20]})")
