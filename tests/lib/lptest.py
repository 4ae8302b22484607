"""Helpers for latprof's end-to-end tests: run a program under latprof,
open the database, assert on recorded numbers. Tests exit 77 to skip
(ctest SKIP_RETURN_CODE) and always say why. The one library every Python
test imports from: a helper two areas need lives here (or beside it in
tests/lib), never copied into an area's own module."""
import atexit
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

# ctest sets these (tests/CMakeLists.txt); tests/run-one too. Without them,
# the checkout this file is in and its build/ directory, whatever the cwd.
SRC = os.environ.get("LP_SRC") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get("LP_BUILD") or os.path.join(SRC, "build")
LATPROF = os.environ.get("LATPROF") or os.path.join(BUILD, "bin", "latprof")


def sample(name):
    """Path of a sample binary built into build/samples/."""
    return os.path.join(BUILD, "samples", name)


_tmpdirs = []
_failed = False


def _cleanup():
    """Temporary directories go when the test passes or skips; a failing
    test keeps them (with its databases and logs) and says where."""
    for d in _tmpdirs:
        if _failed:
            print(f"kept for inspection: {d}", file=sys.stderr)
        else:
            shutil.rmtree(d, ignore_errors=True)


def _excepthook(kind, value, tb):
    global _failed
    _failed = True
    sys.__excepthook__(kind, value, tb)


atexit.register(_cleanup)
sys.excepthook = _excepthook


def tmpdir():
    d = tempfile.mkdtemp(prefix="lptest-")
    _tmpdirs.append(d)
    return d


# latprof run makes its private log directory under TMPDIR. A test's own:
# logs latprof keeps (descendants left running, a failed import) go with
# the test instead of piling up in /tmp. Tests that set TMPDIR still can.
os.environ["TMPDIR"] = tmpdir()
# The importer's symbol cache (import/lp_symcache.c): one per test, so no
# test sees another's answers or writes into the user's ~/.cache.
os.environ["XDG_CACHE_HOME"] = tmpdir()


def latprof(*args, check=None, env=None, timeout=600, **kw):
    """Run latprof; returns CompletedProcess with text stdout/stderr."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([LATPROF, *map(str, args)], capture_output=True, text=True,
                       env=e, timeout=timeout, **kw)
    if check is not None and p.returncode != check:
        fail(f"latprof {' '.join(map(str, args))} exited {p.returncode}, expected {check}\n"
             f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def record(db, *cmd, args=(), check_app=0, env=None):
    """latprof run -o db [args] -- cmd...; asserts the app's exit status."""
    p = latprof("run", "-o", db, *args, "--", *cmd, env=env)
    if check_app is not None and p.returncode != check_app:
        fail(f"latprof run exited {p.returncode}, expected {check_app}\n{p.stderr}")
    return p


def schema_version():
    """LP_SCHEMA_VERSION of db/lp_db.h: what the importer stamps."""
    with open(os.path.join(SRC, "db", "lp_db.h")) as f:
        return int(re.search(r"#define LP_SCHEMA_VERSION (\d+)", f.read()).group(1))


def schema_db(path, schemas=("core.sql", "nvtx.sql", "counters.sql", "cuda.sql"), version=None):
    """A new, empty database in the real schema (schemas/*.sql) with
    user_version set as the importer does (or to version): the start of
    every synthetic database. A scratch file: no journal, no fsync."""
    if os.path.exists(path):
        os.unlink(path)
    c = sqlite3.connect(path)
    c.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
    for name in schemas:
        with open(os.path.join(SRC, "schemas", name)) as f:
            c.executescript(f.read())
    c.execute(f"PRAGMA user_version = {schema_version() if version is None else version}")
    return c


def db(path):
    c = sqlite3.connect(path)
    c.row_factory = sqlite3.Row
    return c


def open_db(path):
    """db(path) of a database latprof must have written."""
    if not os.path.exists(path):
        fail(f"no database written at {path}")
    return db(path)


def q1(conn, sql, *params):
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def meta(conn, key):
    """The value of one row of the meta table (None when absent)."""
    return q1(conn, "SELECT value FROM meta WHERE key = ?", key)


