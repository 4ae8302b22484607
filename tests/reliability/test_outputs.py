"""One output rule for every command that writes a file:
`export --chrome`, `check --junit`, `report -o` and `--html`, `diff -o`,
`plot -o DIR` and `import -o` never write over one of their inputs (the
same file by device and inode: the same name, another spelling, a hard
link; --force does not change that), and never over an existing file
without --force, each with the same one line and exit 2. Before: `export
run.db --chrome run.db` and `check run.db --junit run.db` turned the
recording into JSON / XML, `report -o` and `--html` overwrote a user's file,
`diff -o INPUT --force` turned an input database into text."""
import hashlib
import os
import shutil

from lptest import check, latprof, one_error_line, record, sample, tmpdir

d = tmpdir()
srv = sample("infer_server")
if not os.path.exists(srv):
    srv = sample("lock_server")
run_db = os.path.join(d, "run.db")
record(run_db, srv, "--requests", 20, "--threads", 2)
other = os.path.join(d, "other.db")
shutil.copy(run_db, other)
link = os.path.join(d, "hard.db")
os.link(run_db, link)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


before = {p: digest(p) for p in (run_db, other)}

# Over an input: refused, with or without --force, however it is named.
plots = os.path.join(d, "plots")
os.mkdir(plots)
os.link(run_db, os.path.join(plots, "lock_wait.svg"))
expect = "count(request) >= 1"
over_input = [
    ("export --chrome run.db", ["export", run_db, "--chrome", run_db]),
    ("export --chrome ./run.db --force",
     ["export", run_db, "--chrome", os.path.join(d, ".", "run.db"), "--force"]),
    ("export --chrome HARDLINK --force", ["export", run_db, "--chrome", link, "--force"]),
    ("check --junit run.db", ["check", run_db, "--expect", expect, "--junit", run_db]),
    ("check --junit run.db --force",
     ["check", run_db, "--expect", expect, "--junit", run_db, "--force"]),
    ("report -o run.db --force", ["report", run_db, "-o", run_db, "--force"]),
    ("report --html run.db --force", ["report", run_db, "--html", run_db, "--force"]),
    ("report --html HARDLINK --force", ["report", run_db, "--html", link, "--force"]),
    ("diff -o NEW --force", ["diff", run_db, other, "-o", other, "--force"]),
    ("diff -o HARDLINK-of-BASE --force", ["diff", run_db, other, "-o", link, "--force"]),
    ("import run.db -o run.db --force", ["import", run_db, "-o", run_db, "--force"]),
    ("plot -o DIR (a chart name hard-linked to the input) --force",
     ["plot", run_db, "-o", plots, "--force"]),
]
for what, args in over_input:
    p = latprof(*args)
    one_error_line(p, what)
    check("input" in p.stderr and "refusing to write over it" in p.stderr,
          f"{what}: the line says it is an input")
check(all(digest(p) == h for p, h in before.items()),
      f"both input databases are byte for byte unchanged after {len(over_input)} attempts")

# An existing file: refused without --force, same line everywhere.
user = {}
for name in ("user.txt", "user.html", "user.json", "user.xml", "diff.txt", "imp.db"):
    user[name] = os.path.join(d, name)
    with open(user[name], "w") as f:
        f.write("mine\n")
plots2 = os.path.join(d, "plots2")
os.mkdir(plots2)
chart = os.path.join(plots2, "lock_wait.dat")
with open(chart, "w") as f:
    f.write("mine\n")
existing = [
    (user["user.txt"], ["report", run_db, "-o", user["user.txt"]]),
    (user["user.html"], ["report", run_db, "--html", user["user.html"]]),
    (user["user.json"], ["export", run_db, "--chrome", user["user.json"]]),
    (user["user.xml"], ["check", run_db, "--expect", expect, "--junit", user["user.xml"]]),
    (user["diff.txt"], ["diff", run_db, other, "-o", user["diff.txt"]]),
    (user["imp.db"], ["import", run_db, "-o", user["imp.db"]]),
    (chart, ["plot", run_db, "-o", plots2]),
]
for path, args in existing:
    p = latprof(*args)
    one_error_line(p, f"{args[0]} onto an existing {os.path.basename(path)}")
    want = f"latprof: {path} exists; use --force to overwrite it"
    check(p.stderr.strip() == want, f"{args[0]}: the same line as every command: '{want}'")
    check(open(path).read() == "mine\n", f"{args[0]}: {os.path.basename(path)} untouched")

# With --force the user's file is replaced.
p = latprof("report", run_db, "-o", user["user.txt"], "--force")
check(p.returncode == 0 and open(user["user.txt"]).read() != "mine\n",
      f"report -o FILE --force overwrites it (exit {p.returncode})")
p = latprof("export", run_db, "--chrome", user["user.json"], "--force")
check(p.returncode == 0 and open(user["user.json"]).read().lstrip().startswith(("{", "[")),
      f"export --chrome FILE --force writes the trace (exit {p.returncode})")
p = latprof("check", run_db, "--expect", expect, "--junit", user["user.xml"], "--force")
check(p.returncode == 0 and "<testsuites>" in open(user["user.xml"]).read(),
      f"check --junit FILE --force writes the XML (exit {p.returncode})")
check(all(digest(p) == h for p, h in before.items()), "the inputs are still unchanged")
