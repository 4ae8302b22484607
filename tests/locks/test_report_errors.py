"""latprof report refuses bad input with one line and exit 2, and never
changes the file it was given."""
import os
import shutil
import sqlite3

from locklib import SMALL_LOGS, lockprog, one_error_line, sha256
from lptest import check, latprof, record, tmpdir

d = tmpdir()
good = os.path.join(d, "good.db")
record(good, lockprog(), "x", "20", env=SMALL_LOGS)

cases = {}
cases["text.db"] = b"hello, not a database\n" * 100
cases["random.db"] = os.urandom(64 * 1024)
cases["empty.db"] = b""
for name, data in cases.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
foreign = os.path.join(d, "foreign.sqlite")
c = sqlite3.connect(foreign)
c.execute("CREATE TABLE t(x)")
c.commit()
c.close()
wrongver = os.path.join(d, "wrongver.db")
shutil.copy(good, wrongver)
c = sqlite3.connect(wrongver)
c.execute("PRAGMA user_version = 99")
c.commit()
c.close()

for path in [os.path.join(d, n) for n in cases] + [foreign, wrongver]:
    name = os.path.basename(path)
    for args in (["--locks"], [], ["--locks", "--format", "json"]):
        before = sha256(path)
        p = latprof("report", path, *args)
        one_error_line(p, f"report {' '.join(args)} on {name}")
        check(sha256(path) == before, f"{name} unchanged")
p = latprof("report", wrongver, "--locks")
check("version 99" in p.stderr, "the wrong version is named")
one_error_line(latprof("report", os.path.join(d, "missing.db")), "missing file")
one_error_line(latprof("report", d), "a directory")

# Usage errors on a good database: one line, exit 2, database unchanged.
before = sha256(good)
for args in (["--bogus"], ["--top"], ["--top", "0"], ["--top", "x"], ["--format", "xml"],
             [], ["extra.db"]):
    one_error_line(latprof("report", *([good] if args != [] else []), *args),
                   f"usage: report {' '.join(args)}")
p = latprof("report", good, "--locks", "-o", good)
one_error_line(p, "-o onto the database itself")
p = latprof("report", good, "--locks", "-o", os.path.join(d, "no", "such", "dir.txt"))
one_error_line(p, "-o into a missing directory")
check(sha256(good) == before, "the database is unchanged by every refused command")
