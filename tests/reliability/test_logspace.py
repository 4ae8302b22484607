"""Log space. The log directory's filesystem fills: the
app's exit status passes, a database is written, the drops are counted and
shown. And `latprof import` of logs that are short, sparse, or whose blocks
were never allocated on a full tmpfs never crashes: it imports them or says
in one line why not (exit 2). Before, both ended in SIGBUS (exit 135): the
reader touched mapped pages of a hole, which a full tmpfs cannot back.
Needs an unprivileged user+mount namespace for the tmpfs parts."""
import ctypes
import ctypes.util
import glob
import os
import re
import shutil
import struct
import subprocess

from lptest import LATPROF, check, q1, skip, tmpdir
from rellib import meta, open_db, relbin

d = tmpdir()
storm = relbin("lp_rel_storm")
if not os.path.exists(storm):
    skip("lp_rel_storm not built (no NVTX3 headers)")
unshare = shutil.which("unshare")
ns_ok = bool(unshare) and subprocess.run([unshare, "-Urm", "true"]).returncode == 0
TMPFS = 'mnt="$1"; shift; mount -t tmpfs -o size=1m tmpfs "$mnt" && '

# 1. 60,000 ranges with the logs on a 1 MiB tmpfs.
if not ns_ok:
    print("SKIP part: no user+mount namespace (unshare -Urm failed): the tmpfs parts need one")
else:
    mnt = os.path.join(d, "mnt")
    os.mkdir(mnt)
    out = os.path.join(d, "full.db")
    p = subprocess.run([unshare, "-Urm", "sh", "-c", TMPFS + 'TMPDIR="$mnt" exec "$@"', "sh",
                        mnt, LATPROF, "run", "-o", out, "--", storm, "ranges", "60000", "3"],
                       capture_output=True, text=True)
    check(p.returncode == 3, f"full tmpfs: the app's exit status passes (3, got {p.returncode})"
          f"\n{p.stderr}")
    check(p.stdout.strip() == "ranges=60000", f"full tmpfs: app output unchanged {p.stdout!r}")
    c = open_db(out)
    dropped, chunks = int(meta(c, "dropped_records")), int(meta(c, "dropped_chunks"))
    kept = q1(c, "SELECT count(*) FROM ranges")
    m = re.search(r"\((\d+) records dropped[,)]", p.stderr)
    check(m and int(m.group(1)) == dropped,
          f"full tmpfs: the summary shows the {dropped} dropped records: {p.stderr.strip()!r}")
    check(chunks > 0, f"full tmpfs: failed chunk reservations counted ({chunks})")
    # Each range is a push and a pop record: every one is kept or counted.
    check(0 < kept < 60000 and 2 * (60000 - kept) <= dropped + 2,
          f"full tmpfs: {kept} ranges kept, the other {60000 - kept} counted in {dropped} drops")
    print(f"FIGURE logspace[tmpfs 1 MiB]: 60000 ranges: {kept} kept, dropped_records={dropped}, "
          f"dropped_chunks={chunks}, exit 3 passed through")

# 2. Damaged logs: a real one, cut, holed and unbacked.
src = os.path.join(d, "src")
os.mkdir(src)
p = subprocess.run([LATPROF, "run", "--keep-logs", "-o", os.path.join(d, "src.db"), "--",
                    storm, "ranges", "20000", "0"], capture_output=True, text=True,
                   env={**os.environ, "TMPDIR": src})
check(p.returncode == 0, f"reference run exits 0 ({p.returncode})\n{p.stderr}")
logs = glob.glob(os.path.join(src, "latprof-*", "*.lplog"))
check(len(logs) == 1, f"one kept log ({logs})")
log = open(logs[0], "rb").read()
HDR = 4096
chunk_size, max_chunks = struct.unpack_from("<II", log, 20)
(n_chunks,) = struct.unpack_from("<I", log, 56)
# Chunks are prepared ahead of their use, up to 16 at a time (zeros, never
# handed out): the damage cases below start from the chunks in use.
used = HDR + n_chunks * chunk_size
check(n_chunks >= 2 and used <= len(log) <= HDR + (n_chunks + 16) * chunk_size and
      not log[used:].strip(b"\0"),
      f"the log holds its {n_chunks} chunks, and past them only zeros of at most 16 chunks "
      f"prepared ahead ({len(log)} bytes)")
log = log[:used]

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
PUNCH = 0x01 | 0x02  # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE


