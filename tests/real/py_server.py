#!/usr/bin/env python3
"""A Python server as people write them: N threads take requests from a
shared counter; each request is NVTX ranges (PyPI nvtx) around stages of
work, either pure Python (holds the GIL) or NumPy (releases it in BLAS).
The main thread starts the threads and joins them (Thread.join).

    py_server.py [--requests N] [--threads N] [--work python|numpy] [--us U] [--n N]
"""
import argparse
import threading

import nvtx

STAGES = ("decode", "preprocess", "infer", "postprocess")


def py_work(us):
    # A fixed amount of bytecode (about us microseconds alone on the build
    # machine), not a wall-clock spin: a thread preempted while it holds
    # the GIL still owes its work, as a real handler does.
    x = 0
    for i in range(us * 12):
        x += i
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--work", choices=("python", "numpy"), default="python")
    ap.add_argument("--us", type=int, default=600)
    ap.add_argument("--n", type=int, default=384, help="numpy: matrix size")
    a = ap.parse_args()
    if a.work == "numpy":
        import numpy as np
        m = np.random.default_rng(0).standard_normal((a.n, a.n))

        def work(us):
            m @ m  # one BLAS call: the GIL is released while it runs
    else:
        work = py_work
    # next() on a range iterator is atomic under the GIL: no lock, so the
    # threads meet only on the GIL (a lock here convoys them outside requests).
    counter = iter(range(a.requests))

    go = threading.Event()  # all threads serve from the same moment

    def worker():
        go.wait()
        while True:
            rid = next(counter, None)
            if rid is None:
                return
            with nvtx.annotate("request", domain="pysrv", payload=rid):
                for st in STAGES:
                    with nvtx.annotate(st, domain="pysrv"):
                        work(a.us)

    th = [threading.Thread(target=worker, name=f"server-{i}") for i in range(a.threads)]
    for t in th:
        t.start()
    go.set()
    for t in th:
        t.join()
    print(f"py_server: {a.requests} {a.work} requests on {a.threads} threads")


if __name__ == "__main__":
    main()
