"""One signal, one delivery. The app (lp_rel_app once)
exits 3 on its first SIGINT/SIGTERM and 99 when a second one arrives within
half a second: a signal that reaches it directly AND through latprof shows.
Each case runs the way a user would: an interactive bash on a pseudo-
terminal (job control on, as in a terminal), CI having no tty of its own:
  kill -TERM %1          the shell signals the job's process group
  kill -INT -PGID        the same by hand
  Ctrl-C                 the terminal signals its foreground group
  Ctrl-Z, fg, Ctrl-C     job control: the job stops and continues as a whole
and, without a terminal, `kill -TERM 0` from a script (its own group)."""
import os
import pty
import re
import select
import signal
import subprocess
import time

from lptest import LATPROF, check, fail, tmpdir
from rellib import SMALL_LOGS, app, open_db

d = tmpdir()


class Term:
    """An interactive bash on a pty; .out accumulates what it printed."""

    def __init__(self):
        env = {**os.environ, **SMALL_LOGS, "PS1": "$ ", "TERM": "dumb"}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
        self.out = ""

    def send(self, s):
        os.write(self.fd, s.encode())

    def read(self, secs):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if r:
                try:
                    self.out += os.read(self.fd, 65536).decode(errors="replace")
                except OSError:
                    return

    def expect(self, pattern, secs=60):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            m = re.search(pattern, self.out)
            if m:
                return m
            self.read(0.1)
        fail(f"no {pattern!r} from the terminal within {secs} s; it showed:\n{self.out}")

    def close(self):
        self.send("exit\n")
        self.read(0.5)
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)


def wait_ready(path, secs=60):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if os.path.exists(path) and open(path).read().endswith("\n"):
            pid, pgid = map(int, open(path).read().split())
            return pid, pgid
        time.sleep(0.02)
    fail(f"the app never wrote {path}")


def recorded_exit(dbpath):
    c = open_db(dbpath)
    return c.execute("SELECT exit_status FROM processes WHERE parent_id IS NULL").fetchone()[0]


def job(t, name, signal_it):
    """Start the app as a background job, signal it, return the job's status."""
    ready, out = os.path.join(d, name + ".ready"), os.path.join(d, name + ".db")
    t.send(f"{LATPROF} run -o {out} -- {app()} once {ready} &\n")
    app_pid, app_pgid = wait_ready(ready)
    signal_it()
    t.send(f"wait %1; echo {name}=$?\n")
    rc = int(t.expect(rf"\n{name}=(\d+)").group(1))
    return rc, out, app_pid, app_pgid


t = Term()
t.send("set +m; set -m; echo started\n")
t.expect(r"\nstarted")

# kill -TERM %1: bash signals the whole job (latprof's process group).
rc, out, app_pid, app_pgid = job(t, "jobterm", lambda: t.send("kill -TERM %1\n"))
check(rc == 3, f"kill -TERM %1: the app saw one SIGTERM and exited 3 (got {rc})\n{t.out}")
check(recorded_exit(out) == 3, "kill -TERM %1: the database records exit 3")
check(app_pgid == app_pid, f"the app leads a process group of its own ({app_pid} in {app_pgid})")

# kill -INT -PGID: the job's group by number ($! is latprof, its leader).
rc, out, _, _ = job(t, "grpint", lambda: t.send("kill -INT -$!\n"))
check(rc == 3, f"kill -INT -PGID: the app saw one SIGINT and exited 3 (got {rc})\n{t.out}")

# Ctrl-C with latprof in the foreground: the terminal signals the app alone.
ready, out = os.path.join(d, "ctrlc.ready"), os.path.join(d, "ctrlc.db")
t.send(f"{LATPROF} run -o {out} -- {app()} once {ready}; echo ctrlc=$?\n")
wait_ready(ready)
t.send("\x03")
rc = int(t.expect(r"\nctrlc=(\d+)").group(1))
check(rc == 3, f"Ctrl-C: the app saw one SIGINT and exited 3 (got {rc})\n{t.out}")
check(recorded_exit(out) == 3, "Ctrl-C: the database records exit 3")

# Ctrl-Z stops the app and latprof (the shell sees the job stop); fg
# continues both and gives the terminal back to the app; Ctrl-C ends it.
ready, out = os.path.join(d, "ctrlz.ready"), os.path.join(d, "ctrlz.db")
t.send(f"{LATPROF} run -o {out} -- {app()} once {ready}\n")
app_pid, _ = wait_ready(ready)
t.send("\x1a")
t.expect(r"Stopped")
state = open(f"/proc/{app_pid}/stat").read().rsplit(")", 1)[1].split()[0]
check(state == "T", f"Ctrl-Z: the app is stopped (state {state})")
t.send("fg; echo ctrlz=$?\n")
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    state = open(f"/proc/{app_pid}/stat").read().rsplit(")", 1)[1].split()[0]
    if state != "T":
        break
    time.sleep(0.02)
check(state != "T", f"fg: the app runs again (state {state})")
time.sleep(0.3)
t.send("\x03")
rc = int(t.expect(r"\nctrlz=(\d+)").group(1))
check(rc == 3, f"Ctrl-Z, fg, Ctrl-C: one SIGINT, exit 3 (got {rc})\n{t.out}")
t.close()

# kill -TERM 0 from a script without a terminal: the script's own group,
# which holds latprof (the script ignores TERM itself).
ready, out = os.path.join(d, "zero.ready"), os.path.join(d, "zero.db")
script = (f"trap '' TERM; {LATPROF} run -o {out} -- {app()} once {ready} & "
          f"while [ ! -s {ready} ]; do sleep 0.02; done; kill -TERM 0; wait $!; echo zero=$?")
p = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=120,
                   env={**os.environ, **SMALL_LOGS}, stdin=subprocess.DEVNULL,
                   start_new_session=True)
m = re.search(r"zero=(\d+)", p.stdout)
check(m and int(m.group(1)) == 3,
      f"kill -TERM 0 from a script: one SIGTERM, exit 3 ({p.stdout!r} {p.stderr!r})")
print("one delivery each: kill %1, kill -PGID, Ctrl-C, Ctrl-Z/fg/Ctrl-C, kill 0")
