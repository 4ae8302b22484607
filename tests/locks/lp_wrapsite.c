/* SPDX-License-Identifier: MIT */
/*
 * Two mutexes taken through one wrapper, from one call in each thread's
 * function: the wrapper and that call are both shared by the two locks,
 * so the frame above them is libc's thread start.
 * Usage: lp_wrapsite THREADS ITERS.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static int iters;

__attribute__((noinline)) static void take(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	usleep(500);
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2 * iters; i++)
		take(i % 2 ? &lock_b : &lock_a); /* one call site for both */
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	iters = argc > 2 ? atoi(argv[2]) : 50;
	pthread_t t[64];
	for (int i = 0; i < n && i < 64; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < n && i < 64; i++)
		pthread_join(t[i], NULL);
	return 0;
}
