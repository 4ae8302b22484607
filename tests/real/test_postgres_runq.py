"""PostgreSQL under pgbench over a Unix socket: each
backend (one process per client) against the kernel's own accounting of it
(/proc/PID/schedstat, sampled every 20 ms while it lives: time on a CPU,
time on a run queue). latprof's preempted time of each backend that lived
a second or more must be its run_delay within 15%, plus what it may have
queued between the last sample and its end (the thread's end in the
database; on a loaded machine the sampler lags far behind its 20 ms).
Without NVTX ranges the rules still judge the run: 12 select-only clients
with server and pgbench confined to one CPU (12 backends, each runnable
whenever its next query is in) get the cpu-saturated finding "on 1 CPU",
and the kernel's own share of their time on a run queue must be above the
rule's threshold too; 1 client on 2 CPUs does not. TPC-B's 12 clients on 2
CPUs were not saturated on a quiet machine (the backends wait on the 2
branch rows' locks: the kernel's share 6.7%), whatever other load decided."""
import json
import os
import signal
import subprocess
import threading
import time

import lptest
from lptest import check, db, latprof, tmpdir
from reallib import check_saturation, findings, one_cpu, postgres_cluster, stop

if lptest.sanitizer():
    lptest.skip(f"{lptest.sanitizer()} build: instrumented code changes the CPU figures")
if (os.cpu_count() or 1) < 2 or subprocess.run(["taskset", "-c", "0,1", "true"]).returncode:
    lptest.skip("needs 2 CPUs that taskset can pin to")
d = tmpdir()
B, pre, data = postgres_cluster(d)
pg = ["-h", d, "-p", "5434", "-U", "postgres"]


def sample(postmaster, sched, done):
    """Every 20 ms: the schedstat of each child of the postmaster."""
    while not done.is_set():
        try:
            with open(f"/proc/{postmaster}/task/{postmaster}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        for k in kids:
            try:
                with open(f"/proc/{k}/schedstat") as f:
                    cpu, queued, _ = f.read().split()
                sched[k] = (int(cpu), int(queued), time.monotonic_ns())
            except (OSError, ValueError):
                pass  # ended between the listing and the read
        time.sleep(0.02)


def record(clients, cpus, select_only):
    """pgbench's clients for 4 s against the recorded server, both confined
    to cpus (taskset -c)."""
    path = os.path.join(d, f"pg{clients}.db")
    env = dict(os.environ, TMPDIR=d)
    rec = subprocess.Popen([*pre, "taskset", "-c", cpus, lptest.LATPROF, "run", "-o", path, "--",
                            f"{B}/postgres", "-D", data, "-k", d, "-p", "5434", "-c",
                            "listen_addresses=", "-c", "fsync=off"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    sched, done = {}, threading.Event()
    try:
        for _ in range(225):
            if subprocess.run([f"{B}/pg_isready", *pg[:4]], capture_output=True).returncode == 0:
                break
            if rec.poll() is not None:
                break
            time.sleep(0.2)
        with open(os.path.join(data, "postmaster.pid")) as f:
            postmaster = int(f.readline())
        if not os.path.exists(os.path.join(d, "pgbench-ready")):
            r = subprocess.run([f"{B}/pgbench", "-i", "-s", "2", "-q", *pg, "postgres"],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, f"pgbench -i ({r.stderr.strip()[-200:]})")
            open(os.path.join(d, "pgbench-ready"), "w").close()
        t = threading.Thread(target=sample, args=(postmaster, sched, done))
        t.start()
        r = subprocess.run(["taskset", "-c", cpus, f"{B}/pgbench", *(["-S"] if select_only else []),
                            "-c", str(clients), "-j", str(min(clients, 2)), "-T", "4", *pg,
                            "postgres"],
                           capture_output=True, text=True, timeout=60)
        done.set()
        t.join()
        check(r.returncode == 0 and "tps" in r.stdout, f"pgbench: {clients} clients for 4 s")
        os.kill(postmaster, signal.SIGINT)  # fast shutdown
    finally:
        done.set()
        out, err = stop(rec, timeout=40)
    check(rec.returncode == 0 and os.path.exists(path), f"recorded postgres ({err.strip()[-200:]})")
    return path, sched


for clients, cpus, select_only in ((12, one_cpu(), True), (1, "0,1", False)):
    path, sched = record(clients, cpus, select_only)
    doc = json.loads(latprof("report", path, "--breakdown", "--format", "json", check=0).stdout)
    rows = [t for t in doc["threads"] if t["tid"] in sched and t["time_ns"] >= 1e9]
    check(len(rows) >= clients, f"{clients} clients: {len(rows)} backends of 1 s or more, each "
                                f"with the kernel's figures")
    # Both clocks are CLOCK_MONOTONIC: the sample's time.monotonic_ns() and
    # the recorded end of the thread.
    ends = dict(db(path).execute("SELECT tid, end_ns FROM threads").fetchall())
    for t in rows:
        cpu, queued, at = sched[t["tid"]]
        pre_ns = t["categories"]["preempted"]
        lag = max(0, (ends.get(t["tid"]) or at) - at)
        slack = 0.02 * t["time_ns"] + 20e6
        check(0.85 * queued - slack <= pre_ns <= 1.15 * queued + slack + lag,
              f"{clients} clients, pid {t['tid']}: preempted {pre_ns / 1e6:.1f} ms, schedstat "
              f"run_delay {queued / 1e6:.1f} ms sampled {lag / 1e6:.0f} ms before its end "
              f"(of {t['time_ns'] / 1e6:.0f} ms)")
    fdoc = findings(path)
    sat = next((f for f in fdoc["findings"] if f["id"] == "cpu-saturated"), None)
    if clients > 2:
        every = [t for t in doc["threads"] if t["tid"] in sched]
        check_saturation(fdoc, [(sched[t["tid"]][1], t["time_ns"]) for t in every],
                         f"{clients} select-only clients on 1 CPU", cpus=1)
    else:
        r = next(r for r in fdoc["rules"] if r["id"] == "cpu-saturated")
        check(sat is None, f"1 client: no cpu-saturated finding ({r['state']}, {r.get('value')})")
