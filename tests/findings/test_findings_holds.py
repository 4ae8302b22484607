"""Hold times of a contended lock on a real run of fnd_holds: one request in
ten holds table_lock for 4x its normal work (commit_slow, stage "commit")
while every request takes it briefly (count_request), so the others wait
behind the slow ones. The program times its own long holds with
CLOCK_MONOTONIC (the recorder's clock) and writes them to a side file.

- lock_holds has exactly the program's long holds that began after the
  lock's first recorded wait ended (before it the lock is not watched),
  each matched by start (within 1 ms) and duration (within 10%), at
  commit_slow, in stage commit; their sum within 10% of the program's;
- report --locks: holds, max and p99 as recomputed from lock_holds, the
  holding site and stage;
- findings: past the CPU-load findings (2 busy cores shared with the other
  tests), the first finding names table_lock and commit_slow; the
  long-critical-section finding names the lock, site, stage and hold p99.
The same with --rwlock: table_rwlock, held for writing by the slow
requests while the counts wait to read."""
import json
import math
import os

from fndlib import BUILD, binary, check, ev, finding, findings, record, tmpdir
from lptest import db, fail, latprof, sanitizer, skip

if sanitizer():
    skip(f"{sanitizer()} build: the holds are compared with the program's own timing "
         "within 10%, which instrumented code does not keep")

d = tmpdir()
prog = binary(os.path.join(BUILD, "tests", "bin", "fnd_holds"), "fnd_holds (needs NVTX headers)")


def holds_case(name, kind, *args):
    path, side = os.path.join(d, f"{name}.db"), os.path.join(d, f"{name}.txt")
    record(path, prog, *args, "--clients", "4", "--requests", "60", "--work-us", "1000", side)
    with open(side) as f:
        own = [tuple(map(int, line.split())) for line in f if line.strip()]
    check(len(own) == 24, f"the program made {len(own)} long holds (4 clients x 6)")

    conn = db(path)
    lock = conn.execute("SELECT id FROM locks WHERE name = ? AND kind = ?", (name, kind)).fetchone()
    if not lock:
        fail(f"no {kind} {name} in locks")
    lock = lock[0]
    first_wait = conn.execute("SELECT min(start_ns + dur_ns) FROM lock_waits WHERE lock_id = ?",
                              (lock,)).fetchone()[0]
    rows = conn.execute(
        "SELECT h.start_ns, h.dur_ns, f.function, n.value FROM lock_holds h LEFT JOIN stacks s ON "
        "s.id = h.stack_id LEFT JOIN frames f ON f.id = s.top_frame LEFT JOIN ranges r ON r.id = "
        "h.range_id LEFT JOIN strings n ON n.id = r.name_id WHERE h.lock_id = ? ORDER BY h.start_ns",
        (lock,)).fetchall()
    slow = [r for r in rows if r[2] == "commit_slow"]
    check(all(r[3] == "commit" for r in slow), "every commit_slow hold is in stage commit")
    want = [h for h in own if h[0] > first_wait]
    check(len(want) >= 12, f"{len(want)} of the program's holds came after the first wait")
    matched = 0
    for t0, dur in want:
        m = [r for r in slow if abs(r[0] - t0) < 1_000_000]
        if len(m) == 1 and abs(m[0][1] - dur) <= 0.10 * dur:
            matched += 1
        else:
            print(f"unmatched hold at {t0} ({dur} ns): {m}")
    check(matched == len(want) and len(slow) == len(want),
          f"{matched} of {len(want)} program holds matched; {len(slow)} recorded at commit_slow")
    s_rec, s_own = sum(r[1] for r in slow), sum(h[1] for h in want)
    check(abs(s_rec - s_own) <= 0.10 * s_own, f"recorded holds {s_rec} ns vs the program's {s_own}")

    durs = sorted(r[1] for r in rows)
    p99 = durs[max(0, math.ceil(0.99 * len(durs)) - 1)]
    lk = json.loads(latprof("report", path, "--locks", "--format", "json", check=0).stdout)["locks"]
    tl = next(l for l in lk if l["name"] == name)
    check(tl["holds"] == len(rows) and tl["hold_max_ns"] == durs[-1] and tl["hold_p99_ns"] == p99,
          f"--locks: {tl['holds']} holds, max {tl['hold_max_ns']}, p99 {tl['hold_p99_ns']} "
          f"(lock_holds: {len(rows)}, {durs[-1]}, {p99})")
    check(tl["hold_site"].startswith("commit_slow") and tl["hold_stage"] == "commit",
          f"--locks: held longest at {tl['hold_site']} in stage {tl['hold_stage']}")
    check(0 < tl["held_in_requests_ns"] <= tl["hold_total_ns"], "held inside requests <= held")

    doc = findings(path)
    CPU_LOAD = {"cpu-saturated", "cpu-starved", "cpu-interference"}
    rest = [f for f in doc["findings"] if f["id"] not in CPU_LOAD]
    check(rest and rest[0]["subject"] == name and "commit_slow" in rest[0]["summary"],
          f"first finding past CPU load names {name} and commit_slow: "
          f"{rest[0]['id'] + ': ' + rest[0]['summary'] if rest else None}")
    lc = finding(doc, "long-critical-section")
    check(lc["subject"] == name and lc["sites"]["items"][0]["what"].startswith("commit_slow")
          and "in stage commit" in lc["summary"],
          f"long-critical-section: {lc['summary']}; sites {lc['sites']}")
    check(ev(lc, "p99_hold_ns") == p99 and ev(lc, "holds") == len(rows),
          f"long-critical-section: p99 hold {ev(lc, 'p99_hold_ns')}, {ev(lc, 'holds')} holds")


holds_case("table_lock", "mutex")
holds_case("table_rwlock", "rwlock", "--rwlock")
