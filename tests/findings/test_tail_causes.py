"""Tail attribution with two causes, on a synthetic database with the real
schema (tests/lib/synth.py): 10% of 400 requests take a lock in stage
infer and hold it 4x the stage's time, so their infer grows by 2 ms of
lock wait on infer_lock plus 2 ms without any wait (the holder's CPU).
tail-outlier must name both (each >= 20% of the growth) with the breakdown's
category labels and amounts (its tail section's numbers), the lock with its
name, and no output (findings, breakdown; JSON and CSV) may hold a
negative time. With CPU counters that show the stage on the CPU throughout,
the causes are the same to the nanosecond (nothing descheduled)."""
import csv
import io
import json
import os
import random
import sqlite3

from lptest import check, latprof, tmpdir
from lpaccount import check_account
from synth import STAGES, make_db

rng = random.Random(7)
base = {"decode": 0.2e6, "preprocess": 0.2e6, "infer": 1.0e6, "postprocess": 0.2e6}
reqs, locked = [], set()
for i in range(400):
    r = {st: base[st] * rng.uniform(0.95, 1.05) for st in STAGES}
    if i % 10 == 3:
        r["infer"] += 4.0e6
        locked.add(i)
    reqs.append(r)
path = os.path.join(tmpdir(), "tail.db")
make_db(path, reqs)
c = sqlite3.connect(path)
c.execute("INSERT INTO locks (id, process_id, address, kind, name) VALUES (1, 1, 4096, 'mutex', "
          "'infer_lock')")
infer = c.execute("SELECT s.start_ns, s.end_ns FROM ranges s JOIN strings n ON n.id = s.name_id "
                  "WHERE n.value = 'infer' ORDER BY s.start_ns").fetchall()
for i, (s, e) in enumerate(infer):
    if i in locked:  # 2 ms of the 4 extra: queued behind the holder
        c.execute("INSERT INTO lock_waits (id, lock_id, thread_id, start_ns, dur_ns) VALUES "
                  "(?, 1, 1, ?, ?)", (i + 1, s + 100000, 2000000))
c.commit()
c.close()

doc = json.loads(latprof("report", path, "--bottlenecks", "--format", "json", check=0).stdout)
tail = next((f for f in doc["findings"] if f["id"] == "tail-outlier"), None)
check(tail is not None, f"tail-outlier fires ({[f['id'] for f in doc['findings']]})")
what = [s["what"] for s in tail["sites"]["items"]]
check(what[0] == "infer", f"the tail stage is infer ({what})")
causes = {w.split(" on ")[0]: s for w, s in zip(what, tail["sites"]["items"])}
REST = "cpu or preempted (not counted)"  # the breakdown's rest without task-clock
check("lock wait" in causes and REST in causes, f"two causes listed: {what[1:]}")
check("lock wait on infer_lock" in what, "the lock is named")
n = tail["sites"]["items"][1]["count"]
for k in ("lock wait", REST):
    g = causes[k]["ns"] / n
    check(1.7e6 <= g <= 2.3e6, f"{k} grows {g / 1e6:.2f} ms per tail request (2 ms programmed)")
check("lock wait on infer_lock +" in tail["summary"] and f"{REST} +" in tail["summary"],
      f"summary: {tail['summary']}")
# the first cause is the breakdown's tail category, with its amount
btail = json.loads(latprof("report", path, "--breakdown", "--format", "json",
                           check=0).stdout)["tail"]
first = tail["sites"]["items"][1]
bgrow = btail["category"]["tail_mean_ns"] - btail["category"]["median_mean_ns"]
check(abs(first["ns"] / n - bgrow) <= 1,
      f"first cause {first['what']} +{first['ns'] / n:.0f} ns per tail request = the "
      f"breakdown's tail {btail['category']['name']} +{bgrow:.0f} ns")


def negatives(x, path=""):
    if isinstance(x, dict):
        return [n for k, v in x.items() for n in negatives(v, f"{path}.{k}")]
    if isinstance(x, list):
        return [n for i, v in enumerate(x) for n in negatives(v, f"{path}[{i}]")]
    if isinstance(x, (int, float)) and not isinstance(x, bool) and x < 0 and \
            (path.endswith("_ns") or path.endswith(".ns")):
        return [(path, x)]
    return []


