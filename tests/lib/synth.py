"""Synthetic latprof databases for the diff, findings, locks, core and
reliability tests: the real schema
(schemas/core.sql + nvtx.sql), PRAGMA user_version = LP_SCHEMA_VERSION read
from db/lp_db.h, one "request" range per request holding stage ranges."""
from lptest import schema_db, schema_version  # noqa: F401 (tests call synth.schema_version)

STAGES = ("decode", "preprocess", "infer", "postprocess")


def make_db(path, requests, version=None, with_ranges=True):
    """requests: list of dicts stage -> duration ns. Stages run back to back
    inside their request, 1 us apart."""
    c = schema_db(path, ("core.sql", "nvtx.sql"), version)
    c.execute("INSERT INTO meta VALUES ('tool', 'synth.py')")
    c.execute("INSERT INTO processes (id, pid, ppid, start_ns) VALUES (1, 100, 1, 0)")
    c.execute("INSERT INTO threads (id, process_id, tid, start_ns) VALUES (1, 1, 100, 0)")
    names = {n: i + 1 for i, n in enumerate(("request",) + STAGES)}
    c.executemany("INSERT INTO strings VALUES (?, ?)", [(i, n) for n, i in names.items()])
    if with_ranges:
        t, rid, rows = 1000, 1, []
        for req in requests:
            start, req_id, s = t, rid, t + 1000
            rid += 1
            for st, dur in req.items():
                rows.append((rid, names[st], s, s + int(dur), req_id, 1))
                rid += 1
                s += int(dur) + 1000
            rows.append((req_id, names["request"], start, s, None, 0))
            t = s + 5000
        c.executemany("INSERT INTO ranges (id, process_id, name_id, start_ns, end_ns, "
                      "start_thread_id, parent_id, depth) VALUES (?, 1, ?, ?, ?, 1, ?, ?)",
                      rows)
    c.commit()
    c.close()


def draw(rng, n, scale=None):
    """n requests, stage times lognormal around the infer_server's costs."""
    base = {"decode": 2.1e6, "preprocess": 1.8e6, "infer": 6.4e6, "postprocess": 0.7e6}
    scale = scale or {}
    return [{st: base[st] * scale.get(st, 1.0) * rng.lognormvariate(0, 0.15) for st in STAGES}
            for _ in range(n)]
