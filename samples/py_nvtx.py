#!/usr/bin/env python3
"""Python flavour of samples/infer_server.c: NVTX ranges from the PyPI
`nvtx` package (nvtx.annotate), recorded by `latprof run` through the same
NVTX_INJECTION64_PATH injection as C programs.

    py_nvtx.py [--requests N] [--threads N] [--decode-us U] [--pre-us U]
               [--infer-us U] [--post-us U]
"""
import argparse
import threading
import time

import nvtx

STAGES = ("decode", "preprocess", "infer", "postprocess")


def spin_us(us):
    end = time.perf_counter_ns() + us * 1000
    while time.perf_counter_ns() < end:
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--decode-us", type=int, default=2100)
    ap.add_argument("--pre-us", type=int, default=1800)
    ap.add_argument("--infer-us", type=int, default=6400)
    ap.add_argument("--post-us", type=int, default=700)
    a = ap.parse_args()
    costs = dict(zip(STAGES, (a.decode_us, a.pre_us, a.infer_us, a.post_us)))
    counter = iter(range(a.requests))
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                rid = next(counter, None)
            if rid is None:
                return
            with nvtx.annotate("request", color="blue", domain="py_infer", payload=rid):
                for st in STAGES:
                    with nvtx.annotate(st, domain="py_infer", category="stage"):
                        spin_us(costs[st])
            nvtx.mark("done", domain="py_infer", payload=rid)

    th = [threading.Thread(target=worker, name=f"py-worker-{i}") for i in range(a.threads)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    print(f"py_nvtx: {a.requests} requests on {a.threads} threads")


if __name__ == "__main__":
    main()
