"""The default report's process table, on a hand-built database with the
real schema: a launcher chain (env -> bash -> python3, one pid, exec'd
images) folds into the app's line with "via env > bash"; helper processes
without recorded events are counted, not listed; identical siblings with
one title show once as "N x title"; `report --processes` lists every image
with its title at exit."""
import os
import sqlite3

from lptest import check, latprof, tmpdir
from synth import make_db

path = os.path.join(tmpdir(), "procs.db")
make_db(path, [], with_ranges=False)
c = sqlite3.connect(path)
c.execute("DELETE FROM threads")
c.execute("DELETE FROM processes")
S = 1_000_000_000
rows = [  # id, pid, ppid, exec_from, cmdline, exe, title, start, end, how
    (1, 100, 1, None, "/usr/bin/env bash shim app.py", "/usr/bin/env", None, 0, 1000, "exec"),
    (2, 100, 1, 1, "bash shim app.py", "bash", None, 1000, 2000, "exec"),
    (3, 100, 1, 2, "python3 app.py", "python3", None, 2000, 10 * S, "exit"),
    (4, 101, 100, None, "readlink x", "readlink", None, 3000, 4000, "exit"),
    (5, 102, 100, None, "bash hook", "bash", None, 5000, 6000, "exit"),
]
for i in range(3):  # three identical workers, titles rewritten
    rows.append((6 + i, 200 + i, 100, None, "python3 app.py --worker", "python3",
                 "app: worker idle", 7000, 9 * S, "exit"))
c.executemany("INSERT INTO processes (id, pid, ppid, exec_from, cmdline, exe, title, start_ns, "
              "end_ns, exit_status, exit_how, log_closed) VALUES (?,?,?,?,?,?,?,?,?,0,?,1)", rows)
for pid_row in (3, 6, 7, 8):  # one thread each, one lock wait each: events
    c.execute("INSERT INTO threads (id, process_id, tid, start_ns, end_ns) VALUES (?, ?, ?, 0, ?)",
              (pid_row, pid_row, 1000 + pid_row, S))
    c.execute("INSERT OR IGNORE INTO locks (id, process_id, address, kind) VALUES (?, ?, 4096, "
              "'mutex')", (pid_row, pid_row))
    c.execute("INSERT INTO lock_waits (id, lock_id, thread_id, start_ns, dur_ns) VALUES "
              "(?, ?, ?, 10, 5)", (pid_row, pid_row, pid_row))
c.commit()
c.close()

txt = latprof("report", path, check=0).stdout
table = txt[txt.index("command\n"):].split("\n\n")[0]
lines = table.splitlines()[1:]
print(table)
check(any("python3 app.py  (via env > bash)" in l for l in lines),
      "the launcher chain folds into the app's line")
check(sum("3 x app: worker idle" in l for l in lines) == 1, "identical siblings: one line, by title")
check(not any("readlink" in l or "bash hook" in l for l in lines), "helpers without events hidden")
check("2 launcher images folded, 2 processes without recorded events" in table,
      "what was folded is counted")
allp = latprof("report", path, "--processes", check=0).stdout
check(allp.count("title at exit: app: worker idle") == 3 and "readlink x" in allp
      and "/usr/bin/env bash shim app.py" in allp, "--processes lists every image and title")
