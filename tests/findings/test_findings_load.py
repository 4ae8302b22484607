"""Findings that know whose load it is and what a thread is for, on real
runs of fnd_cpu, each checked as one account (tests/lib/lpaccount.py):

- a thread per request (--spawn, 200 requests, every 10th one 6x slower
  from request 5 on): no thread has a steady state, so its one request is
  not a first request to warm up: cold-start stays quiet (before: "the
  first 24 request(s) of their threads took up to 31.4x the median");
- a helper thread that burns 60 ms of CPU once in a 1 s run is no spinning
  pool (before, on the loaded build machine: 14 ms against a request
  thread's 26 ms, ratio 0.53, fired);
  the same helper burning most of the run is one, and the cause of the
  requests' time off the CPU: named there, before cpu-starved;
- requests waiting for a CPU because of other programs (4 spinning shells
  on the app's 2 cores, the app's one busy thread): cpu-starved (or
  cpu-interference, when it holds the same time) says the load came from
  other processes and does not advise shrinking pools
  (before: "Run no more busy threads than the cores ...");
- the app's own 8 busy threads on 2 cores: the verdict is saturation by its
  own threads (cpu-saturated, or cpu-starved with the own-load fix)."""
import os
import subprocess

from fndlib import BUILD, binary, check, ev, finding, findings, fired, record, rule, tmpdir
from lptest import sanitizer, skip

d = tmpdir()
fnd_cpu = binary(os.path.join(BUILD, "tests", "bin", "fnd_cpu"), "fnd_cpu (needs NVTX headers)")
TWO = ["taskset", "-c", "0,1"]
if (os.cpu_count() or 1) < 2 or subprocess.run([*TWO, "true"]).returncode:
    skip("needs 2 CPUs that taskset can pin to")


def run(name, *cmd):
    db = os.path.join(d, name + ".db")
    record(db, *cmd)
    return findings(db)


# cold-start: a thread per request
doc = run("spawn", fnd_cpu, "--spawn", "--requests", "200", "--work-us", "1000",
          "--slow-every", "10", "--slow-us", "5000")
r = rule(doc, "cold-start")
f = next((x for x in doc["findings"] if x["id"] == "cold-start"), None)
# the process's own first request may be cold (its first NVTX and log
# set-up): then it alone, never the 20 slow ones
check((r["state"] == "quiet" and r["value"] < 3) or
      (f is not None and ev(f, "cold_requests") == 1),
      f"a thread per request, 20 slow ones none the process's first: cold-start quiet, or "
      f"only the process's first request ({r['state']}, {r['value']}, "
      f"{f and ev(f, 'cold_requests')})")
# the same slow path on one thread is no cold start either (leading requests only)
doc = run("onethread", fnd_cpu, "--clients", "1", "--requests", "200", "--work-us", "1000",
          "--slow-every", "10", "--slow-us", "5000")
check(rule(doc, "cold-start")["state"] == "quiet",
      f"one thread, the same slow path: cold-start quiet ({rule(doc, 'cold-start')['value']})")
# a cold start still is one in a thread-per-request server: the process's first
doc = run("spawncold", fnd_cpu, "--spawn", "--requests", "100", "--work-us", "1000",
          "--cold", "1", "--cold-us", "20000")
f = fired(doc, "cold-start")
check(f is not None and ev(f, "cold_requests") >= 1 and ev(f, "short_threads") >= 90,
      f"a thread per request with a 20 ms lazy init in the first: cold-start names it "
      f"({f and f['summary']}, {f and f['evidence']})")

# spinning-pool: a helper is not a pool
SERVE = ["--clients", "1", "--requests", "100", "--work-us", "200", "--sleep-us", "10000"]
doc = run("helper", fnd_cpu, *SERVE, "--helper-ms", "60")
r = rule(doc, "spinning-pool")
check(r["state"] == "quiet" and r["value"] == 0,
      f"a helper with at most 60 ms of CPU in a 1 s run is not a spinning pool "
      f"({r['state']}, {r['value']})")
# on one core, so the helper takes its CPU from the requests whatever else
# the machine runs (on an idle 2-core machine it would have its own core)
doc = run("spinner", "taskset", "-c", "0", fnd_cpu, *SERVE, "--helper-ms", "1000")
f = finding(doc, "spinning-pool")
check(f["value"] >= 0.5 and f["category"] == "preempted" and f["counted_in"] is None,
      f"a helper busy through the run is named, the cause of the requests' preempted time "
      f"({f['summary']}, saving {f['saving_ns']})")
st = rule(doc, "cpu-starved")
starved = next((x for x in doc["findings"] if x["id"] == "cpu-starved"), None)
check(st["state"] != "found" or starved["counted_in"] == "spinning-pool" or
      starved["saving_ns"] + f["saving_ns"] <= doc["scope_ns"],
      f"cpu-starved, a symptom, comes after it ({st}, {starved and starved['counted_in']})")

if sanitizer():
    skip(f"{sanitizer()} build: the load cases compare CPU shares")


def hogged(name, n, *cmd):
    """Records cmd on CPUs 0,1 with n spinning shells pinned there."""
    hogs = [subprocess.Popen([*TWO, "sh", "-c", "while :; do :; done"]) for _ in range(n)]
    try:
        return run(name, *TWO, *cmd)
    finally:
        for h in hogs:
            h.kill()
            h.wait()


# the load of other programs
doc = hogged("others", 4, fnd_cpu, "--clients", "1", "--requests", "200", "--work-us", "2000")
# cpu-starved, or cpu-interference holding the same preempted time (named
# once; both judge whose load it is)
f = fired(doc, "cpu-starved")
if f is None and rule(doc, "cpu-starved")["counted_in"] == "cpu-interference":
    f = finding(doc, "cpu-interference")
check(f is not None, f"one busy thread beside 4 spinning shells on its 2 cores: cpu-starved "
                     f"or cpu-interference ({rule(doc, 'cpu-starved')})")
check(ev(f, "runnable_threads") <= 2 and "the load came from other processes" in f["summary"]
      and "will not help" in f["fix"] and "Run no more busy threads" not in f["fix"],
      f"it tells other processes' load from the app's: {f['summary']} / fix: {f['fix']}")
check(rule(doc, "cpu-saturated")["state"] != "found",
      f"and cpu-saturated is not found: the app's threads do not outnumber its cores "
      f"({rule(doc, 'cpu-saturated')})")

# the app's own load
doc = run("own", *TWO, fnd_cpu, "--clients", "8", "--requests", "30", "--work-us", "10000")
sat = fired(doc, "cpu-saturated")
st = rule(doc, "cpu-starved")
starved = next((x for x in doc["findings"] if x["id"] == "cpu-starved"), None)
check(sat is not None and ev(sat, "runnable_threads") > 2,
      f"8 busy threads on 2 cores: cpu-saturated ({sat and sat['summary']})")
check(starved is None and st["counted_in"] == "cpu-saturated" or starved is not None and
      "outnumber" in starved["summary"] and "will not help" not in starved["fix"],
      f"cpu-starved points to cpu-saturated or advises fewer threads ({st}, "
      f"{starved and starved['summary']})")
