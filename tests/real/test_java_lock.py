"""A Java 17 program (tests/real/JavaLock.java) whose 8 threads each take
one ReentrantLock 100 times and hold it 500 us, timing their own lock()
calls, while a one-thread pool waits for tasks in its queue. latprof run
adds -XX:+PreserveFramePointer and the JVM's perf map (JAVA_TOOL_OPTIONS),
so the recorder walks through Java frames and the importer names them.
HotSpot parks a thread waiting for a java.util.concurrent lock in
Unsafe_Park: with ReentrantLock/AQS acquire among its Java frames that is a
lock wait (kind juc), with a queue's take under ThreadPoolExecutor.getTask
it is idle. Checked in the program's timed phase (after a warm-up that gets
the code compiled: interpreted frames are not named), on the worker
threads: their juc lock waits within 10% of the program's own timing, no
Unsafe_Park of theirs left as a condition wait, the lock's call site is the
program's method, the pool's parks are idle, and the first finding past
the machine's CPU load names the lock."""
import os
import re

from lptest import check, db, record, within
from reallib import check_first_lock_finding, drop_perf_maps, findings, javac, locks

from lptest import check_schema  # noqa: E402

d = javac("JavaLock")
out, run = f"{d}/out.txt", f"{d}/java.db"
THREADS, ITERS = 8, 100
record(run, "java", "-XX:+UseSerialGC", "-cp", d, "JavaLock", out, str(THREADS), str(ITERS))
with open(out) as f:
    own_ns, n, t0, t1 = (int(x) for x in f.read().split())
check(n == THREADS * ITERS, f"the program counted {n} acquisitions")

c = db(run)
jit = c.execute("SELECT value FROM meta WHERE key = 'import.jit_symbols'").fetchone()
check(jit and int(jit[0]) > 0, f"the JVM's perf map named JIT code ({jit and jit[0]} symbols)")
drop_perf_maps(run)

phase = "t.name LIKE 'worker-%' AND {0}.start_ns >= ? AND {0}.start_ns < ?"
juc = c.execute(
    "SELECT l.name, count(*) AS n, sum(w.dur_ns) AS ns, count(DISTINCT w.thread_id) AS threads "
    "FROM lock_waits w JOIN locks l ON l.id = w.lock_id JOIN threads t ON t.id = w.thread_id "
    "WHERE l.kind = 'juc' AND w.class = 0 AND " + phase.format("w"), (t0, t1)).fetchone()
print(dict(juc))
check(juc["n"] > 0 and within(juc["ns"], own_ns, rel=0.10),
      f"ReentrantLock waits {juc['ns'] / 1e9:.3f} s within 10% of the program's own "
      f"{own_ns / 1e9:.3f} s ({juc['n']} waits, {juc['threads']} threads)")
left = c.execute(
    "SELECT count(*) FROM cond_waits c JOIN threads t ON t.id = c.thread_id "
    "JOIN stack_frames sf ON sf.stack_id = c.stack_id AND sf.depth < 3 JOIN frames f "
    "ON f.id = sf.frame_id WHERE f.function = 'Unsafe_Park' AND " + phase.format("c"),
    (t0, t1)).fetchone()[0]
check(left == 0, f"no worker park left as a condition wait ({left})")

doc = locks(run)
row = next((r for r in doc["locks"] if r.get("kind") == "juc"), None)
site = (row or {}).get("sites", [{}])[0] if row else {}
print(site)
check(row and "JavaLock.serve(" in (site.get("function") or ""),
      f"the lock's first call site is the program's method ({site})")

idle = c.execute(
    "SELECT count(*), sum(min(c.start_ns + c.dur_ns, ?2) - max(c.start_ns, ?1)) FROM cond_waits c JOIN threads t ON t.id = c.thread_id "
    "JOIN stack_frames sf ON sf.stack_id = c.stack_id AND sf.depth < 3 JOIN frames f "
    "ON f.id = sf.frame_id WHERE t.name = 'pool-idle' AND f.function = 'Unsafe_Park' "
    "AND c.class = 2 AND c.start_ns < ?2 AND c.start_ns + c.dur_ns > ?1", (t0, t1)).fetchone()
check(idle[0] >= 1 and within(idle[1], t1 - t0, rel=0.10),
      f"the idle pool thread's parks cover the timed phase, class idle ({idle[0]} waits, "
      f"{(idle[1] or 0) / 1e9:.3f} s of {(t1 - t0) / 1e9:.3f} s)")

fdoc = findings(run)
check_first_lock_finding(fdoc, doc, "java.util.concurrent locks taken in JavaLock.serve", "juc")
check_schema(doc, "--locks --format json")

# JAVA_TOOL_OPTIONS: ours after the user's; the user's own choice of the
# flags left alone (the JVM echoes the value it picked up on stderr).
for user, want in (("-Dlp.x=1", "-Dlp.x=1 -XX:+UnlockDiagnosticVMOptions "
                    "-XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit"),
                   ("-XX:-PreserveFramePointer", "-XX:-PreserveFramePointer")):
    p = record(f"{d}/v.db", "java", "-version", env={"JAVA_TOOL_OPTIONS": user})
    got = re.search(r"Picked up JAVA_TOOL_OPTIONS: (.*)", p.stderr)
    check(got and got.group(1).strip() == want,
          f"JAVA_TOOL_OPTIONS={user!r} -> {got and got.group(1)!r} (want {want!r})")
    drop_perf_maps(f"{d}/v.db")
    os.unlink(f"{d}/v.db")
