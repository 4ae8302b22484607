"""Each blocking call imports with the category docs/schema.md gives it
(blocking_calls.category): the call decides for the sleep family
(sleep), poll/select/epoll (poll_wait), fsync/fdatasync (file_io), name
lookups (socket_io: they wait on a DNS server) and futex, join and the
wait family (other_block); the descriptor decides for I/O (file: file_io,
socket: socket_io, pipe, eventfd, tty, other or unknown: other_block).
tests/import/gen_waits.c writes one record per call id below through the
recording core, each 1 ms long; every one must be imported, with its
category and duration."""
import os
import subprocess

from lptest import BUILD, check, db, latprof, tmpdir

NONE, FILE, SOCKET, PIPE, EVENTFD, TTY, OTHER, UNKNOWN = range(8)
# (enum lp_block_call, fd kind, category)
CASES = [(c, NONE, "sleep") for c in (1, 2, 3, 4)] + \
    [(c, NONE, "poll_wait") for c in range(30, 36)] + \
    [(40, FILE, "file_io"), (41, FILE, "file_io"), (40, UNKNOWN, "file_io")] + \
    [(c, NONE, "socket_io") for c in (44, 45, 46, 47)] + \
    [(c, NONE, "other_block") for c in range(50, 57)] + \
    [(c, FILE, "file_io") for c in range(10, 17)] + \
    [(c, SOCKET, "socket_io") for c in (10, 11, 20, 21, 26, 27, 28)] + \
    [(10, k, "other_block") for k in (PIPE, EVENTFD, TTY, OTHER, UNKNOWN, NONE)]
T = tmpdir()
logs = os.path.join(T, "logs")
os.mkdir(logs)
gen = subprocess.run([os.path.join(BUILD, "tests", "bin", "gen_waits"), logs] +
                     [f"b{c}:{k}" for c, k, _ in CASES], capture_output=True, text=True)
check(gen.returncode == 0 and f"blocks={len(CASES)} " in gen.stdout,
      f"gen_waits wrote {len(CASES)} blocking calls ({gen.stdout.strip()} {gen.stderr.strip()})")
path = os.path.join(T, "blocks.db")
latprof("import", logs, "-o", path)
c = db(path)
rows = c.execute("SELECT call, category, dur_ns FROM blocking_calls ORDER BY start_ns").fetchall()
check(len(rows) == len(CASES), f"{len(rows)} blocking calls imported of {len(CASES)} written")
bad = [(case, tuple(r)) for case, r in zip(CASES, rows)
       if r["category"] != case[2] or r["dur_ns"] != 1000000]
check(not bad, f"every call in its category, 1 ms long (wrong: {bad[:4]})")
names = {r["call"] for r, case in zip(rows, CASES) if case[0] == 47}
check(names == {"gethostbyaddr"}, f"call 47 is gethostbyaddr ({names})")
