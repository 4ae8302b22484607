"""A futex lock's call site is never the frame that called
syscall(SYS_futex) itself, even when no other lock waits through it (the
wrapper rule needs two locks): tests/locks/lp_futexsite waits on its one
latch word in latch_wait(), called from serve() (latch_lock inlined). The
lock, `latch`, is kind futex, class contention, and every site is serve."""
import json
import os

from lptest import BUILD, check, latprof, record, tmpdir

path = os.path.join(tmpdir(), "futexsite.db")
record(path, os.path.join(BUILD, "tests", "locks", "lp_futexsite"), "4", "40")
doc = json.loads(latprof("report", path, "--locks", "--format", "json").stdout)
lk = next((x for x in doc["locks"] if x["name"] == "latch"), None)
check(lk and lk["kind"] == "futex" and lk["class"] == "contention" and lk["count"] > 0,
      f"the latch is a contended futex lock ({[(x['name'], x['kind']) for x in doc['locks']]})")
fns = [(s["function"], s["count"]) for s in lk["sites"]]
check(fns and all(f == "serve" for f, _ in fns) and sum(n for _, n in fns) == lk["count"],
      f"every wait's site is serve, not latch_wait ({fns}; chain {lk['sites'][0]['chain']})")
