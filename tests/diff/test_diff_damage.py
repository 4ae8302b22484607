"""A damaged database never yields a shorter diff: `latprof diff` reads the
ranges in one scan folded inside SQLite (lp_db_fold, an aggregate function
called per row), so a read error in the middle of that scan must end the
command (exit 2, one stderr line) rather than look like the last row.
Random bytes over leaf pages of `ranges` in one side of a pair of generated
20,000-request databases (tests/bench/gen_diff_db.py, the importer's
schema): each seeded variant either exits 2 with exactly one stderr line or
prints exactly the undamaged diff."""
import os
import random
import shutil
import sqlite3
import subprocess
import sys

from lptest import SRC, check, latprof, tmpdir

d = tmpdir()
gen = os.path.join(SRC, "tests", "bench", "gen_diff_db.py")
a, b = os.path.join(d, "a.db"), os.path.join(d, "b.db")
for path, seed in ((a, 1), (b, 2)):
    subprocess.run([sys.executable, gen, path, "20000", "--seed", str(seed)], check=True)

want = latprof("diff", a, b, "--no-findings")
check(want.returncode in (0, 1, 3) and "infer" in want.stdout,
      f"undamaged pair diffs (exit {want.returncode}) {want.stderr.strip()}")

c = sqlite3.connect(b)
page_size = c.execute("PRAGMA page_size").fetchone()[0]
leaves = [p for (p,) in c.execute(
    "SELECT pageno FROM dbstat WHERE name = 'ranges' AND pagetype = 'leaf'")]
c.close()
check(len(leaves) > 100, f"{len(leaves)} leaf pages of ranges to damage")

rng = random.Random(14)
caught = same = 0
bad = []
for i in range(8):
    dmg = os.path.join(d, f"damaged{i}.db")
    shutil.copy(b, dmg)
    page = rng.choice(leaves)
    with open(dmg, "r+b") as f:
        f.seek((page - 1) * page_size + rng.randrange(8, page_size - 64))
        f.write(bytes(rng.randrange(256) for _ in range(48)))
    got = latprof("diff", a, dmg, "--no-findings")
    lines = got.stderr.strip().splitlines()
    if got.returncode == 2 and len(lines) == 1:
        caught += 1
    elif got.returncode == want.returncode and got.stdout == want.stdout:
        same += 1
    else:
        bad.append(f"page {page}: exit {got.returncode}, {len(lines)} stderr lines, "
                   f"{'the same' if got.stdout == want.stdout else 'a different'} diff")
check(not bad, "every damaged variant exits 2 with one line or diffs as undamaged" +
      "".join("\n  " + x for x in bad))
check(caught >= 1, f"{caught} of 8 variants refused (exit 2, one line), {same} harmless")
