/* SPDX-License-Identifier: MIT */
/*
 * Requests of which one in ten holds a global lock for 4x its normal work,
 * while every request takes the same lock briefly to count itself: the
 * slow requests are the lock's holders, the others wait behind them. Each
 * request is an NVTX "request" range with a "work" stage; the slow ones
 * hold the lock inside a "commit" stage. The program times its own long
 * holds (lock returned to unlock called) with CLOCK_MONOTONIC and writes
 * them to the side file, one a line: start ns, duration ns. With --rwlock
 * the lock is table_rwlock, an rwlock: the slow requests hold it for
 * writing, the count takes it for reading.
 *
 * usage: fnd_holds [--rwlock] [--clients C] [--requests N] [--work-us U] SIDE_FILE
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int clients = 4, requests = 100, work_us = 1000, use_rwlock;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static long served;
static int64_t *held, *held_at; /* [clients * requests]: the long holds; 0 none */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_us(int us)
{
	int64_t end = now_ns() + (int64_t)us * 1000;
	while (now_ns() < end)
		;
}

static void table_unlock(void)
{
	if (use_rwlock)
		pthread_rwlock_unlock(&table_rwlock);
	else
		pthread_mutex_unlock(&table_lock);
}

__attribute__((noinline)) static void count_request(void)
{
	if (use_rwlock)
		pthread_rwlock_rdlock(&table_rwlock);
	else
		pthread_mutex_lock(&table_lock);
	__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED); /* readers share the lock */
	table_unlock();
}

__attribute__((noinline)) static int64_t commit_slow(int64_t *at)
{
	nvtxRangePushA("commit");
	if (use_rwlock)
		pthread_rwlock_wrlock(&table_rwlock);
	else
		pthread_mutex_lock(&table_lock);
	int64_t t0 = now_ns();
	spin_us(4 * work_us);
	int64_t t1 = now_ns();
	table_unlock();
	nvtxRangePop();
	*at = t0;
	return t1 - t0;
}

static void *client(void *arg)
{
	int c = (int)(intptr_t)arg;
	for (int i = 0; i < requests; i++) {
		nvtxRangePushA("request");
		nvtxRangePushA("work");
		spin_us(work_us);
		nvtxRangePop();
		if ((i + c * 3) % 10 == 5)
			held[c * requests + i] = commit_slow(&held_at[c * requests + i]);
		count_request();
		nvtxRangePop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"rwlock", no_argument, NULL, 'r'},
					     {"clients", required_argument, NULL, 'c'},
					     {"requests", required_argument, NULL, 'n'},
					     {"work-us", required_argument, NULL, 'w'},
					     {0}};
	for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		if (o == 'r')
			use_rwlock = 1;
		else if (o == 'c')
			clients = atoi(optarg);
		else if (o == 'n')
			requests = atoi(optarg);
		else if (o == 'w')
			work_us = atoi(optarg);
		else
			return 2;
	}
	if (optind != argc - 1 || clients < 1 || clients > 64 || requests < 1 || work_us < 1) {
		fprintf(stderr,
			"usage: fnd_holds [--rwlock] [--clients C] [--requests N] [--work-us U] "
			"SIDE\n");
		return 2;
	}
	held = calloc((size_t)clients * requests, sizeof(*held));
	held_at = calloc((size_t)clients * requests, sizeof(*held_at));
	if (!held || !held_at)
		return 1;
	pthread_t th[64];
	for (int c = 0; c < clients; c++)
		pthread_create(&th[c], NULL, client, (void *)(intptr_t)c);
	for (int c = 0; c < clients; c++)
		pthread_join(th[c], NULL);
	FILE *f = fopen(argv[optind], "w");
	if (!f)
		return 1;
	for (long i = 0; i < (long)clients * requests; i++)
		if (held[i])
			fprintf(f, "%lld %lld\n", (long long)held_at[i], (long long)held[i]);
	fclose(f);
	printf("served %ld\n", served);
	return 0;
}
