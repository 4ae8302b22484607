"""Processes that record nothing have no log of their own: they are in the
run's process table (procs.lptab) and the importer makes their rows from it. On real runs:

1. A fork loop of N children (lp_core_proc forkloop): N+1 processes with
   the right ppid and parent, each child's exit status (one killed by
   SIGKILL: exit_signal 9), command line and main thread; only the parent
   and the one child that contends for a lock have a log file, and that
   child's lock waits are its own.
2. A spawn loop from sh: every /bin/true image continues its forked shell
   (exec_from), exits 0, and the whole run left the shell's log (its
   children's statuses, its waits for them) and no other, but for an image
   that recorded a slow call (seq's exit flush under ASan).
3. The same table with a cut record and garbage appended: `latprof import`
   still imports every process and counts the damage.
Ground truth: the helper's own file of pids and wait statuses."""
import os
import re
import shutil

from corelib import helper, open_db
from lptest import check, latprof, q1, record, tmpdir

d = tmpdir()
N = 40


def kept_dir(p):
    m = re.search(r"event logs kept in (\S+)", p.stderr)
    check(m is not None, f"--keep-logs names the log directory\n{p.stderr}")
    return m.group(1)


def logs_in(path):
    return sorted(f for f in os.listdir(path) if f.endswith(".lplog"))


# 1. fork loop
truth = os.path.join(d, "forkloop.txt")
out = os.path.join(d, "forkloop.db")
p = record(out, helper(), "forkloop", truth, str(N), args=("--keep-logs",))
logdir = kept_dir(p)
lines = open(truth).read().split("\n")
parent = int(lines[0].split("=")[1])
kids = [dict((k, int(v)) for k, _, v in (t.partition("=") for t in ln.split()))
        for ln in lines[1:] if ln.strip()]
check(len(kids) == N, f"the helper forked {len(kids)} children")
c = open_db(out)
check(q1(c, "SELECT count(*) FROM processes") == N + 1,
      f"{N + 1} processes recorded ({q1(c, 'SELECT count(*) FROM processes')})")
root = c.execute("SELECT * FROM processes WHERE pid = ?", (parent,)).fetchone()
bad = []
for k in kids:
    row = c.execute("SELECT * FROM processes WHERE pid = ?", (k["pid"],)).fetchone()
    if row is None:
        bad.append(f"pid {k['pid']} missing")
        continue
    want_status = k["status"] if k["status"] >= 0 else None
    want_signal = -k["status"] if k["status"] < 0 else None
    if (row["ppid"], row["parent_id"]) != (parent, root["id"]):
        bad.append(f"pid {k['pid']}: ppid {row['ppid']} parent_id {row['parent_id']}")
    if (row["exit_status"], row["exit_signal"]) != (want_status, want_signal):
        bad.append(f"pid {k['pid']}: exit {row['exit_status']}/{row['exit_signal']}, "
                   f"want {want_status}/{want_signal}")
    if row["cmdline"] != root["cmdline"] or row["start_ns"] <= root["start_ns"]:
        bad.append(f"pid {k['pid']}: cmdline {row['cmdline']!r}, start {row['start_ns']}")
    threads = c.execute("SELECT tid, name, parent_tid FROM threads WHERE process_id = ?",
                        (row["id"],)).fetchall()
    main = [t for t in threads if t["tid"] == k["pid"]]
    if not main or main[0]["name"] != "lp_core_proc" or main[0]["parent_tid"] != parent:
        bad.append(f"pid {k['pid']}: main thread {[dict(t) for t in main]}")
    if len(threads) != (3 if k["locker"] else 1):
        bad.append(f"pid {k['pid']}: {len(threads)} threads")
check(not bad, f"every child as the helper saw it ({bad[:5]})")
check(sum(1 for k in kids if k["status"] == -9) == 1, "one child was killed by SIGKILL")
locker = [k["pid"] for k in kids if k["locker"]][0]
waits = c.execute("SELECT p.pid, count(*) FROM lock_waits w JOIN threads t ON t.id = w.thread_id "
                  "JOIN processes p ON p.id = t.process_id GROUP BY p.pid").fetchall()
