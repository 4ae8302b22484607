"""Damaged input: one clear stderr line, exit 2, input unchanged.
Cases: truncated log, log of another format version, each impossible header
field alone, random bytes, output in a missing directory (`latprof report` cases: test_damaged_report.py)."""
import glob
import os
import shutil
import struct
import subprocess

from corelib import SMALL_LOGS, lock_server, one_error_line, sha256
from lptest import check, fail, latprof, tmpdir

d = tmpdir()
tmp = os.path.join(d, "tmp")
os.mkdir(tmp)
# Real logs, kept: TMPDIR tells latprof run where to make its latprof-XXXXXX dir.
p = latprof("run", "--keep-logs", "-o", os.path.join(d, "good.db"), "--", lock_server(),
            "--threads", "2", "--requests", "50", env={**SMALL_LOGS, "TMPDIR": tmp}, check=0)
dirs = glob.glob(os.path.join(tmp, "latprof-*"))
if len(dirs) != 1:
    fail(f"expected one kept log directory in {tmp}, found {dirs}")
logs = glob.glob(os.path.join(dirs[0], "*.lplog"))
check(len(logs) == 1, f"one process log kept ({logs})")
good = logs[0]


def case(name, mutate):
    """Copy the good log into DIR/<name>/, damage it, import: must refuse."""
    cd = os.path.join(d, name)
    os.mkdir(cd)
    path = os.path.join(cd, os.path.basename(good))
    subprocess.run(["cp", "--sparse=always", good, path], check=True)
    mutate(path)
    before = sha256(path)
    out = os.path.join(d, name + ".db")
    p = latprof("import", cd, "-o", out)
    one_error_line(p, f"import of a {name} log")
    check(sha256(path) == before, f"{name}: the log is unchanged")
    check(not os.path.exists(out), f"{name}: no database left behind")


def truncate(path):
    os.truncate(path, os.path.getsize(path) // 2)


def other_version(path):
    with open(path, "r+b") as f:
        f.seek(8)
        (v,) = struct.unpack("<I", f.read(4))
        f.seek(8)
        f.write(struct.pack("<I", v + 1))


case("truncated", truncate)
case("other-version", other_version)


def field(off, value):
    """Set one uint32 of struct lp_log_header (format/lp_log_format.h)."""
    def mutate(path):
        with open(path, "r+b") as f:
            f.seek(off)
            f.write(struct.pack("<I", value))
    return mutate


# Each impossible header size alone is a damaged header: header_size (16),
# chunk_size (20: small, unaligned, huge), max_chunks (24), clock_kind (28).
case("header-size", field(16, 4096 + 8))
case("chunk-small", field(20, 2048))
case("chunk-unaligned", field(20, 65536 + 4))
case("chunk-huge", field(20, (1 << 30) + 8))
case("no-chunks", field(24, 0))
case("clock-kind", field(28, 99))

rd = os.path.join(d, "random")
os.mkdir(rd)
rnd = os.path.join(rd, "x.lplog")
with open(rnd, "wb") as f:
    f.write(os.urandom(256 * 1024))
before = sha256(rnd)
p = latprof("import", rd, "-o", os.path.join(d, "random.db"))
one_error_line(p, "import of random bytes")
check(sha256(rnd) == before, "random bytes: the file is unchanged")

# `latprof run` refuses an output in a missing directory before starting the app.
marker = os.path.join(d, "app-ran")
p = latprof("run", "-o", "/nonexistent/dir/x.db", "--", "touch", marker)
one_error_line(p, "run -o /nonexistent/dir/x.db")
check(not os.path.exists(marker), "the app was not started")

shutil.rmtree(d, ignore_errors=True)
