"""Hardware counters (cycles, instructions -> IPC) on a machine that has a
PMU; skips with the reason elsewhere (VMs without PMU passthrough)."""
import os

from lptest import check, db, latprof, record, sample, skip, tmpdir

demo = sample("counters_demo")
if not os.path.exists(demo):
    skip("counters_demo not built (no NVTX3 headers)")
path = os.path.join(tmpdir(), "hw.db")
record(path, demo, 10, 64, 2000, 100, 1, args=("--counters", "cycles,instructions"))
c = db(path)
ev = {r["name"]: r for r in c.execute("SELECT * FROM counter_events")}
for e in ("cycles", "instructions"):
    if e not in ev or not ev[e]["available"]:
        skip(f"hardware counters unavailable: {e}: {ev[e]['reason'] if e in ev else 'not recorded'}")
cyc = c.execute("SELECT min(rc.delta) FROM range_counters rc JOIN ranges_named r ON "
                "r.id = rc.range_id JOIN counter_events e ON e.id = rc.event_id "
                "WHERE r.name = 'busy' AND e.name = 'cycles'").fetchone()[0]
check(cyc and cyc > 1000000, f"busy stage (2 ms spin) counts {cyc} cycles")
out = latprof("report", path, "--counters", check=0).stdout
check("ipc" in out and "unavailable" not in out.split("Per stage")[1], "IPC per stage reported")
