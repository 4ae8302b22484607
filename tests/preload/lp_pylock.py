# Two Python threads contend on one threading.Lock (a POSIX semaphore on
# Linux): under latprof this must yield LP_LOCK_SEM waits.
import threading
import time

lock = threading.Lock()


def work():
    for _ in range(50):
        with lock:
            t = time.monotonic()
            while time.monotonic() - t < 0.001:
                pass


ts = [threading.Thread(target=work, name=f"py-{i}") for i in range(3)]
for t in ts:
    t.start()
for t in ts:
    t.join()
