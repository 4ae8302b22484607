"""Debian's memcached (8 worker threads) under memcaslap (4 client threads,
32 connections) on loopback, server and load confined to one CPU (by
`latprof run -- taskset -c N memcached`: latprof's own affinity stays the
machine's, the rule must count the threads' own), then with 1 worker and 1
connection on every CPU. The first:
each of its threads against the kernel's own
accounting of it (/proc/PID/task/TID/schedstat, sampled every 20 ms until
just before SIGTERM). latprof's preempted time of each thread must be its
run_delay within 15% (plus 2% of its life: what the last sample and the
shutdown may add). A worker woken from epoll_wait that waits for a CPU
waited for a CPU, not for the network. Without NVTX requests the rules
still judge it: the 8 busy workers on their one CPU get the cpu-saturated
finding "on 1 CPU", and the kernel's own share of their time on a run
queue must be above the rule's threshold too (on 2 CPUs of a quiet machine
it was 2.6%: memcaslap could not keep 8 workers busy); 1 worker does not
get it, whatever the other load."""
import json
import os
import signal
import subprocess
import threading
import time

import lptest
from lptest import check, latprof, tmpdir, within
from reallib import (check_saturation, need_cmd, one_cpu, pidfile_pid, start_memcached, stop,
                     wait_port)
from lpaccount import check_account

need_cmd("memcached", "memcaslap")
if lptest.sanitizer():
    lptest.skip(f"{lptest.sanitizer()} build: instrumented code changes the CPU figures")
if len(os.sched_getaffinity(0)) < 2:
    lptest.skip("needs 2 CPUs: the 1-worker case must have fewer threads than CPUs")


def sample(pid, sched, done):
    while not done.is_set():
        try:
            for t in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                    cpu, queued, _ = f.read().split()
                sched[int(t)] = (int(cpu), int(queued))
        except (OSError, ValueError):
            pass  # a thread or the process ended between the listing and the read
        time.sleep(0.02)


def record(threads, clients, conns, cpu=None):
    """memcached with `threads` workers under memcaslap's `clients` threads
    and `conns` connections for 4 s, both on cpu when given: (database, its
    threads' schedstat)."""
    rec, port, pidfile, path = start_memcached(tmpdir(), threads=threads, cpus=cpu)
    sched, done = {}, threading.Event()
    try:
        check(wait_port(port, rec), f"memcached listens on 127.0.0.1:{port}")
        pid = pidfile_pid(pidfile)
        t = threading.Thread(target=sample, args=(pid, sched, done))
        t.start()
        pin = ["taskset", "-c", cpu] if cpu is not None else []
        load = subprocess.run([*pin, "memcaslap", "-s", f"127.0.0.1:{port}", "-t", "4s", "-T",
                               str(clients), "-c", str(conns)], capture_output=True, text=True,
                              timeout=40)
        check(load.returncode == 0 and "TPS" in load.stdout,
              f"memcaslap ran 4 s of load ({clients} threads, {conns} connections)")
        done.set()
        t.join()
        os.kill(pid, signal.SIGTERM)
    finally:
        done.set()
        out, err = stop(rec)
    check(rec.returncode == 0 and os.path.exists(path),
          f"recorded memcached ({err.strip()[-200:]})")
    return path, sched


path, sched = record(8, 4, 32, one_cpu())
doc = json.loads(latprof("report", path, "--breakdown", "--format", "json", check=0).stdout)
# memcached's threads: its main thread's tid is also that of the taskset
# image it replaced (a process of its own in the database, 0 ms long)
rows = [t for t in doc["threads"] if t["tid"] in sched and t["name"] != "taskset"]
check(len(rows) >= 9, f"{len(rows)} of memcached's threads have the kernel's figures")
busy = 0
for t in rows:
    cpu, queued = sched[t["tid"]]
    pre_ns = t["categories"]["preempted"]
    busy += queued > 0.05 * t["time_ns"]
    check(within(pre_ns, queued, rel=0.15, abs_=0.02 * t["time_ns"]),
          f"tid {t['tid']} ({t['name']}): preempted {pre_ns / 1e6:.1f} ms, schedstat run_delay "
          f"{queued / 1e6:.1f} ms (of {t['time_ns'] / 1e6:.0f} ms)")
check(busy >= 1, f"{busy} threads waited 5% of their life or more for a CPU: the comparison "
                 "is not only of zeros")
# the findings of the run as one account (tests/lib/lpaccount.py); without
# NVTX the rules judge the run per thread: 8 workers kept busy by 32
# connections outnumber their one CPU
fdoc = check_account(path)
check_saturation(fdoc, [(sched[t["tid"]][1], t["time_ns"]) for t in rows],
                 "8 workers, 32 connections on 1 CPU", cpus=1)

# one worker, one connection: fewer runnable threads than CPUs, no verdict of
# saturation whatever the machine's other load
path1, _ = record(1, 1, 1)
fdoc = check_account(path1)
r = next(r for r in fdoc["rules"] if r["id"] == "cpu-saturated")
check(r["state"] != "found", f"1 worker, 1 connection: no cpu-saturated finding ({r['state']}, "
                             f"{r['value']})")
