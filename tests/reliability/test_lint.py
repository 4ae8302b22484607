"""Source lints for rules of docs/reliability.md and the naming rule of
tests/README.md:
1. SQL is parameterized: no string formatting of text (%s) into SQL in
   util/, db/, import/, analysis/, report/, cli/ except the listed internal
   identifiers.
2. In-app code (collector/, preload/) reads environment variables only in
   start-up functions: after that the environment is the app's.
3. One read path: no code in util/, db/, import/, analysis/ steps a
   statement itself; rows are read through db/lp_db.c (lp_db_query, lp_db_each,
   lp_db_step_all, lp_db_lookup and the lookups with a default), which
   check for SQLITE_DONE. The importer's write helper lp_import_step is the
   one other caller: it steps INSERTs, one row each, and checks the result."""
import os
import re

from lptest import SRC, check, fail

FMT = re.compile(r"\b(snprintf|asprintf|xasprintf|sqlite3_mprintf|sqlite3_snprintf)\s*\(")
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|PRAGMA|CREATE|DROP|WHERE|FROM)\b")
TEXT_CONV = re.compile(r"%[-0-9.*]*[sqQw]")
# (file, function): why the formatted text cannot come from recorded data.
SQL_ALLOW = {
    ("db/lp_db.c", "lp_db_count"): "table name: a constant at every call site",
    ("db/lp_db_check.c", "check_table"):
        "table name: read back from the importer's own schemas in an in-memory database",
    ("analysis/compare/lp_diff.c", "has_column"): "table name: a constant at every call site",
    ("analysis/compare/lp_diff.c", "load_kernels"): "column expressions chosen from constants",
    ("analysis/lp_locks.c", "wait_totals"): "table name: lock_waits or cond_waits",
    ("import/lp_import_batch.c", "batch_insert_for"):
        "virtual table name and INSERT head: constants of lp_import_core.c; columns c0-c7, 0, NULL",
    ("import/captures/lp_import_nsys.c", "nsys_select"):
        "nsys table and column names and ORDER BY/WHERE tails: constants of lp_import_nsys.c",
}
GETENV_ALLOW = {
    ("collector/lp_core.c", "lp_env_u32"): "called from lp_core_init only",
    ("collector/lp_core.c", "lp_core_init"): "start-up",
    ("collector/lp_counters.c", "lp_cnt_parse_env"): "constructor",
    ("collector/cupti/lp_cupti.c", "lp_env_u32"): "CUPTI injection init only",
    ("collector/cupti/lp_cupti_api.c", "lp_api_open"): "once, under pthread_once, at capture start",
    ("preload/lp_proc.c", "lp_env_capture"): "from the preload constructor only",
    ("preload/lp_block.c", "lp_block_init"): "from the preload constructor only",
    ("collector/nvtx/lp_nvtx.c", "lp_tsc_init"): "NVTX injection init only",
}
# The import and analysis code (docs/architecture.md), walked with their subfolders.
TOOL = ("util", "db", "import", "analysis")
FUNC = re.compile(r"^[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;]*$")


def enclosing(lines, i):
    for j in range(i, -1, -1):
        m = FUNC.match(lines[j])
        if m and not lines[j].startswith(("if", "for", "while", "return", "#")):
            return m.group(1)
    return "?"


def sources(*dirs):
    for d in dirs:
        for root, _, files in os.walk(os.path.join(SRC, d)):
            for f in sorted(files):
                if f.endswith(".c"):
                    p = os.path.join(root, f)
                    yield os.path.relpath(p, SRC), open(p, encoding="utf-8").read().splitlines()


bad = []
for rel, lines in sources(*TOOL, "report", "cli"):
    for i, line in enumerate(lines):
        if not FMT.search(line):
            continue
        stmt = " ".join(lines[i:i + 3])  # a call spans at most a few lines
        lits = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', stmt))
        if SQL.search(lits) and TEXT_CONV.search(lits):
            key = (rel, enclosing(lines, i))
            if key not in SQL_ALLOW:
                bad.append(f"{rel}:{i + 1} in {key[1]}(): text formatted into SQL: {line.strip()}")
check(not bad, "SQL is built with bound parameters (formatted text only for listed "
      "internal identifiers)" + ("".join("\n  " + b for b in bad)))

def calls_outside(call, allow, dirs, skip=()):
    """Lines calling `call` (a regex) outside the (file, function) pairs of
    allow; comments do not count."""
    bad = []
    for rel, lines in sources(*dirs):
        if rel in skip:
            continue
        for i, line in enumerate(lines):
            if re.search(call, line) and not line.lstrip().startswith(("*", "/")):
                key = (rel, enclosing(lines, i))
                if key not in allow:
                    bad.append(f"{rel}:{i + 1} in {key[1]}(): {line.strip()}")
    return "".join("\n  " + b for b in bad)


bad = calls_outside(r"\b(secure_)?getenv\s*\(", GETENV_ALLOW, ("collector", "preload"))
check(not bad, "in-app code reads the environment only at start-up" + bad)
# The one caller rule behind the lp_core.c allowance.
core = open(os.path.join(SRC, "collector/lp_core.c")).read().splitlines()
callers = {enclosing(core, i) for i, l in enumerate(core)
           if "lp_env_u32(" in l and not l.startswith("static")}
check(callers == {"lp_core_init"}, f"lp_core.c reads settings only in lp_core_init ({callers})")

# 3. Every sqlite3_step in the tool code (TOOL) is in lp_db.c (the read path) or in the
# importer's write helper. A loop that steps by itself ends at a read error
# exactly as at its last row: the report is then computed from part of the
# data. Strict on purpose: single-row lookups go through lp_db.c too.
STEP_ALLOW = {("import/lp_import.c", "lp_import_step"): "INSERTs, result checked"}
bad = calls_outside(r"\bsqlite3_step\s*\(", STEP_ALLOW, TOOL, skip=("db/lp_db.c",))
check(not bad, "import and analysis read rows only through lp_db.c (no sqlite3_step elsewhere)" + bad)

# 4. Names: `lp_` names what other files may call. A static
# function or a struct defined in a .c file of the tool code, report/ or cli/
# carries no `lp_` prefix unless a header declares that name (then it is
# the file's side of a shared declaration, e.g. struct lp_findings_ctx).
headers = ""
for d in (*TOOL, "report", "cli", "collector", "preload", "format"):
    for root, _, files in os.walk(os.path.join(SRC, d)):
        for f in sorted(files):
            if f.endswith(".h"):
                headers += open(os.path.join(root, f), encoding="utf-8").read()
declared = set(re.findall(r"\blp_\w+", headers))
STATIC_LP = re.compile(r"^(?:static\s+[^;=()]*?\b(lp_\w+)\s*\(|struct\s+(lp_\w+)\s*\{)")
bad = []
for rel, lines in sources(*TOOL, "report", "cli"):
    for i, line in enumerate(lines):
        m = STATIC_LP.match(line)
        name = m and (m.group(1) or m.group(2))
        if name and name not in declared:
            bad.append(f"{rel}:{i + 1}: {name} is local to the file: drop the lp_ prefix")
check(not bad, "static functions and file-local structs carry no lp_ prefix" +
      "".join("\n  " + b for b in bad))
