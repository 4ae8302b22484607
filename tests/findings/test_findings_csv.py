"""--bottlenecks --format csv on real runs: lock_server (a global lock, no
NVTX requests) and infer_server (requests, a locked tail). The CSV parses
with Python's csv module and holds the JSON's findings, in the same order,
with the same numbers, then one row per rule that did not fire."""
import csv
import io
import math
import os

from fndlib import check, fail, findings, latprof, record, sample, binary, tmpdir
from lptest import db as open_db, q1

d = tmpdir()
COLS = ["rank", "state", "id", "severity", "title", "subject", "summary", "value", "threshold",
        "comparison", "unit", "saving_ns", "basis_ns", "basis", "scope_ns", "share", "evidence",
        "site_kind", "top_site", "top_site_count", "top_site_ns", "example_range_id",
        "example_tid", "example_start_ns", "example_end_ns", "example_dur_ns",
        "example_at_stake_ns", "fix", "why"]
EXAMPLE = ["range_id", "tid", "start_ns", "end_ns", "dur_ns", "at_stake_ns"]


def num(s):
    """A CSV number as the JSON parser reads the same digits ('' = null)."""
    if s == "":
        return None
    return int(s) if s.lstrip("-").isdigit() else float(s)


def csv_rows(db):
    """Through -o, read with newline='' so the CRLF line ends stay visible;
    standard output must carry the same text."""
    out = db + ".csv"
    latprof("report", db, "--bottlenecks", "--format", "csv", "-o", out, check=0)
    with open(out, newline="") as f:
        text = f.read()
    lines = text.split("\r\n")
    if lines[-1] != "" or any("\n" in ln and not ln.endswith('"') for ln in lines[:-1]):
        fail(f"{db}: CSV lines end in CRLF (RFC 4180): {text[-80:]!r}")
    stdout = latprof("report", db, "--bottlenecks", "--format", "csv", check=0).stdout
    check(stdout == text.replace("\r\n", "\n"), f"{db}: -o FILE and standard output hold the same CSV")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if rows[0] != COLS:
        fail(f"{db}: CSV header {rows[0]}")
    bad = [r for r in rows if len(r) != len(COLS)]
    if bad:
        fail(f"{db}: rows with {len(bad[0])} fields, not {len(COLS)}: {bad[0]}")
    return [dict(zip(COLS, r)) for r in rows[1:]]


def compare(db, doc, rows):
    found = [r for r in rows if r["state"] == "found"]
    want = [(f["id"], f["subject"] or "", f["saving_ns"]) for f in doc["findings"]]
    got = [(r["id"], r["subject"], int(r["saving_ns"])) for r in found]
    check(got == want, f"{db}: CSV findings {got} = JSON findings, same order and savings")
    check(rows[:len(found)] == found and [r["rank"] for r in found]
          == [str(i + 1) for i in range(len(found))], f"{db}: findings first, ranked 1..{len(found)}")
    for r, f in zip(found, doc["findings"]):
        what = f"{db}: #{r['rank']} {r['id']}"
        same = {"severity": f["severity"], "title": f["title"], "summary": f["summary"],
                "comparison": f["comparison"], "unit": f["unit"], "basis": f["basis"],
                "fix": f["fix"], "why": ""}
        diff = {k: (r[k], v) for k, v in same.items() if r[k] != v}
        nums = {"value": f["value"], "threshold": f["threshold"], "basis_ns": f["basis_ns"],
                "scope_ns": f["scope_ns"]}
        diff.update({k: (r[k], v) for k, v in nums.items() if num(r[k]) != v})
        # Two roundings of one double: the CSV's %.6f (within 5e-7) and the
        # JSON's %.6g (within half its sixth significant digit); a share on
        # a rounding boundary (0.0971885 in JSON, 0.097188 in CSV) is off by
        # a little more than either alone.
        js = f["share"]
        tol = 5e-7 + (0.5 * 10 ** (math.floor(math.log10(abs(js))) - 5) if js else 0) + 1e-12
        if abs(num(r["share"]) - js) > tol:
            diff["share"] = (r["share"], js)
        ev = dict(kv.split("=", 1) for kv in r["evidence"].split("; ")) if r["evidence"] else {}
        want_ev = {e["key"]: e["value"] for e in f["evidence"]}
        if {k: num(v) for k, v in ev.items()} != want_ev or list(ev) != list(want_ev):
            diff["evidence"] = (r["evidence"], want_ev)
        items = f["sites"]["items"]
        site = [f["sites"]["kind"], items[0]["what"], items[0]["count"], items[0]["ns"]] \
            if items else [None, None, None, None]
        got_site = [r["site_kind"] or None, r["top_site"] or None, num(r["top_site_count"]),
                    num(r["top_site_ns"])]
        if got_site != site:
            diff["top site"] = (got_site, site)
        ex = [f["example"][k] for k in EXAMPLE] if f["example"] else [None] * len(EXAMPLE)
        got_ex = [num(r["example_" + k]) for k in EXAMPLE]
        if got_ex != ex:
            diff["example"] = (got_ex, ex)
        if diff:
            fail(f"{what}: CSV differs from JSON: {diff}")
        print(f"ok: {what}: every column as in the JSON (saving {r['saving_ns']} ns, "
              f"{len(ev)} evidence numbers, example {'yes' if f['example'] else 'none'})")
    # Rules that did not fire, in table order, with what they measured or why not.
    rest = [r for r in doc["rules"] if r["state"] != "found"]
    got = [(r["id"], r["state"], num(r["value"]), num(r["threshold"]), r["why"] or None)
           for r in rows[len(found):]]
    want = [(r["id"], r["state"], r["value"], r["threshold"], r["why"]) for r in rest]
    check(got == want, f"{db}: {len(got)} rule rows (quiet / not_evaluated) = the JSON's rules")
    check(all(r["rank"] == r["saving_ns"] == r["evidence"] == "" for r in rows[len(found):]),
          f"{db}: rule rows carry no rank, saving or evidence")
    return found


