"""The holder's stage: samples/infer_server's workers take infer_lock inside
their 'infer' stage, so whoever holds it while another waits is in 'infer'
(the model swapper thread holds it outside any range). Each contended wait
with a known owner stores the owner's innermost open range
(lock_waits.owner_range_id), recomputed here from ranges; --locks and the
lock-contention finding say "holders were in stage infer"."""
import json
import os

from lptest import check, db, latprof, record, sample, tmpdir

path = os.path.join(tmpdir(), "holder.db")
record(path, sample("infer_server"), "--requests", "300", "--threads", "3", "--decode-us", "300",
       "--pre-us", "300", "--infer-us", "1000", "--post-us", "300", "--locked-frac", "0.3",
       "--locked-stage", "infer", "--locked-us", "1000")
conn = db(path)
waits = conn.execute("SELECT w.id, w.start_ns, w.owner_tid, w.owner_range_id, l.process_id FROM "
                     "lock_waits w JOIN locks l ON l.id = w.lock_id WHERE l.name = 'infer_lock' "
                     "AND w.owner_tid IS NOT NULL").fetchall()
check(len(waits) >= 5, f"{len(waits)} waits on infer_lock with a known owner")
mismatch = 0
for w in waits:
    th = conn.execute("SELECT id FROM threads WHERE process_id = ? AND tid = ?",
                      (w["process_id"], w["owner_tid"])).fetchone()
    want = th and conn.execute("SELECT id FROM ranges WHERE start_thread_id = ? AND start_ns <= ? "
                               "AND end_ns > ? ORDER BY start_ns DESC LIMIT 1",
                               (th["id"], w["start_ns"], w["start_ns"])).fetchone()
    mismatch += (want["id"] if want else None) != w["owner_range_id"]
check(mismatch == 0, "owner_range_id = the owner's innermost open range at the wait's start")
n_infer = conn.execute("SELECT count(*) FROM lock_waits w JOIN ranges r ON r.id = "
                       "w.owner_range_id JOIN strings s ON s.id = r.name_id WHERE "
                       "s.value = 'infer'").fetchone()[0]
check(n_infer >= 1, f"{n_infer} waits behind a holder in stage infer")
lk = json.loads(latprof("report", path, "--locks", "--format", "json", check=0).stdout)["locks"]
il = next(l for l in lk if l["name"] == "infer_lock")
check(il["holder_stage"] == "infer" and il["holder_stage_waits"] == n_infer,
      f"--locks: holders were in stage {il['holder_stage']} ({il['holder_stage_waits']} waits)")
txt = latprof("report", path, "--locks", check=0).stdout
check("holders were in stage infer" in txt, "the text report says so")
