"""Shared bits of the tests/locks e2e tests: the contention program, the
lock report's JSON Schema check."""
import json
import os
import re

# Re-exported: tests of this folder import them from here too.
from lptest import BUILD, SRC, check_schema, fail, one_error_line, sha256, validate  # noqa: F401

SMALL_LOGS = {"LATPROF_LOG_MB": "64"}
SCHEMA = os.path.join(SRC, "schemas", "report-locks.schema.json")


def lockprog():
    return os.path.join(BUILD, "tests", "locks", "lp_lockprog")


def source_line(marker, func):
    """Line number of the first line containing marker inside func in lp_lockprog.c."""
    inside = False
    with open(os.path.join(SRC, "tests", "locks", "lp_lockprog.c")) as f:
        for n, line in enumerate(f, 1):
            if re.match(rf"^\S.*\b{func}\(", line):
                inside = True
            if inside and marker in line:
                return n
    fail(f"no '{marker}' in {func}() of lp_lockprog.c")


