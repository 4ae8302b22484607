"""`latprof report` on a file that is not a latprof database: one clear
stderr line, exit 2, the file unchanged."""
import os
import shutil
import sqlite3

from corelib import one_error_line, sha256
from lptest import check, latprof, tmpdir

d = tmpdir()
# `latprof report` on a file that is not a latprof database.
for name, data in (("text.db", b"hello, not a database\n" * 100),
                   ("random.db", os.urandom(64 * 1024))):
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    before = sha256(path)
    p = latprof("report", path, "--locks")
    one_error_line(p, f"report on {name}")
    check(sha256(path) == before, f"report on {name}: the file is unchanged")
# A valid SQLite file that is not latprof's.
path = os.path.join(d, "other.sqlite")
conn = sqlite3.connect(path)
conn.execute("CREATE TABLE t(x)")
conn.commit()
conn.close()
before = sha256(path)
p = latprof("report", path, "--locks")
one_error_line(p, "report on a foreign SQLite database")
check(sha256(path) == before, "foreign SQLite database unchanged")
shutil.rmtree(d, ignore_errors=True)  # kept on failure: fail() exits first
