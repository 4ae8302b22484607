"""Shared by the breakdown (and block) tests: record, report as JSON, check
the schema."""
import json
import os

from lptest import BUILD, SRC, check, fail, latprof, record, sample, skip, tmpdir, validate

SCHEMA = os.path.join(SRC, "schemas", "report-breakdown.schema.json")


def need(path, what):
    if not os.path.exists(path):
        skip(f"{what} not built ({path}): NVTX headers missing?")


def need_nvtx():
    need(os.path.join(BUILD, "lib", "latprof", "liblatprof_nvtx.so"), "NVTX injection library")


def breakdown(db, *args, check_rc=0):
    p = latprof("report", db, "--breakdown", "--format", "json", *args, check=check_rc)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        fail(f"--breakdown JSON does not parse: {e}\n{p.stdout[:2000]}")
    with open(SCHEMA) as f:
        errs = validate(doc, json.load(f))
    if errs:
        fail("breakdown JSON does not follow report-breakdown.schema.json:\n" + "\n".join(errs[:20]))
    return doc


def stage(doc, name):
    for s in doc["stages"]:
        if s["name"] == name:
            return s
    fail(f"no stage '{name}' in {[s['name'] for s in doc['stages']]}")


def shares_sum(doc):
    return sum(s["share"] for s in doc["stages"])


def settle(attempt, tries=3):
    """Runs attempt() -> (result, [(ok, msg), ...]) up to `tries` times until
    every check holds, then prints them and returns the result. Stage costs
    are busy-waits: on a shared 2-core box a neighbour's burst preempts them
    and stretches a whole run, so a run is retried, never the assertion
    loosened; a wrong breakdown fails every try."""
    for i in range(tries):
        res, checks = attempt()
        bad = [m for ok, m in checks if not ok]
        if not bad:
            for _, m in checks:
                print("ok:", m)
            return res
        print(f"try {i + 1}/{tries} missed (machine busy?): " + "; ".join(bad))
    fail("; ".join(bad))
