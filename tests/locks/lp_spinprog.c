/* SPDX-License-Identifier: MIT */
/*
 * Spinlock contention and prctl thread names, one mode per run:
 *   lp_spinprog contend [ITERS]  4 threads take the global `queue_spin`,
 *                                holding it ~200 us each time; thread 0 names
 *                                itself with prctl(PR_SET_NAME, "spin-worker")
 *   lp_spinprog single [ITERS]   one thread takes `solo_spin` ITERS times
 *                                uncontended, fails trylocks on it while
 *                                holding it, then waits once (20 ms) on it
 *                                for a helper thread; renames itself with a
 *                                name longer than the kernel keeps
 * Prints key=value pairs: the program's own measurement of time spent in
 * pthread_spin_lock, and how often errno or a prctl result was wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define LP_THREADS 4

pthread_spinlock_t queue_spin;
pthread_spinlock_t solo_spin;
static int iters = 300;
static uint64_t wait_ns, acquisitions, errno_bad, prctl_bad, worker_tid;
static volatile int helper_holds;

static uint64_t lp_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void lp_sleep_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

/* pthread_spin_lock timed by the program itself; errno must come back as
 * it was (a successful lock leaves errno alone). */
static uint64_t lp_timed_lock(pthread_spinlock_t *l, int tag)
{
	errno = tag;
	uint64_t t0 = lp_clock();
	int rc = pthread_spin_lock(l);
	uint64_t t1 = lp_clock();
	if (rc != 0 || errno != tag)
		__atomic_add_fetch(&errno_bad, 1, __ATOMIC_RELAXED);
	return t1 - t0;
}

static void lp_name_self(const char *name)
{
	char got[17] = {0};
	errno = 4321;
	if (prctl(PR_SET_NAME, name) != 0 || errno != 4321)
		__atomic_add_fetch(&prctl_bad, 1, __ATOMIC_RELAXED);
	/* The other arguments get through too: read the name back. */
	if (prctl(PR_GET_NAME, got, 0, 0, 0) != 0 || strncmp(got, name, 15) != 0)
		__atomic_add_fetch(&prctl_bad, 1, __ATOMIC_RELAXED);
	/* A failing call keeps its own errno. */
	errno = 0;
	if (prctl(-1, 0, 0, 0, 0) != -1 || errno != EINVAL)
		__atomic_add_fetch(&prctl_bad, 1, __ATOMIC_RELAXED);
}

static void *lp_worker(void *arg)
{
	int idx = (int)(long)arg;
	uint64_t mine = 0;
	if (idx == 0) {
		lp_name_self("spin-worker");
		__atomic_store_n(&worker_tid, (uint64_t)gettid(), __ATOMIC_RELAXED);
	}
	for (int i = 0; i < iters; i++) {
		mine += lp_timed_lock(&queue_spin, 100 + idx);
		lp_sleep_us(200); /* waiters queue on any number of cores */
		pthread_spin_unlock(&queue_spin);
		/* Step aside, or the unlocker takes it again before a spinner
		 * that lost its core gets back on. */
		lp_sleep_us(50);
	}
	__atomic_add_fetch(&wait_ns, mine, __ATOMIC_RELAXED);
	__atomic_add_fetch(&acquisitions, (uint64_t)iters, __ATOMIC_RELAXED);
	return NULL;
}

static void *lp_helper(void *arg)
{
	pthread_spin_lock(&solo_spin); /* uncontended: main waits for the flag */
	helper_holds = 1;
	lp_sleep_us(20000);
	pthread_spin_unlock(&solo_spin);
	return arg;
}

static int lp_single(void)
{
	uint64_t trylock_busy = 0;
	lp_name_self("spin-main-long-name");
	for (int i = 0; i < iters; i++) {
		lp_timed_lock(&solo_spin, 7);
		if (pthread_spin_trylock(&solo_spin) == EBUSY)
			trylock_busy++;
		pthread_spin_unlock(&solo_spin);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, lp_helper, NULL) != 0)
		return 3;
	while (!helper_holds)
		sched_yield();
	wait_ns = lp_timed_lock(&solo_spin, 8);
	pthread_spin_unlock(&solo_spin);
	pthread_join(t, NULL);
	printf("wait_ns=%llu uncontended=%d trylock_busy=%llu errno_bad=%llu prctl_bad=%llu\n",
	       (unsigned long long)wait_ns, iters, (unsigned long long)trylock_busy,
	       (unsigned long long)errno_bad, (unsigned long long)prctl_bad);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "contend";
	if (argc > 2)
		iters = atoi(argv[2]);
	pthread_spin_init(&queue_spin, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&solo_spin, PTHREAD_PROCESS_PRIVATE);
	if (!strcmp(mode, "single"))
		return lp_single();
	pthread_t t[LP_THREADS];
	for (long i = 0; i < LP_THREADS; i++)
		pthread_create(&t[i], NULL, lp_worker, (void *)i);
	for (int i = 0; i < LP_THREADS; i++)
		pthread_join(t[i], NULL);
	printf("wait_ns=%llu acquisitions=%llu worker_tid=%llu errno_bad=%llu prctl_bad=%llu\n",
	       (unsigned long long)wait_ns, (unsigned long long)acquisitions,
	       (unsigned long long)worker_tid, (unsigned long long)errno_bad,
	       (unsigned long long)prctl_bad);
	return 0;
}
