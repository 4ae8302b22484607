"""A large latprof database made from a real recording: the recording's
timed rows (lock_waits, cond_waits, blocking_calls, ranges, marks and the
ranges' range_counters) repeated back to back in time until the chosen
table holds at least N rows, in the recording's own schema (the source
database is copied, then grown in SQL). Copy k shifts every timestamp by
k times the recording's span and every id by k times the table's largest
id, so parent ranges, owner ranges and the clustered (start_ns, id) key
stay consistent; processes and threads end at the last copy's end.

    gen_scale_db.py SRC.db OUT.db N [--table lock_waits|ranges]

Prints the copies made and the rows of each grown table.
"""
import argparse
import os
import sqlite3

TIMED = ("lock_waits", "cond_waits", "blocking_calls", "ranges", "marks")


def cols(c, table):
    """Stored columns (generated ones cannot be inserted)."""
    return [r[1] for r in c.execute(f"PRAGMA table_xinfo({table})") if r[6] in (0, 1)]


def span(c):
    lo = hi = None
    for t, s, e in (("processes", "start_ns", "end_ns"), ("lock_waits", "start_ns", "end_ns"),
                    ("ranges", "start_ns", "end_ns"), ("blocking_calls", "start_ns", "end_ns"),
                    ("cond_waits", "start_ns", "end_ns")):
        a, b = c.execute(f"SELECT min({s}), max(coalesce({e}, {s})) FROM {t}").fetchone()
        if a is not None:
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
    return lo, hi


def grow(c, table, k, dt, end, ids):
    """Append copies 1..k-1 of the recorded rows of table."""
    names = cols(c, table)
    shift = {"start_ns": "start_ns + :dt", "ts_ns": "ts_ns + :dt", "end_ns": "end_ns + :dt",
             "id": "id + :di", "parent_id": "parent_id + :dr", "owner_range_id":
             "owner_range_id + :dr"}
    sel = ", ".join(shift.get(n, n) for n in names)
    # lock_waits is clustered by start: its first copy is a key range
    src = f"(SELECT * FROM {table} WHERE start_ns < :end)" if table == "lock_waits" \
        else f"(SELECT * FROM {table} WHERE id <= :maxid)"
    for i in range(1, k):
        c.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {sel} FROM {src}",
                  {"dt": i * dt, "di": i * ids[table], "dr": i * ids["ranges"],
                   "maxid": ids[table], "end": end})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("--table", default="lock_waits", choices=("lock_waits", "ranges"))
    a = ap.parse_args()
    if os.path.exists(a.out):
        os.unlink(a.out)
    src = sqlite3.connect(f"file:{a.src}?mode=ro", uri=True)
    c = sqlite3.connect(a.out)
    src.backup(c)
    src.close()
    c.execute("PRAGMA journal_mode = OFF")
    c.execute("PRAGMA synchronous = OFF")
    c.execute("PRAGMA cache_size = -262144")
    n0 = c.execute(f"SELECT count(*) FROM {a.table}").fetchone()[0]
    if not n0:
        raise SystemExit(f"gen_scale_db: {a.src} has no {a.table}")
    k = -(-a.n // n0)
    lo, hi = span(c)
    dt = hi - lo + 1_000_000
    ids = {t: c.execute(f"SELECT coalesce(max(id), 0) FROM {t}").fetchone()[0] for t in TIMED}
    for t in TIMED:
        grow(c, t, k, dt, lo + dt, ids)
    has_rc = c.execute("SELECT count(*) FROM range_counters").fetchone()[0] \
        if c.execute("SELECT 1 FROM sqlite_master WHERE name = 'range_counters'").fetchone() else 0
    if has_rc:
        for i in range(1, k):
            c.execute("INSERT INTO range_counters SELECT range_id + :dr, event_id, delta, scaled "
                      "FROM range_counters WHERE range_id <= :maxid",
                      {"dr": i * ids["ranges"], "maxid": ids["ranges"]})
    c.execute("UPDATE processes SET end_ns = end_ns + :x WHERE end_ns IS NOT NULL",
              {"x": (k - 1) * dt})
    c.execute("UPDATE threads SET end_ns = end_ns + :x WHERE end_ns IS NOT NULL",
              {"x": (k - 1) * dt})
    c.commit()
    rows = {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TIMED}
    c.close()
    print(f"gen_scale_db: {k} copies of {a.src}: " +
          ", ".join(f"{t} {n}" for t, n in rows.items()))


if __name__ == "__main__":
    main()
