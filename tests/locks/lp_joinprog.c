/* SPDX-License-Identifier: MIT */
/*
 * A join beside real contention (issue 15, wait class join): the main
 * thread first queues behind a worker that holds `busy_lock` for HOLD_MS
 * (one contended wait), then joins a thread that runs RUN_MS and times that
 * pthread_join itself, then joins one that runs TIMED_MS with
 * pthread_timedjoin_np (a deadline 10 s away). It prints "join_ns=N" and
 * "timedjoin_ns=N" so the test can hold the recorded joins (blocking_calls,
 * class join in the views) against them.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define HOLD_MS 5
#define RUN_MS 50
#define TIMED_MS 30

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
	lp_sleep_ms((int)(long)arg);
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
	if (pthread_create(&r, NULL, lp_runner, (void *)(long)RUN_MS))
		return 1;
	long long t0 = lp_now();
	pthread_join(r, NULL);
	long long t1 = lp_now();
	printf("join_ns=%lld\n", t1 - t0);
	if (pthread_create(&r, NULL, lp_runner, (void *)(long)TIMED_MS))
		return 1;
	struct timespec at;
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_sec += 10;
	t0 = lp_now();
	int rc = pthread_timedjoin_np(r, NULL, &at);
	t1 = lp_now();
	printf("timedjoin_ns=%lld rc=%d\n", t1 - t0, rc);
	return rc != 0;
}
