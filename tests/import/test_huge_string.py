"""One huge string in a Kineto trace (a call stack, a name): the JSON reader
keeps its first LP_JSTR_KEEP (32768) bytes, scans the rest once and says how
many strings it cut; import time is linear in the string's length (checked
coarsely, on CPU time: 32 MiB vs 4 MiB per MiB within 3x, where a reader
quadratic in the length takes 7x and more); bytes JSON forbids inside the dropped part are still
refused, at their offset in the input."""
import os
import subprocess
import time

from lptest import LATPROF, check, db, fail, latprof, meta, q1, sanitizer, tmpdir
import kinetogen

T = tmpdir()
KEEP = 32768


def one_line_exit2(p, what, must):
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and all(m in lines[0] for m in must),
          f"{what}: exit 2, one line naming {must} ({lines[:2]}, exit {p.returncode})")


# ---- a kernel name longer than the cap: kept to 32768 bytes, said -------------------------
for n, cut in ((KEEP, 0), (KEEP + 1, 1), (100 * 1024, 1)):
    src = os.path.join(T, f"name{n}.json")
    t = kinetogen.huge_string(src, n, where="kernel")
    latprof("import", src, "-o", src + ".db")
    c = db(src + ".db")
    check(q1(c, "SELECT count(*) FROM kernels") == len(t.expect["kernels"]) and
          q1(c, "SELECT max(length(s.value)) FROM kernels k JOIN strings s ON s.id = k.name_id")
          == min(n, KEEP) and meta(c, "import.truncated_strings") == cut and
          meta(c, "import.truncated_events") == cut,
          f"a {n}-byte kernel name: {len(t.expect['kernels'])} kernels, the name kept to "
          f"{min(n, KEEP)} bytes, {cut} string cut and its event marked truncated")
    line = [ln for ln in latprof("report", src + ".db").stdout.splitlines()
            if ln.startswith("cut to their first")]
    check(line == (["cut to their first 32768 bytes: 1 string of the source longer than that"]
                   if cut else []), f"a {n}-byte kernel name: the report says so: {line}")

# ---- a 5 MiB call stack with escapes and UTF-8 ---------------------------------------------
src = os.path.join(T, "stack.json")
t = kinetogen.huge_string(src, 5 << 20)
latprof("import", src, "-o", src + ".db")
c = db(src + ".db")
check(q1(c, "SELECT count(*) FROM ranges_named WHERE name = 'aten::stack_holder'") == 1 and
      q1(c, "SELECT count(*) FROM kernels") == len(t.expect["kernels"]) and
      meta(c, "import.truncated_strings") == 1,
      "a 5 MiB call stack (escapes, UTF-8): its event imported, every kernel, 1 string cut")

# ---- what JSON forbids in a string, inside the part that is dropped --------------------------
with open(src, "rb") as f:
    raw = f.read()
# at the start of one of the stack's repeated lines ("torch/nn/..."), 3 MiB in
unit = len(kinetogen.STACK_UNIT.encode())
at = raw.index(b'"Call stack": "') + len(b'"Call stack": "') + (3 << 20) // unit * unit
cases = {"control byte": (raw[:at] + b"\x01" + raw[at + 1:], at, "invalid character"),
         "bad escape": (raw[:at] + b"\\x" + raw[at + 2:], at + 1, "invalid escape"),
         "bad \\u escape": (raw[:at] + b"\\u12g4" + raw[at + 6:], at + 4, "invalid escape"),
         "input ends in the string": (raw[:at], None, "invalid JSON"),
         "a 5000-digit number": (raw.replace(b'"dur": 1.000', b'"dur": 1' + b"0" * 5000, 1), None,
                                 "a number of more than 4096 characters")}
for what, (data, off, msg) in cases.items():
    bad = os.path.join(T, "bad.json")
    with open(bad, "wb") as f:
        f.write(data)
    p = latprof("import", bad, "-o", bad + ".db")
    one_line_exit2(p, what, [msg] + ([f"near byte {off}:"] if off is not None else []))
    check(not os.path.exists(bad + ".db"), f"{what}: nothing written")

# ---- linear in the string's length -----------------------------------------------------------
if sanitizer():
    print(f"skipped: the linearity check (a {sanitizer()} build times its own instrumentation)")
    raise SystemExit(0)


def cpu_s(path):
    """CPU time (user + sys) of one import: what load on the machine leaves intact."""
    p = subprocess.Popen([LATPROF, "import", "--force", path, "-o", path + ".db"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        fail(f"import of {path} failed")
    return ru.ru_utime + ru.ru_stime


per = {}
for mb in (4, 32):
    src = os.path.join(T, f"s{mb}.json")
    kinetogen.huge_string(src, mb << 20)
    t0 = time.monotonic()
    per[mb] = min(cpu_s(src) for _ in range(2)) / mb
    print(f"{mb} MiB string: {per[mb] * 1000:.2f} ms CPU per MiB ({time.monotonic() - t0:.2f} s "
          f"for both imports)")
    os.unlink(src)
check(per[32] <= 3 * per[4],
      f"linear in string length: per-MiB CPU time at 32 MiB {per[32] / per[4]:.2f}x that at 4 MiB "
      f"(bound 3x)")
