"""report --html: every section in the DOM Chromium builds, charts rendered
as SVG, no external URL, hostile names as text (no script runs), and runs
without NVTX / GPU data degrade without empty charts."""
import os
import re
import sys

from lptest import check, tmpdir
import vislib

SECTIONS = ["findings", "summary", "breakdown", "tail", "charts", "locks", "gpu", "slowest",
            "timeline"]


def no_external(html, what):
    check(not re.search(r"https?://|[\"'(=]//", html), f"{what}: no http://, https:// or // URL")
    srcs = re.findall(r"\b(?:src|href)\s*=\s*[\"']([^\"']*)", html)
    bad = [s for s in srcs if not (s.startswith("#") or s.startswith("data:"))]
    check(not bad, f"{what}: every src/href is #fragment or data: ({len(srcs)} seen, bad {bad[:3]})")
    check("<link" not in html and "@import" not in html and "url(" not in html,
          f"{what}: no <link>, @import or url()")


def main():
    d = tmpdir()
    # infer_server: NVTX stages and lock waits
    db = vislib.infer_db(d)
    out = os.path.join(d, "infer.html")
    html = vislib.report_html(db, out)
    no_external(html, "infer report")
    dom = vislib.dump_dom(out)
    for s in SECTIONS:
        check(f'id="{s}"' in dom, f"section #{s} in the DOM")
    for c in ["latency_over_time", "latency_cdf", "stage_percentiles", "utilization", "lock_wait"]:
        m = re.search(rf'<figure id="chart-{c}">\s*<svg[^>]*viewBox="0 0 (\d+) (\d+)"', dom)
        check(m and int(m.group(1)) > 0, f"chart {c} rendered as inline <svg>")
    check(dom.count('<svg class="tl"') == 2, "median and p99 request timelines drawn")
    for stage in ["decode", "preprocess", "infer", "postprocess"]:
        check(f">{stage}<" in dom, f"stage {stage} shown")
    check("infer_lock" in dom, "the contended lock is listed")

    # hostile names
    db = vislib.hostile_db(d)
    out = os.path.join(d, "hostile.html")
    html = vislib.report_html(db, out)
    no_external(html, "hostile report")
    dom = vislib.dump_dom(out)
    check("<img" not in dom.lower(), "no <img> element came from a name")
    check("data-pwned" not in dom, "body has no data-pwned attribute")
    check(len(re.findall(r"<script", dom, re.I)) == 0, "no <script> element in the DOM")
    check("&lt;img src=x onerror=alert(1)&gt;" in dom, "the <img> stage name shows as text")
    check("&lt;/script&gt;&lt;script&gt;document.body.dataset.pwned=2&lt;/script&gt;" in dom,
          "the </script> stage name shows as text")
    check("quote\"s 'single' &amp; amp" in dom, "quotes and & show as text")
    check("&lt;/script&gt;\"'&lt;b&gt;" in dom, "the markup thread name shows as text")
    check("<b>'" not in dom and "<svg onload" not in dom.lower(), "no element from a name")

    # no NVTX, no GPU: every view degrades
    db = vislib.lock_db(d)
    out = os.path.join(d, "lock.html")
    html = vislib.report_html(db, out)
    dom = vislib.dump_dom(out)
    for s in SECTIONS:
        check(f'id="{s}"' in dom, f"no-NVTX run: section #{s} present")
    check("chart-latency_over_time" not in dom and 'id="skip-latency_over_time"' in dom,
          "no-NVTX run: no latency chart, a note says why")
    check("chart-lock_wait" in dom and "chart-utilization" in dom,
          "no-NVTX run: lock wait and utilization charts drawn")
    check("No GPU data in this run" in dom, "no-GPU run: the GPU section says so")
    check("<svg class=\"tl\"" not in dom, "no-NVTX run: no empty timeline")

    # without gnuplot the page still has everything else
    env_path = "/nonexistent"
    p = vislib.latprof("report", db, "--html", os.path.join(d, "nogp.html"), check=0,
                       env={"PATH": env_path})
    with open(os.path.join(d, "nogp.html"), encoding="utf-8") as f:
        nogp = f.read()
    check('id="charts-missing"' in nogp and "gnuplot-nox" in nogp and 'id="locks"' in nogp,
          "without gnuplot: the page says how to get charts and keeps the rest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
