"""A Java 17 program (tests/real/JavaSync.java, compiled here with javac)
whose 8 threads enter `synchronized (SESSIONS)` in sessions() (held 500 us)
100 times each, then `synchronized (CACHE)` in cache() (held 200 us) 25
times each, timing their own entries. HotSpot parks a thread that
must wait for a monitor on the thread's own condition variable inside
ObjectMonitor::EnterI: those waits are lock waits on the process's Java
monitors (a `monitor` lock), not condition waits of class signal. Checked
against the program's own timing (the worker threads' monitor waits within
10% of it) and, in a second run (30 entries each) under JFR, against JFR's
JavaMonitorEnter events (threshold 0; within 10%); the JVM's own threads
waiting for work (VM thread, service, watcher) are idle; the first finding
past the machine's CPU load names the SESSIONS monitor's lock. The Java
object is not recorded: a monitor lock is one per process and Java method
that entered it ("Java monitors entered in JavaSync.sessions"), one more
for entries from interpreted code (not named by the perf map), so each
method's lock is checked against that monitor's own timing, the sum of all
against the program's total, on the worker threads (JFR's own threads
enter monitors too)."""
import json
import re
import shutil
import subprocess

from lptest import check, db, record, within
from reallib import check_first_lock_finding, drop_perf_maps, findings, javac, locks

from lptest import check_schema  # noqa: E402

d = javac("JavaSync")
out, run = f"{d}/out.txt", f"{d}/java.db"
THREADS, ITERS = 8, 100
record(run, "java", "-XX:+UseSerialGC", "-cp", d, "JavaSync", out, str(THREADS), str(ITERS))
with open(out) as f:
    sess_ns, cache_ns, n = (int(x) for x in f.read().split())
own_ns = sess_ns + cache_ns
check(n == THREADS * (ITERS + ITERS // 4), f"the program counted {n} entries")

c = db(run)
mon = c.execute(
    "SELECT l.name, count(*) AS n, sum(w.dur_ns) AS ns, count(DISTINCT w.thread_id) AS threads "
    "FROM lock_waits w JOIN locks l ON l.id = w.lock_id JOIN threads t ON t.id = w.thread_id "
    "WHERE l.kind = 'monitor' AND w.class = 0 AND t.name LIKE 'worker-%'").fetchone()
print(dict(mon))
check(mon["n"] > 0 and within(mon["ns"], own_ns, rel=0.10),
      f"monitor waits {mon['ns'] / 1e9:.3f} s within 10% of the program's own "
      f"{own_ns / 1e9:.3f} s ({mon['n']} waits, {mon['threads']} threads)")
per = {r["name"]: r["ns"] for r in c.execute(
    "SELECT l.name, sum(w.dur_ns) AS ns FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
    "JOIN threads t ON t.id = w.thread_id WHERE l.kind = 'monitor' AND w.class = 0 AND "
    "t.name LIKE 'worker-%' GROUP BY l.id")}
print(per)
interp = per.get("Java object monitors (synchronized)", 0)
for meth, own in (("sessions", sess_ns), ("cache", cache_ns)):
    got = per.get(f"Java monitors entered in JavaSync.{meth}", 0)
    # The entries made before the method was compiled are on the
    # interpreted-code lock: at most those are missing.
    check(got <= own * 1.10 and got + interp >= own * 0.90,
          f"JavaSync.{meth}'s monitor lock: {got / 1e9:.3f} s (+{interp / 1e9:.3f} s from "
          f"interpreted code) against the program's {own / 1e9:.3f} s for that monitor")
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

# latprof run gave the JVM -XX:+PreserveFramePointer and its perf map: the
# recorder walks through the Java frames, the importer names them, and the
# monitor's call site is the Java method, not the JVM's monitor code.
ldoc = locks(run)
mrow = next((r for r in ldoc["locks"] if r.get("kind") == "monitor"), None)
msite = (mrow or {}).get("sites", [{}])[0] if mrow else {}
print(msite)
check(mrow and "JavaSync." in (msite.get("function") or ""),
      f"the monitor's first call site is the program's method ({msite.get('where')})")
drop_perf_maps(run)

doc = findings(run)
check_first_lock_finding(doc, ldoc, "Java monitors entered in JavaSync.sessions", "monitor")

# A second, shorter run under JFR: its JavaMonitorEnter events (threshold 0)
# against latprof's waits of the same worker threads.
if not shutil.which("jfr"):
    print("jfr not installed: JFR comparison left out")
else:
    jfr, jrun = f"{d}/rec.jfr", f"{d}/jfr.db"
    record(jrun, "java", "-XX:+UseSerialGC",
           f"-XX:StartFlightRecording=filename={jfr},+jdk.JavaMonitorEnter#threshold=0ms",
           "-cp", d, "JavaSync", f"{d}/jfr.txt", str(THREADS), "30")
    drop_perf_maps(jrun)
    lp_ns = db(jrun).execute(
        "SELECT sum(w.dur_ns) FROM lock_waits w JOIN locks l ON l.id = w.lock_id JOIN threads t "
        "ON t.id = w.thread_id WHERE l.kind = 'monitor' AND w.class = 0 AND "
        "t.name LIKE 'worker-%'").fetchone()[0] or 0
    p = subprocess.run(["jfr", "print", "--json", "--events", "JavaMonitorEnter", jfr],
                       capture_output=True, text=True, check=True)

    def iso_ns(v):
        m = re.match(r"PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S", v)
        return ((int(m.group(1) or 0) * 60 + int(m.group(2) or 0)) * 60 + float(m.group(3))) * 1e9

    ev = [e["values"] for e in json.loads(p.stdout)["recording"]["events"]]
    jfr_ns = sum(iso_ns(e["duration"]) for e in ev
                 if e["eventThread"]["javaName"].startswith("worker-"))
    check(jfr_ns > 0 and within(lp_ns, jfr_ns, rel=0.10),
          f"under JFR: worker monitor waits {lp_ns / 1e9:.3f} s within 10% of JFR's "
          f"JavaMonitorEnter {jfr_ns / 1e9:.3f} s ({len(ev)} events)")

check_schema(locks(run), "--locks --format json")
