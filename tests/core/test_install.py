"""`cmake --install` into a temporary prefix: the binary and its libraries,
one man page per command (the same text as `latprof CMD --help`, rendered by
`man -l`), bash and zsh completion generated from the command and option
lists; bash completes `latprof rep<TAB>` to report and `latprof diff --inc<TAB>`
to --inconclusive-exit; the installed latprof answers --version and -V and
records a run from the prefix."""
import os
import re
import shutil
import subprocess

from lptest import BUILD, check, db, q1, sample, skip, tmpdir

if not shutil.which("cmake"):
    skip("no cmake on PATH")
pre = tmpdir()
p = subprocess.run(["cmake", "--install", BUILD, "--prefix", pre], capture_output=True, text=True)
check(p.returncode == 0, f"cmake --install --prefix {pre} ({p.stderr.strip()[-300:]})")
lp = os.path.join(pre, "bin", "latprof")
check(os.access(lp, os.X_OK), "bin/latprof installed")
libs = os.listdir(os.path.join(pre, "lib", "latprof"))
check(any(x.startswith("liblatprof_preload") for x in libs), f"lib/latprof holds the interposer {libs}")

for flag in ("--version", "-V"):
    v = subprocess.run([lp, flag], capture_output=True, text=True)
    check(v.returncode == 0 and re.fullmatch(r"latprof \d+\.\d+\.\d+\n", v.stdout),
          f"latprof {flag}: {v.stdout.strip()!r}")

top = subprocess.run([lp, "--help"], capture_output=True, text=True).stdout
cmds = re.findall(r"^  (\w+)\s", top.split("commands:")[1].split("\n\n")[0], re.M)
check(len(cmds) >= 7 and "report" in cmds and "diff" in cmds, f"commands {cmds}")
man1 = os.path.join(pre, "share", "man", "man1")
have_man = shutil.which("man") is not None
for c in [None, *cmds]:
    page = os.path.join(man1, "latprof.1" if c is None else f"latprof-{c}.1")
    check(os.path.exists(page), f"man page {os.path.basename(page)} installed")
    if not have_man or c is None:
        continue
    r = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                       env={**os.environ, "MANWIDTH": "200", "MANPAGER": "cat", "PAGER": "cat"})
    check(r.returncode == 0 and "NAME" in r.stdout and "DESCRIPTION" in r.stdout,
          f"man -l latprof-{c}.1 renders (exit {r.returncode}, {r.stderr.strip()[:200]})")
    # Every option line of --help is in the page, word for word.
    text = subprocess.run([lp, c, "--help"], capture_output=True, text=True).stdout
    flat = " ".join(r.stdout.split())
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("-")]
    missing = [ln for ln in lines if " ".join(ln.split()) not in flat]
    check(not missing, f"latprof-{c}.1 holds its {len(lines)} option lines of --help "
          f"(missing: {missing[:2]})")
if not have_man:
    print("note: no man(1) here: pages checked for presence only")

bashc = os.path.join(pre, "share", "bash-completion", "completions", "latprof")
zshc = os.path.join(pre, "share", "zsh", "site-functions", "_latprof")
check(os.path.exists(bashc) and os.path.exists(zshc), "bash and zsh completion installed")
with open(zshc) as f:
    z = f.read()
check(z.startswith("#compdef latprof") and all(f"'{c}:" in z for c in cmds),
      "zsh completion names every command")
if shutil.which("zsh"):
    r = subprocess.run(["zsh", "-n", zshc], capture_output=True, text=True)
    check(r.returncode == 0, f"zsh -n _latprof ({r.stderr.strip()})")


def complete(*words):
    """What bash's completion function offers for the last word."""
    script = (f"source {bashc}; complete -p latprof; COMP_WORDS=({' '.join(words)}); "
              f"COMP_CWORD={len(words) - 1}; _latprof; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    check(r.returncode == 0, f"bash completion ran ({r.stderr.strip()})")
    lines = r.stdout.splitlines()
    check("-F _latprof" in lines[0], f"complete -p latprof: {lines[0]}")
    return lines[1:]


check(complete("latprof", "rep") == ["report"], "latprof rep<TAB> completes to report")
check(complete("latprof", "diff", "--inc") == ["--inconclusive-exit"],
      "latprof diff --inc<TAB> completes to --inconclusive-exit")
got = complete("latprof", "run", "--block")
check(got == ["--block-threshold"], f"latprof run --block<TAB>: {got}")

# The installed binary records from the prefix (its libraries by its own path).
srv = sample("infer_server")
if os.path.exists(srv):
    out = os.path.join(pre, "first.db")
    r = subprocess.run([lp, "run", "-o", out, "--", srv, "--requests", "20", "--threads", "1"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"installed latprof records ({r.stderr.strip()[-200:]})")
    n = q1(db(out), "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name_id "
           "WHERE s.value = 'request'")
    check(n == 20, f"20 requests recorded from the prefix ({n})")