bd = json.loads(latprof("report", path, "--breakdown", "--format", "json", check=0).stdout)
bad = negatives(doc) + negatives(bd)
check(not bad, f"no negative time in the JSON ({bad[:3]})")
rows = list(csv.DictReader(io.StringIO(latprof("report", path, "--bottlenecks", "--format",
                                               "csv", check=0).stdout, newline="")))
neg = [(r["id"], k, v) for r in rows for k, v in r.items()
       if k and k.endswith("_ns") and v and v.lstrip().startswith("-")]
check(not neg, f"no negative time in the CSV ({neg[:3]})")

# The same tail with the 2 ms spent in pthread_join instead of the lock (a C
# program's join, recorded as a blocking call): the cause is a join wait
# (wait class join), not "other wait" and not a lock.
jpath = os.path.join(tmpdir(), "tail_join.db")
c = sqlite3.connect(path)
c.execute("VACUUM INTO ?", (jpath,))
c.close()
c = sqlite3.connect(jpath)
c.execute("INSERT INTO blocking_calls (thread_id, start_ns, dur_ns, call, category, result) "
          "SELECT thread_id, start_ns, dur_ns, 'pthread_join', 'other_block', 0 FROM lock_waits")
c.execute("DELETE FROM lock_waits")
c.commit()
c.close()
jdoc = json.loads(latprof("report", jpath, "--bottlenecks", "--format", "json", check=0).stdout)
jt = next((f for f in jdoc["findings"] if f["id"] == "tail-outlier"), None)
jwhat = [s["what"] for s in jt["sites"]["items"]] if jt else []
check("join wait" in jwhat and not any(w.startswith(("lock wait", "other wait")) for w in jwhat),
      f"the join is named as a join wait: {jwhat[1:]}")
if "join wait" in jwhat:
    s = jt["sites"]["items"][jwhat.index("join wait")]
    g = s["ns"] / jt["sites"]["items"][1]["count"]
    check(1.7e6 <= g <= 2.3e6, f"join wait grows {g / 1e6:.2f} ms per tail request (2 ms programmed)")

# The same tail with CPU counters that show every range on the CPU the whole
# time (task-clock = wall: the lock waits spin): nothing was descheduled, so
# the causes are the same to the nanosecond as without counters.
cpath = os.path.join(tmpdir(), "tail_cnt.db")
c = sqlite3.connect(path)
c.execute("VACUUM INTO ?", (cpath,))
c.close()
c = sqlite3.connect(cpath)
with open(os.path.join(os.environ.get("LP_SRC", "."), "schemas", "counters.sql")) as f:
    c.executescript(f.read())
c.execute("INSERT INTO counter_events (id, process_id, idx, name, available) VALUES "
          "(1, 1, 0, 'task-clock', 1)")
c.execute("INSERT INTO range_counters (range_id, event_id, delta, scaled) "
          "SELECT id, 1, end_ns - start_ns, 0 FROM ranges")
c.commit()
c.close()
cbd = json.loads(latprof("report", cpath, "--breakdown", "--format", "json", check=0).stdout)
cnt = cbd["tail"]["counters"] if isinstance(cbd.get("tail"), dict) else None
check(cnt is not None and cnt["off_cpu_tail_ns"] == 0 and cnt["off_cpu_median_ns"] == 0 and
      not cnt["descheduled"], f"the tail stage's counters are read: on CPU throughout ({cnt})")
cdoc = json.loads(latprof("report", cpath, "--bottlenecks", "--format", "json", check=0).stdout)
ct = next((f for f in cdoc["findings"] if f["id"] == "tail-outlier"), None)


def site_list(f):
    return [(s["what"].replace(REST, "on-CPU"), s["count"], s["ns"])
            for s in f["sites"]["items"]] if f else None


check(ct is not None and site_list(ct) == site_list(tail),
      f"with counters, the same causes to the ns: {site_list(ct)} vs {site_list(tail)}")

