/* SPDX-License-Identifier: MIT */
/*
 * fnd_spin: a small server without NVTX ranges, for spinning-pool judged
 * without requests. The main thread serves: it waits for each message in
 * poll() on a socketpair and answers it; a client thread sends MSGS
 * messages, one every GAP_US. Beside them a pool of POOL threads waits for
 * work that never comes:
 *   spin     each pool thread busy-polls an atomic flag (a spinning pool:
 *            onnxruntime's intra-op threads, Redis's io-threads);
 *   passive  each pool thread sleeps on a condition variable.
 * usage: fnd_spin spin|passive POOL MSGS GAP_US
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static int spin, sv[2];
static long msgs, gap_us;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *pool(void *arg)
{
	(void)arg;
	if (spin) {
		while (!atomic_load_explicit(&stop, memory_order_relaxed))
			;
		return NULL;
	}
	pthread_mutex_lock(&mu);
	while (!atomic_load(&stop))
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *client(void *arg)
{
	(void)arg;
	char b[64] = "ping";
	struct timespec ts = {0, gap_us * 1000};
	for (long i = 0; i < msgs; i++) {
		nanosleep(&ts, NULL);
		if (send(sv[1], b, sizeof(b), 0) != sizeof(b) || recv(sv[1], b, sizeof(b), 0) <= 0)
			break;
	}
	close(sv[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[1], "spin") && strcmp(argv[1], "passive")))
		return fprintf(stderr, "usage: fnd_spin spin|passive POOL MSGS GAP_US\n"), 2;
	spin = !strcmp(argv[1], "spin");
	int npool = atoi(argv[2]);
	msgs = atol(argv[3]);
	gap_us = atol(argv[4]);
	if (npool < 0 || npool > 64 || msgs < 1 || gap_us < 1 || gap_us >= 1000000 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return fprintf(stderr, "fnd_spin: bad arguments\n"), 2;
	pthread_t p[64], c;
	for (int i = 0; i < npool; i++)
		pthread_create(&p[i], NULL, pool, NULL);
	pthread_create(&c, NULL, client, NULL);
	char b[64];
	for (;;) {
		struct pollfd pf = {sv[0], POLLIN, 0};
		if (poll(&pf, 1, -1) < 0)
			break;
		ssize_t n = recv(sv[0], b, sizeof(b), 0);
		if (n <= 0 || send(sv[0], b, (size_t)n, 0) != n)
			break;
	}
	pthread_join(c, NULL);
	pthread_mutex_lock(&mu);
	atomic_store(&stop, 1);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < npool; i++)
		pthread_join(p[i], NULL);
	return 0;
}
