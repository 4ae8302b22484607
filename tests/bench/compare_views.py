"""Runs every read-side view of two latprof builds over the same databases
and diffs their outputs byte for byte: a change meant to be only faster
or leaner (a streaming pass instead of a load, say) must print the same.

    compare_views.py OLD_LATPROF NEW_LATPROF DB... [--out DIR]

Each database is copied first (the views only read, but a copy keeps a
test's database that disappears meanwhile from failing the comparison).
Prints one line per database and view; exits 1 when any output differs,
leaving both outputs in DIR for a look.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

VIEWS = [
    ("report", []),
    ("report-json", ["--format", "json"]),
    ("locks", ["--locks"]),
    ("locks-json", ["--locks", "--format", "json"]),
    ("breakdown", ["--breakdown"]),
    ("breakdown-json", ["--breakdown", "--format", "json"]),
    ("breakdown-csv", ["--breakdown", "--format", "csv"]),
    ("bottlenecks", ["--bottlenecks"]),
    ("bottlenecks-json", ["--bottlenecks", "--format", "json"]),
    ("ranges", ["--ranges"]),
    ("counters", ["--counters"]),
    ("processes", ["--processes"]),
]


def run(latprof, args, out):
    with open(out, "wb") as f:
        p = subprocess.run([latprof, *args], stdout=f, stderr=subprocess.PIPE)
    with open(out, "ab") as f:  # the exit status and error text are output too
        f.write(b"\n--- exit %d\n" % p.returncode + p.stderr)


def views(db, out, tag):
    """(name, argv, output file) of every command compared on db."""
    for name, extra in VIEWS:
        yield name, ["report", db, *extra], os.path.join(out, f"{tag}.{name}")
    html = os.path.join(out, f"{tag}.html")
    yield "html", ["report", db, "--html", html, "-f", "-q"], html
    yield "check", ["check", db, "--expect", "p99(request) < 1s", "--expect",
                    "count(finding:lock-contention) == 0"], os.path.join(out, f"{tag}.check")
    yield "check categories", ["check", db, "--expect", "share(lock-wait) < 50%", "--expect",
                               "total(cpu) > 1ms", "--expect", "p50(stage:infer) < 1s"], \
        os.path.join(out, f"{tag}.checkcat")
    chrome = os.path.join(out, f"{tag}.chrome.json")
    yield "export --chrome", ["export", db, "--chrome", chrome, "-f"], chrome


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("dbs", nargs="+")
    ap.add_argument("--out")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="lpcmp-")
    os.makedirs(out, exist_ok=True)
    bad = same = 0
    for i, src in enumerate(a.dbs):
        db = os.path.join(out, f"db{i}.db")
        try:
            shutil.copyfile(src, db)
        except OSError as e:
            print(f"compare_views: skip {src}: {e}")
            continue
        for (name, argv, f_old), (_, argv_new, f_new) in zip(views(db, out, f"{i}.old"),
                                                             views(db, out, f"{i}.new")):
            outs = []
            for lp, args, f in ((a.old, argv, f_old), (a.new, argv_new, f_new)):
                log = f + ".log" if f.endswith((".html", ".json")) else f
                run(lp, args, log)
                with open(log, "rb") as g:
                    text = g.read()
                if log != f:
                    text += open(f, "rb").read() if os.path.exists(f) else b"(no file)"
                outs.append(text.replace(f"{i}.old".encode(), b"X").replace(
                    f"{i}.new".encode(), b"X"))
            if outs[0] == outs[1]:
                same += 1
            else:
                bad += 1
                print(f"compare_views: DIFFERS {src} {name} ({f_old} vs {f_new})")
        os.unlink(db)
    print(f"compare_views: {same} outputs identical, {bad} differ ({len(a.dbs)} databases)")
    if not bad and not a.out:
        shutil.rmtree(out, ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
