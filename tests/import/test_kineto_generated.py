"""Kineto traces written by tests/lib/kinetogen.py: the current and the
2021 format (capitalized categories, lowercase 'external id', GPU events
linked to their launch by ac2g flows only), displayTimeUnit "ns" with
microsecond timestamps, gzip, and damaged inputs."""
import gzip
import json
import os

from lptest import check, db, latprof, q1, tmpdir
import kinetogen

T = tmpdir()


def one_line_exit2(p, what, must=None):
    lines = p.stderr.strip().splitlines()
    ok = p.returncode == 2 and len(lines) == 1 and (must is None or all(m in lines[0] for m in must))
    check(ok, f"{what}: exit 2 with one line ({lines[:2]}, exit {p.returncode})")


def imported(trace, name):
    src = os.path.join(T, name)
    trace.write(src)
    out = src + ".db"
    latprof("import", src, "-o", out, check=0)
    return db(out), out


def common(c, out, t, label):
    e = t.expect
    check(q1(c, "SELECT count(*) FROM kernels") == len(e["kernels"]) and
          q1(c, "SELECT sum(dur_ns) FROM kernels") == sum(d for _, d in e["kernels"]),
          f"{label}: {len(e['kernels'])} kernels, durations exact to the ns")
    check(q1(c, "SELECT count(*) FROM memcpys") == e["memcpys"] and
          q1(c, "SELECT count(*) FROM memsets") == e["memsets"] and
          q1(c, "SELECT count(*) FROM syncs") == len(e["syncs"]) and
          q1(c, "SELECT count(*) FROM cuda_api WHERE domain = 'runtime'") == e["runtime"],
          f"{label}: memcpys, memsets, syncs and runtime calls counted")
    check(q1(c, "SELECT count(*) FROM gpu_launches WHERE op = 'kernel'") == len(e["kernels"]),
          f"{label}: every kernel joined to its launching call")
    check(q1(c, "SELECT count(*) FROM processes") == 1 and
          q1(c, "SELECT cmdline FROM processes") == "gen_train.py" and
          q1(c, "SELECT name FROM threads WHERE tid = ?", kinetogen.TID) == "main-thread",
          f"{label}: process and thread named from the M events")
    check(q1(c, "SELECT count(*) FROM gpu_devices") == 2 and
          q1(c, "SELECT sm_count FROM gpu_devices WHERE device = 1") == 46,
          f"{label}: deviceProperties -> gpu_devices")
    check(q1(c, "SELECT count(*) FROM ranges r JOIN ranges p ON p.id = r.parent_id JOIN strings s "
                "ON s.id = p.name_id WHERE s.value = 'ProfilerStep'") == e["ops"],
          f"{label}: every operator nests in its ProfilerStep")
    # The process spans everything it did, host events and the GPU work
    # adopted from the trace's GPU pseudo-processes alike.
    tabs = ("ranges", "cuda_api", "kernels", "memcpys", "memsets", "syncs")
    first = min(v for v in (q1(c, f"SELECT min(start_ns) FROM {t}") for t in tabs) if v is not None)
    last = max(v for v in (q1(c, f"SELECT max(end_ns) FROM {t}") for t in tabs) if v is not None)
    span = tuple(c.execute("SELECT start_ns, end_ns FROM processes").fetchone())
    check(span == (first, last), f"{label}: the process spans [{first}, {last}]: {span}")
    bd = json.loads(latprof("report", out, "--breakdown", "--format", "json", check=0).stdout)
    check(bd["request"]["name"] == "ProfilerStep" and bd["request"]["stats"]["n"] == e["steps"],
          f"{label}: the {e['steps']} ProfilerStep#N ranges are the default requests")
    check(q1(c, "SELECT group_concat(payload) FROM (SELECT payload FROM ranges_named WHERE name = "
                "'ProfilerStep' ORDER BY start_ns)") == ",".join(str(i + 1) for i in range(e["steps"])),
          f"{label}: the step numbers kept as payload")
    check(q1(c, "SELECT type FROM syncs LIMIT 1") == "stream_synchronize",
          f"{label}: an 'Event Sync' caused by cudaStreamSynchronize is classified by the API")
    p = latprof("report", out, check=0)
    check(p.stdout.startswith("imported from PyTorch profiler (Kineto) trace (schema 1)\n"
                              "not recorded in the source capture: lock waits"),
          f"{label}: report header names the source and what it does not record")
    for v in ("--kernels", "--memcpy", "--sync", "--cuda-api", "--bottlenecks", "--locks"):
        latprof("report", out, v, check=0)


