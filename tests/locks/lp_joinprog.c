/* SPDX-License-Identifier: MIT */
/*
 * A join beside real contention (wait class join): the main
 * thread first queues behind a worker that holds `busy_lock` for HOLD_MS
 * (one contended wait), then joins a thread that runs RUN_MS and times that
 * pthread_join itself, then joins one that runs TIMED_MS with
 * pthread_timedjoin_np (a deadline 10 s away). It prints "join_ns=N" and
 * "timedjoin_ns=N" so the test can hold the recorded joins (blocking_calls,
 * class join in the views) against them. The holder lets go only once main
 * sleeps in busy_lock: on a loaded machine main can wake from its poll after
 * any fixed hold has ended, and would then take the lock uncontended.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "lp_asleep.h"

#define HOLD_MS 5
#define RUN_MS 50
#define TIMED_MS 30

pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set once the holder has busy_lock. Polled with naps, not handed over
 * with a mutex and a condition: main and the holder could then meet on
 * that mutex (CI's loaded default tier ranked it as a second contended
 * lock), and the test wants busy_lock to be the only one. */
static int ready;
/* Main's tid, and set by main just before it locks busy_lock. */
static pid_t main_tid;
static int locking;

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

/* Takes busy_lock, tells main, holds it until main sleeps in it, then
 * HOLD_MS more. Main does nothing else that sleeps once it set locking. */
static void *lp_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&busy_lock);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	lp_wait_asleep(getpid(), main_tid, &locking);
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
	main_tid = lp_gettid();
	if (pthread_create(&h, NULL, lp_holder, NULL))
		return 1;
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		struct timespec nap = {0, 100000};
		nanosleep(&nap, NULL);
	}
	__atomic_store_n(&locking, 1, __ATOMIC_RELEASE);
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
