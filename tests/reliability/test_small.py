"""The small ones, each on a real run:
- a temporary database OUT.tmp-XXXXXX that a killed import left is removed by
  the next import of OUT, and one a live import holds (its flock) is not;
- a program that exists but cannot be executed: "Permission denied", exit
  126, as a shell says (was "cannot find program", exit 2);
- a stage on one side of a diff only is "absent on the new side" (or base),
  not "not enough data (0 requests ...)";
- wide UTF-8 thread names (CJK) keep the text columns aligned: padded by
  display width (wcwidth), not by characters;
- meta.schema_version newer than this latprof's is refused with exit 2 and
  a line naming both versions (was read as if current)."""
import fcntl
import glob
import os
import random
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
import unicodedata

from lptest import LATPROF, check, latprof, one_error_line, record, sample, schema_version, tmpdir
import synth

d = tmpdir()
server = sample("lock_server")

# --- stale temporary databases ------------------------------------------------
p = latprof("run", "--keep-logs", "-o", os.path.join(d, "kept.db"), "--", server,
            "--threads", 4, "--requests", 4000, env={"LATPROF_LOG_MB": "64"})
m = re.search(r"event logs kept in (\S+)", p.stderr)
check(p.returncode == 0 and m is not None, "a run's logs kept for import")
logs = m.group(1)
out = os.path.join(d, "out.db")

# A real kill: SIGKILL the import as soon as its temporary file exists.
left = []
for attempt in range(20):
    proc = subprocess.Popen([LATPROF, "import", logs, "-o", out], stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    while proc.poll() is None and time.monotonic() - t0 < 30:
        if glob.glob(out + ".tmp-*"):
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.0005)
    proc.wait()
    left = glob.glob(out + ".tmp-*")
    if left and not os.path.exists(out):
        break
    for f in [out] + left:
        if os.path.exists(f):
            os.unlink(f)
if left:
    print(f"killed import left {[os.path.basename(f) for f in left]} "
          f"({os.path.getsize(left[0])} bytes) after {attempt + 1} attempt(s)")
else:
    print("note: every import finished before the kill landed; the planted files below "
          "still test the sweep")
# A leftover planted the same way (no holder), and a live importer's file,
# held by its flock as latprof holds it from its creation.
stale = out + ".tmp-Stale1"
open(stale, "w").close()
live = out + ".tmp-Live01"
held = open(live, "w")
fcntl.flock(held, fcntl.LOCK_EX)
other = os.path.join(d, "other.db.tmp-Other1")  # another output's: not ours to judge
open(other, "w").close()
p = latprof("import", logs, "-o", out)
check(p.returncode == 0 and os.path.exists(out), f"the next import of OUT works\n{p.stderr}")
remaining = sorted(os.path.basename(f) for f in glob.glob(out + ".tmp-*"))
check(remaining == ["out.db.tmp-Live01"],
      f"stale temporary files of OUT removed ({len(left)} killed, 1 planted), the live one "
      f"kept: {remaining}")
check(os.path.exists(other), "another output's temporary file is left alone")
held.close()

# --- a program that cannot be executed ----------------------------------------
script = os.path.join(d, "noexec.sh")
with open(script, "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
os.chmod(script, 0o644)
sh = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
for what, args, env in (
        ("a path", [script], None),
        ("a name found on PATH", ["noexec.sh"], {"PATH": d + ":/usr/bin:/bin"}),
        ("a directory", [d], None)):
    p = latprof("run", "-o", os.path.join(d, "x.db"), "--", *args, env=env)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    check(p.returncode == 126 == sh.returncode and len(lines) == 1 and
          lines[0].startswith("latprof: cannot run") and
          ("Permission denied" in lines[0] or "Is a directory" in lines[0]),
          f"{what} that cannot be executed: exit 126 as sh's {sh.returncode}, '{lines[:1]}'")
check(not os.path.exists(os.path.join(d, "x.db")), "no database made")
p = latprof("run", "-o", os.path.join(d, "x.db"), "--", os.path.join(d, "nonexistent"))
check(p.returncode == 2 and "cannot find program" in p.stderr,
      "a program that does not exist: still 'cannot find program', exit 2")

# --- a stage on one side only -------------------------------------------------
rng = random.Random(7)
base_db, new_db = os.path.join(d, "base.db"), os.path.join(d, "new.db")
base_reqs = synth.draw(rng, 200)
new_reqs = [{k: v for k, v in r.items() if k != "postprocess"} for r in synth.draw(rng, 200)]
synth.make_db(base_db, base_reqs)
synth.make_db(new_db, new_reqs)
p = latprof("diff", base_db, new_db, "--no-findings")
rows = [ln for ln in p.stdout.splitlines() if ln.lstrip().startswith("postprocess")]
check(p.returncode in (0, 1, 3) and len(rows) == 2 and
      all(ln.rstrip().endswith("absent on the new side") for ln in rows) and
      "not enough data" not in "".join(rows),
      f"postprocess, only on the base side: 'absent on the new side' on its 2 rows\n"
      + "\n".join(rows))
p = latprof("diff", new_db, base_db, "--no-findings", "--format", "markdown")
rows = [ln for ln in p.stdout.splitlines() if "postprocess" in ln and "|" in ln]
check(len(rows) == 2 and all("absent on the base side" in ln for ln in rows),
      "the other way round (markdown): 'absent on the base side'")
p = latprof("diff", base_db, new_db, "--no-findings", "--format", "json")
check(len(re.findall(r'"why":\s*"absent on the new side"', p.stdout)) == 2,
      "JSON keeps the verdict and says why: absent on the new side")

# --- wide thread names --------------------------------------------------------
prog = os.path.join(d, "wide.py")
names = ("线程一", "w-ab", "测试é")
with open(prog, "w") as f:
    f.write(f"""import ctypes, threading, time
libc = ctypes.CDLL(None)
lock = threading.Lock()
def work(name):
    libc.prctl(15, name.encode(), 0, 0, 0)
    for _ in range(30):
        with lock:
            time.sleep(0.002)
ts = [threading.Thread(target=work, args=(n,), name=n) for n in {names!r}]
for t in ts: t.start()
for t in ts: t.join()
""")
wide_db = os.path.join(d, "wide.db")
record(wide_db, sys.executable, prog)


def cols(s):
    """Terminal columns: 2 for East Asian wide/full-width, 0 for combining."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


p = latprof("report", wide_db, "--locks")
blocks = re.findall(r"top waiters \(tid, name\)\n((?:\s+\d+\s+.*\n)+)", p.stdout)
check(blocks, f"the lock's waiters are listed\n{p.stdout}")
for block in blocks:
    rows = block.splitlines()
    ends = {cols(ln[:ln.index(" waits")]) for ln in rows}
    seen = [n for n in names if any(n in ln for ln in rows)]
    check(len(ends) == 1 and seen,
          f"waiter rows with {seen} end their count at the same column {sorted(ends)}")

# --- meta.schema_version newer than known -------------------------------------
newer = os.path.join(d, "newer.db")
shutil.copy(wide_db, newer)
c = sqlite3.connect(newer)
c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (schema_version() + 1,))
c.commit()
c.close()
for args in (["report", newer], ["report", newer, "--locks"],
             ["check", newer, "--expect", "count(lock:x) == 0"], ["export", newer, "--chrome", "-"]):
    p = latprof(*args)
    one_error_line(p, f"{args[0]} of a database whose meta.schema_version is "
                      f"{schema_version() + 1}")
    check(f"schema version {schema_version() + 1}" in p.stderr and
          f"to {schema_version()}" in p.stderr, f"{args[0]}: both versions named")