t = kinetogen.training("current", unit="ns")
c, out = imported(t, "current.pt.trace.json")
common(c, out, t, "current format")
check(q1(c, "SELECT value FROM meta WHERE key = 'import.display_time_unit'") == "ns" and
      q1(c, "SELECT min(dur_ns) FROM kernels") == 20456,
      "displayTimeUnit ns: timestamps still read as microseconds (20.456 us = 20456 ns)")
check(q1(c, "SELECT copy_kind || ' ' || src_kind || ' ' || dst_kind FROM memcpys LIMIT 1") ==
      "HtoD pinned device", "memcpy kinds from the event name")
check(q1(c, "SELECT grid_x * 100 + block_x FROM kernels LIMIT 1") == 6656, "kernel grid and block")

t21 = kinetogen.training("2021", with_corr=False)
c21, out21 = imported(t21, "old.json")
common(c21, out21, t21, "2021 format, flows only")

tz = kinetogen.training("current", steps=9)
cz, outz = imported(tz, "zipped.pt.trace.json.gz")
common(cz, outz, tz, "gzip")

# TensorBoard-plugin era (PyTorch 1.8, schemaVersion 1): thread ids as text
# ("3100", "stream 7"), GPU events under pid 0, some without device/stream
# args, steps as Operator events, "Python function" frames, async/launch flows
def v1_counts(c, out, t, label, nsteps):
    e = t.expect
    with open(os.path.join(T, label + ".json")) as f:
        nev = len(json.load(f)["traceEvents"])
    check(q1(c, "SELECT count(*) FROM kernels") == len(e["kernels"]) and
          q1(c, "SELECT sum(dur_ns) FROM kernels") == sum(d for _, d in e["kernels"]) and
          q1(c, "SELECT count(*) FROM kernels WHERE device = 0 AND stream = 7") == len(e["kernels"]),
          f"{label}: all {len(e['kernels'])} kernels, durations exact to the ns, on device 0 "
          f"stream 7 (from pid 0 and tid 'stream 7' where the args do not say)")
    check(q1(c, "SELECT count(*) FROM memcpys") == e["memcpys"] == nsteps and
          q1(c, "SELECT count(*) FROM memsets") == e["memsets"] == nsteps and
          q1(c, "SELECT count(*) FROM cuda_api WHERE domain = 'runtime'") == e["runtime"],
          f"{label}: {e['memcpys']} memcpys, {e['memsets']} memsets, {e['runtime']} runtime calls")
    check(q1(c, "SELECT count(*) FROM gpu_launches") == len(e["kernels"]) + 2 * nsteps,
          f"{label}: every kernel, copy and memset joined to its launching call")
    check(q1(c, "SELECT count(*) FROM ranges r JOIN domains d ON d.id = r.domain_id WHERE "
                "d.name = 'cpu_op'") == e["ops"] + e["steps"] and
          q1(c, "SELECT count(*) FROM ranges_named WHERE name = 'ProfilerStep'") == e["steps"] ==
          nsteps and
          q1(c, "SELECT count(*) FROM ranges r JOIN domains d ON d.id = r.domain_id WHERE "
                "d.name = 'python_function'") == e["py"] == nsteps,
          f"{label}: {e['ops']} operators and {e['steps']} ProfilerStep operators, "
          f"{e['py']} Python frames")
    check(q1(c, "SELECT count(*) FROM processes") == 1 and
          q1(c, "SELECT name FROM threads WHERE tid = ?", kinetogen.TID) == "main-thread" and
          q1(c, "SELECT count(*) FROM threads") == 1,
          f"{label}: one process, its thread '3100' named from the M event")
    check(q1(c, "SELECT value FROM meta WHERE key = 'import.events'") == nev and
          q1(c, "SELECT value FROM meta WHERE key = 'import.skipped_events'") == 3,
          f"{label}: {nev} events read, 3 skipped (the Traces span, 2 instant events)")
    bd = json.loads(latprof("report", out, "--breakdown", "--format", "json", check=0).stdout)
    check(bd["request"]["name"] == "ProfilerStep" and bd["request"]["stats"]["n"] == nsteps,
          f"{label}: the {nsteps} ProfilerStep#N operators are the default requests")