check([tuple(w) for w in waits] and all(w[0] == locker for w in waits) and waits[0][1] >= 1,
      f"the locking child's waits are its own ({[tuple(w) for w in waits]}, locker {locker})")
logs = logs_in(logdir)
check(logs == sorted([f"p{parent}-0.lplog", f"p{locker}-0.lplog"]),
      f"2 log files for {N + 1} processes: the parent's and the locker's ({logs})")
check(os.path.getsize(os.path.join(logdir, "procs.lptab")) > 0, "the process table was written")
print(f"FIGURE proctab[forkloop]: {N + 1} processes, {len(logs)} log files, "
      f"{waits[0][1]} waits in the locking child")

# 2. spawn loop from sh
out2 = os.path.join(d, "spawn.db")
p = record(out2, "sh", "-c", "for i in $(seq 30); do /bin/true x; done; exit 4",
           args=("--keep-logs",), check_app=4)
logdir2 = kept_dir(p)
c2 = open_db(out2)
sh = c2.execute("SELECT * FROM processes WHERE exe = 'sh' AND ppid NOT IN "
                "(SELECT pid FROM processes)").fetchone()
check(sh is not None and sh["exit_status"] == 4, "the shell's exit status 4")
trues = c2.execute("SELECT p.*, f.pid AS fpid, f.exec_path AS fpath, f.parent_id AS fparent "
                   "FROM processes p JOIN processes f ON f.id = p.exec_from "
                   "WHERE p.exe = '/bin/true'").fetchall()
check(len(trues) == 30, f"30 /bin/true images ({len(trues)})")
check(all(t["exit_status"] == 0 and t["cmdline"] == "/bin/true x" and t["fpid"] == t["pid"] and
          t["fpath"] == "/bin/true" and t["parent_id"] == sh["id"] and t["fparent"] == sh["id"]
          for t in trues),
      "each /bin/true continues its forked shell, exits 0, has the shell as parent")
nproc = q1(c2, "SELECT count(*) FROM processes")
logs2 = logs_in(logdir2)
# Beside the shell's, a log only for an image that recorded something: a
# slow `fflush` at seq's exit (12 us under ASan) is a blocking call.
recorded = {r[0] for r in c2.execute(
    "SELECT DISTINCT p.pid FROM blocking_calls b JOIN threads t ON t.id = b.thread_id "
    "JOIN processes p ON p.id = t.process_id")}
others = [lg for lg in logs2 if not lg.startswith(f"p{sh['pid']}-")]
check(nproc == 63 and len(logs2) - len(others) == 1 and
      all(int(lg[1:].split("-")[0]) in recorded for lg in others),
      f"63 process images (sh, 31 forks, 31 execs), the shell's log and only logs of images "
      f"that recorded a call ({nproc}, {logs2}, recorded: {sorted(recorded)})")
print(f"FIGURE proctab[spawn]: {nproc} process images, {len(logs2)} log file")

# 3. a damaged table: a cut record, then garbage, then the rest
dmg = os.path.join(d, "damaged")
shutil.copytree(logdir, dmg)
tab = os.path.join(dmg, "procs.lptab")
data = open(tab, "rb").read()
with open(tab, "wb") as f:
    f.write(data[:200] + data[200:230] + b"\x17garbage" * 5 + data[200:])
out3 = os.path.join(d, "damaged.db")
r = latprof("import", dmg, "-o", out3)
check(r.returncode == 0, f"import of a damaged table exits 0\n{r.stderr}")
c3 = open_db(out3)
check(q1(c3, "SELECT count(*) FROM processes") == N + 1,
      f"every process kept ({q1(c3, 'SELECT count(*) FROM processes')})")
damaged = int(q1(c3, "SELECT value FROM meta WHERE key = 'import.ptab_damaged'"))
check(damaged >= 1, f"the damage is counted (import.ptab_damaged = {damaged})")
