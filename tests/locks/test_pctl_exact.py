"""report --locks p50 and p99 are exact nearest ranks whatever the
durations look like: the view finds them in two passes (a histogram, then
the durations of the two buckets holding the ranks), so durations are set
here where buckets are crowded and ranks fall inside them: thousands of
distinct values inside one or two buckets, repeats, zeros, a negative one,
values under 256 ns and one of days. Each lock's p50 and p99 are compared
with the nearest rank of its rows in the database."""
import json
import os
import sqlite3

from locklib import SMALL_LOGS, lockprog
from lptest import check, db, fail, latprof, record, tmpdir

d = tmpdir()
path = os.path.join(d, "pctl.db")
record(path, lockprog(), env=SMALL_LOGS)


def nearest(v, q):
    v = sorted(v)
    k = max(1, -(-int(q * len(v) * 1000) // 1000))  # ceil(q n) without float noise
    return v[min(k, len(v)) - 1]


def shape(i, n):
    """The i-th duration of n: most inside [1,000,000, 1,006,000) ns (two
    buckets of 4,096 ns, values 1 ns apart and repeated), the rest odd."""
    if i % 97 == 0:
        return 0
    if i % 89 == 0:
        return 1 + i % 255
    if i == 5:
        return -3
    if i % 211 == 0:
        return 3 * 86400 * 10**9 + i
    return 1_000_000 + (i * 7919) % 6000


w = sqlite3.connect(path)
ids = [r[0] for r in w.execute("SELECT id FROM lock_waits ORDER BY start_ns, id")]
if len(ids) < 100:
    fail(f"only {len(ids)} lock waits recorded: too few to crowd a bucket")
for i, wid in enumerate(ids):
    w.execute("UPDATE lock_waits SET dur_ns = ? WHERE id = ?", (shape(i, len(ids)), wid))
w.commit()
w.close()

conn = db(path)
rep = json.loads(latprof("report", path, "--locks", "--format", "json").stdout)
check(len(rep["locks"]) >= 1, f"{len(rep['locks'])} locks reported")
for l in rep["locks"]:
    lid = conn.execute("SELECT id FROM locks WHERE address = ?", (int(l["address"], 16),)).fetchone()[0]
    durs = [r[0] for r in conn.execute("SELECT dur_ns FROM lock_waits WHERE lock_id = ?", (lid,))]
    p50, p99 = nearest(durs, 0.5), nearest(durs, 0.99)
    check(l["count"] == len(durs) and l["p50_ns"] == p50 and l["p99_ns"] == p99,
          f"{l['name'][:30]}: {len(durs)} waits, p50 {l['p50_ns']} = {p50}, "
          f"p99 {l['p99_ns']} = {p99} (nearest rank)")