# Each wait class named the same in the breakdown as in the tail: the join
# database's pthread_join calls are join wait (2 ms in each locked request),
# none of it other wait; its timelines draw them as join waits.
jbd = json.loads(latprof("report", jpath, "--breakdown", "--format", "json", check=0).stdout)
jcats = jbd["request"]["categories"]
check(jcats["join_wait"] == 2000000 * len(locked) and jcats["other_block"] == 0,
      f"breakdown: join wait {jcats['join_wait']} ns = {len(locked)} joins of 2 ms, "
      f"other wait {jcats['other_block']} ns")
# The same waits as condition waits of class idle (a worker waiting for
# work): idle wait, not cond wait, in the breakdown and its CSV (the new
# columns last, after the older ones).
ipath = os.path.join(tmpdir(), "tail_idle.db")
c = sqlite3.connect(path)
c.execute("VACUUM INTO ?", (ipath,))
c.close()
c = sqlite3.connect(ipath)
c.execute("INSERT INTO cond_waits (thread_id, cond_addr, start_ns, dur_ns, class) "
          "SELECT thread_id, 8192, start_ns, dur_ns, 2 FROM lock_waits")
c.execute("DELETE FROM lock_waits")
c.commit()
c.close()
ibd = json.loads(latprof("report", ipath, "--breakdown", "--format", "json", check=0).stdout)
icats = ibd["request"]["categories"]
check(icats["idle_wait"] == 2000000 * len(locked) and icats["cond_wait"] == 0,
      f"breakdown: idle wait {icats['idle_wait']} ns = {len(locked)} waits of 2 ms, "
      f"cond wait {icats['cond_wait']} ns")
hdr = latprof("report", ipath, "--breakdown", "--format", "csv", check=0).stdout.splitlines()[0]
cols = hdr.split(",")
check(cols[-2:] == ["idle_wait_ns", "join_wait_ns"] and
      cols.index("cond_wait_ns") < cols.index("sync_wait_ns") < cols.index("idle_wait_ns"),
      f"CSV: idle and join wait columns last ({cols})")
irow = next(r for r in csv.DictReader(io.StringIO(latprof(
    "report", ipath, "--breakdown", "--format", "csv", check=0).stdout)) if r["stage"] == "infer")
ist = next(s for s in ibd["stages"] if s["name"] == irow["stage"])
check(int(irow["idle_wait_ns"]) == ist["categories"]["idle_wait"] == 2000000 * len(locked),
      f"CSV idle_wait_ns of {irow['stage']} = the JSON's ({irow['idle_wait_ns']})")
html = os.path.join(tmpdir(), "idle.html")
latprof("report", ipath, "--html", html, check=0)
page = open(html, encoding="utf-8").read()
check("<th>idle wait</th>" in page and "idle wait (a worker waiting for work)" in page,
      "the HTML names idle wait in the breakdown and the timelines' legend")

# The lock waits' last 1 ms spent on a run queue (runq_ns: woken, waiting for
# a CPU): the breakdown counts it as preempted, and so do tail-outlier's
# causes (lock wait +1 ms, preempted +1 ms, not lock wait +2 ms); the account
# check compares the first cause and its amount with the breakdown's tail.
rpath = os.path.join(tmpdir(), "tail_runq.db")
c = sqlite3.connect(path)
c.execute("VACUUM INTO ?", (rpath,))
c.close()
c = sqlite3.connect(rpath)
c.execute("UPDATE lock_waits SET runq_ns = 1000000")
c.commit()
c.close()
check_account(rpath)
rdoc = json.loads(latprof("report", rpath, "--bottlenecks", "--format", "json", check=0).stdout)
rt = next((f for f in rdoc["findings"] if f["id"] == "tail-outlier"), None)
rsites = {s["what"].split(" on ")[0]: s["ns"] / s["count"] for s in rt["sites"]["items"][1:]} \
    if rt else {}
check(abs(rsites.get("lock wait", 0) - 1e6) < 1e4 and abs(rsites.get("preempted", 0) - 1e6) < 1e4,
      f"run-queue part of the lock waits: lock wait +1 ms and preempted +1 ms per tail request "
      f"({rsites})")
