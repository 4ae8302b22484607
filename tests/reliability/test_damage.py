"""Damage is either reported or harmless: random bytes written
over leaf pages of the tables the reports read (lock_waits, ranges, locks,
threads, strings, stacks) of two real recordings (samples/lock_server and
the NVTX samples/infer_server, both through `latprof run`). For every
seeded variant, `report --locks`, `--bottlenecks` and `--breakdown --format
json` each either exit 2 with exactly one stderr line, or print exactly the
undamaged report. A read error that ended a loop like its last row would
print a shorter report with exit 0: that is the failure this test catches.
"""
import os
import random
import shutil
import sqlite3
import struct
import time

from lptest import check, fail, latprof, record, sample, tmpdir

TABLES = ("lock_waits", "ranges", "locks", "threads", "strings", "stacks")
VIEWS = (("--locks",), ("--bottlenecks",), ("--breakdown", "--format", "json"))
VARIANTS = 90


def leaf_pages(path):
    """{table: [page numbers of its b-tree leaves]}: from the dbstat virtual
    table when SQLite has it, else by walking each b-tree from its root."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT name, pageno FROM dbstat WHERE pagetype = 'leaf' AND name IN "
            f"({','.join('?' * len(TABLES))})", TABLES).fetchall()
        out = {}
        for name, page in rows:
            out.setdefault(name, []).append(page)
        return out
    except sqlite3.OperationalError:
        pass  # no dbstat: walk the b-trees
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = dict(conn.execute(
        "SELECT name, rootpage FROM sqlite_master WHERE type = 'table'").fetchall())
    conn.close()
    data = open(path, "rb").read()
    out = {}
    for name in TABLES:
        if name not in roots:
            continue
        todo = [roots[name]]
        while todo:
            pg = todo.pop()
            base = (pg - 1) * size
            hdr = base + (100 if pg == 1 else 0)
            kind = data[hdr]
            if kind == 0x0D:
                out.setdefault(name, []).append(pg)
            elif kind == 0x05:  # interior table page: left children + right-most
                ncell = struct.unpack(">H", data[hdr + 3:hdr + 5])[0]
                todo.append(struct.unpack(">I", data[hdr + 8:hdr + 12])[0])
                for i in range(ncell):
                    cell = struct.unpack(">H", data[hdr + 12 + 2 * i:hdr + 14 + 2 * i])[0]
                    todo.append(struct.unpack(">I", data[base + cell:base + cell + 4])[0])
    return out


def reports(path):
    return [latprof("report", path, *v) for v in VIEWS]


d = tmpdir()
runs = []
lock_db = os.path.join(d, "lock.db")
record(lock_db, sample("lock_server"), "--threads", "4", "--requests", "400")
runs.append(lock_db)
nvtx_db = os.path.join(d, "nvtx.db")
record(nvtx_db, sample("infer_server"), "--requests", "200", "--threads", "2",
       "--locked-frac", "0.3", "--locked-stage", "infer", "--locked-us", "200")
runs.append(nvtx_db)

good, leaves = {}, {}
for path in runs:
    good[path] = reports(path)
    for v, p in zip(VIEWS, good[path]):
        check(p.returncode == 0 and p.stdout, f"undamaged {os.path.basename(path)} "
              f"report {' '.join(v)} exits 0 with output")
    leaves[path] = [(t, pg) for t, pgs in sorted(leaf_pages(path).items()) for pg in pgs]
    names = sorted({t for t, _ in leaves[path]})
    check(leaves[path], f"{os.path.basename(path)}: {len(leaves[path])} leaf pages of "
          f"{', '.join(names)}")
check({"lock_waits", "ranges", "locks", "threads", "strings", "stacks"} <=
      {t for path in runs for t, _ in leaves[path]},
      "every table the reports read has leaf pages to damage")

page_size = sqlite3.connect(lock_db).execute("PRAGMA page_size").fetchone()[0]
t0 = time.monotonic()
reported = harmless = 0
hit = {}
for seed in range(VARIANTS):
    rng = random.Random(seed)
    src = runs[seed % len(runs)]
    table, page = rng.choice(leaves[src])
    hit[table] = hit.get(table, 0) + 1
    bad = os.path.join(d, f"damaged-{seed}.db")
    shutil.copyfile(src, bad)
    with open(bad, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(bytes(rng.getrandbits(8) for _ in range(page_size)))
    for v, want, got in zip(VIEWS, good[src], reports(bad)):
        what = f"seed {seed}: {table} page {page} of {os.path.basename(src)}, " \
               f"report {' '.join(v)}"
        lines = [l for l in got.stderr.splitlines() if l.strip()]
        if got.returncode == 2 and len(lines) == 1 and not got.stdout:
            reported += 1
        elif got.returncode == want.returncode and got.stdout == want.stdout:
            harmless += 1
        else:
            fail(f"{what}: exit {got.returncode}, {len(got.stdout)} bytes of output "
                 f"({'the same' if got.stdout == want.stdout else 'different'} from the "
                 f"undamaged report), stderr:\n{got.stderr}")
    os.unlink(bad)
print(f"damaged tables: {hit}")
check(reported + harmless == VARIANTS * len(VIEWS),
      f"{VARIANTS} damaged copies x {len(VIEWS)} reports: {reported} reported the damage "
      f"(exit 2, one line), {harmless} printed the undamaged report "
      f"({time.monotonic() - t0:.1f} s)")
check(reported > 0, "damage is seen: some report exits 2")