for corr in (True, False):
    label = "v1" if corr else "v1-flows"
    t1 = kinetogen.training("v1", steps=40, with_corr=corr)
    c1, out1 = imported(t1, label + ".json")
    v1_counts(c1, out1, t1, label, 40)
check(q1(c1, "SELECT value FROM meta WHERE key = 'import.flows'") == 2 * 40 * 4,
      "v1-flows: the async/launch flows read (4 launches a step, s and f)")

# GPU work whose launching call is outside the trace: counted, whether ids
# are tallied as rows come (correlation ids) or looked up at the end (flows)
for flavour, corr in (("current", True), ("2021", False)):
    tu = kinetogen.training(flavour, steps=4, with_corr=corr)
    for i in range(3):
        tu.orphan(f"lost_{i}", 5_000_000 + i * 10_000, 1_000, with_corr=corr)
    cu, _ = imported(tu, f"orphans-{flavour}.json")
    check(q1(cu, "SELECT count(*) FROM kernels") == len(tu.expect["kernels"]) and
          q1(cu, "SELECT value FROM meta WHERE key = 'import.unattributed_gpu_ops'") ==
          tu.expect["unattributed"] == 3,
          f"{flavour}: 3 kernels without their launching call counted as unattributed, of "
          f"{len(tu.expect['kernels'])}")

# diff of two imported traces: steps and kernels by name
p = latprof("diff", out, outz)
check(p.returncode in (0, 1, 3) and "gemm_kernel(float*)" in p.stdout,
      f"diff of two imported traces compares kernels by name (exit {p.returncode})")

# ---- damaged input: one line, exit 2, nothing written ----------------------------------------
raw = tz.text().encode()
gz = gzip.compress(raw)
cases = {
    "truncated.json.gz": (gz[: len(gz) * 2 // 3], ["gzip"]),
    "garbled.json.gz": (gz[:40] + bytes(200) + gz[240:], None),
    "invalid.json": (raw[:5000] + b"}}}" + raw[5003:], ["invalid JSON"]),
    "cut.json": (raw[: len(raw) // 2], ["JSON"]),
    "notrace.json": (b'{"schemaVersion": 1, "deviceProperties": []}', ["traceEvents"]),
    "empty.json": (b"", None),
}
for name, (data, must) in cases.items():
    src = os.path.join(T, name)
    with open(src, "wb") as f:
        f.write(data)
    o = src + ".db"
    one_line_exit2(latprof("import", src, "-o", o), name, must)
    check(not os.path.exists(o), f"{name}: nothing written")
keep = os.path.join(T, "keep.db")
with open(keep, "w") as f:
    f.write("earlier result")
one_line_exit2(latprof("import", os.path.join(T, "truncated.json.gz"), "-o", keep, "--force"),
               "truncated gzip over an existing output")
check(open(keep).read() == "earlier result", "the earlier output is left as it was")

# A newer trace: timestamps count from baseTimeNanoseconds, which dates the
# run (1.7e18 ns: 2023-11-14T22:13:20Z) in meta wall_start.
based = kinetogen.Trace(base_us=0)
based.step(1, 1000, 2000)
src = os.path.join(T, "based.json")
with open(src, "w") as f:
    f.write(based.text().replace('"schemaVersion": 1,', '"schemaVersion": 1,\n  '
                                 '"baseTimeNanoseconds": 1700000000000000000,', 1))
latprof("import", src, "-o", src + ".db", check=0)
ws = q1(db(src + ".db"), "SELECT value FROM meta WHERE key = 'wall_start'")
check(ws == "2023-11-14T22:13:20Z", f"baseTimeNanoseconds dates the run: wall_start {ws}")
