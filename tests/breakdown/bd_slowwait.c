/* SPDX-License-Identifier: MIT */
/*
 * bd_slowwait: requests whose largest waits the program knows. N requests
 * ("request" { "work" W us of busy-wait }) on the main thread; request
 * LOCK_AT also takes slow_lock inside "work", which a holder thread keeps
 * for HOLD_MS from the moment the main thread sleeps on it; request
 * SLEEP_AT sleeps SLEEP_MS in nap(). Writes to OUT, CLOCK_MONOTONIC ns:
 *   lock LINE T0 T1     the pthread_mutex_lock call's line, before and after it
 *   sleep T0 T1         before and after nap's nanosleep
 *   bd_slowwait OUT N W_US LOCK_AT HOLD_MS SLEEP_AT SLEEP_MS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "lp_asleep.h"

static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static int held, about_to_lock;
static pid_t main_tid;
static long hold_ms;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_us(long us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000u;
	while (now_ns() < end)
		;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Holds slow_lock until the main thread has slept on it for hold_ms. */
static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&slow_lock);
	__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
	lp_wait_asleep(getpid(), main_tid, &about_to_lock);
	sleep_ms(hold_ms);
	pthread_mutex_unlock(&slow_lock);
	return NULL;
}

static __attribute__((noinline)) void nap(FILE *out, long ms)
{
	uint64_t t0 = now_ns();
	sleep_ms(ms);
	fprintf(out, "sleep %llu %llu\n", (unsigned long long)t0, (unsigned long long)now_ns());
}

static __attribute__((noinline)) void take_slow_lock(FILE *out)
{
	__atomic_store_n(&about_to_lock, 1, __ATOMIC_RELEASE);
	uint64_t t0 = now_ns();
	int line = __LINE__ + 1;
	pthread_mutex_lock(&slow_lock);
	uint64_t t1 = now_ns();
	pthread_mutex_unlock(&slow_lock);
	fprintf(out, "lock %d %llu %llu\n", line, (unsigned long long)t0, (unsigned long long)t1);
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr,
			"usage: bd_slowwait OUT N W_US LOCK_AT HOLD_MS SLEEP_AT SLEEP_MS\n");
		return 2;
	}
	long n = atol(argv[2]), w = atol(argv[3]), lock_at = atol(argv[4]),
	     sleep_at = atol(argv[6]), sleep_for = atol(argv[7]);
	hold_ms = atol(argv[5]);
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	main_tid = lp_gettid();
	pthread_t h;
	if (pthread_create(&h, NULL, holder, NULL)) {
		fprintf(stderr, "bd_slowwait: pthread_create failed\n");
		return 1;
	}
	while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("request");
		nvtxRangePushA("work");
		spin_us(w);
		if (i == lock_at)
			take_slow_lock(out);
		if (i == sleep_at)
			nap(out, sleep_for);
		nvtxRangePop();
		nvtxRangePop();
	}
	pthread_join(h, NULL);
	return fclose(out) ? 1 : 0;
}
