"""pigz -p 4 (Debian's stripped binary): every lock is taken through one
wrapper, possess(), so the innermost frame of every wait is the same
pigz+0x... address. latprof must see the wrapper (one frame shared by waits
on several locks) and name the frame above it: the two busiest locks show
different callers, each with a three-frame chain; the stacks in the
database stay whole."""
import os

from lptest import check, db, q1, record, tmpdir
from reallib import locks, need_cmd
from lpaccount import check_account

need_cmd("pigz")
d = tmpdir()
data = os.path.join(d, "in.txt")
with open(data, "wb") as f:  # compressible but not trivially: 24 MB of hex
    f.write(os.urandom(12 << 20).hex().encode())

for attempt in range(3):  # which locks get contended depends on scheduling
    path = os.path.join(d, f"pigz{attempt}.db")
    record(path, "sh", "-c", f"pigz -p 4 -b 32 -c {data} > {data}.gz")
    lk = locks(path)["locks"]
    if len(lk) >= 2:
        break
check(len(lk) >= 2, f"{len(lk)} contended locks in pigz")
conn = db(path)
wrapped = q1(conn, "SELECT count(*) FROM (SELECT s.top_frame FROM lock_waits w JOIN stacks s "
                   "ON s.id = w.stack_id GROUP BY s.top_frame "
                   "HAVING count(DISTINCT w.lock_id) >= 2)")
check(wrapped >= 1, f"one innermost frame (possess) is shared by waits on several locks ({wrapped})")
a, b = lk[0]["sites"][0], lk[1]["sites"][0]
check(a["depth"] >= 1 and b["depth"] >= 1, f"sites are above the wrapper (depth {a['depth']}, {b['depth']})")
check(a["where"] != b["where"], f"the two busiest locks show different callers: {a['where']} vs {b['where']}")
check(all(s["chain"] and s["chain"].count(" <- ") == 2 for s in (a, b)),
      f"three-frame chains: {a['chain']} | {b['chain']}")
deep = q1(conn, "SELECT min(depth) FROM stacks s JOIN lock_waits w ON w.stack_id = s.id")
check(deep >= 3, f"whole stacks stay in the database (>= {deep} frames each)")
# the findings of the run as one account (tests/lib/lpaccount.py)
check_account(path)
