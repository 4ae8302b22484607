/* SPDX-License-Identifier: MIT */
/* A library with a lock of its own, dlopen'ed and dlclose'd by lp_rel_app. */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

pthread_mutex_t lp_rel_lib_lock = PTHREAD_MUTEX_INITIALIZER;
static long lp_rel_lib_counter;

static void *lp_rel_lib_worker(void *arg)
{
	long n = (long)(intptr_t)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lp_rel_lib_lock);
		lp_rel_lib_counter++;
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL); /* hold it: the other threads wait */
		pthread_mutex_unlock(&lp_rel_lib_lock);
	}
	return NULL;
}

long lp_rel_lib_contend(int threads, long n)
{
	pthread_t t[16];
	lp_rel_lib_counter = 0;
	for (int i = 0; i < threads && i < 16; i++)
		pthread_create(&t[i], NULL, lp_rel_lib_worker, (void *)(intptr_t)n);
	for (int i = 0; i < threads && i < 16; i++)
		pthread_join(t[i], NULL);
	return lp_rel_lib_counter;
}
