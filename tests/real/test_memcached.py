"""Debian's memcached (a stripped binary) under memcaslap on loopback: its
global locks (slabs_lock, stats locks...) are statics in the binary's .bss,
with no symbol left. latprof must name them by module+offset (and section)
or by symbol, never as "(heap)". Its worker threads are still running when
it exits: their counters are read then (thread_counters source
alive_at_exit), not lost."""
import os
import signal
import subprocess

import lptest
from lptest import check, db, tmpdir
from reallib import locks, need_cmd, pidfile_pid, start_memcached, stop, wait_port
from lpaccount import check_account

need_cmd("memcached", "memcaslap")
rec, port, pidfile, path = start_memcached(tmpdir())
try:
    check(wait_port(port, rec), f"memcached listens on 127.0.0.1:{port}")
    load = subprocess.run(["memcaslap", "-s", f"127.0.0.1:{port}", "-t", "4s", "-T", "2",
                           "-c", "16"], capture_output=True, text=True, timeout=40)
    check(load.returncode == 0 and "TPS" in load.stdout, "memcaslap ran 4 s of load")
    os.kill(pidfile_pid(pidfile), signal.SIGTERM)
finally:
    out, err = stop(rec)
check(rec.returncode == 0 and os.path.exists(path), f"recorded memcached ({err.strip()[-200:]})")

conn = db(path)
globals_ = conn.execute("SELECT l.name, l.module, count(*) FROM lock_waits w JOIN locks l "
                        "ON l.id = w.lock_id JOIN modules m ON m.process_id = l.process_id "
                        "AND m.path LIKE '%/memcached' AND l.address >= m.start_addr AND "
                        "l.address < m.end_addr GROUP BY l.id").fetchall()
check(len(globals_) >= 1, f"{len(globals_)} contended locks live in memcached's own data")
check(all(n and (n.startswith("memcached+0x") or not n.startswith("0x")) for n, _, _ in globals_),
      f"each is named by module+offset or symbol: {[n for n, _, _ in globals_]}")
check(any(n.endswith("(.bss)") or n.endswith("(.data)") for n, _, _ in globals_),
      "the section is named")
lk = locks(path)["locks"]
heap_named = [l["name"] for l in lk if "(heap)" in l["name"] and l["symbol"]]
check(not heap_named, "no lock with a name is shown as heap")
inbin = [l for l in lk if (l["module"] or "").endswith("/memcached")]
check(inbin and all("(heap)" not in l["name"] for l in inbin),
      f"--locks shows memcached's globals by name: {[l['name'] for l in inbin][:4]}")
alive = conn.execute("SELECT t.name, tc.value FROM thread_counters tc JOIN threads t ON "
                     "t.id = tc.thread_id JOIN counter_events e ON e.id = tc.event_id WHERE "
                     "e.name = 'task-clock' AND tc.source = 'alive_at_exit'").fetchall()
if not alive and not conn.execute("SELECT count(*) FROM thread_counters").fetchone()[0]:
    lptest.skip("no CPU counters on this machine (perf_event_open refused)")
nthreads = conn.execute("SELECT count(*) FROM threads").fetchone()[0]
check(len(alive) == nthreads - 1 and all(v > 0 for _, v in alive),
      f"{len(alive)} of {nthreads} threads still running at exit have their task-clock "
      f"(the main thread wrote its own): workers "
      f"{[round(v / 1e6, 1) for n, v in alive if n == 'mc-worker']} ms")
# the findings of the run as one account (tests/lib/lpaccount.py)
check_account(path)
