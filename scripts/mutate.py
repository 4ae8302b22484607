#!/usr/bin/env python3
"""Sampled mutation testing of latprof's import and analysis code (import/, analysis/).

Run through scripts/mutate.sh (see there for the options). Each mutant is one
textual change to one line of one source file: a comparison flipped (< <=,
> >=, == !=), && <-> ||, an integer constant off by one, a float constant
halved or doubled, or an expression statement dropped. The mutant is written
into a private copy of the tree (WORK/src, never the checkout), rebuilt
incrementally (WORK/build), and the tests that cover its file
(tests/mutation-map.txt) run first, then the unit tier; the first failing
test kills it. A mutant that does not compile is skipped and not counted; one
that runs past the per-mutant timeout counts as killed (the tests noticed).

Not sampled, on purpose (docs/mutation.md says why): comments, preprocessor
lines, string literals, array sizes ([N]), the text of error messages
(snprintf/findings_skip/... arguments are strings: left alone), lines that
handle ENOMEM, assert() (compiled out of the release build), and dropped
free()/*_free()/finalize/close calls (a leak that only a leak checker sees).
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAP = os.path.join(SRC, "tests", "mutation-map.txt")

REL_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
LOG_FLIP = {"&&": "||", "||": "&&"}
# An operator token: longest match first so "<=" is not read as "<".
OP_RE = re.compile(r"<<=|>>=|<<|>>|->|<=|>=|==|!=|&&|\|\||<|>")
INT_RE = re.compile(r"(?<![\w.])(\d+)([uUlL]*)(?![\w.])")
FLT_RE = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?![\w.])")
STR_RE = re.compile(r'"(?:\\.|[^"\\])*"' + r"|'(?:\\.|[^'\\])*'")
DROP_KEEP = re.compile(r"^\s*(\w*free|sqlite3_finalize|sqlite3_close|close|fclose|munmap|"
                       r"lp_db_close|closedir|pclose|\w+_release|\w+_destroy)\s*\(")
# Expression statements worth dropping: assignments, ++/--, calls.
DROP_RE = re.compile(r"^\s*(?!return\b|goto\b|break\b|continue\b|case\b|default\b|else\b)"
                     r"[A-Za-z_(*][^;{}]*;\s*$")
DECL_RE = re.compile(r"^\s*(const\s+|static\s+|struct\s+|enum\s+|unsigned\s+|signed\s+)*"
                     r"(int|int64_t|uint64_t|int32_t|uint32_t|uint8_t|uint16_t|size_t|"
                     r"ssize_t|double|float|char|long|short|bool|void|sqlite3_stmt|sqlite3|"
                     r"struct\s+\w+|enum\s+\w+|lp_\w+_t|\w+_t)\b[\s*]*\w+\s*(=|;|\[|,)")


def log(*a):
    print(*a, flush=True)


def strip_strings(line):
    """The line with string and char literals blanked (same length)."""
    return STR_RE.sub(lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', line)


def code_mask(lines):
    """Per line: the text with comments, literals blanked; None for lines
    that are preprocessor or wholly comment."""
    out, in_comment = [], False
    for line in lines:
        s = strip_strings(line)
        buf, i = [], 0
        while i < len(s):
            if in_comment:
                j = s.find("*/", i)
                if j < 0:
                    buf.append(" " * (len(s) - i))
                    i = len(s)
                else:
                    buf.append(" " * (j + 2 - i))
                    i = j + 2
                    in_comment = False
            elif s.startswith("/*", i):
                in_comment = True
            elif s.startswith("//", i):
                buf.append(" " * (len(s) - i))
                i = len(s)
            else:
                buf.append(s[i])
                i += 1
        t = "".join(buf)
        if not t.strip() or t.lstrip().startswith("#"):
            out.append(None)
        else:
            out.append(t)
    return out


def in_brackets(masked, pos):
    depth = 0
    for ch in masked[:pos]:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
    return depth > 0


def sites(path):
    """Every mutant of one file: (line index, col, op, original, mutated)."""
    with open(path) as f:
        lines = f.read().split("\n")
    masked = code_mask(lines)
    res, depth = [], 0
    for i, m in enumerate(masked):
        if m is None:
            continue
        if "ENOMEM" in m or re.match(r"\s*assert\s*\(", m):
            # out-of-memory paths: no test reaches them; assert(): compiled
            # out (-DNDEBUG) in the release build the tests run
            depth += m.count("{") - m.count("}")
            continue
        in_func = depth > 0
        depth += m.count("{") - m.count("}")
        if not in_func:  # tables and declarations at file scope: rule table aside
            if not re.search(r"LP_CMP_\w+,\s*[\d.]+", m):
                continue
        for o in OP_RE.finditer(m):
            tok = o.group(0)
            if tok in REL_FLIP:
                res.append((i, o.start(), "ror", tok, REL_FLIP[tok]))
            elif tok in LOG_FLIP:
                res.append((i, o.start(), "lcr", tok, LOG_FLIP[tok]))
        for o in FLT_RE.finditer(m):
            v = o.group(1)
            try:
                x = float(v)
            except ValueError:
                continue
            if x == 0:
                continue
            res.append((i, o.start(), "const", v, repr(x * 2)))
            res.append((i, o.start(), "const", v, repr(x / 2)))
        for o in INT_RE.finditer(m):
            if in_brackets(m, o.start()) and DECL_RE.match(m):
                continue  # an array size
            if FLT_RE.match(m, o.start()) or m[o.start():o.start() + 2].lower() == "0x":
                continue
            v = int(o.group(1))
            suf = o.group(2)
            res.append((i, o.start(), "off1", o.group(0), f"{v + 1}{suf}"))
            if v > 0:
                res.append((i, o.start(), "off1", o.group(0), f"{v - 1}{suf}"))
        if in_func and DROP_RE.match(m) and not DROP_KEEP.match(m) and not DECL_RE.match(m) \
                and m.count("(") == m.count(")") and lines[i].rstrip().endswith(";") \
                and _stmt_start(masked, i):
            res.append((i, 0, "drop", lines[i].strip(), ";"))
    return lines, res


def _stmt_start(masked, i):
    """The line begins a statement: the previous code line ends one."""
    for j in range(i - 1, -1, -1):
        p = masked[j]
        if p is None or not p.strip():
            continue
        p = p.rstrip()
        if re.search(r"\b(if|for|while)\b", p) and p.endswith(")"):
            return True  # the body of a brace-less if
        return p.endswith((";", "{", "}")) or p.endswith("else")
    return True


def apply(lines, site):
    i, col, op, orig, new = site
    line = lines[i]
    if op == "drop":
        indent = line[:len(line) - len(line.lstrip())]
        mutated = indent + ";"
    else:
        assert line[col:col + len(orig)] == orig, (line, site)
        mutated = line[:col] + new + line[col + len(orig):]
    out = list(lines)
    out[i] = mutated
    return "\n".join(out), mutated


def read_map():
    m = []
    with open(MAP) as f:
        for raw in f:
            raw = raw.split("#", 1)[0].strip()
            if not raw:
                continue
            path, regex = raw.split(None, 1)
            m.append((path, regex.strip()))
    return m


def sync_tree(dst):
    """Copy the checkout's files (tracked and untracked, not ignored) into dst,
    rewriting only the ones whose content changed (keeps the build incremental)."""
    files = subprocess.run(["git", "-C", SRC, "ls-files", "-co", "--exclude-standard", "-z"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    n = 0
    for rel in files:
        if not rel:
            continue
        s = os.path.join(SRC, rel)
        d = os.path.join(dst, rel)
        if not os.path.isfile(s) or os.path.islink(s):
            continue
        with open(s, "rb") as f:
            data = f.read()
        try:
            with open(d, "rb") as f:
                if f.read() == data:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with open(d, "wb") as f:
            f.write(data)
        shutil.copymode(s, d)
        n += 1
    # Tests find the real captures at ../shared beside the tree (import_realdata).
    shared = os.path.realpath(os.path.join(SRC, "..", "shared"))
    link = os.path.join(os.path.dirname(dst), "shared")
    if os.path.isdir(shared) and not os.path.lexists(link):
        os.symlink(shared, link)
    return n


def run(cmd, timeout, **kw):
    """Run in its own process group; kill the group on timeout. (rc, output, timed_out)"""
    global CHILD
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True, **kw)
    CHILD = p
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace"), False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return -9, out.decode(errors="replace"), True


def build(work, timeout, targets=None):
    return run(["cmake", "--build", os.path.join(work, "build"), "-j", str(JOBS)] +
               (["--target"] + sorted(targets) if targets else []), timeout)


def test_binaries(work):
    """{test: build target} for the tests that run a binary of the build (C
    tests: the target carries the test's binary name)."""
    bdir = os.path.join(work, "build")
    p = subprocess.run(["ctest", "--test-dir", bdir, "--show-only=json-v1"],
                       capture_output=True, text=True)
    out = {}
    for t in json.loads(p.stdout).get("tests", []):
        cmd = t.get("command") or []
        if cmd and os.path.realpath(cmd[0]).startswith(os.path.realpath(bdir) + os.sep):
            out[t["name"]] = os.path.basename(cmd[0])
    return out


def ctest(work, args, timeout, stop=True):
    """A failing test keeps its scratch dirs for inspection: under WORK/tmp,
    emptied after each mutant, not in /tmp."""
    tmp = os.path.join(work, "tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    cmd = ["ctest", "--test-dir", os.path.join(work, "build"), "--output-on-failure",
           "-j", str(JOBS)] + (["--stop-on-failure"] if stop else [])
    return run(cmd + args, timeout, env=env)


def failed_tests(out):
    return re.findall(r"\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess|Child|Exception|"
                      r"Not Run|OTHER)", out) or re.findall(r"Test +#\d+: (\S+) \.+\*+\w",
                                                            out)


def list_tests(work, args):
    rc, out, _ = run(["ctest", "--test-dir", os.path.join(work, "build"), "-N"] + args, 120)
    return re.findall(r"Test +#\d+: (\S+)", out)


JOBS = 1
CHILD = None  # the build or ctest running now: stopped with us


def main():
    global JOBS
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("-n", "--count", type=int, default=100)
    ap.add_argument("--files", nargs="*", help="import/ or analysis/ .c files to mutate (default: the map's)")
    ap.add_argument("--work", default=os.environ.get("LP_MUTATE_WORK", "/tmp/latprof-mutate"))
    ap.add_argument("--timeout", type=int, default=600,
                    help="per mutant at most, s (build + tests; the tests get 60 s + 3x their "
                    "unmutated time)")
    ap.add_argument("--jobs", type=int, default=2, help="build and ctest jobs")
    ap.add_argument("--list", action="store_true", help="print the sampled mutants, run none")
    ap.add_argument("--only", action="append",
                    help="run this mutant: FILE:LINE[@COL]:OP:ORIG:NEW as --list prints it "
                    "(repeatable)")
    ap.add_argument("--no-unit", action="store_true", help="skip the unit tier per mutant")
    ap.add_argument("--results", help="append one line per mutant to this file (TSV)")
    ap.add_argument("--skip-baseline", action="store_true",
                    help="do not run the tests unmutated first (they must pass: a check "
                    "of a few --only mutants on a tree known green)")
    a = ap.parse_args()
    JOBS = a.jobs
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1, 1 << 31)
    mp = read_map()
    files = a.files or [p for p, _ in mp]
    regex = {}
    for f in files:
        rs = [r for p, r in mp if p == f]
        if not rs:
            sys.exit(f"mutate: {f} has no line in tests/mutation-map.txt")
        regex[f] = "|".join(rs)

    allsites = []
    for f in files:
        lines, ss = sites(os.path.join(SRC, f))
        allsites += [(f, s) for s in ss]
    rng = random.Random(seed)
    if a.only:
        picked = []
        for spec in a.only:
            fpath, ln, op, rest = spec.split(":", 3)
            orig, new = rest.rsplit(":", 1)
            ln, _, col = ln.partition("@")  # LINE@COL: which of a line's equal sites
            one = [(f2, s) for f2, s in allsites if f2 == fpath and s[0] + 1 == int(ln) and
                   s[2] == op and s[3] == orig and s[4] == new and
                   (not col or s[1] == int(col))][:1]
            if not one:
                sys.exit(f"mutate: no such mutant {spec}")
            picked += one
    else:
        picked = rng.sample(allsites, min(a.count, len(allsites)))
        picked.sort(key=lambda x: (x[0], x[1][0], x[1][1]))
    log(f"mutate: seed {seed}; {len(picked)} of {len(allsites)} mutants in {len(files)} files")
    if a.list:
        for f, s in picked:
            log(f"  {f}:{s[0] + 1}@{s[1]}:{s[2]}:{s[3]}:{s[4]}")
        return 0

    originals = {}

    def restore(*_):
        for p, text in originals.items():
            with open(p, "w") as fh:
                fh.write(text)
        originals.clear()

    def on_signal(sig, _frm):
        if CHILD and CHILD.poll() is None:
            os.killpg(CHILD.pid, signal.SIGKILL)
        restore()
        sys.exit(128 + sig)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    work = os.path.abspath(a.work)
    src = os.path.join(work, "src")
    os.makedirs(src, exist_ok=True)
    n = sync_tree(src)
    log(f"mutate: {n} files synced into {src}")
    bdir = os.path.join(work, "build")
    if not os.path.exists(os.path.join(bdir, "CMakeCache.txt")):
        rc, out, _ = run(["cmake", "-S", src, "-B", bdir, "-DLATPROF_WERROR=OFF"], 600)
        if rc:
            sys.exit("mutate: configure failed\n" + out[-3000:])
    t0 = time.time()
    rc, out, _ = build(work, 3600)
    if rc:
        sys.exit("mutate: the unmutated tree does not build\n" + out[-3000:])
    bins = test_binaries(work)
    log(f"mutate: baseline built ({time.time() - t0:.0f} s)")

    # The tests each mutant runs, which must pass on the unmutated tree.
    unit = [] if a.no_unit else list_tests(work, ["-L", "unit"])
    plans = {}
    for f in sorted({f for f, _ in picked}):
        mapped = list_tests(work, ["-R", regex[f]])
        plans[f] = (mapped, [t for t in unit if t not in mapped])
    need = sorted({t for m, u in plans.values() for t in m + u})
    if a.skip_baseline:  # rechecking a few mutants on a tree known green
        need = []
    t0 = time.time()
    rc, out, _ = ctest(work, ["-R", "^(" + "|".join(map(re.escape, need)) + ")$"], 3600,
                       stop=False) if need else (0, "", False)
    bad = set(re.findall(r"\d+ - (\S+) \(", out.split("tests failed out of")[-1])) if rc else set()
    took = {m.group(1): float(m.group(2)) for m in
            re.finditer(r"Test +#\d+: (\S+) \.+\s*(?:\*+)?\w+\s+([\d.]+) sec", out)}
    skipped = set(re.findall(r"Test +#\d+: (\S+) \.+\s*\*+Skipped", out))
    log(f"mutate: baseline ran {len(need)} tests in {time.time() - t0:.0f} s; "
        f"failing without a mutant (left out): {sorted(bad) or 'none'}; "
        f"skipped: {sorted(skipped) or 'none'}")


    results = []
    resf = open(a.results, "a") if a.results else None
    for k, (f, s) in enumerate(picked, 1):
        path = os.path.join(src, f)
        with open(path) as fh:
            text = fh.read()
        lines = text.split("\n")
        mtext, mline = apply(lines, s)
        desc = f"{f}:{s[0] + 1} {s[2]} {lines[s[0]].strip()} -> {mline.strip()}"
        originals[path] = text
        t0 = time.time()
        try:
            with open(path, "w") as fh:
                fh.write(mtext)
            mapped, unit_rest = plans[f]
            # The CLI and the C tests this mutant runs: nothing else links import/ or analysis/.
            rc, out, to = build(work, a.timeout, {"latprof"} |
                                {bins[t] for t in mapped + unit_rest if t in bins})
            if rc:
                verdict, by = "skip", "does not compile" if not to else "build timeout"
            else:
                # A mutant that loops: 30 s + 2x the tests' unmutated time.
                limit = min(a.timeout, time.time() - t0 + 30 +
                            2 * sum(took.get(t, 30) for t in mapped + unit_rest))
                left = limit - (time.time() - t0)
                verdict, by = "survived", ""
                # Cheapest first (unmutated times), so most kills cost seconds.
                tests = sorted((t for t in mapped + unit_rest if t not in bad),
                               key=lambda t: took.get(t, 30))
                for lo, hi in ((0, 1), (1, 5), (5, 1e9)):
                    group = [t for t in tests if lo <= took.get(t, 30) < hi]
                    if not group:
                        continue
                    rx = "^(" + "|".join(map(re.escape, group)) + ")$"
                    rc, out, to = ctest(work, ["-R", rx], max(left, 60))
                    left = limit - (time.time() - t0)
                    if to:
                        verdict, by = "killed", "timeout"
                        break
                    if rc:
                        ft = failed_tests(out)
                        verdict, by = "killed", ",".join(ft) or "ctest failed"
                        break
        finally:
            restore()
        dt = time.time() - t0
        log(f"[{k}/{len(picked)}] {verdict:8} {dt:5.0f}s {desc}" + (f"  ({by})" if by else ""))
        results.append((verdict, desc, by))
        if resf:
            resf.write(f"{seed}\t{verdict}\t{by}\t{desc}\n")
            resf.flush()
    # Leave the copy built as the checkout is, for the next incremental run.
    build(work, 3600)
    shutil.rmtree(os.path.join(work, "tmp"), ignore_errors=True)

    killed = [r for r in results if r[0] == "killed"]
    surv = [r for r in results if r[0] == "survived"]
    skip = [r for r in results if r[0] == "skip"]
    counted = len(killed) + len(surv)
    log(f"\nmutate: seed {seed}: {len(killed)} killed, {len(surv)} survived, "
        f"{len(skip)} did not compile (not counted)")
    if counted:
        log(f"mutate: score {100.0 * len(killed) / counted:.1f}% ({len(killed)}/{counted})")
    for r in surv:
        log(f"  survivor: {r[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
