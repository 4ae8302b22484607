#!/usr/bin/env python3
"""A threaded Python handler as people write them: each request parses its
payload in pure Python (holds the GIL: parse_payload) and then runs the
model under one lock (serve_one's `with model_lock:`). The program writes
its own record of where it waits (file and line of the acquire, from its
own frame) and its threads' names to --out as JSON.

    py_handler.py --out FILE [--requests N] [--threads N]
"""
import argparse
import json
import sys
import threading
import time

model_lock = threading.Lock()
SITE = {}
PARSE_N = 150000  # pure Python: about 10 ms holding the GIL


def parse_payload(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def serve_one(rid):
    parse_payload(PARSE_N)
    SITE.setdefault("line", sys._getframe().f_lineno + 1)
    with model_lock:
        time.sleep(0.002)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--threads", type=int, default=4)
    a = ap.parse_args()
    todo = iter(range(a.requests))

    def worker():
        for rid in todo:
            serve_one(rid)

    th = [threading.Thread(target=worker, name=f"handler-{i}") for i in range(a.threads)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    with open(a.out, "w") as f:
        json.dump({"file": __file__, "line": SITE["line"], "function": "serve_one",
                   "gil_function": "parse_payload", "threads": [t.name for t in th],
                   "version": list(sys.version_info[:3])}, f)


if __name__ == "__main__":
    main()
