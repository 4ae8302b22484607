"""A misspelt long option of every command is refused (exit 2, one line on
stderr, nothing on stdout) and the line names the option meant; a word far
from every option, a short option and a long option missing its value get
the refusal without a guess."""
import re

from corelib import one_error_line
from lptest import check, latprof

MEANT = [
    (("report", "--lcoks", "x.db"), "report", "--locks"),
    (("report", "--bottlenceks", "x.db"), "report", "--bottlenecks"),
    (("export", "--chorme", "t.json", "x.db"), "export", "--chrome"),
    (("diff", "--treshold", "5%", "a.db", "b.db"), "diff", "--threshold"),
    (("check", "--expcet", "p99(request) < 5ms", "x.db"), "check", "--expect"),
    (("run", "--outptu", "x.db", "--", "true"), "run", "--output"),
    (("plot", "--froce", "x.db"), "plot", "--force"),
    (("import", "--froce", "x.db"), "import", "--force"),
    (("report", "--lcoks=3", "x.db"), "report", "--locks"),
]
for args, cmd, meant in MEANT:
    p = latprof(*args, check=2)
    one_error_line(p, f"latprof {' '.join(args)}")
    check(p.stdout == "", f"{cmd}: nothing on stdout ({p.stdout!r})")
    check(f"did you mean '{meant}'?" in p.stderr,
          f"{cmd} {args[1]}: the line names {meant} ({p.stderr.strip()})")

NO_GUESS = [
    ("report", "--zzzzzz", "x.db"),   # far from every option
    ("report", "-x", "x.db"),         # a short option
    ("report", "--output"),           # a known option without its value
    ("diff", "--vs"),                 # the same, parsed by hand
]
for args in NO_GUESS:
    p = latprof(*args, check=2)
    one_error_line(p, f"latprof {' '.join(args)}")
    check(not re.search(r"did you mean", p.stderr),
          f"latprof {' '.join(args)}: no guess ({p.stderr.strip()})")
