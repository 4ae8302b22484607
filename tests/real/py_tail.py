#!/usr/bin/env python3
"""NVTX requests whose tail is one Python lock: 3 threads serve requests
(request > parse, infer); infer takes cache_lock, which a refresher thread
holds for 40 ms now and then, so the slowest requests wait on it. The
program writes the line of the acquire to --out as JSON, and each acquire's
CLOCK_MONOTONIC start and end (ns: time.monotonic_ns, latprof's clock).

    py_tail.py --out FILE [--requests N]
"""
import argparse
import json
import sys
import threading
import time

import nvtx

cache_lock = threading.Lock()
SITE = {}
ACQUIRES = []


def infer():
    t0 = time.monotonic_ns()
    SITE.setdefault("line", sys._getframe().f_lineno + 1)
    with cache_lock:
        ACQUIRES.append((t0, time.monotonic_ns()))
        time.sleep(0.0002)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--requests", type=int, default=300)
    a = ap.parse_args()
    todo = iter(range(a.requests))
    done = threading.Event()

    def serve():
        for rid in todo:
            with nvtx.annotate("request", domain="tail", payload=rid):
                with nvtx.annotate("parse", domain="tail"):
                    time.sleep(0.001)
                with nvtx.annotate("infer", domain="tail"):
                    infer()

    def refresh():
        while not done.wait(0.05):
            with cache_lock:
                time.sleep(0.04)

    r = threading.Thread(target=refresh, name="refresher")
    r.start()
    th = [threading.Thread(target=serve, name=f"server-{i}") for i in range(3)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    done.set()
    r.join()
    with open(a.out, "w") as f:
        json.dump({"file": __file__, "line": SITE["line"], "function": "infer",
                   "acquires": ACQUIRES}, f)


if __name__ == "__main__":
    main()
