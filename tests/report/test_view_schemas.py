"""Every view of `latprof report` (the flags report --help lists, which come
from the view table, plus the default view) writes JSON that opens with the
one envelope ({"format": "latprof.report.<schema>", "version": N}) and
follows schemas/report-<schema>.schema.json, on a real recording of
samples/infer_server and on the real GPU captures of ../shared/realdata.
A view without a schema file, or a schema file no view uses, fails."""
import json
import os
import re

from lptest import SRC, check, fail, latprof, record, sample, skip, tmpdir

try:
    import jsonschema
except ImportError:
    skip("python3 jsonschema is not installed (scripts/setup.sh installs it)")

SCHEMAS = os.path.join(SRC, "schemas")
REAL = os.path.normpath(os.path.join(os.path.abspath(SRC), "..", "shared", "realdata"))
ALL = {}
for n in sorted(os.listdir(SCHEMAS)):
    if n.endswith(".schema.json"):
        with open(os.path.join(SCHEMAS, n)) as f:
            ALL[n] = json.load(f)


def validator(name):
    """A Draft 2020-12 validator of schemas/NAME whose $refs reach the sibling
    files by their $id."""
    root = ALL[name]
    try:
        from referencing import Registry, Resource
        reg = Registry().with_resources(
            [(s["$id"], Resource.from_contents(s)) for s in ALL.values()])
        return jsonschema.Draft202012Validator(root, registry=reg)
    except ImportError:  # jsonschema < 4.18
        res = jsonschema.RefResolver.from_schema(
            root, store={s["$id"]: s for s in ALL.values()})
        return jsonschema.Draft202012Validator(root, resolver=res)


def view_flags():
    """The views report --help lists: ("", None) for the default view, then
    (flag, argument) for each `  --flag [ARG]` line under "views:"."""
    h = latprof("report", "--help", check=0).stdout
    part = h.split("\nviews:\n", 1)[1].split("\noptions:\n", 1)[0]
    flags = [("", None)]
    for line in part.splitlines():
        m = re.match(r"^  --([a-z][a-z-]*)(?: ([A-Z][A-Za-z.]*))?(?:\s|$)", line)
        if m:
            flags.append((m.group(1), m.group(2)))
    return flags


FLAGS = view_flags()
names = [f for f, _ in FLAGS]
for want in ("locks", "breakdown", "ranges", "counters", "kernels", "memcpy", "sync",
             "cuda-api", "bottlenecks", "processes", "html"):
    check(want in names, f"report --help lists --{want}")
used = set()


def report_json(dbf, flag):
    args = ["report", dbf, "--format", "json"] + ([f"--{flag}"] if flag else [])
    p = latprof(*args, check=0)
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        fail(f"latprof {' '.join(args)}: not JSON ({e}):\n{p.stdout[:400]}")


def validate_all(dbf, what):
    docs = {}
    for flag, arg in FLAGS:
        if arg:  # --html OUT.html writes a page, not JSON
            continue
        doc = report_json(dbf, flag)
        view = f"--{flag}" if flag else "(default)"
        keys = list(doc)
        check(keys[:2] == ["format", "version"] and isinstance(doc["version"], int),
              f"{what} {view}: the envelope opens the document ({keys[:2]})")
        m = re.fullmatch(r"latprof\.report\.([a-z-]+)", doc["format"])
        check(m is not None, f"{what} {view}: format {doc['format']!r} names a schema")
        name = f"report-{m.group(1)}.schema.json"
        check(name in ALL, f"{what} {view}: schemas/{name} exists")
        errs = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.path))
        if errs:
            fail(f"{what} {view} does not follow {name}:\n" +
                 "\n".join(f"  {list(e.path)}: {e.message[:200]}" for e in errs[:10]))
        print(f"ok: {what} {view} follows {name}")
        used.add(name)
        docs[flag] = doc
    return docs


d = tmpdir()
REQ = 120
dbf = f"{d}/infer.db"
record(dbf, sample("infer_server"), "--threads", "2", "--requests", str(REQ), "--decode-us",
       "300", "--pre-us", "200", "--infer-us", "600", "--post-us", "100", "--locked-frac",
       "0.05", "--locked-stage", "infer", "--locked-us", "1000")
docs = validate_all(dbf, "infer_server")
# The numbers are the program's: REQ requests, each one "request" range
# holding the four stages.
bd = docs["breakdown"]
check(bd["request"]["stats"]["n"] == REQ, f"breakdown: {REQ} requests")
rng = {r["name"]: r["stats"]["n"] for r in docs["ranges"]["ranges"]}
check(rng.get("request") == REQ and all(rng.get(s) == REQ for s in ("decode", "infer")),
      f"ranges: request, decode and infer {REQ} times each ({rng})")
check(docs[""]["breakdown"]["request"] == bd["request"],
      "the default view embeds the same request row as --breakdown")
check(docs["processes"]["run"] == docs[""]["run"], "--processes' run is the default view's")
check(docs["kernels"]["gpu_captured"] is False and docs["kernels"]["rows"] == [],
      "a CPU-only run: no kernels")
check(docs["counters"]["has_counters"] is True and
      {s["name"] for s in docs["counters"]["stages"]} >= {"decode", "infer"},
      "counters per stage recorded")

# Real GPU captures: the CUDA views with rows in them (counts from the
# README of ../shared/realdata, i.e. from the captures themselves).
NSYS = {"saxpy-mpi-cuda_a100_nsys2022.2": (5, 15), "flameox_rtx3060_nsys2025.5": (3, 1)}
if not os.path.isdir(REAL):
    print(f"skip part: {REAL} is absent, the GPU views were checked on a CPU run only")
else:
    for n, (kern, mcpy) in NSYS.items():
        idb = f"{d}/{n}.db"
        latprof("import", "-o", idb, f"{REAL}/nsys/{n}.sqlite", check=0)
        g = validate_all(idb, n)
        got = (sum(r["count"] for r in g["kernels"]["rows"]),
               sum(r["count"] for r in g["memcpy"]["rows"]))
        check(got == (kern, mcpy), f"{n}: {kern} kernels and {mcpy} copies, got {got}")
        check(g["kernels"]["total_ns"] == sum(r["total_ns"] for r in g["kernels"]["rows"]),
              f"{n}: kernels total_ns is the rows' sum")
    kdb = f"{d}/alexnet.db"
    latprof("import", "-o", kdb, f"{REAL}/kineto/alexnet_a100.pt.trace.json.gz", check=0)
    g = validate_all(kdb, "alexnet (Kineto)")
    check(sum(r["count"] for r in g["kernels"]["rows"]) == 79, "alexnet: 79 kernels")

unused = set(ALL) - used - {"report-diff.schema.json"}  # diff's is latprof diff's
check(not unused, f"every report schema belongs to a view (unused: {sorted(unused)})")
