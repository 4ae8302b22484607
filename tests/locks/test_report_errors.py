"""latprof report refuses bad input with one line and exit 2, and never
changes the file it was given."""
import json
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

# A database of the previous schema version (4: no threads.run_delay_ns)
# is still read, the same as today's but for what version 5 added; one
# older (3) is refused like 99.
old = os.path.join(d, "v4.db")
shutil.copy(good, old)
c = sqlite3.connect(old)
c.execute("ALTER TABLE threads DROP COLUMN run_delay_ns")
c.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
c.execute("PRAGMA user_version = 4")
c.commit()
c.close()
want, got = latprof("report", good, "--locks", check=0), latprof("report", old, "--locks", check=0)
check(got.returncode == 0 and got.stdout == want.stdout,
      f"report --locks on a version 4 database: as on version 5 "
      f"(exit {got.returncode}: {got.stderr.strip()[:200]})")
# Its threads' rows split the time outside waits by task-clock alone, as
# version 4's latprof did: the kernel's run_delay was not recorded.
want, got = (json.loads(latprof("report", p, "--breakdown", "--format", "json").stdout)
             for p in (good, old))
check(len(got["threads"]) == len(want["threads"]) and
      [t["time_ns"] for t in got["threads"]] == [t["time_ns"] for t in want["threads"]],
      "report --breakdown on a version 4 database: the same threads and times")
c = sqlite3.connect(old)
c.execute("PRAGMA user_version = 3")
c.commit()
c.close()
p = latprof("report", old, "--locks")
one_error_line(p, "report on a version 3 database")
check("version 3" in p.stderr and "versions 4 to" in p.stderr, f"version 3 refused: {p.stderr}")
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
