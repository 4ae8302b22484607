"""PostgreSQL under pgbench over a Unix socket (initdb in a temp dir, run
as an unprivileged user when the test runs as root: postgres refuses root).
Backends wait for LWLocks on private POSIX semaphores (PGSemaphoreLock), so
the innermost frame says nothing: latprof must attribute the waits to the
LWLock call sites above the wrapper (LWLockAcquire <- caller), and show the
backends by the titles postgres gives them, not 19 identical command lines."""
import os
import signal
import subprocess
import time

import lptest
from lptest import check, db, latprof, tmpdir
from reallib import locks, postgres_cluster, stop
from lpaccount import check_account

d = tmpdir()
B, pre, data = postgres_cluster(d)


def as_owner(*cmd, **kw):
    return subprocess.run([*pre, *cmd], capture_output=True, text=True, timeout=60, **kw)


path = os.path.join(d, "pg.db")
port = "5433"
env = dict(os.environ, TMPDIR=d)
rec = subprocess.Popen([*pre, lptest.LATPROF, "run", "-o", path, "--", f"{B}/postgres", "-D", data,
                        "-k", d, "-p", port, "-c", "listen_addresses=", "-c", "fsync=off"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       start_new_session=True)
try:
    ready = False
    for _ in range(225):  # 45 s: an instrumented (ASan) build starts slowly
        if subprocess.run([f"{B}/pg_isready", "-h", d, "-p", port],
                          capture_output=True).returncode == 0:
            ready = True
            break
        if rec.poll() is not None:
            break
        time.sleep(0.2)
    check(ready, "postgres accepts connections on its Unix socket")
    pg = ["-h", d, "-p", port, "-U", "postgres"]
    r = subprocess.run([f"{B}/pgbench", "-i", "-s", "2", "-q", *pg, "postgres"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"pgbench -i ({r.stderr.strip()[-200:]})")
    r = subprocess.run([f"{B}/pgbench", "-c", "8", "-j", "2", "-T", "5", *pg, "postgres"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "tps" in r.stdout, "pgbench: 8 clients for 5 s")
    with open(os.path.join(data, "postmaster.pid")) as f:
        os.kill(int(f.readline()), signal.SIGINT)  # fast shutdown
finally:
    out, err = stop(rec, timeout=40)
check(rec.returncode == 0 and os.path.exists(path), f"recorded postgres ({err.strip()[-200:]})")

conn = db(path)
nproc = conn.execute("SELECT count(*) FROM processes").fetchone()[0]
titled = conn.execute("SELECT title FROM processes WHERE title IS NOT NULL").fetchall()
check(len(titled) >= 8, f"{len(titled)} of {nproc} processes have a title at exit")
check(any("postgres: " in t[0] for t in titled), f"titles as postgres sets them: {titled[0][0]}")

lk = locks(path, "--top", "20")["locks"]
chains = [s["chain"] or "" for l in lk for s in l["sites"]]
lw = [c for c in chains if c.startswith("LWLockAcquire")]
check(lk and lw, f"waits attributed to LWLock call sites: {lw[:3]}")
sites = {s["where"] for l in lk for s in l["sites"]}
check(not any(w.startswith("PGSemaphoreLock") for w in sites),
      "no site is the semaphore wrapper itself")

# Each backend sleeps on its own semaphore (waited on by that backend only):
# those fold into one row per call site, not one row per semaphore.
every = locks(path, "--top", "100000")["locks"]
waits = conn.execute("SELECT count(*), sum(dur_ns) FROM lock_waits WHERE class = 0").fetchone()
check((sum(l["count"] for l in every), sum(l["total_ns"] for l in every)) == tuple(waits),
      f"the rows hold every contention wait once: {waits[0]} waits, {waits[1]} ns")
own = {r[0]: r[1] for r in conn.execute(
    "SELECT t.tid, count(DISTINCT w.lock_id) FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
    "JOIN threads t ON t.id = w.thread_id WHERE l.kind = 'sem' AND w.class = 0 AND w.lock_id "
    "IN (SELECT lock_id FROM lock_waits WHERE class = 0 GROUP BY lock_id HAVING "
    "count(DISTINCT thread_id) = 1) GROUP BY t.tid")}
folded = [l for l in every if l.get("folded")]
check(folded and folded[0] is every[0], f"the first row is folded: {every[0]['name']}")
top = folded[0]
check(len(own) >= 2 and top["folded"] == len(top["waiters"]) and
      all(own.get(w["tid"]) == 1 for w in top["waiters"]) and top["processes"] >= 2,
      f"{top['name']}: {top['folded']} semaphores = its {len(top['waiters'])} waiting backends "
      f"(one semaphore each), in {top['processes']} processes")
check(len(top["sites"]) == 1 and top["sites"][0]["count"] == top["count"] and
      top["sites"][0]["chain"].startswith("LWLock"),
      f"one call site, every wait: {top['sites'][0]['chain']}")
fs = [l["sites"][0]["where"] for l in folded]
check(len(fs) == len(set(fs)), f"one row per site: {len(fs)} folded rows, {len(set(fs))} sites")
# A PGPROC semaphore is one lock across processes (process-shared keying):
# when a later backend reuses an exited one's slot, two backends waited on it
# in turn and it stays its own row (not folded: more than one waiter). Only
# rows of one process must not keep a folded site.
shared = {r[0] for r in conn.execute(
    "SELECT l.name FROM locks l JOIN lock_waits w ON w.lock_id = l.id JOIN threads t ON "
    "t.id = w.thread_id WHERE l.name IS NOT NULL GROUP BY l.id HAVING "
    "count(DISTINCT t.process_id) >= 2")}
left = [(l["name"], s["where"]) for l in every if l["kind"] == "sem" and not l.get("folded")
        and l["name"] not in shared for s in l["sites"] if s["where"] in fs]
check(not left, f"no single semaphore row keeps a folded site: {left[:2]}")

txt = latprof("report", path, check=0).stdout
table = txt[txt.index("command\n"):]
check("postgres: " in table and " x postgres: " in table,
      "the default report shows processes by title, identical siblings folded")
allp = latprof("report", path, "--processes", check=0).stdout
check(allp.count("title at exit: postgres: ") == len(titled), "--processes lists every title")
# the findings of the run as one account (tests/lib/lpaccount.py)
check_account(path)