def punch(path, off, length):
    fd = os.open(path, os.O_RDWR)
    try:
        if libc.fallocate(fd, PUNCH, off, length) != 0:
            skip(f"cannot punch holes here: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def sparse_headers(path):
    """Only the headers written; every record is a hole."""
    with open(path, "wb") as f:
        f.write(log[:HDR])
        for c in range(n_chunks):
            off = HDR + c * chunk_size
            f.seek(off)
            f.write(log[off:off + 16])
        f.truncate(len(log))


def header_then_hole(path):
    with open(path, "wb") as f:
        f.write(log[:HDR])
        f.truncate(HDR + max_chunks * chunk_size)


cases = {
    "cut in the header": lambda p: os.truncate(p, 100),
    "cut after the header": lambda p: os.truncate(p, HDR),
    "cut in a chunk header": lambda p: os.truncate(p, HDR + 8),
    "cut in the first chunk": lambda p: os.truncate(p, HDR + chunk_size // 2),
    "last byte missing": lambda p: os.truncate(p, len(log) - 1),
    "first chunk's records a hole": lambda p: punch(p, HDR + 4096, chunk_size),
    "last chunk a hole": lambda p: punch(p, HDR + (n_chunks - 1) * chunk_size, chunk_size),
    "only headers written": sparse_headers,
    "64 MiB of hole after it": lambda p: os.truncate(p, len(log) + (64 << 20)),
    # The shape of a log whose disk filled under the old writer (made at its
    # full size, sparse): the old reader died of SIGBUS on it on a full tmpfs.
    "header only, a hole to full size": header_then_hole,
}


def damaged_dirs(root):
    for i, (name, make) in enumerate(cases.items()):
        dd = os.path.join(root, f"case{i}")
        os.mkdir(dd)
        path = os.path.join(dd, "p1-0.lplog")
        with open(path, "wb") as f:
            f.write(log)
        make(path)
        yield name, dd


def check_import(name, p, out):
    check(p.returncode in (0, 2),
          f"{name}: import exits 0 or 2, never a signal (got {p.returncode})\n{p.stderr}")
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    if p.returncode == 2:
        check(len(lines) == 1 and lines[0].startswith("latprof:"),
              f"{name}: one clear line ({lines})")
        check(not os.path.exists(out), f"{name}: no database left behind")
        return 2, lines[0]
    check(os.path.exists(out), f"{name}: imported ({lines})")
    damaged = [ln for ln in lines if "damaged chunk" in ln]
    return 0, damaged[0] if damaged else lines[0]


imp = os.path.join(d, "imp")
os.mkdir(imp)
for name, dd in damaged_dirs(imp):
    out = os.path.join(dd, "x.db")
    rc, line = check_import(name, subprocess.run([LATPROF, "import", dd, "-o", out],
                                                 capture_output=True, text=True), out)
    if "hole" in name and "after" not in name or "only headers" in name:
        check(rc == 2 or "damaged chunk" in line,
              f"{name}: the records lost to the holes are reported ({line})")
    print(f"FIGURE logspace[{name}]: exit {rc}: {line}")

# The same files on a full tmpfs, where touching a hole raised SIGBUS.
if ns_ok:
    mnt = os.path.join(d, "mnt2")
    os.mkdir(mnt)
    stage = os.path.join(d, "stage")
    os.mkdir(stage)
    names = []
    for name, dd in damaged_dirs(stage):
        names.append(name)
    script = (TMPFS.replace("size=1m", "size=16m") + 'cp -r --sparse=always "$1"/. "$mnt"/ && '
              '(dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null; true) && '
              'for dd in "$mnt"/case*; do "$2" import "$dd" -o "$3/$(basename $dd).db" '
              '2>"$3/$(basename $dd).err"; echo "$(basename $dd) $?"; done')
    res = os.path.join(d, "res")
    os.mkdir(res)
    p = subprocess.run([unshare, "-Urm", "sh", "-c", script, "sh", mnt, stage, LATPROF, res],
                       capture_output=True, text=True)
    got = dict(ln.split() for ln in p.stdout.splitlines())
    check(len(got) == len(names), f"full tmpfs: every damaged log imported or refused ({p.stdout}"
          f"{p.stderr})")
    for i, name in enumerate(names):
        rc = int(got.get(f"case{i}", -1))
        err = open(os.path.join(res, f"case{i}.err")).read().strip()
        check(rc in (0, 2), f"full tmpfs, {name}: exit 0 or 2, never SIGBUS (got {rc}) {err}")
        print(f"FIGURE logspace[full tmpfs, {name}]: exit {rc}")
