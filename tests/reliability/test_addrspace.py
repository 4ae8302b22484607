"""Address space. Each process used to map its whole
log (LATPROF_LOG_MB, 1 GiB by default) at start: under `ulimit -v 1200000`
an app allocating 800 MB failed. The log is now mapped in segments as it
grows: the app gets the memory it gets bare, and LATPROF_LOG_MB still
bounds the log. Figure: the app's peak address space bare and recorded."""
import os
import struct
import subprocess

from lptest import LATPROF, check, sanitizer, skip, tmpdir
from rellib import app, open_db

if sanitizer():
    skip("sanitizer runtimes reserve terabytes of address space: no ulimit -v there")
d = tmpdir()
LIMIT_KB = 1200000
ULIMIT = f'ulimit -v {LIMIT_KB} && exec "$@"'


def limited(*cmd, env=None):
    return subprocess.run(["sh", "-c", ULIMIT, "sh", *map(str, cmd)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})})


b = limited(app(), "alloc", 800)
check(b.returncode == 0, f"bare: 800 MB under ulimit -v {LIMIT_KB} ({b.stdout.strip()})")
out = os.path.join(d, "as.db")
logs = os.path.join(d, "logs")
os.mkdir(logs)
p = limited(LATPROF, "run", "--keep-logs", "-o", out, "--", app(), "alloc", 800,
            env={"TMPDIR": logs})
check(p.returncode == 0 and p.stdout.strip() == "alloc 800 MB ok",
      f"latprof run: the app's 800 MB under ulimit -v {LIMIT_KB} ({p.returncode}, "
      f"{p.stdout.strip()!r})\n{p.stderr}")
c = open_db(out)
procs = c.execute("SELECT count(*) FROM processes").fetchone()[0]
check(procs == 1, f"the app was recorded ({procs} process)")
# The log still has the room LATPROF_LOG_MB gives it (default 1024 MiB),
# though the file and the mapping only grew as far as it was used.
log = [os.path.join(r, f) for r, _, fs in os.walk(logs) for f in fs if f.endswith(".lplog")]
with open(log[0], "rb") as f:
    chunk, room = struct.unpack_from("<II", f.read(32), 20)
size = os.path.getsize(log[0])
print(f"FIGURE addrspace: 800 MB allocated under ulimit -v {LIMIT_KB} KiB bare and recorded; "
      f"log room {chunk * room >> 20} MiB, file {size >> 10} KiB")
check(chunk * room >= 1000 << 20, f"the log's room is still LATPROF_LOG_MB's ({chunk * room})")
