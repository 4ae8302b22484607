"""latprof diff's three answers on real recordings of samples/infer_server,
one run a side:
- infer 30% slower: regression (exit 1) or inconclusive (exit 3), never
  no regression; no row reads 'unchanged' with an interval that excludes 0;
  no stage but infer is named (as a regression or as an inconclusive one
  toward a regression), at the default metrics and at --metric p95,p42; the
  JSON's state, the text's result line and the HTML banner all say what the
  exit status says; the on-CPU time per request of infer grew, the others'
  did not; the text fits COLUMNS (100 when unset and not a terminal).
- the same program, the new run beside CPU hogs (normal priority): never
  a regression, a stage's growth that is preemption is inconclusive with
  'preemption' as its reason, and the noise warning names preemption where
  it took a large share of request time."""
import json
import os
import subprocess
import sys

from lptest import check, latprof, realtime, record, sample, skip, tmpdir

srv = sample("infer_server")
if not os.path.exists(srv):
    skip("infer_server not built (no NVTX3 headers)")
d = tmpdir()
RT = realtime()
ARGS = ["--threads", 2, "--requests", 300, "--decode-us", 500, "--pre-us", 400,
        "--infer-us", 1500, "--post-us", 200]
STATE = {0: "no regression", 1: "regression", 3: "inconclusive"}


def rec(name, *extra, prio=RT):
    db = os.path.join(d, name + ".db")
    record(db, *prio, srv, *ARGS, *extra)
    return db


def diff(a, b, *args):
    p = latprof("diff", a, b, "--format", "json", *args)
    check(p.returncode in (0, 1, 3), f"diff ran (exit {p.returncode}) {p.stderr.strip()}")
    j = json.loads(p.stdout)
    for r in j["rows"]:
        lo, hi = r["ci_low"], r["ci_high"]
        print(f"  {r['scope']:12} {r['metric']:5} {100 * (r['rel_change'] or 0):+7.1f}% "
              f"[{'-' if lo is None else f'{100 * lo:+.1f}%'}, "
              f"{'-' if hi is None else f'{100 * hi:+.1f}%'}] {r['verdict']} {r['why'] or ''}")
    print(f"  -> {j['state']} (exit {p.returncode}) reasons {j['reasons']} warnings {j['warnings']}")
    check(j["state"] == STATE[p.returncode] and j["exit_status"] == p.returncode,
          f"the JSON state '{j['state']}' is the exit status {p.returncode}")
    for r in j["rows"]:
        if r["verdict"] == "unchanged":
            check(r["ci_low"] <= 0 <= r["ci_high"],
                  f"{r['scope']} {r['metric']}: unchanged only with 0 inside the interval")
    return p.returncode, j


def named(j):
    """Scopes a row names as slower: regression, or inconclusive toward one."""
    return {r["scope"] for r in j["rows"] if r["verdict"] == "regression" or
            (r["verdict"] == "inconclusive" and r["toward"] == "regression")}


base = rec("base", "--seed", 1)
slow = rec("slow", "--seed", 2, "--slow-stage", "infer", "--slow-pct", 30)

for metrics in ([], ["--metric", "p95,p42"]):
    rc, j = diff(base, slow, *metrics)
    what = " ".join(metrics) or "default metrics"
    check(rc in (1, 3), f"infer 30% slower, one run a side, {what}: regression or "
          f"inconclusive (exit {rc})")
    regs = {r["scope"] for r in j["rows"] if r["verdict"] == "regression"}
    check(regs <= {"request", "infer"}, f"{what}: no untouched stage is a regression ({regs})")
    if RT:
        check(named(j) <= {"request", "infer"},
              f"{what}: no untouched stage is named, even as inconclusive ({named(j)})")
    if rc == 3:
        check(j["reasons"], f"{what}: inconclusive says why")
    cpu = {c["scope"]: c for c in j["cpu"]}
    inf = cpu["infer"]
    check(inf["new_on_cpu_ns"] > 1.1 * inf["base_on_cpu_ns"] or not RT,
          f"infer's on-CPU time per request grew: {inf['base_on_cpu_ns'] / 1e6:.3f} -> "
          f"{inf['new_on_cpu_ns'] / 1e6:.3f} ms")
    for s in ("decode", "preprocess", "postprocess"):
        c = cpu[s]
        check(c["new_on_cpu_ns"] < 1.1 * c["base_on_cpu_ns"],
              f"{s}: on-CPU time per request did not grow ({c['base_on_cpu_ns'] / 1e6:.3f} -> "
              f"{c['new_on_cpu_ns'] / 1e6:.3f} ms)")

