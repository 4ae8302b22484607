"""Rules at their thresholds, on synthetic databases with the real schema
(tests/lib/synth.py) whose request times are chosen so the measured value
lands exactly on the threshold of the rule table, then 1 us below it (the JSON
prints 6 significant digits). The
docs (docs/rules.md) say each rule fires at ">= threshold": at the value it
must fire, 1 us under it stay quiet, and the value reported must be the
exact one programmed.
- tail-outlier: 100 requests of 1 ms, 5 of 3 ms: p99 / p50 = 3.0;
- cold-start: the first request of 100 takes 3 ms, the rest 1 ms: 3.0;
- lock-contention: 50 waits of 100 us on one lock inside 100 ms of
  requests: 0.05; its example request has 100 us at stake;
- sleep-in-request and blocking-io-in-request: 50 calls of 100 us (nanosleep,
  read on a file) inside 100 ms of requests: 0.05, with the evidence, the
  summary's figures and the saving exactly; quiet ones report their value
  (0 without any call);
- gil-contention: the same 50 waits, of wait class gil: 0.05."""
import json
import os
import sqlite3

from lptest import check, latprof, tmpdir
from synth import make_db

MS = 1000000
N = 100
D = tmpdir()


def request(total):
    """Stage times of a request lasting exactly `total` ns (synth.py puts
    1 us before each stage and after the last: 5 us)."""
    return {"decode": 200000, "preprocess": 200000, "infer": total - 600000 - 5000,
            "postprocess": 200000}


def rules(path):
    p = latprof("report", path, "--bottlenecks", "--format", "json", check=0)
    doc = json.loads(p.stdout)
    return doc, {r["id"]: r for r in doc["rules"]}


def ids(doc):
    return [f["id"] for f in doc["findings"]]


def fires(doc, rid):
    return [f for f in doc["findings"] if f["id"] == rid]


def tail_db(slow):
    path = os.path.join(D, f"tail_{slow}.db")
    make_db(path, [request(slow if 50 <= i < 55 else MS) for i in range(N)])
    return path


def cold_db(first):
    path = os.path.join(D, f"cold_{first}.db")
    make_db(path, [request(first if i == 0 else MS) for i in range(N)])
    return path


def block_db(category, call, last):
    """50 blocking calls of 100 us, the last one `last` ns, inside the first
    50 requests' infer stage."""
    path = os.path.join(D, f"block_{category}_{last}.db")
    make_db(path, [request(MS) for _ in range(N)])
    c = sqlite3.connect(path)
    infer = c.execute("SELECT s.start_ns FROM ranges s JOIN strings n ON n.id = s.name_id "
                      "WHERE n.value = 'infer' ORDER BY s.start_ns LIMIT 50").fetchall()
    c.executemany("INSERT INTO blocking_calls (thread_id, start_ns, dur_ns, call, category, "
                  "result) VALUES (1, ?, ?, ?, ?, 0)",
                  [(s + 1000, last if i == 49 else 100000, call, category)
                   for i, (s,) in enumerate(infer)])
    c.commit()
    c.close()
    return path


def lock_db(last, cls=0):
    """50 waits of 100 us, the last one `last` ns, inside the first 50
    requests' infer stage; wait class cls (0 contention, 1 gil)."""
    path = os.path.join(D, f"lock_{last}_{cls}.db")
    make_db(path, [request(MS) for _ in range(N)])
    c = sqlite3.connect(path)
    c.execute("INSERT INTO locks (id, process_id, address, kind, name) VALUES "
              "(1, 1, 4096, 'mutex', 'model_lock')")
    infer = c.execute("SELECT s.start_ns FROM ranges s JOIN strings n ON n.id = s.name_id "
                      "WHERE n.value = 'infer' ORDER BY s.start_ns LIMIT 50").fetchall()
    for i, (s,) in enumerate(infer):
        c.execute("INSERT INTO lock_waits (id, lock_id, thread_id, start_ns, dur_ns, class) "
                  "VALUES (?, 1, 1, ?, ?, ?)", (i + 1, s + 1000, last if i == 49 else 100000, cls))
    c.commit()
    c.close()
    return path


# tail-outlier: p99 / p50 == 3.0 fires, 2.999999 does not.
doc, r = rules(tail_db(3 * MS))
st = r["tail-outlier"]
check(st["threshold"] == 3.0, f"tail-outlier's threshold is 3 ({st['threshold']})")
f = fires(doc, "tail-outlier")
check(len(f) == 1 and f[0]["value"] == 3.0,
      f"p99 = 3 ms, p50 = 1 ms: tail-outlier fires at exactly 3.0 "
      f"({[x['value'] for x in f]}, rule state {st.get('state')})")
doc, r = rules(tail_db(3 * MS - 1000))
check(not fires(doc, "tail-outlier") and r["tail-outlier"]["value"] == (3 * MS - 1000) / MS,
      f"p99 1 us under 3 ms: tail-outlier quiet, value {r['tail-outlier'].get('value')}")

