/* SPDX-License-Identifier: MIT */
/* Uncontended pthread_mutex_lock+unlock cost: prints ns per pair (median of
 * 7 rounds of N pairs). Run bare and under LD_PRELOAD to compare.
 * Usage: lp_lockbench [N] [mt]; "mt" starts an idle second thread first, so
 * glibc leaves its single-threaded shortcuts (the usual case in servers). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lp_mu = PTHREAD_MUTEX_INITIALIZER;

static void *lp_idle(void *arg)
{
	pause();
	return arg;
}

static int lp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	double r[7];
	pthread_t t;
	if (argc > 2 && !strcmp(argv[2], "mt") && pthread_create(&t, NULL, lp_idle, NULL) != 0)
		return 1;
	for (int k = 0; k < 7; k++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&lp_mu);
			pthread_mutex_unlock(&lp_mu);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		r[k] = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
	}
	qsort(r, 7, sizeof(r[0]), lp_cmp);
	printf("%.2f\n", r[3]);
	return 0;
}