def sha256(path):
    """Hex SHA-256 of a file, read in 1 MiB blocks (logs are large)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_kv(path):
    """key=value lines (or one line of space-separated pairs) -> dict of ints:
    the side files test programs write with the numbers they know."""
    out = {}
    with open(path) as f:
        for tok in f.read().split():
            k, _, v = tok.partition("=")
            out[k] = int(v)
    return out


def one_error_line(p, what):
    """Bad input, as the project promises it: exit 2, exactly one stderr line
    starting with 'latprof', nothing on stdout."""
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode != 2 or len(lines) != 1 or not lines[0].startswith("latprof") or p.stdout:
        fail(f"{what}: want exit 2, one 'latprof...' line on stderr and no stdout; got exit "
             f"{p.returncode}\nstdout: {p.stdout!r}\nstderr: {p.stderr!r}")
    print(f"ok: {what}: exit 2, '{lines[0]}'")


_TYPES = {"object": dict, "array": list, "string": str, "null": type(None), "boolean": bool,
          "integer": int, "number": (int, float)}


def _is(v, t):
    if t in ("integer", "number") and isinstance(v, bool):
        return False
    return isinstance(v, _TYPES[t])


def validate(doc, schema, node=None, path="$"):
    """The subset of JSON Schema our schemas use (type, const, enum, required,
    properties, additionalProperties: false, items, $ref, oneOf, minimum,
    pattern). Returns a list of violations. jsonschema may be missing, and
    installing it from a test is not allowed."""
    node = schema if node is None else node
    if "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), ref
        target = schema
        for part in ref[2:].split("/"):
            target = target[part]
        return validate(doc, schema, target, path)
    errs = []
    if "oneOf" in node:
        ok = [alt for alt in node["oneOf"] if not validate(doc, schema, alt, path)]
        if len(ok) != 1:
            errs.append(f"{path}: matches {len(ok)} of oneOf")
        return errs
    t = node.get("type")
    if t is not None:
        ts = t if isinstance(t, list) else [t]
        if not any(_is(doc, x) for x in ts):
            return [f"{path}: {doc!r} is not {t}"]
    if "const" in node and doc != node["const"]:
        errs.append(f"{path}: {doc!r} != {node['const']!r}")
    if "enum" in node and doc not in node["enum"]:
        errs.append(f"{path}: {doc!r} not in {node['enum']}")
    if "minimum" in node and _is(doc, "number") and doc < node["minimum"]:
        errs.append(f"{path}: {doc} < {node['minimum']}")
    if "pattern" in node and isinstance(doc, str) and not re.search(node["pattern"], doc):
        errs.append(f"{path}: {doc!r} !~ {node['pattern']}")
    if isinstance(doc, dict):
        props = node.get("properties", {})
        for k in node.get("required", []):
            if k not in doc:
                errs.append(f"{path}: missing '{k}'")
        for k, v in doc.items():
            if k in props:
                errs += validate(v, schema, props[k], f"{path}.{k}")
            elif node.get("additionalProperties") is False:
                errs.append(f"{path}: unexpected '{k}'")
    if isinstance(doc, list) and "items" in node:
        for i, v in enumerate(doc):
            errs += validate(v, schema, node["items"], f"{path}[{i}]")
    return errs


def fail(msg):
    global _failed
    _failed = True
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok:", msg)


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def within(measured, expected, rel=None, abs_=None):
    d = abs(measured - expected)
    return (rel is not None and d <= rel * abs(expected)) or (abs_ is not None and d <= abs_)


def sanitizer():
    """The build's sanitizers ('address,undefined', 'thread'; 'fuzz' for a
    LATPROF_FUZZ build; '' for none), from its CMakeCache.txt. Instrumented
    code runs several times slower: tests leave out timing checks then, and
    say so."""
    vals = {}
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            for ln in f:
                k, sep, v = ln.strip().partition("=")
                if sep and k.split(":")[0] in ("LATPROF_SANITIZE", "LATPROF_FUZZ"):
                    vals[k.split(":")[0]] = v
    except OSError:
        return ""
    if vals.get("LATPROF_SANITIZE"):
        return vals["LATPROF_SANITIZE"]
    return "fuzz" if vals.get("LATPROF_FUZZ", "OFF").upper() in ("ON", "1", "TRUE", "YES") else ""


def realtime():
    """["chrt", "-r", "1"] when the kernel lets this user run a program at
    real-time priority, else []. Tests that compare busy-wait stage times
    between runs record through it: on a 2-core machine shared with builds
    the neighbours' load stretches the stages 2-3x, differently in every run,
    and the test would measure the neighbours (docs/ci.md). Round-robin, not
    FIFO: under SCHED_FIFO two threads spinning in busy-wait stages kept a
    third thread of the same app off both cores for good (a 300 s timeout of
    visual_diff_html); round-robin slices give it the CPU within 100 ms."""
    try:
        ok = subprocess.run(["chrt", "-r", "1", "true"], capture_output=True).returncode == 0
    except OSError:
        ok = False
    return ["chrt", "-r", "1"] if ok else []


def need_python(*mods):
    """Skip unless the Python packages scripts/setup.sh installs are there."""
    import importlib.util
    for m in mods:
        if importlib.util.find_spec(m) is None:
            skip(f"python package '{m}' is not installed (scripts/setup.sh installs it)")


def check_schema(doc, what, name="report-locks"):
    """Fail unless doc follows schemas/<name>.schema.json (validate, and
    jsonschema too where it is installed)."""
    import json
    path = os.path.join(SRC, "schemas", f"{name}.schema.json")
    with open(path) as f:
        schema = json.load(f)
    errs = validate(doc, schema)
    try:
        import jsonschema
        jsonschema.validate(doc, schema)
    except ImportError:
        pass
    except Exception as e:  # jsonschema.ValidationError
        errs.append(f"jsonschema: {e}")
    if errs:
        fail(f"{what} does not follow {path}:\n" + "\n".join(errs[:20]))
    print(f"ok: {what} follows {name}.schema.json")
