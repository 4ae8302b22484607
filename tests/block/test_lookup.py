"""Name lookups are waits on the network ("DNS lookups"):
glibc's resolver waits in its own internal poll/recvfrom, which no hook
sees, so without hooks of their own a request's DNS query read as on-CPU
or preempted time. lp_blockprog's getaddrinfo and gethostbyname, recorded
in a namespace whose DNS server (tests/block/dns_late.py) answers 30 ms
late, must each be one socket_io call, inside the program's own clock
reads of it and at least the server's delay, with nothing recorded inside
it."""
import os
import subprocess

from lptest import BUILD, LATPROF, SRC, check, db, skip, tmpdir

PROG = os.path.join(BUILD, "tests", "bin", "lp_blockprog")
DELAY_MS = 30
d = tmpdir()
if os.geteuid() != 0 or subprocess.run(["unshare", "-mn", "true"]).returncode != 0:
    skip("needs root and unshare -mn (a mount and network namespace for the test's DNS server)")
out, path = f"{d}/lookup.txt", f"{d}/lookup.db"
p = subprocess.run(["unshare", "-mn", "python3", os.path.join(SRC, "tests", "block", "dns_late.py"),
                    d, str(DELAY_MS), LATPROF, "run", "-o", path, "--", PROG, "lookup", out],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"recorded in the namespace: exit {p.returncode} {p.stderr.strip()}")
with open(out) as f:
    own = {ln.split()[0]: list(map(int, ln.split()[1:])) for ln in f}
rows = db(path).execute(
    "SELECT b.call, b.category, b.fd_kind, b.result, b.start_ns, b.dur_ns FROM blocking_calls b "
    "JOIN threads t ON t.id = b.thread_id WHERE t.name = 'lookup'").fetchall()
for call in ("getaddrinfo", "gethostbyname"):
    before, after, found = own[call]
    check(found == 1, f"{call}: the server's answer resolved the name")
    got = [r for r in rows if r["call"] == call]
    check(len(got) == 1 and got[0]["category"] == "socket_io" and got[0]["fd_kind"] is None,
          f"{call}: one socket_io call ({[dict(r) for r in got]})")
    if got:
        r = got[0]
        check(before - 1000 <= r["start_ns"] and r["start_ns"] + r["dur_ns"] <= after + 1000 and
              r["dur_ns"] >= DELAY_MS * 1e6,
              f"{call}: {r['dur_ns'] / 1e6:.2f} ms inside the program's {(after - before) / 1e6:.2f} "
              f"ms, at least the server's {DELAY_MS} ms")
        print(f"block_lookup: {call}: recorded {r['dur_ns'] / 1e6:.2f} ms, the program measured "
              f"{(after - before) / 1e6:.2f} ms")
lookups = [r for r in rows if r["call"] != "nanosleep"]
check(all(r["call"] in ("getaddrinfo", "gethostbyname") for r in lookups),
      f"nothing recorded inside the lookups ({sorted({r['call'] for r in rows})})")
check(lookups and all(r["result"] == (r["call"] == "gethostbyname") for r in lookups),
      "results: getaddrinfo 0 (found), gethostbyname 1 (found)")
check(any(r["call"] == "nanosleep" and r["dur_ns"] >= 3e6 for r in rows),
      "the sleep after the lookups is recorded: their hooks dropped the guard")
