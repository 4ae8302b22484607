"""Security points, each on real runs:
- output files: a symlink at the output path is refused (the target is
  untouched), also with --force and for `report -o`, `check --junit`,
  `export --chrome` and `plot -o DIR`'s files; /dev/null and a FIFO
  are refused; an unwritable output directory stops `run` before the app
  starts;
- the log directory is private (0700) and the logs 0600;
- names like `'; DROP TABLE ranges; --` import as data (SQL is bound, not
  spliced), and control characters and invalid UTF-8 in recorded names come
  out escaped in JSON, CSV and HTML;
- a database path that is a FIFO or a device is refused, without blocking."""
import csv
import glob
import io
import json
import os
import shutil
import stat
import subprocess

from lptest import LATPROF, check, fail, latprof, q1, tmpdir
from rellib import SMALL_LOGS, app, open_db, relbin, run

d = tmpdir()
os.chmod(d, 0o755)
victim = os.path.join(d, "victim.txt")
with open(victim, "w") as f:
    f.write("precious\n")


def untouched():
    return open(victim).read() == "precious\n"


def refused(p, what, side=None):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(p.returncode == 2 and lines and lines[0].startswith("latprof:"),
          f"{what}: refused with exit 2 and a clear line: {lines[:1]}")
    if side:
        check(not os.path.exists(side), f"{what}: the app never started")


# --- output paths -----------------------------------------------------------
link = os.path.join(d, "out.db")
os.symlink(victim, link)
dangling = os.path.join(d, "dangling.db")
os.symlink(os.path.join(d, "nowhere.db"), dangling)
for args, name in (((), "symlink"), (("--force",), "symlink with --force")):
    side = os.path.join(d, f"side-{len(args)}")
    p = run(link, app(), "events", side, 1, 10, 0, args=args)
    refused(p, f"run -o {name}", side)
    check(untouched() and os.path.islink(link), f"run -o {name}: the target is untouched")
p = run(dangling, app(), "events", os.path.join(d, "side-d"), 1, 10, 0)
refused(p, "run -o dangling symlink", os.path.join(d, "side-d"))
check(not os.path.exists(os.path.join(d, "nowhere.db")), "no file created through the link")
p = run("/dev/null", app(), "events", os.path.join(d, "side-n"), 1, 10, 0, args=("--force",))
refused(p, "run -o /dev/null --force", os.path.join(d, "side-n"))
fifo = os.path.join(d, "fifo")
os.mkfifo(fifo)
p = run(fifo, app(), "events", os.path.join(d, "side-f"), 1, 10, 0, args=("--force",))
refused(p, "run -o FIFO --force", os.path.join(d, "side-f"))

# Unwritable output directory: run latprof as nobody against a root-owned dir.
ro = os.path.join(d, "ro")
os.mkdir(ro, 0o755)
if os.geteuid() == 0 and shutil.which("setpriv"):
    side = os.path.join(d, "side-ro")
    os.chmod(d, 0o777)  # the app (as nobody) could create its side file here
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        LATPROF, "run", "-o", os.path.join(ro, "x.db"), "--", app(), "events",
                        side, "1", "10", "0"], capture_output=True, text=True,
                       env={**os.environ, **SMALL_LOGS})
    os.chmod(d, 0o755)
    refused(p, "run -o in an unwritable directory", side)
    check("not writable" in p.stderr, f"the error says why: {p.stderr.strip()}")
else:
    os.chmod(ro, 0o555)
    side = os.path.join(d, "side-ro")
    p = run(os.path.join(ro, "x.db"), app(), "events", side, 1, 10, 0)
    refused(p, "run -o in an unwritable directory", side)

# --- a real run: private logs, hostile names ----------------------------------
names = relbin("lp_rel_names")
if not os.path.exists(names):
    fail("lp_rel_names is not built (NVTX headers missing?)")
logs_parent = os.path.join(d, "tmp")
os.mkdir(logs_parent)
out = os.path.join(d, "names.db")
p = run(out, names, args=("--keep-logs",), env={"TMPDIR": logs_parent})
check(p.returncode == 0, f"hostile names recorded: exit 0\n{p.stderr}")
dirs = glob.glob(os.path.join(logs_parent, "latprof-*"))
check(len(dirs) == 1, f"one log directory kept ({dirs})")
mode = stat.S_IMODE(os.stat(dirs[0]).st_mode)
check(mode == 0o700, f"the log directory is private: {oct(mode)}")
modes = {oct(stat.S_IMODE(os.stat(f).st_mode)) for f in glob.glob(dirs[0] + "/*.lplog")}
check(modes == {"0o600"}, f"the event logs are 0600: {modes}")

