"""Shared by the visual tests: record the samples once per test."""
import os
import shutil
import subprocess

from lptest import BUILD, check, latprof, record, sample, skip

HOSTILE = os.path.join(BUILD, "tests", "bin", "lp_hostile")


def infer_db(d):
    db = os.path.join(d, "infer.db")
    record(db, sample("infer_server"), "--requests", "200", "--threads", "3",
           "--locked-frac", "0.1", "--locked-stage", "infer", "--locked-us", "1500")
    return db


def lock_db(d):
    """A run without NVTX ranges and without GPU data."""
    db = os.path.join(d, "lock.db")
    record(db, sample("lock_server"))
    return db


def hostile_db(d):
    if not os.path.exists(HOSTILE):
        skip("lp_hostile was not built (no nvtx3 headers)")
    db = os.path.join(d, "hostile.db")
    record(db, HOSTILE)
    return db


def chromium():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(c)
        if p:
            return p
    skip("chromium is not installed (Debian: apt-get install chromium)")


def dump_dom(html):
    p = subprocess.run([chromium(), "--headless", "--disable-gpu", "--no-sandbox",
                        "--dump-dom", "file://" + os.path.abspath(html)],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and "</html>" in p.stdout,
          f"chromium dumped the DOM of {os.path.basename(html)}")
    return p.stdout


def report_html(db, out):
    latprof("report", db, "--html", out, check=0)
    with open(out, encoding="utf-8") as f:
        return f.read()
