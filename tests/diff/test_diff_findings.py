"""latprof diff names the findings new in the new run and those resolved,
each of them, on synthetic databases (tests/lib/synth.py) whose findings
are known: the base run is 100 requests of 1 ms (no rule fires); the new
run has 5 requests of 4 ms (tail-outlier: p99 / p50 = 4) and 10 ms of waits
on model_lock in its 100 ms of requests (lock-contention: 0.10). Both
directions must list exactly the findings `report --bottlenecks` gives on
each side, in JSON and in the text."""
import json
import os
import sqlite3

from lptest import check, latprof, tmpdir
from synth import make_db

MS = 1000000
d = tmpdir()


def req(total):
    return {"decode": 200000, "preprocess": 200000, "infer": total - 600000 - 5000,
            "postprocess": 200000}


base, new = os.path.join(d, "base.db"), os.path.join(d, "new.db")
make_db(base, [req(MS) for _ in range(100)])
make_db(new, [req(4 * MS if 50 <= i < 55 else MS) for i in range(100)])
c = sqlite3.connect(new)
c.execute("INSERT INTO locks (id, process_id, address, kind, name) VALUES "
          "(1, 1, 4096, 'mutex', 'model_lock')")
infer = c.execute("SELECT s.start_ns FROM ranges s JOIN strings n ON n.id = s.name_id "
                  "WHERE n.value = 'infer' ORDER BY s.start_ns LIMIT 50").fetchall()
c.executemany("INSERT INTO lock_waits (id, lock_id, thread_id, start_ns, dur_ns) VALUES "
              "(?, 1, 1, ?, 200000)", [(i + 1, s + 1000) for i, (s,) in enumerate(infer)])
c.commit()
c.close()


def fired(path):
    doc = json.loads(latprof("report", path, "--bottlenecks", "--format", "json").stdout)
    return sorted(f["id"] for f in doc["findings"])


check(fired(base) == [], f"base: no finding ({fired(base)})")
want = fired(new)
check(want == ["lock-contention", "tail-outlier"], f"new: lock-contention and tail-outlier "
      f"({want})")
for a, b, key in ((base, new, "new"), (new, base, "resolved")):
    p = latprof("diff", a, b, "--format", "json")
    check(p.returncode in (0, 1, 3), f"diff exits 0, 1 or 3 ({p.returncode}: {p.stderr.strip()})")
    f = json.loads(p.stdout)["findings"]
    got = sorted(x.split(":")[0] for x in f[key])
    other = "resolved" if key == "new" else "new"
    check(got == want and f[other] == [],
          f"diff {os.path.basename(a)} {os.path.basename(b)}: {key} = {f[key]}, "
          f"{other} = {f[other]}")
    txt = latprof("diff", a, b).stdout
    lines = [ln.split()[1] for ln in txt.splitlines() if ln.startswith(f"  {key}:")]
    check(f"findings: {len(want) if key == 'new' else 0} new, "
          f"{len(want) if key == 'resolved' else 0} resolved" in txt and
          sorted(x.split(":")[0] for x in lines) == want,
          f"text: {len(lines)} '{key}:' lines ({lines})")
