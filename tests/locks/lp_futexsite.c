/* SPDX-License-Identifier: MIT */
/*
 * One futex lock of the app's own (a latch word: 0 free, 1 held, 2 held
 * with waiters), its waits in one wait function that calls
 * syscall(SYS_futex) itself, as a server's latch does. Only this lock
 * waits there, so nothing shares the wait frame: the site must still be
 * the function that takes the latch, serve(), not latch_wait().
 * Usage: lp_futexsite THREADS ITERS.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned latch;
static int iters;

__attribute__((noinline)) static void latch_wait(unsigned *w, unsigned v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static inline __attribute__((always_inline)) void latch_lock(unsigned *w)
{
	unsigned c = 0;
	if (__atomic_compare_exchange_n(w, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		latch_wait(w, 2);
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	}
}

static void latch_unlock(unsigned *w)
{
	if (__atomic_fetch_sub(w, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(w, 0, __ATOMIC_RELEASE);
		syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

__attribute__((noinline)) static void serve(void)
{
	latch_lock(&latch);
	usleep(300);
	latch_unlock(&latch);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < iters; i++)
		serve();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	iters = argc > 2 ? atoi(argv[2]) : 50;
	pthread_t t[64];
	for (int i = 0; i < n && i < 64; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < n && i < 64; i++)
		pthread_join(t[i], NULL);
	return 0;
}
