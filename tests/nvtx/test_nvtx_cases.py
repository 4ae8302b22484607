"""NVTX capture edge cases: start/end across threads, push/pop
nested 10 deep, unbalanced pops, ranges open at exit, domains, registered
strings, categories, payload kinds, 100k+ ranges per second, and
stamps checked against the program's own clock."""
import os
import sys

import lptest
from lptest import check, q1
from nvtxlib import cases_bin, meta, need, record

RANGEF_OPEN_AT_EXIT, RANGEF_STARTEND, RANGEF_CROSS_THREAD = 1, 2, 4


def nest(exe):
    conn, _ = record(exe, "nest", 10, 50)
    check(q1(conn, "SELECT count(*) FROM ranges") == 500, "nest: 500 ranges")
    for lvl in range(10):
        n = q1(conn, "SELECT count(*) FROM ranges_named WHERE name = ? AND depth = ?",
               f"lvl{lvl}", lvl)
        check(n == 50, f"nest: lvl{lvl} recorded 50 times at depth {lvl}")
    bad = q1(conn, """SELECT count(*) FROM ranges_named c JOIN ranges_named p
                      ON p.id = c.parent_id WHERE p.name != 'lvl' || (c.depth - 1)
                      OR c.start_ns < p.start_ns OR c.end_ns > p.end_ns""")
    check(bad == 0, "nest: each level's parent is the level above and encloses it")
    check(q1(conn, "SELECT count(*) FROM ranges WHERE depth = 0 AND parent_id IS NULL") == 50,
          "nest: 50 roots")


def xthread(exe):
    conn, _ = record(exe, "xthread", 20)
    rows = conn.execute("""SELECT r.flags, ts.name AS s, te.name AS e, r.end_ns - r.start_ns
                           AS dur FROM ranges_named r JOIN threads ts ON ts.id =
                           r.start_thread_id JOIN threads te ON te.id = r.end_thread_id
                           WHERE r.name = 'handoff'""").fetchall()
    check(len(rows) == 20, "xthread: 20 start/end ranges paired")
    check(all(r["s"] == "starter" and r["e"] == "ender" for r in rows),
          "xthread: started on 'starter', ended on 'ender'")
    check(all(r["flags"] == RANGEF_STARTEND | RANGEF_CROSS_THREAD for r in rows),
          "xthread: flagged start/end + cross-thread")
    check(all(r["dur"] >= 150_000 for r in rows), "xthread: each lasts >= the 200 us hand-off")
    check(meta(conn, "nvtx.orphan_ends") == 0, "xthread: no orphan ends")


def unbalanced(exe):
    conn, _ = record(exe, "unbalanced", 5)
    check(meta(conn, "nvtx.unbalanced_pops") == 5, "unbalanced: 5 pops counted in meta")
    dur = q1(conn, "SELECT end_ns - start_ns FROM ranges_named WHERE name = 'balanced'")
    check(dur is not None and dur >= 900_000 and
          q1(conn, "SELECT count(*) FROM ranges") == 1,
          "unbalanced: the following pair is intact (>= 1 ms)")


def open_at_exit(exe):
    conn, _ = record(exe, "open")
    end = q1(conn, "SELECT end_ns FROM processes")
    rows = {r["name"]: r for r in conn.execute("SELECT * FROM ranges_named")}
    check(set(rows) == {"open-outer", "open-inner", "closed-child", "open-start"},
          "open: all four ranges present")
    for n in ("open-outer", "open-inner", "open-start"):
        check(rows[n]["flags"] & RANGEF_OPEN_AT_EXIT and rows[n]["end_ns"] == end,
              f"open: '{n}' closed at process end and flagged")
    check(rows["closed-child"]["flags"] == 0 and
          rows["closed-child"]["end_ns"] < end, "open: the closed child is not flagged")
    check(rows["open-inner"]["parent_id"] == rows["open-outer"]["id"] and
          rows["closed-child"]["parent_id"] == rows["open-inner"]["id"],
          "open: nesting kept for open ranges")
    check(meta(conn, "nvtx.open_at_exit") == 3, "open: meta nvtx.open_at_exit = 3")


