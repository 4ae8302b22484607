/* SPDX-License-Identifier: MIT */
/*
 * Preload test program. Usage: lp_contend MODE [N]
 *   contend    4 threads fight over one global mutex, holding it ~50 us
 *   uncontend  one thread locks/unlocks N times (no LOCK_WAIT expected)
 *   stress     4 threads x N lock/unlock of one mutex (default 1M)
 *   threads    N short threads (default 500), each named
 *   rwlock     a writer holds an rwlock while 3 readers wait (20 ms once all
 *              sleep in it)
 *   errcheck   errorcheck mutex relocked by its owner: EDEADLK passes through
 *   forkexec   fork; child execs /bin/sh -c 'exit 7'; exits with the child's status
 *   exit N     exit(N) from main
 *   nest N     10 mutexes, each waited on once (so the interposer times their
 *              holds), then main holds all 10 at once N times: 2N holds past
 *              the 8 a thread's list keeps
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lp_asleep.h"

static pthread_mutex_t lp_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t lp_rw = PTHREAD_RWLOCK_INITIALIZER;
static long lp_n = 1000;
static volatile long lp_counter;

static void lp_spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < us * 1000L);
}

static void *lp_contender(void *arg)
{
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&lp_mu);
		lp_spin_us(50);
		pthread_mutex_unlock(&lp_mu);
	}
	return arg;
}

static void *lp_stresser(void *arg)
{
	for (long i = 0; i < lp_n; i++) {
		pthread_mutex_lock(&lp_mu);
		lp_counter++;
		pthread_mutex_unlock(&lp_mu);
	}
	return arg;
}

static void *lp_short(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "short-%ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&lp_mu);
	lp_counter++;
	pthread_mutex_unlock(&lp_mu);
	return NULL;
}

/* Each reader's tid, and set by it just before it takes lp_rw. */
static pid_t lp_reader_tid[3];
static int lp_reader_in[3];

static void *lp_reader(void *arg)
{
	int i = (int)(intptr_t)arg;
	lp_reader_tid[i] = lp_gettid();
	__atomic_store_n(&lp_reader_in[i], 1, __ATOMIC_RELEASE);
	pthread_rwlock_rdlock(&lp_rw);
	pthread_rwlock_unlock(&lp_rw);
	return arg;
}

#define LP_NEST 10
static pthread_mutex_t lp_nest_mu[LP_NEST];
static pid_t lp_nest_tid;
static int lp_nest_in;

static void *lp_nest_waiter(void *arg)
{
	pthread_mutex_t *m = arg;
	lp_nest_tid = lp_gettid();
	__atomic_store_n(&lp_nest_in, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	return NULL;
}

/* Each mutex is waited on once: the waiter sleeps in it before main lets
 * go. Then main takes all of them, in order, n times. */
static void lp_nest(long n)
{
	for (int i = 0; i < LP_NEST; i++) {
		pthread_t t;
		pthread_mutex_init(&lp_nest_mu[i], NULL);
		pthread_mutex_lock(&lp_nest_mu[i]);
		__atomic_store_n(&lp_nest_in, 0, __ATOMIC_RELAXED);
		if (pthread_create(&t, NULL, lp_nest_waiter, &lp_nest_mu[i]) != 0)
			abort();
		lp_wait_asleep(getpid(), 0, &lp_nest_in);
		lp_wait_asleep(getpid(), lp_nest_tid, NULL);
		pthread_mutex_unlock(&lp_nest_mu[i]);
		pthread_join(t, NULL);
	}
	for (long r = 0; r < n; r++) {
		for (int i = 0; i < LP_NEST; i++)
			pthread_mutex_lock(&lp_nest_mu[i]);
		for (int i = LP_NEST; i-- > 0;)
			pthread_mutex_unlock(&lp_nest_mu[i]);
	}
}

static void lp_run(void *(*fn)(void *), int n)
{
	pthread_t t[n];
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i) != 0)
			abort();
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "contend";
	if (argc > 2)
		lp_n = atol(argv[2]);
	if (!strcmp(mode, "contend")) {
		lp_run(lp_contender, 4);
	} else if (!strcmp(mode, "uncontend")) {
		for (long i = 0; i < lp_n; i++) {
			pthread_mutex_lock(&lp_mu);
			pthread_mutex_unlock(&lp_mu);
		}
	} else if (!strcmp(mode, "stress")) {
		if (argc <= 2)
			lp_n = 1000000;
		lp_run(lp_stresser, 4);
		if (lp_counter != 4 * lp_n)
			return 3;
	} else if (!strcmp(mode, "threads")) {
		if (argc <= 2)
			lp_n = 500;
		for (long i = 0; i < lp_n; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, lp_short, (void *)(intptr_t)i) != 0)
				abort();
			pthread_join(t, NULL);
		}
		if (lp_counter != lp_n)
			return 3;
	} else if (!strcmp(mode, "rwlock")) {
		pthread_rwlock_wrlock(&lp_rw);
		pthread_t t[3];
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, lp_reader, (void *)(intptr_t)i);
		/* The hold counts from when the readers sleep in the lock: on a
		 * loaded machine they may start after any fixed hold ended. */
		for (int i = 0; i < 3; i++)
			lp_wait_asleep(getpid(), lp_reader_tid[i], &lp_reader_in[i]);
		lp_spin_us(20000);
		pthread_rwlock_unlock(&lp_rw);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "errcheck")) {
		pthread_mutexattr_t a;
		pthread_mutex_t m;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(&m, &a);
		pthread_mutex_lock(&m);
		errno = 1234;
		int rc = pthread_mutex_lock(&m);
		if (rc != EDEADLK || errno != 1234)
			return 4;
		pthread_mutex_unlock(&m);
	} else if (!strcmp(mode, "forkexec")) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
			_exit(127);
		}
		int st = 0;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			return 5;
		return WEXITSTATUS(st);
	} else if (!strcmp(mode, "nest")) {
		lp_nest(lp_n);
	} else if (!strcmp(mode, "exit")) {
		exit((int)lp_n);
	} else {
		fprintf(stderr, "lp_contend: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
