"""Shared bits of the tests/core e2e tests (on top of tests/lib/lptest)."""
import os

# Re-exported: tests of this folder import them from here too.
from lptest import BUILD, one_error_line, open_db, q1, read_kv, sha256  # noqa: F401

# Small logs: the default 1 GiB sparse file is slow to copy and hash.
SMALL_LOGS = {"LATPROF_LOG_MB": "64"}


def helper():
    return os.path.join(BUILD, "tests", "core", "lp_core_proc")


def lock_server():
    return os.path.join(BUILD, "samples", "lock_server")


def dropped(conn):
    return q1(conn, "SELECT value FROM meta WHERE key = 'dropped_records'")