# cold-start: the first request at 3.0 x p50 is cold, 1 ns less is not.
doc, r = rules(cold_db(3 * MS))
f = fires(doc, "cold-start")
check(len(f) == 1 and f[0]["value"] == 3.0,
      f"first request 3 ms, p50 1 ms: cold-start fires at exactly 3.0 "
      f"({[x['value'] for x in f]}, rule state {r['cold-start'].get('state')})")
if f:
    nums = {n["key"]: n["value"] for n in f[0]["numbers"]} if isinstance(f[0].get("numbers"),
                                                                          list) else {}
    if nums:
        check(nums.get("cold_requests") == 1, f"one cold request ({nums.get('cold_requests')})")
doc, r = rules(cold_db(3 * MS - 1000))
check(not fires(doc, "cold-start") and r["cold-start"]["value"] == (3 * MS - 1000) / MS,
      f"first request 1 us under 3 x p50: cold-start quiet, value {r['cold-start'].get('value')}")

# lock-contention: 5 ms of wait in 100 ms of requests is 0.05: fires.
doc, r = rules(lock_db(100000))
f = fires(doc, "lock-contention")
check(len(f) == 1 and f[0]["value"] == 0.05 and f[0]["subject"] == "model_lock",
      f"5 ms of waits on model_lock in 100 ms of requests: lock-contention fires at exactly "
      f"0.05 ({[(x['value'], x.get('subject')) for x in f]})")
ex = f[0]["example"] if f else None
check(ex and ex["dur_ns"] == MS and ex["at_stake_ns"] == 100000,
      f"its example: a 1 ms request with its 100 us wait at stake ({ex})")
below = lock_db(99000)
doc, r = rules(below)
check(not fires(doc, "lock-contention") and r["lock-contention"]["value"] == 4999000 / 1e8,
      f"1 us less wait: lock-contention quiet, value {r['lock-contention'].get('value')}")
quiet = [ln for ln in latprof("report", below, "--bottlenecks").stdout.splitlines()
         if ln.split()[:1] == ["lock-contention"]]
check(quiet and quiet[0].split()[1] == "4.999%",
      f"the quiet line prints 4.999%, not a value that reads as its 5.0% threshold ({quiet})")
ex = r["sleep-in-request"]
check(ex["state"] == "quiet" and ex["value"] == 0,
      f"no sleep call: sleep-in-request quiet with value 0 ({ex.get('state')}, {ex.get('value')})")

for rid, category, call in (("sleep-in-request", "sleep", "nanosleep"),
                            ("blocking-io-in-request", "file_io", "read")):
    doc, r = rules(block_db(category, call, 100000))
    f = fires(doc, rid)
    check(len(f) == 1 and f[0]["value"] == 0.05,
          f"50 {call} calls of 100 us in 100 ms of requests: {rid} fires at exactly 0.05 "
          f"({[x['value'] for x in f]}, {r[rid].get('state')})")
    ev = {e["key"]: e["value"] for e in f[0]["evidence"]}
    check(ev.get("calls") == 50 and ev.get("per_request") == 0.5 and
          ev.get("blocked_ns") == 5 * MS and ev.get("share") == 0.05,
          f"{rid}: evidence 50 calls, 0.5 per request, 5 ms, 0.05 ({ev})")
    check("5.0% of their time in 50 " in f[0]["summary"] and
          "(0.50 per request, 0.100 ms each on average)" in f[0]["summary"],
          f"{rid}: summary {f[0]['summary']!r}")
    check(f[0]["saving_ns"] == 5 * MS and f[0]["basis_ns"] == 5 * MS,
          f"{rid}: saving = basis = 5 ms ({f[0]['saving_ns']}, {f[0]['basis_ns']})")
    doc, r = rules(block_db(category, call, 99000))
    check(not fires(doc, rid) and r[rid]["value"] == 4999000 / 1e8,
          f"1 us less: {rid} quiet, value {r[rid].get('value')}")

# gil-contention: the same waits, class gil (CPython's take_gil).
doc, r = rules(lock_db(100000, cls=1))
f = fires(doc, "gil-contention")
check(len(f) == 1 and f[0]["value"] == 0.05 and not fires(doc, "lock-contention"),
      f"50 GIL waits of 100 us in 100 ms of requests: gil-contention fires at exactly 0.05, "
      f"lock-contention does not ({ids(doc)}, {r['gil-contention'].get('state')})")
check(f[0]["saving_ns"] == f[0]["basis_ns"] == 5 * MS,
      f"gil-contention: saving = basis = 5 ms ({f[0]['saving_ns']}, {f[0]['basis_ns']})")
doc, r = rules(lock_db(99000, cls=1))
check(not fires(doc, "gil-contention") and r["gil-contention"]["value"] == 4999000 / 1e8,
      f"1 us less: gil-contention quiet, value {r['gil-contention'].get('value')}")
