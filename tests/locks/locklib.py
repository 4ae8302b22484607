"""Shared bits of the tests/locks e2e tests: the contention program, a
structural JSON Schema check, file hashing."""
import hashlib
import json
import os
import re

from lptest import BUILD, SRC, fail

SMALL_LOGS = {"LATPROF_LOG_MB": "64"}
SCHEMA = os.path.join(SRC, "schemas", "report-locks.schema.json")


def lockprog():
    return os.path.join(BUILD, "tests", "locks", "lp_lockprog")


def source_line(marker, func):
    """Line number of the first line containing marker inside func in lp_lockprog.c."""
    inside = False
    with open(os.path.join(SRC, "tests", "locks", "lp_lockprog.c")) as f:
        for n, line in enumerate(f, 1):
            if re.match(rf"^\S.*\b{func}\(", line):
                inside = True
            if inside and marker in line:
                return n
    fail(f"no '{marker}' in {func}() of lp_lockprog.c")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def one_error_line(p, what):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode != 2 or len(lines) != 1 or not lines[0].startswith("latprof") or p.stdout:
        fail(f"{what}: want exit 2, one stderr line and no stdout; got exit {p.returncode}\n"
             f"stdout: {p.stdout!r}\nstderr: {p.stderr!r}")
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


def check_schema(doc, what):
    with open(SCHEMA) as f:
        schema = json.load(f)
    errs = validate(doc, schema)
    try:  # the real validator too, where it happens to be installed
        import jsonschema
        jsonschema.validate(doc, schema)
    except ImportError:
        pass
    except Exception as e:  # jsonschema.ValidationError
        errs.append(f"jsonschema: {e}")
    if errs:
        fail(f"{what} does not follow {SCHEMA}:\n" + "\n".join(errs[:20]))
    print(f"ok: {what} follows report-locks.schema.json")
