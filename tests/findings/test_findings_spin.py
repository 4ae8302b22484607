"""spinning-pool without NVTX requests (tests/findings/fnd_spin: a main
thread serving a socketpair in poll, a client sending 300 messages 2 ms
apart, and 2 pool threads that never get work), the spin case on CPU 0 (a
pool only delays the serving thread when they share cores), passive on 0,1:

- spin: the pool threads busy-poll a flag: spinning-pool names one of them
  ("A thread pool spins beside the serving threads"), with its CPU against
  the serving thread's, and holds that time in the account (category
  preempted: cpu-saturated, a symptom, points to it when found too);
- passive: the pool threads sleep on a condition variable: quiet, value 0.
Before, without requests, spinning-pool was not evaluated ("no NVTX request
ranges")."""
import os
import subprocess

from fndlib import BUILD, binary, check, finding, findings, rule, tmpdir
from lptest import LATPROF, fail, sanitizer, skip

d = tmpdir()
prog = binary(os.path.join(BUILD, "tests", "bin", "fnd_spin"), "fnd_spin")
TWO = ["taskset", "-c", "0,1"]
# the spin case on one core: the pool takes its CPU from the serving thread
# whatever else the machine runs (with a core each it delays nothing)
ONE = ["taskset", "-c", "0"]
if (os.cpu_count() or 1) < 2 or subprocess.run([*TWO, "true"]).returncode:
    skip("needs 2 CPUs that taskset can pin to")
if sanitizer():
    skip(f"{sanitizer()} build: the spinning threads' CPU shares change")


def run(mode):
    db = os.path.join(d, mode + ".db")
    cpus = ONE if mode == "spin" else TWO
    p = subprocess.run([*cpus, LATPROF, "run", "-o", db, "--", prog, mode, "2", "300", "2000"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode:
        fail(f"fnd_spin {mode} exited {p.returncode}: {p.stderr[-500:]}")
    return findings(db)


doc = run("spin")
check(doc["scope"] == "threads", "no NVTX requests: the rules judge the run's threads")
f = finding(doc, "spinning-pool")
ev = {n["key"]: n["value"] for n in f["evidence"]}
check(f["title"] == "A thread pool spins beside the serving threads" and f["value"] >= 0.5
      and (f["subject"] or "").startswith("thread ") and ev["pool_threads"] >= 2
      and ev["request_threads"] >= 1 and f["category"] == "preempted"
      and f["counted_in"] is None,
      f"spin: spinning-pool names a pool thread: {f['subject']}: {f['summary']} ({ev})")
sat = next((x for x in doc["findings"] if x["id"] == "cpu-saturated"), None)
check(sat is None or sat["counted_in"] == "spinning-pool",
      f"cpu-saturated, a symptom here, points to it ({sat and sat['counted_in']})")
doc = run("passive")
r = rule(doc, "spinning-pool")
check(r["state"] == "quiet" and r["value"] == 0,
      f"passive: the pool sleeps, spinning-pool quiet ({r['state']}, {r['value']})")
