"""Tasks made by a raw clone() are named, not silently missing, and never
write into their parent's recording. lp_rel_unseen creates 3 threads and 2
processes with glibc's clone() and 2 processes with syscall(SYS_clone) and
syscall(SYS_clone3), outside pthread_create and fork, which latprof follows.
Before: the summary said "recorded 1 process" and nothing else, and each
child process (a copy of the parent's memory in which no fork handler ran)
wrote its 20 ms sleep into the parent's event log (which it still maps) as
the parent's."""
import os
import re

from lptest import check, q1, tmpdir
from rellib import bare, open_db, relbin, run

d = tmpdir()
prog = relbin("lp_rel_unseen")
ref = bare(prog, "clone", 3, 2, 2)
check(ref.returncode == 0, f"bare: exits 0 ({ref.returncode}: {ref.stderr})")
said = dict(line.split() for line in ref.stdout.splitlines())
threads, procs = int(said["threads"]), int(said["processes"])
check((threads, procs) == (3, 4), f"bare: the program made 3 threads and 4 processes ({said})")

out = os.path.join(d, "clone.db")
p = run(out, prog, "clone", 3, 2, 2)
check(p.returncode == 0, f"recorded: the exit status 0 passes ({p.returncode})")
check(p.stdout == ref.stdout, f"recorded: the app's output is the bare one ({p.stdout!r})")
app_err = [ln for ln in p.stderr.splitlines() if not ln.startswith("latprof: ")]
check(not app_err, f"nothing but latprof's own lines on stderr ({app_err})")
c = open_db(out)
got = c.execute("SELECT sum(raw_clone_threads), sum(raw_clone_processes) FROM processes "
                "WHERE exe = ?", (prog,)).fetchone()
check(tuple(got) == (threads, procs),
      f"processes.raw_clone_threads/processes: {tuple(got)}, the program made "
      f"({threads}, {procs})")
m = re.search(r"not recorded: (\d+) threads and (\d+) processes made by a raw clone\(\) "
              r"\(pid (\d+)\)", p.stderr)
pid = q1(c, "SELECT pid FROM processes WHERE exe = ?", prog)
check(m and (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (threads, procs, pid),
      f"the summary names {threads} threads and {procs} processes of pid {pid}: {p.stderr!r}")
sleeps = q1(c, "SELECT count(*) FROM blocking_calls b JOIN threads t ON t.id = b.thread_id "
               "JOIN processes p ON p.id = t.process_id WHERE p.exe = ? AND b.call = 'usleep'",
            prog)
check(sleeps == 1, f"the parent's log holds its own one sleep, none of its {procs} children's "
      f"({sleeps})")
check(q1(c, "SELECT count(*) FROM processes") == 1,
      "the raw clone children are not rows of their own (nothing of theirs was recorded)")
