"""C++ names demangled on a real recording: 4 threads of lp_lockprog_cpp
contend on the namespaced global `ns::g_model_mutex` from ns::Worker::run()
and on the static member `ns::Cache::s_mutex` from ns::Cache::get(int).
The lock names, the call sites and every frame of the program's own code
must read as C++, not as _ZN2ns... symbols, in the db and in the report;
nm's (mangled) symbol table confirms each name belongs to the right
address."""
import json
import os
import shutil
import subprocess

from locklib import SMALL_LOGS, check_schema
from lptest import BUILD, SRC, check, db, fail, latprof, q1, record, skip, tmpdir

prog = os.path.join(BUILD, "tests", "locks", "lp_lockprog_cpp")
if not os.path.exists(prog):
    skip(f"lp_lockprog_cpp not built ({prog})")
if not shutil.which("nm"):
    skip("nm (binutils) not installed: nothing to check the names against")

# The mangled symbols, from the ELF file itself (Itanium C++ ABI names).
MANGLED = {"_ZN2ns13g_model_mutexE": "ns::g_model_mutex",
           "_ZN2ns5Cache7s_mutexE": "ns::Cache::s_mutex",
           "_ZN2ns6Worker3runEv": "ns::Worker::run()",
           "_ZN2ns5Cache3getEi": "ns::Cache::get(int)"}
syms = {}
for ln in subprocess.run(["nm", "-S", prog], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = ln.split()
    if len(parts) == 4 and parts[3] in MANGLED:
        syms[MANGLED[parts[3]]] = (int(parts[0], 16), int(parts[1], 16))
if len(syms) != len(MANGLED):
    fail(f"nm lists {sorted(syms)} of {sorted(MANGLED.values())} in {prog}")

d = tmpdir()
path = os.path.join(d, "cpp.db")
record(path, prog, "300", env=SMALL_LOGS)
conn = db(path)
bias = q1(conn, "SELECT load_bias FROM modules WHERE path = ?", prog)
check(bias is not None, f"{prog} is in the modules table")

# ---- db: lock names -------------------------------------------------------
locks = {r["name"]: r for r in conn.execute(
    "SELECT l.id, l.name, l.address, count(w.lock_id) AS waits FROM locks l "
    "JOIN lock_waits w ON w.lock_id = l.id GROUP BY l.id")}
for name in ("ns::g_model_mutex", "ns::Cache::s_mutex"):
    l = locks.get(name)
    if not l:
        fail(f"no contended lock named {name}: {sorted(map(str, locks))}")
    addr, size = syms[name]
    check(l["address"] - bias == addr and size > 0,
          f"{name}: {l['waits']} waits, address = bias + {addr:#x}, nm's "
          f"{next(k for k, v in MANGLED.items() if v == name)}")
mangled_locks = q1(conn, "SELECT count(*) FROM locks WHERE name LIKE '\\_Z%' ESCAPE '\\'")
check(mangled_locks == 0, "no lock named by a mangled symbol")


# ---- db: frames of the waits ---------------------------------------------
def frames(lock):
    return conn.execute(
        "SELECT f.function, f.module, f.offset, sf.depth FROM lock_waits w "
        "JOIN stack_frames sf ON sf.stack_id = w.stack_id JOIN frames f ON f.id = sf.frame_id "
        "WHERE w.lock_id = ?", (locks[lock]["id"],)).fetchall()


for lock, func in (("ns::g_model_mutex", "ns::Worker::run()"),
                   ("ns::Cache::s_mutex", "ns::Cache::get(int)")):
    fr = frames(lock)
    top = {(r["function"], r["offset"]) for r in fr if r["depth"] == 0}
    start, size = syms[func]
    # offset is the return address (pc - bias): inside the caller, or just past its end
    check(len(top) >= 1 and all(f == func and start < o <= start + size for f, o in top),
          f"{lock}: every wait's top frame is {func} at {start:#x}+{size:#x} ({len(fr)} frames)")
    mangled = sorted({r["function"] for r in fr if r["function"] and r["function"].startswith("_Z")})
    check(not mangled, f"{lock}: no mangled frame in its stacks {mangled[:3]}")
    own = {r["function"] for r in fr if r["module"] == prog}
    check(any(f.startswith("std::thread::_State_impl<") for f in own),
          f"{lock}: the std::thread frame reads as C++ too")
check(q1(conn, "SELECT count(*) FROM frames WHERE function LIKE '\\_Z%' ESCAPE '\\'") == 0,
      "no frame in the db keeps a mangled name")

# ---- the report ----------------------------------------------------------
src_lines = open(os.path.join(SRC, "tests", "locks", "lp_lockprog_cpp.cpp")).read().splitlines()
LOCK_LINES = {m: next(i + 1 for i, t in enumerate(src_lines)
                      if f"std::lock_guard<std::mutex> g({v})" in t)
              for m, v in (("ns::g_model_mutex", "g_model_mutex"),
                           ("ns::Cache::s_mutex", "s_mutex"))}
p = latprof("report", path, "--locks", "--format", "json", check=0)
rep = json.loads(p.stdout)
check_schema(rep, "--locks JSON of a C++ program")
by = {l["name"]: l for l in rep["locks"]}
for lock, func in (("ns::g_model_mutex", "ns::Worker::run()"),
                   ("ns::Cache::s_mutex", "ns::Cache::get(int)")):
    l = by.get(lock)
    if not l:
        fail(f"--locks JSON has no {lock}: {sorted(by)}")
    check(l["symbol"] == lock and l["count"] == locks[lock]["waits"],
          f"report: {lock}, {l['count']} waits as in the db")
    check(l["sites"] and l["sites"][0]["function"] == func,
          f"report: {lock} taken in {l['sites'][0]['function'] if l['sites'] else None}")
    # std::lock_guard -> mutex::lock -> __gthread_mutex_lock are all inlined:
    # the line table alone gives a libstdc++ header; the site is the user's line.
    want = LOCK_LINES[lock]
    site = l["sites"][0]
    check(site["file"].endswith("lp_lockprog_cpp.cpp") and site["line"] == want,
          f"report: {lock} site is lp_lockprog_cpp.cpp:{want}, the lock_guard line "
          f"(got {site['file']}:{site['line']})")
check("_Z" not in p.stdout, "no _Z symbol anywhere in the --locks JSON")
text = latprof("report", path, "--locks", check=0).stdout
check("ns::Worker::run()" in text and "ns::Cache::s_mutex" in text and "_Z" not in text,
      "text report names ns::Worker::run() and ns::Cache::s_mutex, no _Z")
