/* SPDX-License-Identifier: MIT */
/*
 * Uncontended pthread_mutex_lock + unlock in a loop on one thread: the
 * cost latprof's interposer adds when locks are free. Usage:
 * bench_lock [ITERATIONS] [mt|spin]; prints "ns_per_op=X iterations=N".
 * With "mt" a second thread exists (parked in pause()), as in any program
 * that needs a lock: glibc then takes its atomic path instead of the
 * single-threaded shortcut, and so does the interposer. "spin" times
 * pthread_spin_lock + unlock instead (always atomic), with that thread.
 * best_ns_per_op is the fastest batch of 100,000: on a shared machine the
 * mean carries other tenants' load, the best batch is the code's own cost.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t bench_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t bench_spin;
static volatile unsigned long bench_sink;

static void bench_mutex_loop(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&bench_mu);
		bench_sink++;
		pthread_mutex_unlock(&bench_mu);
	}
}

static void bench_spin_loop(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_spin_lock(&bench_spin);
		bench_sink++;
		pthread_spin_unlock(&bench_spin);
	}
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *bench_park(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000L;
	if (n <= 0)
		return 2;
	pthread_t parked;
	int spin = argc > 2 && !strcmp(argv[2], "spin");
	if (argc > 2 && (spin || !strcmp(argv[2], "mt")) &&
	    pthread_create(&parked, NULL, bench_park, NULL))
		return 2;
	pthread_spin_init(&bench_spin, PTHREAD_PROCESS_PRIVATE);
	void (*loop)(long) = spin ? bench_spin_loop : bench_mutex_loop;
	loop(1000); /* warm up: the first lock initializes the interposer's thread state */
	const long batch = 100000;
	double best = 1e30, t0 = now_ns();
	for (long done = 0; done < n; done += batch) {
		double b0 = now_ns();
		loop(batch);
		double b = (now_ns() - b0) / (double)batch;
		best = b < best ? b : best;
	}
	double t1 = now_ns();
	long total = (n + batch - 1) / batch * batch;
	printf("ns_per_op=%.3f best_ns_per_op=%.3f iterations=%ld\n", (t1 - t0) / (double)total,
	       best, total);
	return 0;
}
