"""A multiprocessing.Pool of 4 worker processes sharing one
multiprocessing.Lock (a POSIX semaphore in shared memory, at its own
address in each process), each task holding it 2 ms; each task times its
own acquisition. Writes "<total wait ns> <tasks>" to argv[1]."""
import multiprocessing as mp
import sys
import time


def init(lock):
    global LOCK
    LOCK = lock


def task(_):
    t0 = time.perf_counter_ns()
    with LOCK:
        waited = time.perf_counter_ns() - t0
        end = time.perf_counter() + 0.002
        while time.perf_counter() < end:
            pass
    return waited


if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(4, initializer=init, initargs=(mp.Lock(),)) as pool:
        waits = pool.map(task, range(int(sys.argv[2])), chunksize=1)
    with open(sys.argv[1], "w") as f:
        f.write(f"{sum(waits)} {len(waits)}\n")
