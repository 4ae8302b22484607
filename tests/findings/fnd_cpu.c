/* SPDX-License-Identifier: MIT */
/*
 * fnd_cpu: a small NVTX-annotated server with two knobs the samples lack,
 * for tests/findings:
 *   --slots S      at most S requests work at once; the others wait on a
 *                  condition variable inside their "request" range before
 *                  the "work" stage starts (queue-wait). S >= clients: none.
 *   --cold N       the first N requests of each thread (with --spawn, of
 *                  the run) pay a lazy initialization of --cold-us U
 *                  inside "work" (cold-start);
 *   --warm         ... unless the thread pays it before serving.
 *   --background-waits B  before serving, two threads make about B
 *                  contended lock waits outside any range (they explain
 *                  none of the requests' context switches).
 *   --spawn        a thread per request (one at a time), as a server that
 *                  starts one per connection: no thread has a steady state;
 *   --slow-every K --slow-us U  request K/2, K/2 + K, ... (of the run with
 *                  --spawn, else of each thread) works U more: a slow path,
 *                  not a cold start;
 *   --sleep-us S   each request also sleeps S in its work stage;
 *   --helper-ms M  a helper thread burns M ms of CPU when serving starts,
 *                  then waits for the end: a helper, not a spinning pool.
 * usage: fnd_cpu [--clients C] [--requests N] [--work-us U] [--slots S]
 *                [--cold N] [--cold-us U] [--warm] [--background-waits B]
 *                [--spawn] [--slow-every K] [--slow-us U] [--sleep-us S]
 *                [--helper-ms M]
 * Work is a busy-wait on CLOCK_MONOTONIC, so it lasts its time.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int clients = 4, requests = 50, slots = 1 << 20, cold, warm, bg_waits, spawn, slow_every;
static long work_us = 1000, cold_us = 20000, slow_us, sleep_us, helper_ms;
static int serving = 1;
static pthread_mutex_t helper_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t helper_cv = PTHREAD_COND_INITIALIZER;
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

/* Requests first .. first + n - 1 of the run (for --slow-every). */
struct span {
	int first, n;
};

static void *client(void *arg)
{
	const struct span *sp = arg;
	int inits = 0;
	if (warm)
		for (; inits < cold; inits++)
			spin_us(cold_us);
	for (int i = sp->first; i < sp->first + sp->n; i++) {
		nvtxRangePushA("request");
		pthread_mutex_lock(&mu);
		while (free_slots == 0)
			pthread_cond_wait(&cv, &mu);
		free_slots--;
		pthread_mutex_unlock(&mu);
		nvtxRangePushA("work");
		/* with --spawn the initialization is the process's: the first
		 * requests of the run pay it */
		if (spawn ? i < cold : inits < cold) {
			inits++;
			spin_us(cold_us);
		}
		spin_us(work_us);
		if (slow_every > 0 && i % slow_every == slow_every / 2)
			spin_us(slow_us);
		if (sleep_us > 0) {
			struct timespec ts = {sleep_us / 1000000, sleep_us % 1000000 * 1000};
			nanosleep(&ts, NULL);
		}
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
	static struct span sp[256];
	for (int i = 0; i < n; i++) {
		sp[i] = (struct span){0, requests};
		pthread_create(&t[i], NULL, fn, &sp[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* --spawn: each request on a thread of its own, one after the other. */
static void run_spawned(void)
{
	for (int i = 0; i < requests; i++) {
		struct span sp = {i, 1};
		pthread_t t;
		pthread_create(&t, NULL, client, &sp);
		pthread_join(t, NULL);
	}
}

static void *helper(void *arg)
{
	(void)arg;
	spin_us(helper_ms * 1000);
	pthread_mutex_lock(&helper_mu);
	while (serving)
		pthread_cond_wait(&helper_cv, &helper_mu);
	pthread_mutex_unlock(&helper_mu);
	return NULL;
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
					   {"spawn", no_argument, NULL, 'S'},
					   {"slow-every", required_argument, NULL, 'e'},
					   {"slow-us", required_argument, NULL, 'l'},
					   {"sleep-us", required_argument, NULL, 'z'},
					   {"helper-ms", required_argument, NULL, 'h'},
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
		case 'S':
			spawn = 1;
			break;
		case 'e':
			slow_every = atoi(optarg);
			break;
		case 'l':
			slow_us = atol(optarg);
			break;
		case 'z':
			sleep_us = atol(optarg);
			break;
		case 'h':
			helper_ms = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: fnd_cpu [--clients C] [--requests N] [--work-us U] "
					"[--slots S] [--cold N] [--cold-us U] [--warm] "
					"[--background-waits B] [--spawn] [--slow-every K] "
					"[--slow-us U] [--sleep-us S] [--helper-ms M]\n");
			return 2;
		}
	}
	if (clients < 1 || clients > 256 || requests < 1 || slots < 1)
		return fprintf(stderr, "fnd_cpu: bad arguments\n"), 2;
	free_slots = slots;
	if (bg_waits > 0)
		run_threads(2, background);
	pthread_t h;
	if (helper_ms > 0)
		pthread_create(&h, NULL, helper, NULL);
	if (spawn)
		run_spawned();
	else
		run_threads(clients, client);
	if (helper_ms > 0) {
		pthread_mutex_lock(&helper_mu);
		serving = 0;
		pthread_cond_signal(&helper_cv);
		pthread_mutex_unlock(&helper_mu);
		pthread_join(h, NULL);
	}
	return 0;
}
