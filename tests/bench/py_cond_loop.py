"""N condition waits that time out at once (pthread_cond_timedwait through
ctypes, the GIL released, a deadline in the past), made 16 Python frames
deep: every one is a recorded wait with Python frames under latprof.
Prints the best CPU ns per wait (thread CPU time: the load of a busy
machine does not count) of the rounds."""
import ctypes
import sys
import time

libc = ctypes.CDLL(None)
cond = ctypes.create_string_buffer(64)   # zeros: PTHREAD_COND_INITIALIZER
mutex = ctypes.create_string_buffer(64)  # zeros: PTHREAD_MUTEX_INITIALIZER


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


past = Timespec(1, 0)
wait = libc.pthread_cond_timedwait
wait.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
lock, unlock = libc.pthread_mutex_lock, libc.pthread_mutex_unlock


def loop(n):
    lock(mutex)
    pc, cp, pp = cond, mutex, ctypes.byref(past)
    t0 = time.thread_time_ns()
    for _ in range(n):
        wait(pc, cp, pp)
    t1 = time.thread_time_ns()
    unlock(mutex)
    return (t1 - t0) / n


def deep(k, n):
    return deep(k - 1, n) if k > 1 else loop(n)


n, rounds = int(sys.argv[1]), int(sys.argv[2])
print(min(deep(15, n) for _ in range(rounds)))
