"""The symbol cache on a real run: lock_server recorded once, its logs
imported again and again. The re-import takes every answer from the cache
(import.symbolize_ns far lower) and gives the same frames and lock names as
an import without the cache (LATPROF_SYMCACHE=off); with every cache entry
damaged the import gives them too, and rewrites the entries."""
import glob
import os

from lptest import BUILD, check, db, latprof, q1, tmpdir

d = tmpdir()
cache = os.path.join(d, "cache")
env = {"XDG_CACHE_HOME": cache, "LATPROF_LOG_MB": "64"}
p = latprof("run", "--keep-logs", "-o", os.path.join(d, "run.db"), "--",
            os.path.join(BUILD, "samples", "lock_server"), "--threads", "4", "--requests", "300",
            "--work-us", "50", "--locked-us", "200", env=env, check=0)
logs = [l.split()[-1] for l in p.stderr.splitlines() if "event logs kept in" in l]
check(len(logs) == 1, f"latprof run kept its logs ({logs})")


def imported(name, extra=None):
    out = os.path.join(d, name + ".db")
    latprof("import", logs[0], "-o", out, env={**env, **(extra or {})}, check=0)
    c = db(out)
    frames = [tuple(r) for r in c.execute(
        "SELECT module, offset, function, file, line FROM frames ORDER BY id")]
    locks = [tuple(r) for r in c.execute("SELECT address, name, module FROM locks ORDER BY id")]
    ns = q1(c, "SELECT value FROM meta WHERE key = 'import.symbolize_ns'")
    return frames, locks, ns


off = imported("off", {"LATPROF_SYMCACHE": "off"})
first = imported("first")  # the run's own import filled the cache already
entries = glob.glob(os.path.join(cache, "latprof", "symbols", "*.lpsym"))
check(len(entries) >= 2, f"one cache entry per module looked up ({len(entries)})")
named = [l for l in off[1] if l[1] == "model_lock"]
check(len(off[0]) >= 3 and named, f"{len(off[0])} frames, model_lock named without the cache")
check(first[0] == off[0] and first[1] == off[1],
      f"from the cache: the same {len(off[0])} frames and {len(off[1])} lock names")
print(f"info: symbolization without the cache {off[2] / 1e6:.2f} ms, "
      f"from the cache {first[2] / 1e6:.3f} ms")
check(first[2] * 5 <= off[2],
      f"symbolization from the cache at least 5x faster ({off[2] / max(first[2], 1):.0f}x)")

for e in entries:  # damage every entry: a flipped byte in the middle
    with open(e, "r+b") as f:
        f.seek(os.path.getsize(e) // 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0x40]))
damaged = imported("damaged")
check(damaged[0] == off[0] and damaged[1] == off[1],
      "every entry damaged: the same frames and lock names, from libdwfl")
again = imported("again")
check(again[0] == off[0] and again[2] * 5 <= off[2],
      f"the damaged entries were rewritten: served from the cache again "
      f"({again[2] / 1e6:.3f} ms)")
