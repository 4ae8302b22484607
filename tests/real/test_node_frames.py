"""A Node program (tests/real/node_fifo.js) whose readConfig() blocks in
fs.readFileSync on a FIFO a child writes 50 ms after opening it, 5 times,
timing each of its own calls. latprof run adds --perf-basic-prof and
--interpreted-frames-native-stack to NODE_OPTIONS: the recorder follows
V8's frame pointers where the DWARF unwinder stops (its builtins have no
unwind tables) and the import names the JavaScript frames from the perf
map V8 writes. Checked: each long read's stack names readConfig at its
file and line, and the reads under it add up to the program's own timing
within 10%; a user's own perf flag in NODE_OPTIONS is left alone."""
import os
import re

from lptest import check, db, record, tmpdir, within
from reallib import drop_perf_maps, need_cmd

need_cmd("node")
d = tmpdir()
app = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_fifo.js")
N = 5


def run(name, env=None):
    out, path = f"{d}/{name}.txt", f"{d}/{name}.db"
    record(path, "node", app, f"{d}/{name}.fifo", str(N), out, env=env)
    with open(out) as f:
        own_ns, reads = (int(x) for x in f.read().split())
    check(reads == N, f"{name}: the program read its config {reads} times")
    return db(path), own_ns


c, own_ns = run("node")
pid = c.execute("SELECT pid FROM processes WHERE cmdline LIKE 'node %' ORDER BY id").fetchone()[0]
drop_perf_maps(f"{d}/node.db")
jit = int(c.execute("SELECT value FROM meta WHERE key = 'import.jit_symbols'").fetchone()[0])
check(jit > 0, f"V8's perf map named JIT code ({jit} symbols)")
reads = c.execute(
    "SELECT b.dur_ns, b.stack_id, (SELECT group_concat(f.function, ' <- ') FROM (SELECT "
    "f.function FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id WHERE sf.stack_id = "
    "b.stack_id ORDER BY sf.depth) f) AS chain FROM blocking_calls b JOIN threads t ON "
    "t.id = b.thread_id WHERE t.tid = ? AND b.call = 'read' AND b.dur_ns > 20000000 "
    "ORDER BY b.start_ns", (pid,)).fetchall()
site = re.compile(r"JS:\S*readConfig \S*node_fifo\.js:\d+")
named = [r for r in reads if site.search(r["chain"] or "")]
print(reads[0]["chain"][:600] if reads else "no read")
check(len(reads) == N and len(named) == N,
      f"each of the {N} blocking reads names readConfig in node_fifo.js ({len(named)} of "
      f"{len(reads)})")
lp_ns = sum(r["dur_ns"] for r in named)
check(within(lp_ns, own_ns, rel=0.10),
      f"the reads under readConfig: {lp_ns / 1e6:.1f} ms within 10% of the program's own "
      f"{own_ns / 1e6:.1f} ms")

# A user's own perf flag: NODE_OPTIONS is theirs, no interpreted frames
# are added, so readConfig (run by the interpreter) is not named.
c2, _ = run("own", env=dict(os.environ, NODE_OPTIONS="--perf-basic-prof-only-functions"))
pid2 = c2.execute("SELECT pid FROM processes WHERE cmdline LIKE 'node %' ORDER BY id").fetchone()[0]
drop_perf_maps(f"{d}/own.db")
named2 = c2.execute(
    "SELECT count(*) FROM blocking_calls b JOIN threads t ON t.id = b.thread_id JOIN "
    "stack_frames sf ON sf.stack_id = b.stack_id JOIN frames f ON f.id = sf.frame_id WHERE "
    "t.tid = ? AND b.call = 'read' AND f.function LIKE 'JS:%readConfig %'", (pid2,)).fetchone()[0]
check(named2 == 0, f"with the user's own --perf-basic-prof-only-functions, latprof adds no "
      f"--interpreted-frames-native-stack ({named2} reads name readConfig)")
