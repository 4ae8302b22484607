/* SPDX-License-Identifier: MIT */
/*
 * fnd_cpu: a small NVTX-annotated server with two knobs the samples lack,
 * for tests/findings:
 *   --slots S      at most S requests work at once; the others wait on a
 *                  condition variable inside their "request" range before
 *                  the "work" stage starts (queue-wait). S >= clients: none.
 *   --cold N       the first N requests of each thread pay a lazy
 *                  initialization of --cold-us U inside "work" (cold-start);
 *   --warm         ... unless the thread pays it before serving.
 *   --background-waits B  before serving, two threads make about B
 *                  contended lock waits outside any range (they explain
 *                  none of the requests' context switches).
 * usage: fnd_cpu [--clients C] [--requests N] [--work-us U] [--slots S]
 *                [--cold N] [--cold-us U] [--warm] [--background-waits B]
 * Work is a busy-wait on CLOCK_MONOTONIC, so it lasts its time.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int clients = 4, requests = 50, slots = 1 << 20, cold, warm, bg_waits;
static long work_us = 1000, cold_us = 20000;
static int free_slots;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t bg_mu = PTHREAD_MUTEX_INITIALIZER;

static void spin_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void *client(void *arg)
{
	(void)arg;
	int inits = 0;
	if (warm)
		for (; inits < cold; inits++)
			spin_us(cold_us);
	for (int i = 0; i < requests; i++) {
		nvtxRangePushA("request");
		pthread_mutex_lock(&mu);
		while (free_slots == 0)
			pthread_cond_wait(&cv, &mu);
		free_slots--;
		pthread_mutex_unlock(&mu);
		nvtxRangePushA("work");
		if (inits < cold) {
			inits++;
			spin_us(cold_us);
		}
		spin_us(work_us);
		nvtxRangePop();
		pthread_mutex_lock(&mu);
		free_slots++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		nvtxRangePop();
	}
	return NULL;
}

/* Holds bg_mu across a short sleep, so the other background thread queues.
 * It also sleeps after unlocking: glibc's mutex is not fair, and a thread
 * that relocks at once takes the lock back before the woken waiter runs
 * (on 2 cores that left 4-8 waits of 3000). Sleeping outside hands the lock
 * over, and the sleeper finds it held when it comes back. */
static void *background(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 20000};
	for (int i = 0; i < bg_waits; i++) {
		pthread_mutex_lock(&bg_mu);
		nanosleep(&ts, NULL);
		pthread_mutex_unlock(&bg_mu);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void run_threads(int n, void *(*fn)(void *))
{
	pthread_t t[256];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"clients", required_argument, NULL, 'c'},
					   {"requests", required_argument, NULL, 'n'},
					   {"work-us", required_argument, NULL, 'w'},
					   {"slots", required_argument, NULL, 's'},
					   {"cold", required_argument, NULL, 'k'},
					   {"cold-us", required_argument, NULL, 'u'},
					   {"warm", no_argument, NULL, 'W'},
					   {"background-waits", required_argument, NULL, 'b'},
					   {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			clients = atoi(optarg);
			break;
		case 'n':
			requests = atoi(optarg);
			break;
		case 'w':
			work_us = atol(optarg);
			break;
		case 's':
			slots = atoi(optarg);
			break;
		case 'k':
			cold = atoi(optarg);
			break;
		case 'u':
			cold_us = atol(optarg);
			break;
		case 'W':
			warm = 1;
			break;
		case 'b':
			bg_waits = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: fnd_cpu [--clients C] [--requests N] [--work-us U] "
					"[--slots S] [--cold N] [--cold-us U] [--warm] "
					"[--background-waits B]\n");
			return 2;
		}
	}
	if (clients < 1 || clients > 256 || requests < 1 || slots < 1)
		return fprintf(stderr, "fnd_cpu: bad arguments\n"), 2;
	free_slots = slots;
	if (bg_waits > 0)
		run_threads(2, background);
	run_threads(clients, client);
	return 0;
}
