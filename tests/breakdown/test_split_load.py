"""Past 1 M ranges the breakdown reads the upper half of the ids on a second
thread and connection (analysis/lp_rset.c), then maps that half's range
names into the first half's and resolves parents across the split. A
synthetic database of 1.2 M ranges in the real schema, whose upper half
names its stages in another order (two names its own) and whose requests
straddle the middle: every range name's count and total in `report
--ranges`, and the request and stage counts of `--breakdown`, equal what
SQL counts in the file. (Without the name mapping it fails.)"""
import json
import os
import random
import shutil
import sqlite3
import subprocess

from lptest import LATPROF, check, schema_db, tmpdir

d = tmpdir()
db = os.path.join(d, "split.db")
N_REQ = 300_000  # 1 request + 3 stages each: 1.2 M ranges


c = schema_db(db)
c.execute("INSERT INTO processes(id, pid, ppid, start_ns, end_ns) VALUES (1, 42, 1, 0, ?)",
          (10**15,))
c.executemany("INSERT INTO threads(id, process_id, tid, name) VALUES (?, 1, ?, ?)",
              [(i + 1, 100 + i, f"w{i}") for i in range(4)])
names = ["request", "decode", "infer", "post", "late-a", "late-b"]
c.executemany("INSERT INTO strings(id, value) VALUES (?, ?)",
              [(i + 1, v) for i, v in enumerate(names)])
c.execute("INSERT INTO domains(id, process_id, name) VALUES (1, 1, '')")


def rows():
    rid, t = 0, [1_000_000] * 4
    for r in range(N_REQ):
        th = r % 4
        # From just before the middle on, stages named in another order
        # (two names new): the upper half interns its names in an order of
        # its own, which the merge must map.
        late = r >= N_REQ // 2 - 1000
        start = s = t[th]
        rid += 1
        req = rid
        kids = []
        for i in range(3):
            name = (6, 5, 2)[i] if late else 2 + i
            dur = 1000 + (r * 7 + i * 13) % 500
            rid += 1
            kids.append((rid, name, s, s + dur, th + 1, req, 1))
            s += dur + 10
        yield (req, 1, start, s + 5, th + 1, None, 0)
        yield from kids
        t[th] = s + 100


c.executemany("INSERT INTO ranges(id, process_id, domain_id, name_id, start_ns, end_ns, "
              "start_thread_id, end_thread_id, parent_id, depth) "
              "VALUES (?1, 1, 1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)", rows())
c.commit()
want = {n: (cnt, tot) for n, cnt, tot in c.execute(
    "SELECT s.value, count(*), sum(r.end_ns - r.start_ns) FROM ranges r "
    "JOIN strings s ON s.id = r.name_id GROUP BY 1")}
kids = {n: cnt for n, cnt in c.execute(
    "SELECT s.value, count(*) FROM ranges r JOIN ranges p ON r.parent_id = p.id "
    "JOIN strings s ON s.id = r.name_id GROUP BY 1")}
total = c.execute("SELECT count(*) FROM ranges").fetchone()[0]
c.close()
check(total > 1_000_000 and "late-a" in want, f"{total} ranges, upper-half-only names present")


def report(*args):
    p = subprocess.run([LATPROF, "report", db, *args, "--format", "json"], capture_output=True,
                       text=True)
    check(p.returncode == 0, f"report {' '.join(args)} exits 0\n{p.stderr}")
    return json.loads(p.stdout)


got = {r["name"]: (r["stats"]["n"], r["stats"]["total_ns"]) for r in report("--ranges")["ranges"]}
check(got == want, f"--ranges: every name's count and total as SQL counts them\n{got}\n{want}")
bd = report("--breakdown")
check(bd["request"]["stats"]["n"] == N_REQ,
      f"--breakdown: {N_REQ} requests ({bd['request']['stats']['n']})")
stages = {s["name"]: s["instances"] for s in bd["stages"] if not s.get("unattributed")}
check(stages == kids, f"--breakdown: stage instances (parents resolved across the split)"
      f"\n{stages}\n{kids}")

# A damaged page in the upper half is read by the second connection: exit 2
# with one line that carries that connection's own error (the first
# connection has none to give: its message would be "not an error").
c = sqlite3.connect(db)
page = c.execute("PRAGMA page_size").fetchone()[0]
leaves = [r[0] for r in c.execute(
    "SELECT pageno FROM dbstat WHERE name = 'ranges' AND pagetype = 'leaf' ORDER BY pageno")]
c.close()
bad = os.path.join(d, "damaged.db")
shutil.copy(db, bad)
with open(bad, "r+b") as f:
    f.seek((leaves[len(leaves) * 3 // 4] - 1) * page + 100)
    f.write(random.Random(7).randbytes(400))
p = subprocess.run([LATPROF, "report", bad, "--breakdown", "--format", "json"],
                   capture_output=True, text=True)
lines = p.stderr.strip().splitlines()
check(p.returncode == 2 and len(lines) == 1 and "not an error" not in lines[0] and not p.stdout,
      f"a damaged page in the upper half: exit 2, one line with its error ({p.returncode}: "
      f"{lines})")
