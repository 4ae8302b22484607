"""Threads without CPU counters are named with the true reason. A process
that ends by _exit never reads its main thread's counts (no exit handler
runs): lp_rel_unseen makes 3 threads, joins them and calls _exit(0). Before:
"their counter group could not be opened (out of file descriptors:
RLIMIT_NOFILE?) or they ended before the first read" for a process that
had descriptors to spare; the recorder now says when a group ran out of
descriptors (CNT_NOFD), and latprof run tells the two apart."""
import os
import re

from lptest import check, q1, skip, tmpdir
from rellib import open_db, relbin, run

d = tmpdir()
prog = relbin("lp_rel_unseen")
out = os.path.join(d, "uexit.db")
p = run(out, prog, "threads", 3, 5, "_exit")
check(p.returncode == 0 and "threads 3" in p.stdout, f"exit 0 after 3 threads ({p.stdout!r})")
c = open_db(out)
HAS = ("(EXISTS (SELECT 1 FROM thread_counters x WHERE x.thread_id = t.id) OR "
       "EXISTS (SELECT 1 FROM counter_samples s WHERE s.thread_id = t.id))")
counted = q1(c, f"SELECT count(*) FROM threads t WHERE {HAS}")
if counted == 0:
    skip("no CPU counters on this machine (perf_event_open and task accounting refused): "
         "no thread to tell apart")
none = q1(c, f"SELECT count(*) FROM threads t WHERE NOT {HAS}")
main_none = q1(c, f"SELECT count(*) FROM threads t JOIN processes p ON p.id = t.process_id "
                  f"WHERE t.tid = p.pid AND NOT {HAS}")
check(none == 1 and main_none == 1,
      f"the main thread, ended by _exit, is the one thread without counters ({none}, "
      f"{counted} with)")
check(q1(c, "SELECT value FROM meta WHERE key = 'counters.threads_no_fd'") == 0,
      "no counter group ran out of descriptors (meta counters.threads_no_fd = 0)")
lines = [ln for ln in p.stderr.splitlines() if "have no CPU counters" in ln]
m = re.search(r"(\d+) of (\d+) threads of counting processes have no CPU counters: they ended "
              r"before their counts were read", p.stderr)
check(len(lines) == 1 and m and int(m.group(1)) == 1 and int(m.group(2)) == none + counted
      and "descriptor" not in lines[0] and "RLIMIT_NOFILE" not in lines[0],
      f"one line, the true reason, no word of descriptors: {lines}")
