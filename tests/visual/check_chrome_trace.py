#!/usr/bin/env python3
"""Checks a Chrome Trace Event Format file against the rules Perfetto's JSON
importer applies (and chrome://tracing relies on):
  - a JSON object with a traceEvents array; every event has ph, pid, ts
    (number) except M; X events have a non-negative numeric dur;
  - X slices nest per (pid, tid): no slice ends inside another and past it;
  - b/e async pairs match on (cat, id, pid), e after b;
  - flow s/f ids pair up (one s, one f each), f not before s;
  - C events carry an object args of numbers;
  - M process_name/thread_name have args.name strings, and every (pid, tid)
    with slices has a thread_name, every pid a process_name.
Usage: check_chrome_trace.py TRACE.json [--slices N]  (exit 1 with reasons)"""
import json
import sys
from collections import defaultdict


def check(path, want_slices=None):
    errs = []
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    tracks = defaultdict(list)
    pnames, tnames = set(), set()
    async_open, async_n = {}, 0
    flows = defaultdict(lambda: [0, 0, None, None])
    nx = 0
    for i, e in enumerate(evs):
        ph = e.get("ph")
        if ph is None or "pid" not in e:
            errs.append(f"event {i}: no ph or pid")
            continue
        if ph == "M":
            name = e.get("args", {}).get("name") if e.get("name", "").endswith("_name") else ""
            if e.get("name") == "process_name":
                if not isinstance(name, str) or not name:
                    errs.append(f"event {i}: process_name without args.name")
                pnames.add(e["pid"])
            elif e.get("name") == "thread_name":
                if not isinstance(name, str) or not name:
                    errs.append(f"event {i}: thread_name without args.name")
                tnames.add((e["pid"], e.get("tid")))
            continue
        if not isinstance(e.get("ts"), (int, float)):
            errs.append(f"event {i}: ts is not a number")
            continue
        if ph == "X":
            d = e.get("dur")
            if not isinstance(d, (int, float)) or d < 0:
                errs.append(f"event {i}: X without a non-negative dur")
                continue
            tracks[(e["pid"], e.get("tid"))].append((e["ts"], e["ts"] + d, i))
            nx += 1
        elif ph in ("b", "e"):
            key = (e.get("cat"), e.get("id"), e["pid"])
            if e.get("id") is None:
                errs.append(f"event {i}: async {ph} without id")
            elif ph == "b":
                if key in async_open:
                    errs.append(f"event {i}: async id {key} opened twice")
                async_open[key] = e["ts"]
            else:
                if key not in async_open:
                    errs.append(f"event {i}: async end {key} without begin")
                elif e["ts"] < async_open.pop(key):
                    errs.append(f"event {i}: async end before its begin")
                else:
                    async_n += 1
        elif ph in ("s", "f"):
            fl = flows[(e.get("cat"), e.get("id"))]
            fl[0 if ph == "s" else 1] += 1
            fl[2 if ph == "s" else 3] = e["ts"]
            if ph == "f" and e.get("bp") not in (None, "e"):
                errs.append(f"event {i}: flow end with bp {e.get('bp')}")
        elif ph == "C":
            a = e.get("args")
            if not isinstance(a, dict) or not a or \
                    not all(isinstance(v, (int, float)) for v in a.values()):
                errs.append(f"event {i}: counter without an object of numbers in args")
        elif ph in ("i", "I"):
            pass
        else:
            errs.append(f"event {i}: unexpected ph {ph!r}")
    if async_open:
        errs.append(f"{len(async_open)} async begins never end")
    for k, (s, f, ts, tf) in flows.items():
        if s != 1 or f != 1:
            errs.append(f"flow {k}: {s} starts, {f} ends")
        elif tf < ts:
            errs.append(f"flow {k}: ends before it starts")
    for (pid, tid), sl in tracks.items():
        if (pid, tid) not in tnames:
            errs.append(f"track pid {pid} tid {tid} has slices but no thread_name")
        if pid not in pnames:
            errs.append(f"pid {pid} has slices but no process_name")
        sl.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for a, z, i in sl:
            while stack and (stack[-1] < a or (stack[-1] == a and z > a)):
                stack.pop()
            if stack and z > stack[-1]:
                errs.append(f"event {i}: slice [{a}, {z}] overlaps its parent ending {stack[-1]}"
                            f" on pid {pid} tid {tid}")
            stack.append(z)
    total = nx + async_n
    if want_slices is not None and total != want_slices:
        errs.append(f"{total} slices ({nx} X + {async_n} async), expected {want_slices}")
    return errs, {"X": nx, "async": async_n, "flows": len(flows),
                  "counters": sum(1 for e in evs if e.get("ph") == "C")}


def main(argv):
    want = int(argv[argv.index("--slices") + 1]) if "--slices" in argv else None
    errs, stats = check(argv[1], want)
    for e in errs[:50]:
        print("trace:", e, file=sys.stderr)
    print(json.dumps(stats))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
