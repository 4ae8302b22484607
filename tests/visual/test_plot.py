"""latprof plot: each gnuplot script run on its own remakes its image; the
data files hold the numbers report --breakdown --format json shows; charts
without data are skipped with a reason; no gnuplot -> exit 2 naming the
package."""
import json
import os
import subprocess
import sys

from lptest import check, latprof, tmpdir
import vislib

CHARTS = ["latency_over_time", "latency_cdf", "stage_percentiles", "utilization", "lock_wait"]


def header(path, key):
    with open(path) as f:
        words = f.readline().split()
    return int(words[words.index(key) + 1])


def main():
    d = tmpdir()
    db = vislib.infer_db(d)
    out = os.path.join(d, "plots")
    p = latprof("plot", db, "-o", out, check=0)
    for c in CHARTS:
        for ext in ("dat", "gp", "svg"):
            check(os.path.getsize(os.path.join(out, f"{c}.{ext}")) > 0, f"{c}.{ext} written")
        img = os.path.join(out, f"{c}.svg")
        os.unlink(img)
        r = subprocess.run(["gnuplot", f"{c}.gp"], cwd=out, capture_output=True, text=True)
        check(r.returncode == 0 and os.path.getsize(img) > 1000 and "<svg" in open(img).read(),
              f"gnuplot {c}.gp run alone in DIR remakes {c}.svg")

    bd = json.loads(latprof("report", db, "--breakdown", "--format", "json", check=0).stdout)
    stats = bd["request"]["stats"]
    lat = os.path.join(out, "latency_over_time.dat")
    for k in ("p50", "p90", "p99"):
        want = stats.get(f"{k}_ns")
        check(want is not None and header(lat, f"{k}_ns") == want,
              f"latency data {k} = report's {want} ns")
    rows = [l.split() for l in open(lat) if not l.startswith("#")]
    check(len(rows) == stats["n"], f"latency data has one row per request ({len(rows)})")
    stages = bd["stages"]
    sp = {l.split()[0]: [int(x) for x in l.split()[1:]]
          for l in open(os.path.join(out, "stage_percentiles.dat")) if not l.startswith("#")}
    for i, s in enumerate(stages):
        for k in ("p50", "p90", "p99"):
            want = s["stats"][f"{k}_ns"]
            check(sp[k][i] == want, f"stage {s['name']} {k} = {want} ns")
    # The stages' percentiles never stack: each is its own bar, and the last
    # column is the request's own percentile, drawn beside them.
    for k in ("p50", "p90", "p99"):
        check(len(sp[k]) == len(stages) + 1 and sp[k][-1] == stats[f"{k}_ns"],
              f"stage chart {k}: the whole request's bar is the report's {stats[k + '_ns']} ns")
    gp = open(os.path.join(out, "stage_percentiles.gp")).read()
    check("rowstacked" not in gp and "histogram clustered" in gp,
          "stage chart: clustered bars, not stacked")
    cdf = [l.split() for l in open(os.path.join(out, "latency_cdf.dat")) if not l.startswith("#")]
    check(abs(float(cdf[-1][1]) - 1) < 1e-9 and int(cdf[-1][0]) == stats["max_ns"],
          "CDF ends at the report's max latency with fraction 1")

    # no NVTX: request charts skipped with a reason, the others drawn
    db2 = vislib.lock_db(d)
    out2 = os.path.join(d, "plots2")
    p = latprof("plot", db2, "-o", out2, "--format", "png", check=0)
    for c in ("latency_over_time", "latency_cdf", "stage_percentiles"):
        check(f"skipped {c}:" in p.stdout and not os.path.exists(os.path.join(out2, f"{c}.png")),
              f"no-NVTX run: {c} skipped and said so")
    for c in ("utilization", "lock_wait"):
        with open(os.path.join(out2, f"{c}.png"), "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"no-NVTX run: {c}.png drawn")
    locks = json.loads(latprof("report", db2, "--locks", "--format", "json", check=0).stdout)
    total = locks["totals"]["lock_wait_ns"]
    ld = os.path.join(out2, "lock_wait.dat")
    with open(ld) as f:
        words = f.readline().split()
    check(int(words[words.index("total") + 1]) == total > 0,
          f"lock wait data total = the report's {total} ns")
    binned = sum(int(l.split()[1]) for l in open(ld) if not l.startswith("#"))
    check(binned == total, f"lock wait per bin sums to {total} ns")

    # no gnuplot
    p = latprof("plot", db, "-o", os.path.join(d, "x"), env={"PATH": "/nonexistent"})
    check(p.returncode == 2 and "gnuplot-nox" in p.stderr and len(p.stderr.splitlines()) == 1,
          "without gnuplot: one line naming gnuplot-nox, exit 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
