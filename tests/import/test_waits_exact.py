"""Every lock wait written is imported with its exact duration, down to
0 ns: no wait is too short to keep. tests/import/gen_waits.c writes, through
the recording core, one wait per duration below, each on its own mutex and
10 us after the previous; `latprof import` must give one lock_waits row per
wait, on that mutex, starting where it was written and lasting exactly what
was written."""
import json
import os
import subprocess

from lptest import BUILD, check, db, latprof, tmpdir

DURS = [0, 1, 2, 399, 400, 401, 999, 1000, 2000, 123456789]
T = tmpdir()
logs = os.path.join(T, "logs")
os.mkdir(logs)
gen = subprocess.run([os.path.join(BUILD, "tests", "bin", "gen_waits"), logs] +
                     [str(d) for d in DURS], capture_output=True, text=True)
out = dict(kv.split("=", 1) for kv in gen.stdout.split())
check(gen.returncode == 0 and out.get("lock_waits") == str(len(DURS)),
      f"gen_waits wrote {len(DURS)} lock waits ({gen.stdout.strip()} {gen.stderr.strip()})")
t0 = int(out["start"])
addr = [int(a) for a in out["lock"].split(",")]
path = os.path.join(T, "waits.db")
imp = latprof("import", logs, "-o", path)
check(f"imported 1 process log: 1 threads, {len(DURS)} lock waits (0 records dropped while "
      "recording)" in imp.stderr, f"import's counts: {imp.stderr.strip()!r}")
c = db(path)
rows = c.execute("SELECT l.address, w.start_ns, w.dur_ns, w.flags FROM lock_waits w "
                 "JOIN locks l ON l.id = w.lock_id ORDER BY w.start_ns").fetchall()
check(len(rows) == len(DURS), f"{len(rows)} lock waits imported of {len(DURS)} written")
got = {r["address"]: (r["start_ns"], r["dur_ns"]) for r in rows}
want = {a: (t0 + 10000 * k, d) for k, (a, d) in enumerate(zip(addr, DURS))}
for k, d in enumerate(DURS):
    check(got.get(addr[k]) == want[addr[k]],
          f"the {d} ns wait: imported as (start +{got[addr[k]][0] - t0 if addr[k] in got else '-'}"
          f" ns, {got.get(addr[k], (0, 'missing'))[1]} ns), written (+{10000 * k} ns, {d} ns)")
check(sum(r["dur_ns"] for r in rows) == sum(DURS),
      f"total wait {sum(r['dur_ns'] for r in rows)} ns = {sum(DURS)} ns written")
check(c.execute("SELECT count(*) FROM locks").fetchone()[0] == len(DURS),
      f"{len(DURS)} locks, one per wait")
# What only `latprof run` knows (its command line, the app's CPUs, the
# host's) is not in meta after a plain import.
runmeta = [r[0] for r in c.execute("SELECT key FROM meta WHERE key LIKE 'run.%' OR "
                                   "key LIKE 'host.%'")]
check(runmeta == [], f"latprof import writes no run.* or host.* meta ({runmeta})")
# The report counts every one of them too: --locks lists each mutex with
# its one wait (--top covers them all).
doc = json.loads(latprof("report", path, "--locks", "--top", "20", "--format", "json").stdout)
tot = doc["totals"]
check(tot["lock_waits"] == len(DURS) and tot["lock_wait_ns"] == sum(DURS) and
      tot["contended_locks"] == len(DURS),
      f"report --locks totals: {tot['lock_waits']} waits, {tot['lock_wait_ns']} ns, "
      f"{tot['contended_locks']} locks")
rep = sorted((int(lk["address"], 16), lk["count"], lk["total_ns"]) for lk in doc["locks"])
check(rep == sorted((a, 1, d) for a, d in zip(addr, DURS)),
      f"report --locks: each mutex with 1 wait of its exact duration ({rep[:3]}...)")
