"""CPU rules on real runs: lock_server (global model_lock vs --per-thread),
infer_server (locked tail, oversubscribed threads), fnd_cpu (queue, cold
start), counters_demo. Every report's savings stay within their basis."""
import os
import sqlite3

from fndlib import (BUILD, binary, check, ev, finding, findings, fired, ids, record, rule,
                    sample, tmpdir, wait_less_runq)
from lptest import realtime

d = tmpdir()
lock_server = binary(sample("lock_server"), "lock_server")
infer = binary(sample("infer_server"), "infer_server")
fnd_cpu = binary(os.path.join(BUILD, "tests", "bin", "fnd_cpu"), "fnd_cpu (needs NVTX headers)")


def run(name, *cmd):
    db = os.path.join(d, name + ".db")
    record(db, *cmd)
    return findings(db)


# lock-contention: the acceptance case
# Long enough that the lock, not thread start-up, decides the share (a 60 ms
# run with the defaults measured 9-18% on this machine, close to the 5% bar).
doc = run("lock", lock_server, "--threads", "4", "--requests", "1000", "--work-us", "50",
          "--locked-us", "100")
# 4 threads on 2 cores: when other load keeps them waiting for a CPU
# (61% of their time at a load average of 88, 3.3 runnable on average),
# cpu-saturated is found too and may rank first by its saving; of the rest,
# the lock comes first.
other = [x for x in doc["findings"] if x["id"] != "cpu-saturated"]
check(other and other[0]["id"] == "lock-contention",
      f"global lock: lock-contention is the top finding besides cpu-saturated ({ids(doc)})")
sat = finding(doc, "cpu-saturated") if "cpu-saturated" in ids(doc) else None
check(sat is None or ev(sat, "runnable_threads") > ev(sat, "cpus"),
      f"cpu-saturated only with more runnable threads than cores ({sat and sat['summary']})")
f = other[0]
check(f["subject"] == "model_lock", f"it names the lock: {f['subject']}")
check(any("lock_server.c" in s["what"] for s in f["sites"]["items"]),
      f"and its call site: {[s['what'] for s in f['sites']['items']]}")
# its saving: the wait less the part spent runnable after the lock was free
# (the breakdown's preempted, which cpu-saturated counts when it is found)
n, wait, less = wait_less_runq(os.path.join(d, "lock.db"), "model_lock")
check(ev(f, "waits") > 0 and ev(f, "wait_ns") == wait and f["saving_ns"] == less,
      f"wait {ev(f, 'wait_ns')} = the {n} recorded waits {wait}; saving {f['saving_ns']} = "
      f"their time less their run-queue part {less}")
doc = run("perthread", lock_server, "--threads", "4", "--requests", "1000", "--work-us", "50",
          "--locked-us", "100", "--per-thread")
check("lock-contention" not in ids(doc), f"--per-thread: no lock-contention ({ids(doc)})")

# queue-wait: 4 clients, 1 work slot -> 3 of 4 wait before "work" starts.
# At real-time priority: a woken waiter's wait for a CPU counts as
# preempted, not queued, and a neighbour's load made that most of it (29%
# queued beside other builds).
doc = run("queue", *realtime(), fnd_cpu, "--clients", "4", "--slots", "1", "--requests", "30",
          "--work-us", "2000")
f = finding(doc, "queue-wait")
check(f["value"] > 0.3, f"1 slot for 4 clients: queued {f['value']:.0%} of request time")
check(any("client" in s["what"] for s in f["sites"]["items"]), f"wait site: {f['sites']}")
doc = run("noqueue", fnd_cpu, "--clients", "2", "--slots", "2", "--requests", "30",
          "--work-us", "2000")
check(rule(doc, "queue-wait")["state"] == "quiet", f"a slot per client: queue-wait quiet ({rule(doc, 'queue-wait')['value']})")

# cold-start: 3 lazy initializations of 20 ms vs 2 ms requests
doc = run("cold", fnd_cpu, "--clients", "1", "--requests", "60", "--work-us", "2000",
          "--cold", "3", "--cold-us", "20000")
f = finding(doc, "cold-start")
# >= 3: a preemption on this shared machine may stretch the 4th as well
check(3 <= ev(f, "cold_requests") <= 5, f"cold-start: the 3 first requests ({ev(f, 'cold_requests')})")
check(ev(f, "cold_ns") >= 3 * 20e6, "their time includes the three 20 ms initializations")
doc = run("warm", fnd_cpu, "--clients", "1", "--requests", "60", "--work-us", "2000",
          "--cold", "3", "--cold-us", "20000", "--warm")
