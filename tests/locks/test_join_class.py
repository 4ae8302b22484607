"""Wait class join for a C program: lp_joinprog queues
once behind busy_lock (contention, ~5 ms), then joins a thread that runs
~50 ms and prints how long its pthread_join took, then one of ~30 ms with
pthread_timedjoin_np. The recorded joins (blocking_calls, call
pthread_join) must match those timings, be counted as
class join in --locks (text, JSON, CSV), and never be ranked as a lock:
busy_lock, the only contention, is the first and only row."""
import csv
import io
import json
import os

from lptest import BUILD, check, db, latprof, record, tmpdir
from locklib import check_schema

path = os.path.join(tmpdir(), "join.db")
p = record(path, os.path.join(BUILD, "tests", "locks", "lp_joinprog"))
own = next((int(l.split("=", 1)[1]) for l in p.stdout.splitlines() if l.startswith("join_ns=")),
           None)
check(own is not None and 45e6 <= own <= 500e6, f"the program timed its join: {own} ns")
timed = next((int(l.split()[0].split("=", 1)[1]) for l in p.stdout.splitlines()
              if l.startswith("timedjoin_ns=")), None)
check(timed is not None and 25e6 <= timed <= 500e6 and "rc=0" in p.stdout,
      f"the program timed its pthread_timedjoin_np: {timed} ns")

conn = db(path)
# In the program's order (the holder's join may be too short to record):
# the runner's join, then the timed one, last. Told apart by order, never
# by length: on a loaded machine the 30 ms one can outlast the 50 ms one.
joins = conn.execute("SELECT start_ns, dur_ns, result FROM blocking_calls WHERE call = "
                     "'pthread_join' ORDER BY start_ns").fetchall()
check(len(joins) >= 2, f"{len(joins)} pthread_join calls recorded")
run_join, tj = joins[-2], joins[-1]
rec = run_join["dur_ns"]
# the hook's clock reads sit inside the program's: recorded <= own, and only
# the two clock reads and the record's write lie between them
check(0 <= own - rec <= 2_000_000, f"recorded join {rec} ns vs the program's {own} ns")
# pthread_timedjoin_np records as pthread_join, result 0 (joined, not timed out)
check(0 <= timed - tj["dur_ns"] <= 2_000_000 and tj["result"] == 0,
      f"recorded timed join {tuple(tj)} vs the program's {timed} ns")
n_join, ns_join = len(joins), sum(j["dur_ns"] for j in joins)

rep = json.loads(latprof("report", path, "--locks", "--format", "json", check=0).stdout)
check_schema(rep, "--locks JSON")
cls = rep["totals"]["classes"]
check(cls["join"] == {"count": n_join, "wait_ns": ns_join},
      f"--locks JSON: class join {cls['join']} = the {n_join} recorded joins, {ns_join} ns")
check(cls["contention"]["count"] >= 1, f"class contention {cls['contention']}")
locks = rep["locks"]
check(len(locks) == 1 and locks[0]["name"] == "busy_lock" and locks[0]["class"] == "contention",
      "the only ranked lock is busy_lock, class contention: "
      f"{[(l['name'], l['class']) for l in locks]}")
# busy_lock's row is its own waits, exactly, and no lock wait lies inside a
# join (the holder's nap stretches under load: no bound against the join's
# length would hold).
waits = conn.execute("SELECT count(*), sum(w.dur_ns) FROM lock_waits w JOIN locks l "
                     "ON l.id = w.lock_id WHERE l.name = 'busy_lock'").fetchone()
check((locks[0]["count"], locks[0]["total_ns"]) == tuple(waits),
      f"busy_lock's row: {locks[0]['count']} waits, {locks[0]['total_ns']} ns = its "
      f"lock_waits rows {tuple(waits)}")
inside = conn.execute("SELECT count(*) FROM lock_waits w, blocking_calls j WHERE j.call = "
                      "'pthread_join' AND w.thread_id = j.thread_id AND w.start_ns >= "
                      "j.start_ns AND w.start_ns < j.start_ns + j.dur_ns").fetchone()[0]
check(inside == 0, f"no lock wait recorded inside a join ({inside})")
check(rep["totals"]["contended_locks"] == 1, "one contended lock")

text = latprof("report", path, "--locks", check=0).stdout
cl = next((l for l in text.splitlines() if l.startswith("Waits by class:")), "")
check(f"join {n_join}," in cl, f"the text view counts the join: {cl!r}")
rows = list(csv.DictReader(io.StringIO(
    latprof("report", path, "--locks", "--format", "csv", check=0).stdout)))
check([r["class"] for r in rows] == ["contention"], f"CSV rows' classes {[r['class'] for r in rows]}")
