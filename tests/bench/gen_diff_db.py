"""A latprof database of N requests with 4 stages each, generated in SQL
(recursive CTE, no recording): the input of the `latprof diff` speed
benchmark. Schema from schemas/core.sql + nvtx.sql with their indexes, as
the importer leaves it; stage times are lognormal-ish (product of uniform
draws) around 0.5/0.4/1.5/0.2 ms, `--slow PCT` stretches infer.

    gen_diff_db.py OUT.db N [--seed S] [--slow PCT]
"""
import argparse
import os
import re
import sqlite3

SRC = os.environ.get("LP_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))


def schema_version():
    with open(os.path.join(SRC, "db", "lp_db.h")) as f:
        return int(re.search(r"#define LP_SCHEMA_VERSION (\d+)", f.read()).group(1))


def make(path, n, seed=1, slow=0.0):
    if os.path.exists(path):
        os.unlink(path)
    c = sqlite3.connect(path)
    c.execute("PRAGMA journal_mode = OFF")
    c.execute("PRAGMA synchronous = OFF")
    for name in ("core.sql", "nvtx.sql"):
        with open(os.path.join(SRC, "schemas", name)) as f:
            c.executescript(f.read())
    c.execute(f"PRAGMA user_version = {schema_version()}")
    c.execute("INSERT INTO meta VALUES ('tool', 'gen_diff_db.py')")
    c.execute("INSERT INTO processes (id, pid, ppid, start_ns) VALUES (1, 100, 1, 0)")
    c.execute("INSERT INTO threads (id, process_id, tid, start_ns) VALUES (1, 1, 100, 0)")
    c.executemany("INSERT INTO strings VALUES (?, ?)",
                  enumerate(("request", "decode", "preprocess", "infer", "postprocess"), 1))
    # Request i owns range ids 5i+1 (request) .. 5i+5 (stages); a stage's
    # duration is its cost times a factor in (0.75, ~2.2) from two hashed
    # uniforms, so quantiles and means differ per stage and per seed.
    h = "((k * 2654435761 + s * 40503 + {0} * 1000033 + {1}) % 2147483647) / 2147483647.0"
    c.execute(f"""
      CREATE TEMP TABLE d AS WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i
        WHERE k + 1 < {int(n)})
      SELECT k, s, cast(cost * (0.75 + 0.5 * u1 * u1 + 0.9 * u2 * u2 * u2 * u2) AS INTEGER)
        AS dur FROM (SELECT k, s, cost, {h.format(seed, 0)} AS u1, {h.format(seed, 7919)} AS u2
        FROM i, (SELECT 1 AS s, 500000.0 AS cost UNION ALL SELECT 2, 400000.0 UNION ALL
                 SELECT 3, 1500000.0 * {1 + slow / 100.0} UNION ALL SELECT 4, 200000.0))""")
    c.execute("""
      INSERT INTO ranges (id, process_id, name_id, start_ns, end_ns, start_thread_id,
                          parent_id, depth)
      SELECT 5 * k + 1 + s, 1, 1 + s, 10000000 * k + s * 10, 10000000 * k + s * 10 + dur, 1,
             5 * k + 1, 1 FROM temp.d""")
    c.execute("""
      INSERT INTO ranges (id, process_id, name_id, start_ns, end_ns, start_thread_id, depth)
      SELECT 5 * k + 1, 1, 1, 10000000 * k, 10000000 * k + sum(dur) + 100, 1, 0
      FROM temp.d GROUP BY k""")
    c.execute("DROP TABLE temp.d")
    c.executescript("CREATE INDEX ranges_start ON ranges(start_ns);"
                    "CREATE INDEX ranges_name ON ranges(name_id);"
                    "CREATE INDEX ranges_parent ON ranges(parent_id);")
    c.commit()
    c.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--slow", type=float, default=0.0)
    a = ap.parse_args()
    make(a.out, a.n, a.seed, a.slow)
