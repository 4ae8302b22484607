#!/usr/bin/env python3
"""Man pages and shell completion of the latprof built at LATPROF, from the
same text its --help prints (the command table in cli/lp_commands.c and each
command's usage in cli/cmd_*.c), so that they cannot drift apart.

    gen_docs.py LATPROF OUTDIR

writes OUTDIR/man/latprof.1, OUTDIR/man/latprof-CMD.1 per command,
OUTDIR/completion/latprof.bash and OUTDIR/completion/_latprof (zsh).
A command's options are the long options its --help names (--name,
--name=VALUE) and its short ones (-o, -f)."""
import os
import re
import subprocess
import sys


def run(latprof, *args):
    return subprocess.run([latprof, *args], capture_output=True, text=True,
                          check=True).stdout


def commands(latprof):
    """(name, summary) per command, from `latprof --help`."""
    out, seen = [], False
    for line in run(latprof, "--help").splitlines():
        if line.startswith("commands:"):
            seen = True
            continue
        m = re.match(r"^  (\S+)\s+(.*)$", line)
        if seen and m:
            out.append((m.group(1), m.group(2)))
        elif seen and out:
            break
    return out


def option_lines(text):
    """The usage synopsis (from 'usage:' to the first blank line) and the
    lines that list an option (they start with '-'): not the prose, which
    may quote another tool's flags."""
    out, synopsis = [], False
    for line in text.splitlines():
        synopsis = line.startswith("usage:") or (synopsis and line.strip() != "")
        if synopsis or line.lstrip().startswith("-"):
            out.append(line)
    return "\n".join(out)


def options(text):
    """Long options (with '=' when the help shows --name=VALUE) and short
    ones, in the order the help text lists them, each once."""
    seen, out = set(), []
    for m in re.finditer(r"(?<![\w-])(--[a-z][a-z0-9-]*=?|-[a-zA-Z](?![\w-]))",
                         option_lines(text)):
        o = m.group(1)
        key = o.rstrip("=")
        if key not in seen and key != "--":
            seen.add(key)
            out.append(o)
    return out


def roff(s):
    s = s.replace("\\", "\\e")
    return "\n".join(("\\&" + ln if ln[:1] in ".'" else ln) for ln in s.split("\n"))


def man_page(name, section_title, summary, body, version, see):
    title = name.upper()
    return (f'.TH {title} 1 "" "latprof {version}" "{section_title}"\n'
            f".SH NAME\n{name} \\- {roff(summary)}\n"
            f".SH DESCRIPTION\n.nf\n{roff(body.rstrip())}\n.fi\n"
            f".SH SEE ALSO\n{see}\n")


def bash(cmds, opts):
    cases = "\n".join(f"        {c}) opts=\"{' '.join(o.rstrip('=') for o in opts[c])}\" ;;"
                      for c, _ in cmds)
    names = " ".join(c for c, _ in cmds)
    return f"""# bash completion for latprof (generated from latprof --help)
_latprof() {{
    local cur cmd opts
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{names} help --help --version" -- "$cur"))
        return
    fi
    cmd="${{COMP_WORDS[1]}}"
    case "$cmd" in
{cases}
        help) COMPREPLY=($(compgen -W "{names}" -- "$cur")); return ;;
        *) opts="" ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _latprof latprof
"""


def zsh(cmds, opts):
    def esc(s):
        return s.replace("'", "'\\''").replace(":", "\\:")
    descs = "\n".join(f"    '{c}:{esc(s)}'" for c, s in cmds)
    cases = "\n".join(
        f"        {c}) _arguments '*:file:_files' "
        + " ".join(f"'{o.rstrip('=')}{'=' if o.endswith('=') else ''}[]'" for o in opts[c])
        + " ;;" for c, _ in cmds)
    return f"""#compdef latprof
# zsh completion for latprof (generated from latprof --help)
_latprof() {{
  local -a cmds
  cmds=(
{descs}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' cmds
    return
  fi
  local cmd=${{words[2]}}
  shift words
  (( CURRENT-- ))
  case $cmd in
{cases}
  esac
}}
_latprof "$@"
"""


def main():
    latprof, outdir = sys.argv[1], sys.argv[2]
    version = run(latprof, "--version").split()[-1]
    cmds = commands(latprof)
    if not cmds:
        sys.exit("gen_docs: no commands in latprof --help")
    os.makedirs(os.path.join(outdir, "man"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "completion"), exist_ok=True)
    helps = {c: run(latprof, c, "--help") for c, _ in cmds}
    opts = {c: options(helps[c]) for c, _ in cmds}
    see = ", ".join(f"\\fBlatprof-{c}\\fR(1)" for c, _ in cmds)
    pages = {"latprof": man_page("latprof", "latprof manual", "latency profiler: record, "
                                 "report, compare", run(latprof, "--help"), version, see)}
    for c, summary in cmds:
        body = helps[c].split("\n", 2)[2] if helps[c].count("\n") >= 2 else helps[c]
        pages[f"latprof-{c}"] = man_page(f"latprof-{c}", "latprof manual", summary, body,
                                         version, "\\fBlatprof\\fR(1)")
    for name, text in pages.items():
        with open(os.path.join(outdir, "man", name + ".1"), "w") as f:
            f.write(text)
    with open(os.path.join(outdir, "completion", "latprof.bash"), "w") as f:
        f.write(bash(cmds, opts))
    with open(os.path.join(outdir, "completion", "_latprof"), "w") as f:
        f.write(zsh(cmds, opts))


if __name__ == "__main__":
    main()