c = open_db(out)
check(q1(c, "SELECT count(*) FROM sqlite_master WHERE name = 'ranges'") == 1,
      "the ranges table is still there")
n = q1(c, "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name_id "
          "WHERE s.value = ?", "'; DROP TABLE ranges; --")
check(n == 6, f"`'; DROP TABLE ranges; --` is recorded as a name, 6 times ({n})")

# JSON: parses, and holds no raw control character.
p = latprof("report", out, "--ranges", "--format", "json", check=0)
check(not any(ord(ch) < 0x20 and ch not in "\n" for ch in p.stdout),
      "JSON: no raw control characters")
doc = json.loads(p.stdout)
blob = json.dumps(doc)
check("'; DROP TABLE ranges; --" in blob, "JSON: the SQL-like name round-trips")
check("\\u0001" in blob and "\\ufffd" in blob,
      "JSON: \\x01 escaped as \\u0001, invalid UTF-8 as U+FFFD")

# CSV: valid UTF-8, parses, control characters gone.
p = subprocess.run([LATPROF, "report", out, "--ranges", "--format", "csv"], capture_output=True)
check(p.returncode == 0, "CSV report written")
try:
    text = p.stdout.decode("utf-8")
except UnicodeDecodeError as e:
    fail(f"CSV is not valid UTF-8: {e}")
rows = list(csv.reader(io.StringIO(text)))
check(any("'; DROP TABLE ranges; --" in cell for r in rows for cell in r),
      f"CSV: parses ({len(rows)} rows) with the SQL-like name intact")
check(not any(ord(ch) < 0x20 and ch not in "\r\n" for ch in text) and "\x1b" not in text,
      "CSV: no control characters (no terminal escapes)")

# HTML: no raw tag from a recorded name.
html = os.path.join(d, "r.html")
p = latprof("report", out, "--html", html)
if p.returncode == 0 and os.path.exists(html):
    page = open(html, "rb").read().decode("utf-8")
    check("<script>alert(1)</script>" not in page, "HTML: a recorded <script> is escaped")
    check("\x01" not in page and "\x1b" not in page, "HTML: no raw control characters")
else:
    print(f"note: report --html unavailable here ({p.stderr.strip()[:120]})")

# --- report -o through a symlink; databases that are not files ---------------
p = latprof("report", out, "--ranges", "-o", link)
refused(p, "report -o symlink")
check(untouched(), "report -o symlink: the target is untouched")
for bad in ("/dev/null", fifo):
    try:
        p = latprof("report", bad, timeout=20)
    except subprocess.TimeoutExpired:
        fail(f"report {bad}: blocked")
    refused(p, f"report {bad} (not a regular file)")
lp = latprof("import", os.path.join(d, "nolog"), "-o", link)
check(lp.returncode == 2 and untouched(), "import -o symlink: refused, target untouched")

# --- check --junit, export --chrome, plot -o DIR: never through a symlink ----
nowhere = os.path.join(d, "nowhere.db")
for what, args in (("check --junit", ("check", out, "--expect", "p99(request) < 3600s", "--junit")),
                   ("export --chrome", ("export", out, "--chrome"))):
    for target in (link, dangling):
        p = latprof(*args, target)
        check(p.returncode == 2 and "symbolic link" in p.stderr and untouched() and
              os.path.islink(target) and not os.path.exists(nowhere),
              f"{what} {os.path.basename(target)}: refused ({p.stderr.strip()[-70:]}), "
              f"target untouched")
    p = latprof(*args, "/dev/null")
    check(p.returncode == 2 and "not a regular file" in p.stderr, f"{what} /dev/null: refused")
# plot writes NAME.dat, NAME.gp and gnuplot's image into the directory: links
# planted at its names are refused like any output's, also with --force (the
# one output rule, test_outputs.py); the files it makes are renamed into
# place, so a link planted after that check is replaced, never written
# through.
plots = os.path.join(d, "plots")
os.mkdir(plots)
charts = ("latency_over_time", "latency_cdf", "stage_percentiles", "utilization", "lock_wait")
for name in charts:
    for ext in ("dat", "gp", "svg"):
        os.symlink(victim, os.path.join(plots, f"{name}.{ext}"))
for args in ((), ("--force",)):
    p = latprof("plot", out, "-o", plots, *args)
    check(p.returncode == 2 and "symbolic link" in p.stderr and untouched(),
          f"plot -o DIR {' '.join(args)} with planted links: refused, target untouched")
check(not [f for f in os.listdir(plots) if f.startswith(".")],
      "plot: no private working directory left")
shutil.rmtree(d)
