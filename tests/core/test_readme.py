"""README.md's Getting started, followed as written: every block marked
`<!-- readme-test: NAME -->` is taken from the README and run.
- install: `cmake --install build --prefix ~/.local` with HOME a temporary
  directory and ./build this build tree; latprof --version and the man page
  work from the prefix through PATH alone.
- record: the installed latprof records samples/lock_server and the report
  opens with the top findings, each with its saving and a fix.
- app.c, app.cpp, app.py: each snippet built with the command the README
  gives beside it (its NVTX include directory: the one this build found),
  then the `stages` block records it: 50 requests, each with one parse and
  one compute stage, in the database and in the breakdown.
The `build` block is the configure and build this tree was made with."""
import os
import re
import shutil
import subprocess
import sys

from lptest import BUILD, SRC, check, db, q1, skip, tmpdir

with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
    readme = f.read()
blocks = dict(re.findall(r"<!-- readme-test: (\S+) -->\n```\w*\n(.*?)```", readme, re.S))
check({"build", "install", "record", "app.c", "app.cpp", "app.py", "stages"} <= set(blocks),
      f"README marks its Getting started blocks ({sorted(blocks)})")

home = tmpdir()
work = tmpdir()
os.symlink(os.path.abspath(BUILD), os.path.join(work, "build"))
env = {k: v for k, v in os.environ.items() if k not in ("LATPROF", "MANPATH")}
env.update(HOME=home, MANPAGER="cat", PAGER="cat", MANWIDTH="100")


def sh(script, cwd=work):
    """Runs a README block with bash -e, as a reader pastes it."""
    p = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    return p


install = blocks["install"]
have_man = shutil.which("man") is not None
if not have_man:  # the page is still checked as installed, below
    print("note: no man(1) here: the block's man line is left out")
    install = "\n".join(ln for ln in install.splitlines() if not ln.startswith("man "))
p = sh(install + '\necho "PATH=$PATH"\n')
check(p.returncode == 0, f"install block runs (exit {p.returncode}: {p.stderr.strip()[-300:]})")
check(re.search(r"^latprof \d+\.\d+\.\d+$", p.stdout, re.M) is not None,
      "latprof --version from ~/.local/bin")
check(("LATPROF-REPORT(1)" in p.stdout and "DESCRIPTION" in p.stdout) if have_man else
      os.path.exists(os.path.join(home, ".local", "share", "man", "man1", "latprof-report.1")),
      "man latprof-report finds the installed page")
path = re.search(r"^PATH=(.*)$", p.stdout, re.M).group(1)
check(path.startswith(os.path.join(home, ".local", "bin")), "PATH starts with ~/.local/bin")
env["PATH"] = path
check(shutil.which("latprof", path=path) == os.path.join(home, ".local", "bin", "latprof"),
      "latprof on PATH is the installed one")

if not os.path.exists(os.path.join(BUILD, "samples", "lock_server")):
    skip("samples/lock_server not built")
p = sh(blocks["record"])
check(p.returncode == 0, f"record block runs (exit {p.returncode}: {p.stderr.strip()[-300:]})")
# The sample prints its own two lines first; the report follows.
out = p.stdout.splitlines()
at = next((i for i, ln in enumerate(out) if ln.startswith("Top findings")), None)
head = out[at:at + 12] if at is not None else []
check(at is not None and at <= 2 and any("estimated saving" in ln for ln in head) and
      any("fix:" in ln for ln in head),
      "the report opens with the top findings, a saving and a fix:\n" + p.stdout[:600])
check("model_lock" in p.stdout, "the lock the sample queues on is named")

cache = open(os.path.join(BUILD, "CMakeCache.txt")).read()
m = re.search(r"^NVTX3_INCLUDE:PATH=(.*)$", cache, re.M)
if not m or "NOTFOUND" in m.group(1):
    skip("no NVTX3 headers in this build (CUDA toolkit or pip nvidia-nvtx)")
nvtx_inc = m.group(1)


def built_with(lang):
    """The README's compile command beside a snippet, e.g. C (`cc ...`)."""
    cmd = re.search(rf"^{re.escape(lang)} \(`([^`]+)`\):$", readme, re.M).group(1)
    return cmd.replace("/usr/local/cuda/include", nvtx_inc)


try:
    import nvtx  # noqa: F401
    have_py_nvtx = True
except ImportError:
    have_py_nvtx = False

for name, lang in (("app.c", "C"), ("app.cpp", "C++"), ("app.py", None)):
    if name == "app.py" and not have_py_nvtx:
        print("note: PyPI nvtx not installed: the Python snippet is not run")
        continue
    wd = os.path.join(work, name.replace(".", "_"))
    os.mkdir(wd)
    with open(os.path.join(wd, name), "w") as f:
        f.write(blocks[name])
    if lang:
        p = sh(built_with(lang), cwd=wd)
        check(p.returncode == 0, f"{name} builds with the README's command ({p.stderr[-400:]})")
        stages = blocks["stages"]
    else:
        # The block's own alternative for Python, as its comment gives it.
        line = re.search(r"# or: (latprof run .*python3 app\.py)", blocks["stages"]).group(1)
        stages = re.sub(r"^latprof run .*$", line.replace("python3", sys.executable),
                        blocks["stages"], count=1, flags=re.M)
    p = sh(stages, cwd=wd)
    check(p.returncode == 0, f"{name}: stages block runs ({p.stderr.strip()[-300:]})")
    check("parse" in p.stdout and "compute" in p.stdout, f"{name}: the breakdown names the stages")
    c = db(os.path.join(wd, "app.db"))
    counts = {s: q1(c, "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name_id "
                       "WHERE s.value = ?", s) for s in ("request", "parse", "compute")}
    check(counts == {"request": 50, "parse": 50, "compute": 50},
          f"{name}: 50 requests, 50 parse and 50 compute ranges recorded ({counts})")
