/* SPDX-License-Identifier: MIT */
/*
 * Thread-creation storms: what each thread's start and end costs.
 *   bench_threads alive N      N threads alive at once: each is created,
 *                              takes a mutex once and waits on a barrier
 *                              until all N exist; then all are joined
 *   bench_threads rounds R K   R rounds of K threads created, each taking
 *                              the mutex once, and joined
 * prints: seconds=S (the storm's wall time, process start and exit left
 * out). Run bare and under latprof (tests/bench/bench_threads.py).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t bench_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bench_bar;
static int bench_wait;
static volatile long bench_sink;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *bench_thread(void *arg)
{
	pthread_mutex_lock(&bench_mu);
	bench_sink += (long)arg;
	pthread_mutex_unlock(&bench_mu);
	if (bench_wait)
		pthread_barrier_wait(&bench_bar);
	return NULL;
}

static int bench_storm(pthread_t *th, long k, pthread_attr_t *attr)
{
	for (long i = 0; i < k; i++)
		if (pthread_create(&th[i], attr, bench_thread, (void *)i)) {
			fprintf(stderr, "bench_threads: pthread_create failed after %ld threads\n",
				i);
			return -1;
		}
	for (long i = 0; i < k; i++)
		pthread_join(th[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	int alive = argc > 2 && !strcmp(argv[1], "alive");
	int rounds = argc > 3 && !strcmp(argv[1], "rounds");
	if (!alive && !rounds) {
		fprintf(stderr, "usage: bench_threads alive N | rounds R K\n");
		return 2;
	}
	long r = alive ? 1 : atol(argv[2]);
	long k = alive ? atol(argv[2]) : atol(argv[3]);
	if (r <= 0 || k <= 0)
		return 2;
	pthread_t *th = calloc((size_t)k, sizeof(*th));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024); /* 5,000 stacks in little memory */
	if (alive) {
		bench_wait = 1;
		/* the main thread waits too: it releases them once all exist */
		pthread_barrier_init(&bench_bar, NULL, (unsigned)k + 1);
	}
	double t0 = now_s();
	for (long i = 0; i < r; i++) {
		if (!alive) {
			if (bench_storm(th, k, &attr))
				return 1;
			continue;
		}
		for (long j = 0; j < k; j++)
			if (pthread_create(&th[j], &attr, bench_thread, (void *)j)) {
				fprintf(stderr, "bench_threads: pthread_create failed after %ld\n",
					j);
				return 1;
			}
		pthread_barrier_wait(&bench_bar);
		for (long j = 0; j < k; j++)
			pthread_join(th[j], NULL);
	}
	printf("threads=%ld seconds=%.6f sink=%ld\n", r * k, now_s() - t0, bench_sink);
	return 0;
}
