"""A Java 17 program (tests/real/JavaSync.java, compiled here with javac)
whose 8 threads each enter one `synchronized (SESSIONS)` block 30 times and
hold it 500 us, timing their own entries. HotSpot parks a thread that
must wait for a monitor on the thread's own condition variable inside
ObjectMonitor::EnterI: those waits are lock waits on the process's Java
monitors (a `monitor` lock), not condition waits of class signal. Checked
against the program's own timing: the monitor lock's waits within 10% of
it; the JVM's own threads waiting for work (VM thread, service, watcher,
compiler, GC) are idle; the first lock-contention finding names the
monitors."""
import subprocess

from lptest import check, db, record, tmpdir, within
from reallib import findings, need_cmd
import os

need_cmd("javac", "java")
d = tmpdir()
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "JavaSync.java")
subprocess.run(["javac", "-d", d, src], check=True)
out, run = f"{d}/out.txt", f"{d}/java.db"
THREADS, ITERS = 8, 100
record(run, "java", "-XX:+UseSerialGC", "-cp", d, "JavaSync", out, str(THREADS), str(ITERS))
with open(out) as f:
    own_ns, n = (int(x) for x in f.read().split())
check(n == THREADS * ITERS, f"the program counted {n} entries")

c = db(run)
mon = c.execute(
    "SELECT l.name, count(*) AS n, sum(w.dur_ns) AS ns, count(DISTINCT w.thread_id) AS threads "
    "FROM lock_waits w JOIN locks l ON l.id = w.lock_id WHERE l.kind = 'monitor' AND "
    "w.class = 0").fetchone()
print(dict(mon))
check(mon["n"] > 0 and within(mon["ns"], own_ns, rel=0.10),
      f"monitor waits {mon['ns'] / 1e9:.3f} s within 10% of the program's own "
      f"{own_ns / 1e9:.3f} s ({mon['n']} waits, {mon['threads']} threads)")
left = c.execute(
    "SELECT count(*) FROM cond_waits c JOIN stack_frames sf ON sf.stack_id = c.stack_id "
    "AND sf.depth < 4 JOIN frames f ON f.id = sf.frame_id "
    "WHERE f.function LIKE 'ObjectMonitor::EnterI(%'").fetchone()[0]
check(left == 0, f"no monitor entry left as a condition wait ({left})")
vm = c.execute(
    "SELECT f.function, group_concat(DISTINCT c.class) AS classes FROM cond_waits c "
    "JOIN stack_frames sf ON sf.stack_id = c.stack_id AND sf.depth < 6 JOIN frames f "
    "ON f.id = sf.frame_id WHERE f.function LIKE 'VMThread::wait_for_operation%' OR "
    "f.function LIKE 'ServiceThread::service_thread_entry%' OR f.function LIKE "
    "'WatcherThread::sleep%' GROUP BY f.function").fetchall()
check(vm and all(r["classes"] == "2" for r in vm),
      f"the JVM's VM, service and watcher threads wait for work: idle "
      f"({[dict(r) for r in vm]})")

doc = findings(run)
print([(f["id"], f["subject"]) for f in doc["findings"]])
locks = [f for f in doc["findings"] if f["id"] == "lock-contention"]
check(locks and locks[0]["subject"] == mon["name"],
      f"the first lock-contention finding names {mon['name']} "
      f"({[f['subject'] for f in locks]})")