check(rule(doc, "cold-start")["state"] == "quiet", f"--warm: cold-start quiet ({rule(doc, 'cold-start')['value']})")

# tail-outlier: 5% of requests wait up to 20 ms on infer_lock in "infer"
COST = ["--decode-us", "200", "--pre-us", "200", "--infer-us", "600", "--post-us", "200"]
# Both at real-time priority where allowed: a request preempted on a loaded
# machine is a tail of the neighbours' making (CI once measured 4.6x p99/p50
# on the run without a locked path).
doc = run("tail", *realtime(), infer, "--requests", "400", "--threads", "1", *COST, "--locked-frac", "0.05",
          "--locked-stage", "infer", "--locked-us", "30000")
# One account: the tail's growth is infer_lock's wait, which lock-contention
# counts too (it fires for a lock that explains the p99 tail, whatever its
# share); the time is named once there, and tail-outlier points to it.
f = fired(doc, "tail-outlier")
if f is None:
    lk = finding(doc, "lock-contention")
    check(rule(doc, "tail-outlier")["counted_in"] == "lock-contention"
          and lk["subject"] == "infer_lock" and "dominates the p99 tail" in lk["summary"],
          f"tail-outlier points to lock-contention on infer_lock, which names the tail: "
          f"{lk['summary']}")
else:
    check(f["subject"] == "infer", f"tail-outlier names the stage: {f['subject']} ({f['summary']})")
    check("lock wait" in f["summary"] and "infer_lock" in f["summary"],
          f"and the lock: {f['summary']}")
doc = run("notail", *realtime(), infer, "--requests", "400", "--threads", "1", "--infer-us", "5000")
check(rule(doc, "tail-outlier")["state"] == "quiet", f"no locked path: tail-outlier quiet ({rule(doc, 'tail-outlier')['value']})")

# cpu-interference: 4 busy workers per core with 25 ms requests (about 3
# switches per request; 3 per core and 11 ms measured 1.9-2.0, at the bar),
# vs 1 short one
doc = run("oversub", infer, "--requests", "60", "--threads", str(4 * (os.cpu_count() or 2)),
          "--infer-us", "20000")
r = rule(doc, "cpu-interference")
if r["state"] == "not_evaluated":
    print("SKIP-PART: cpu-interference:", r["why"])
else:
    # its off-CPU time is the preempted time cpu-saturated or cpu-starved
    # counts when either is larger: then it points there (one account)
    f = fired(doc, "cpu-interference")
    check(ev(f, "context_switches_per_request") >= 2 if f else
          r["value"] >= 2 and r["counted_in"] in ("cpu-saturated", "cpu-starved"),
          f"oversubscribed: switched out per request ({r['value']}, {r['counted_in']})")
    # Lock waits outside the requests explain none of their switches: 3000 of
    # them on two background threads before serving leave the value as it is
    # without them (counted over the whole run, they zeroed it).
    oversub = ("--clients", str(4 * (os.cpu_count() or 2)), "--requests", "15",
               "--work-us", "20000")
    v0 = rule(run("oversub-fnd", fnd_cpu, *oversub), "cpu-interference")["value"]
    v1 = rule(run("oversub-bg", fnd_cpu, *oversub, "--background-waits", "3000"),
              "cpu-interference")["value"]
    bg = sqlite3.connect(os.path.join(d, "oversub-bg.db")).execute(
        "SELECT count(*) FROM lock_waits").fetchone()[0]
    # Two runs, each at the machine's load of its moment (5.42 and 1.98
    # beside other builds): not compared with each other. The bug zeroed
    # the value; the oversubscription alone keeps both well above 0.5.
    check(bg >= 1000 and v0 > 0.5 and v1 > 0.5,
          f"{bg} lock waits outside requests: {v1:.2f} unexplained switches per request, "
          f"{v0:.2f} without them")
    doc = run("short", fnd_cpu, "--clients", "1", "--requests", "300", "--work-us", "50")
    check(rule(doc, "cpu-interference")["state"] == "quiet",
          f"one short-request thread: cpu-interference quiet ({rule(doc, 'cpu-interference')['value']})")

# counters_demo and the C++ server: bounds only (checked by findings())
cd = sample("counters_demo")
if os.path.exists(cd):
    run("counters", cd, "20")
if os.path.exists(sample("infer_server_cpp")):
    run("cpp", sample("infer_server_cpp"), "--requests", "100")
