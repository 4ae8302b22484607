"""A daemon started as root that drops to its own user before it records
anything (memcached -u, a forked nginx worker): its records, those of a
child it forks and of one it execs after the drop are all kept. Before, the
run's private directory refused the dropped process its log: memcached -u
nobody lost all 50,136 records and showed one thread. Second source: the
app's own uid after the drop, and the child's own count of its waits."""
import os
import pwd

from lptest import check, skip, tmpdir
from rellib import app, meta, open_db, run

if os.geteuid() != 0:
    skip("needs root: the case is a process that drops root")
nobody = pwd.getpwnam("nobody").pw_uid
# The run's directory is made under TMPDIR, which the dropped process must
# be able to reach (as /tmp is).
top = os.environ["TMPDIR"]
os.chmod(top, 0o711)
d = tmpdir()
os.chmod(d, 0o755)
out = os.path.join(d, "drop.db")
p = run(out, app(), "dropuid", nobody, app())
lines = p.stdout.split("\n")
check(p.returncode == 0 and f"dropuid {nobody} {nobody}" in lines,
      f"the app dropped to uid {nobody} and its children exited 0 ({p.returncode}, "
      f"{p.stdout.strip()!r})\n{p.stderr}")
c = open_db(out)
images = c.execute(
    "SELECT p.id, p.cmdline, p.dropped_records, p.parent_id, p.exec_from, p.exec_path, "
    "(SELECT count(*) FROM lock_waits w JOIN threads t ON t.id = w.thread_id "
    " WHERE t.process_id = p.id), "
    "(SELECT count(*) FROM threads t WHERE t.process_id = p.id) "
    "FROM processes p ORDER BY p.start_ns").fetchall()
for _, cmd, dropped, _, _, _, waits, threads in images:
    print(f"FIGURE uid drop: image {cmd!r}: {threads} threads, {waits} lock waits, "
          f"{dropped} records dropped")
main = images[0]
forked = [r for r in images if r[3] == main[0] and r[4] is None and not r[5]]
execd = [r for r in images if r[4] is not None]
check(all(r[2] == 0 for r in images), f"no image dropped a record ({len(images)} images)")
check(main[6] > 0 and main[7] >= 4,
      f"the app's waits after the drop are recorded ({main[6]}, {main[7]} threads)")
check(len(forked) == 1 and forked[0][6] > 0,
      f"its child forked after the drop has its waits ({[r[6] for r in forked]})")
own = [int(t.split("=")[1]) for l in lines if l.startswith("stacks ") for t in l.split()
       if t.startswith("waits=")]
check(len(execd) == 1 and "stacks" in execd[0][1] and execd[0][6] > 0 and own,
      f"its child exec'd after the drop has its waits ({[r[6] for r in execd]}; "
      f"the child timed {own} lock calls that waited)")
check(meta(c, "dropped_records") in ("0", 0), "the run dropped no record")