# ---- lock_server: a global lock, no NVTX requests --------------------------
lock_db = os.path.join(d, "lock.db")
record(lock_db, binary(sample("lock_server"), "lock_server"), "--threads", "4",
       "--requests", "1000", "--work-us", "50", "--locked-us", "100")
doc = findings(lock_db)
rows = csv_rows(lock_db)
found = compare(lock_db, doc, rows)
lock = next((r for r in found if r["id"] == "lock-contention"), None)
if not lock:
    fail(f"lock_server: no lock-contention row in the CSV: {[r['id'] for r in found]}")
conn = open_db(lock_db)
waits, wait_ns, less_ns = conn.execute(
    "SELECT count(*), sum(w.dur_ns), sum(w.dur_ns - coalesce(w.runq_ns, 0)) FROM lock_waits w "
    "JOIN locks l ON l.id = w.lock_id WHERE l.name = ?", (lock["subject"],)).fetchone()
# the saving: the waits less their run-queue part (the breakdown's preempted)
check(lock["subject"] == "model_lock" and int(lock["saving_ns"]) == less_ns > 0
      and int(lock["basis_ns"]) == wait_ns and "waits=%d" % waits in lock["evidence"].split("; "),
      f"lock-contention row: model_lock, saving {lock['saving_ns']} ns = its {waits} waits in "
      f"the db less their run-queue part ({less_ns}), basis {lock['basis_ns']} = {wait_ns}")
check(q1(conn, "SELECT count(*) FROM lock_waits") > 0, "the run recorded lock waits")
check(lock["title"] == "A lock serializes the threads",
      f"without requests the title does not speak of requests: {lock['title']!r}")
check(any(r["state"] == "not_evaluated" and "GPU" in r["why"] for r in rows),
      "GPU rules: not_evaluated rows with the reason")

# ---- infer_server: NVTX requests, a locked tail, quiet rules ---------------
infer_db = os.path.join(d, "infer.db")
record(infer_db, binary(sample("infer_server"), "infer_server"), "--requests", "300",
       "--threads", "1", "--decode-us", "200", "--pre-us", "200", "--infer-us", "600",
       "--post-us", "200", "--locked-frac", "0.05", "--locked-stage", "infer",
       "--locked-us", "20000")
doc = findings(infer_db)
check(doc["requests"] and doc["requests"]["count"] == 300, "infer_server: 300 requests")
rows = csv_rows(infer_db)
compare(infer_db, doc, rows)
check(any(r["state"] == "quiet" and r["value"] != "" for r in rows),
      "quiet rules come with the value they measured")
check(all(r["title"] == "A lock serializes requests" for r in rows
          if r["id"] == "lock-contention" and r["state"] == "found"),
      "with requests, lock-contention's title is the rule's own")
