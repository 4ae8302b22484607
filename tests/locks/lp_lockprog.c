/* SPDX-License-Identifier: MIT */
/*
 * Contention the report must find: 4 threads hammer a global mutex
 * `model_lock` (the classic global-lock bug) and a heap mutex taken from one
 * call site; with "none" each thread only takes its own lock. Each thread
 * names itself (pthread_setname_np) so waiters can be checked by name.
 * Prints "iterations N" for the test to check against.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LP_THREADS 4

pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *heap_lock;
static pthread_mutex_t own_locks[LP_THREADS];
static int iters = 400, contend = 1;
static volatile unsigned long sink;
/* Each phase starts in all threads at once: on a loaded machine a thread
 * created late found the others through with a phase, and a lock only one
 * thread still took saw one wait (the heap lock in a CI run). */
static pthread_barrier_t phase;

static void lp_work(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i * 2654435761u;
}

/* Sleeping while holding the lock makes the others queue on any number of
 * cores, so contention does not depend on the machine's load. */
static void lp_hold(void)
{
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void lp_heap_update(void)
{
	pthread_mutex_lock(heap_lock);
	lp_hold();
	pthread_mutex_unlock(heap_lock);
}

static void *lp_worker(void *arg)
{
	int idx = (int)(long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%d", idx);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&phase);
	for (int i = 0; i < iters; i++) {
		pthread_mutex_t *m = contend ? &model_lock : &own_locks[idx];
		pthread_mutex_lock(m);
		lp_work(2000);
		if (i % 2 == 0)
			lp_hold();
		pthread_mutex_unlock(m);
		lp_work(500);
	}
	/* Second phase: a heap lock, taken from one call site only. */
	pthread_barrier_wait(&phase);
	for (int i = 0; contend && i < iters / 2; i++) {
		lp_heap_update();
		lp_work(500);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		contend = strcmp(argv[1], "none") != 0;
	if (argc > 2)
		iters = atoi(argv[2]);
	heap_lock = malloc(sizeof(*heap_lock));
	pthread_mutex_init(heap_lock, NULL);
	pthread_barrier_init(&phase, NULL, LP_THREADS);
	for (int i = 0; i < LP_THREADS; i++)
		pthread_mutex_init(&own_locks[i], NULL);
	pthread_t t[LP_THREADS];
	for (long i = 0; i < LP_THREADS; i++)
		pthread_create(&t[i], NULL, lp_worker, (void *)i);
	for (int i = 0; i < LP_THREADS; i++)
		pthread_join(t[i], NULL);
	printf("iterations %d\n", iters);
	free(heap_lock);
	pthread_barrier_destroy(&phase);
	return 0;
}