# Text and HTML say the state the exit status says.
p = latprof("diff", base, slow)
check(f"(exit {p.returncode})" in p.stdout.splitlines()[-1] and
      p.stdout.splitlines()[-1].startswith("result: "), "the text's last line states the exit")
check("on-CPU and preempted time per request" in p.stdout, "the text shows on-CPU per stage")
# The text fits the terminal: COLUMNS, else 100 columns when not a terminal.
for cols, env in ((100, {"COLUMNS": ""}), (100, {"COLUMNS": "100"}), (120, {"COLUMNS": "120"})):
    t = latprof("diff", base, slow, "--metric", "p95,p42", env=env).stdout
    widest = max(len(ln) for ln in t.splitlines())
    check(widest <= cols, f"diff text with COLUMNS={env['COLUMNS']!r}: widest line {widest} "
          f"<= {cols}")
html = os.path.join(d, "slow.html")
p = latprof("diff", base, slow, "--format", "html", "-o", html)
with open(html, encoding="utf-8") as f:
    page = f.read()
check(f'data-state="{STATE[p.returncode]}"' in page and
      ("No regression" in page) == (p.returncode == 0),
      f"the HTML banner says '{STATE[p.returncode]}' as exit {p.returncode} does")
check('id="cpu"' in page, "the HTML shows on-CPU per stage")

# The same program; the new run, at normal priority, shares the CPUs with
# hogs of another program: preemption stretches whichever stage it lands in.
n = (os.cpu_count() or 1) + 1
hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
try:
    busy = rec("busy", "--seed", 3, prio=[])
finally:
    for h in hogs:
        h.kill()
        h.wait()
for metrics in ([], ["--metric", "p95,p42"]):
    rc, j = diff(base, busy, *metrics)
    what = " ".join(metrics) or "default metrics"
    regs = {r["scope"] for r in j["rows"] if r["verdict"] == "regression"}
    check(rc != 1 and not regs, f"same program beside hogs, {what}: no regression ({regs})")
    for r in j["rows"]:
        if r["verdict"] == "inconclusive" and r["toward"] == "regression" and \
                r["scope"] != "request":
            check(r["why"].startswith("preemption"),
                  f"{r['scope']} {r['metric']}: slower by preemption, says so ({r['why']})")
    page_path = os.path.join(d, f"busy{len(metrics)}.html")
    h = latprof("diff", base, busy, *metrics, "--format", "html", "-o", page_path)
    with open(page_path, encoding="utf-8") as f:
        page = f.read()
    check(h.returncode == rc and f'data-state="{STATE[rc]}"' in page and
          all(f"Why inconclusive: {x}" in page.replace("&#39;", "'") for x in j["reasons"]),
          f"{what}: the HTML banner says '{STATE[rc]}' and every reason, as exit {rc} does")
    demoted = [f"{r['scope']} {r['metric']}" for r in j["rows"]
               if (r["why"] or "").startswith("preemption")]
    print(f"  rows inconclusive for preemption: {demoted}")
    req = j["cpu"][0]
    share = req["new_preempted_ns"] / req["new_ns"]
    print(f"  preempted {100 * share:.1f}% of the busy run's request time")
    if share >= 0.2:
        check(any(w.startswith("preemption") for w in j["warnings"]),
              f"{what}: {100 * share:.0f}% preempted: a noise warning names preemption")