def domains(exe):
    conn, _ = record(exe, "domains")
    doms = {r[0] for r in conn.execute("SELECT name FROM domains")}
    check({"dom_a", "dom_b\u00e9", ""} == doms, f"domains: dom_a, wide dom_b\u00e9, default "
          f"({sorted(doms)})")
    r = {x["name"]: x for x in conn.execute("SELECT * FROM ranges_named WHERE flags = 0")}
    check(r["registered-one"]["domain"] == "dom_a" and r["registered-one"]["category"] == 5
          and r["registered-one"]["payload"] == -42 and
          r["registered-one"]["color"] == 0xff00ff00, "domains: registered string + attrs")
    check(r["registered-two"]["domain"] == "dom_b\u00e9" and
          r["registered-two"]["payload"] == 2.5, "domains: wide registered string, double")
    check(r["a-child"]["parent_id"] == r["registered-one"]["id"],
          "domains: nesting is per domain (a-child under registered-one)")
    check(r["wide-\u03bb"]["parent_id"] == r["default-outer"]["id"],
          "domains: default domain nests on its own (wide-λ under default-outer)")
    check(r["registered-two"]["parent_id"] is None, "domains: dom_b range is a root")
    n = q1(conn, "SELECT count(*) FROM ranges_named WHERE name = 'a-child' AND "
                 "flags = ? AND payload = ?", RANGEF_STARTEND, 1 << 40)
    check(n == 1, "domains: domain start/end range with u64 payload")
    cats = {(x[0], x[1]) for x in conn.execute(
        "SELECT d.name, c.name FROM categories c JOIN domains d ON d.id = c.domain_id")}
    check(cats == {("dom_a", "cat-five"), ("", "cat-nine-default")}, f"domains: categories {cats}")
    m = {x[0]: x[1] for x in conn.execute(
        "SELECT s.value, m.payload FROM marks m JOIN strings s ON s.id = m.name_id")}
    check(m == {"m-i32": -7, "m-u32": 4000000000, "m-float": 1.5, "m-none": None,
                "plain-mark": None}, f"domains: marks and payload kinds {m}")
    check(q1(conn, "SELECT count(*) FROM threads WHERE name = 'dom-main'") == 1,
          "domains: nvtxNameOsThread names the thread")


def rate(exe):
    conn, _ = record(exe, "rate", 2, 200000)
    n = q1(conn, "SELECT count(*) FROM ranges")
    check(n == 400000, f"rate: 400000 ranges recorded ({n})")
    span = q1(conn, "SELECT (max(end_ns) - min(start_ns)) / 1e9 FROM ranges")
    check(n / span >= 100000, f"rate: recorded at {n / span:.0f} ranges/s (>= 100k/s)")
    check(q1(conn, "SELECT sum(dropped_records) FROM processes") == 0, "rate: nothing dropped")
    per = dict(conn.execute("SELECT name, count(*) FROM ranges_named GROUP BY name").fetchall())
    check(per == {f"rate-{c}": 100000 for c in "abcd"}, "rate: names interned right")


def clock(exe):
    """Second source for the stamps: every push and pop lies between the
    program's own clock_gettime(CLOCK_MONOTONIC) reads around the call.
    Where the TSC is the clocksource most stamps are TSC ticks converted
    (lp_nvtx.c "clock"); a rate from a 200 us calibration put thousands of
    20,000 ranges' stamps outside, by up to 322 ns, which moved a GPU
    launch made right after a push out of its request (cuda_collector).
    A converted stamp errs by up to its base point's half-width plus the
    rate's error over a window (lp_nvtx.c, some 55 ns at worst), which the
    few tens of ns between the program's read and the stamp usually hide:
    on a VM whose RDTSC is slow, 1 to 8 of 40,000 stamps fell outside by
    1 to 5 ns. So: at most 0.1% outside, by at most 25 ns."""
    with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
        print(f"clock: clocksource {f.read().strip()}")
    d = lptest.tmpdir()
    own = os.path.join(d, "own.txt")
    conn, _ = record(exe, "clock", 20000, own)
    with open(own) as f:
        reads = [tuple(map(int, line.split())) for line in f]
    rows = conn.execute("SELECT start_ns, end_ns FROM ranges ORDER BY start_ns").fetchall()
    check(len(rows) == len(reads) == 20000, f"clock: 20000 ranges ({len(rows)}, {len(reads)} read)")
    out, worst = 0, 0
    for (a, b, c, e), (start, end) in zip(reads, rows):
        for lo, hi, x in ((a, b, start), (c, e, end)):
            if not lo <= x <= hi:
                out += 1
                worst = max(worst, lo - x, x - hi)
    check(out <= 40 and worst <= 25,
          f"clock: every push and pop inside the program's own reads around it, or within "
          f"25 ns of them ({out} of 40000 outside, by up to {worst} ns)")


REUSE = ["abcdefg", "abcdefgh", "abcdefgh", "abcdefghi", "abcdefgX", "abcdefg", "a", "ab", "",
         "abcdefghijklmnop", "abcdefghijklmnoq", "abcdefghijklmno", "abcdefghijklmnop", "b",
         "abcdefgh"]


def reuse(exe):
    """One buffer rewritten between pushes: each range has the text the
    buffer held at its push (the name cache keys on the pointer)."""
    conn, _ = record(exe, "reuse")
    got = [r[0] for r in conn.execute(
        "SELECT coalesce(name, '') FROM ranges_named ORDER BY start_ns")]
    check(got == REUSE * 3, f"reuse: every range named by the buffer's text at its push ({got})")


def main():
    exe = need(cases_bin())
    for t in (nest, xthread, unbalanced, open_at_exit, domains, rate, clock, reuse):
        t(exe)


if __name__ == "__main__":
    main()
    sys.exit(0)
