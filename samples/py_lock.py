#!/usr/bin/env python3
"""Python threads contending on one threading.Lock (a POSIX semaphore in
CPython on Linux). Each thread holds the lock while sleeping, so the others
block in sem_wait with the GIL released. Prints (and with --stats writes)
the total time the threads spent in lock.acquire(), measured here.

usage: py_lock.py [--threads N] [--iters N] [--hold-ms F] [--stats FILE]
"""
import argparse
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=4)
p.add_argument("--iters", type=int, default=50)
p.add_argument("--hold-ms", type=float, default=2.0)
p.add_argument("--stats")
a = p.parse_args()

model_lock = threading.Lock()
waits = [0] * a.threads
counts = [0] * a.threads
go = threading.Barrier(a.threads)


def worker(i):
    go.wait()
    hold = a.hold_ms / 1000.0
    for _ in range(a.iters):
        t0 = time.monotonic_ns()
        if not model_lock.acquire(blocking=False):
            model_lock.acquire()
            counts[i] += 1
        waits[i] += time.monotonic_ns() - t0
        time.sleep(hold)  # GIL released while holding the lock
        model_lock.release()
        time.sleep(hold / 4)  # let a waiter take it


ts = [threading.Thread(target=worker, args=(i,), name=f"py-worker-{i}") for i in range(a.threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
total = sum(waits)
print(f"py_lock: {a.threads} threads x {a.iters} iterations, lock wait {total / 1e6:.3f} ms, "
      f"{sum(counts)} contended acquisitions")
if a.stats:
    with open(a.stats, "w") as f:
        f.write(f"wait_ns={total}\ncontended={sum(counts)}\nacquisitions={a.threads * a.iters}\n")
