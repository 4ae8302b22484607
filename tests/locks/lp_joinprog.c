/* SPDX-License-Identifier: MIT */
/*
 * A join beside real contention (issue 15, wait class join): the main
 * thread first queues behind a worker that holds `busy_lock` for HOLD_MS
 * (one contended wait), then joins a thread that runs RUN_MS and times that
 * pthread_join itself. It prints "join_ns=N" so the test can hold the
 * recorded join (blocking_calls, class join in the views) against it.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define HOLD_MS 5
#define RUN_MS 50

pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int ready;

static long long lp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void lp_sleep_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Takes busy_lock, tells main, holds it HOLD_MS. */
static void *lp_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&busy_lock);
	pthread_mutex_lock(&ready_lock);
	ready = 1;
	pthread_cond_signal(&ready_cv);
	pthread_mutex_unlock(&ready_lock);
	lp_sleep_ms(HOLD_MS);
	pthread_mutex_unlock(&busy_lock);
	return NULL;
}

static void *lp_runner(void *arg)
{
	(void)arg;
	lp_sleep_ms(RUN_MS);
	return NULL;
}

int main(void)
{
	pthread_t h, r;
	if (pthread_create(&h, NULL, lp_holder, NULL))
		return 1;
	pthread_mutex_lock(&ready_lock);
	while (!ready)
		pthread_cond_wait(&ready_cv, &ready_lock);
	pthread_mutex_unlock(&ready_lock);
	pthread_mutex_lock(&busy_lock); /* contended: the holder sleeps in it */
	pthread_mutex_unlock(&busy_lock);
	pthread_join(h, NULL);
	if (pthread_create(&r, NULL, lp_runner, NULL))
		return 1;
	long long t0 = lp_now();
	pthread_join(r, NULL);
	long long t1 = lp_now();
	printf("join_ns=%lld\n", t1 - t0);
	return 0;
}
