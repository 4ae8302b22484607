"""A program started through a symlink (redis-server -> redis-check-rdb in
Debian's redis) is named by the path the user ran, not the file the link
points to: tests/preload/lp_contend run as DIR/myserver, a link to it,
has its contended static mutex lp_mu in module DIR/myserver (locks.module,
its frames' module, the --locks text), its symbols still read through the
link (the site is lp_contender). A link that does not lead to the running
file (replaced after the start) is not used: not tested here, the
recorder compares the link's target with /proc/self/exe at the start."""
import json
import os

from lptest import BUILD, check, db, latprof, record, tmpdir

d = tmpdir()
link = os.path.join(d, "myserver")
os.symlink(os.path.join(BUILD, "tests", "preload", "lp_contend"), link)
path = os.path.join(d, "link.db")
record(path, link, "contend")
c = db(path)
row = c.execute("SELECT module FROM locks WHERE name = 'lp_mu'").fetchone()
check(row and row[0] == link, f"lp_mu's module is the link the program ran as ({row and row[0]})")
mods = [r[0] for r in c.execute("SELECT DISTINCT f.module FROM lock_waits w JOIN stack_frames sf "
                                "ON sf.stack_id = w.stack_id JOIN frames f ON f.id = sf.frame_id "
                                "WHERE f.function = 'lp_contender'")]
check(mods == [link], f"the waits' frames in the program are in {link} ({mods})")
doc = json.loads(latprof("report", path, "--locks", "--format", "json").stdout)
lk = next(x for x in doc["locks"] if x["name"] == "lp_mu")
check(lk["module"] == link and lk["sites"][0]["function"] == "lp_contender",
      f"--locks: lp_mu in {lk['module']}, site {lk['sites'][0]['function']} (symbols read "
      f"through the link)")
text = latprof("report", path, "--locks").stdout
check(f"in {link})" in text and "lp_contend," not in text,
      f"the text names the link ({[ln for ln in text.splitlines() if 'lp_mu' in ln][:1]})")
