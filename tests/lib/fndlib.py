"""Shared by the findings (and block) tests: record, report --bottlenecks as JSON, check
the schema and the saving bound on every report."""
import json
import os

from lptest import (BUILD, SRC, check, fail, latprof, record, sample, skip, tmpdir,  # noqa: F401
                    validate)
from lpaccount import check_account  # noqa: E402,F401

SCHEMA = os.path.join(SRC, "schemas", "report-findings.schema.json")
GPU_RULES = ["sync-memcpy", "pageable-memcpy", "excessive-sync", "gpu-idle", "small-kernels",
             "no-overlap", "alloc-in-path"]


def binary(path, what):
    if not os.path.exists(path):
        skip(f"{what} not built ({path})")
    return path


def findings(db, *args):
    p = latprof("report", db, "--bottlenecks", "--format", "json", *args, check=0)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        fail(f"--bottlenecks JSON does not parse: {e}\n{p.stdout[:2000]}")
    with open(SCHEMA) as f:
        errs = validate(doc, json.load(f))
    if errs:
        fail("findings JSON does not follow report-findings.schema.json:\n" + "\n".join(errs[:20]))
    check_bounds(doc, db)
    check_account(db)
    return doc


def check_bounds(doc, db):
    """A saving never exceeds the time it is measured from, nor that the scope."""
    scope = doc["scope_ns"]
    savings = [f["saving_ns"] for f in doc["findings"]]
    check(savings == sorted(savings, reverse=True), f"{db}: findings sorted by saving {savings}")
    for f in doc["findings"]:
        if not (0 <= f["saving_ns"] <= f["basis_ns"] <= scope):
            fail(f"{db}: {f['id']} saving {f['saving_ns']} > basis {f['basis_ns']} or > scope {scope}")
        if f["example"] and f["example"]["at_stake_ns"] > f["example"]["dur_ns"]:
            fail(f"{db}: {f['id']} example has more at stake than its duration")
    print(f"ok: {db}: {len(doc['findings'])} findings, each saving <= basis <= scope ({scope} ns)")


def ids(doc):
    return [f["id"] for f in doc["findings"]]


def rule(doc, rid):
    return next(r for r in doc["rules"] if r["id"] == rid)


def finding(doc, rid):
    for f in doc["findings"]:
        if f["id"] == rid:
            return f
    fail(f"no {rid} finding; found {ids(doc)}; rules {doc['rules']}")


def fired(doc, rid):
    """rid crossed its threshold: its finding, or None when the account
    left it quiet because a larger finding counts its time (counted_in)."""
    r = rule(doc, rid)
    if r["state"] == "quiet" and r["counted_in"] is not None:
        print(f"ok: {rid} crossed its threshold ({r['value']}); its time is counted in "
              f"{r['counted_in']}")
        return None
    return finding(doc, rid)


def wait_less_runq(db, lock):
    """The waits on lock, less the part each spent waiting for a CPU after
    it was woken (the breakdown's preempted: runq_ns)."""
    import sqlite3
    c = sqlite3.connect(db)
    v = c.execute("SELECT count(*), sum(w.dur_ns), sum(w.dur_ns - coalesce(w.runq_ns, 0)) FROM "
                  "lock_waits w JOIN locks l ON l.id = w.lock_id WHERE l.name = ? AND "
                  "w.class = 0", (lock,)).fetchone()
    c.close()
    return v


def ev(f, key):
    for e in f["evidence"]:
        if e["key"] == key:
            return e["value"]
    fail(f"{f['id']} has no evidence '{key}': {f['evidence']}")
