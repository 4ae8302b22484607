/* SPDX-License-Identifier: MIT */
/*
 * Preload test program, one mode per run: lp_misc MODE
 *   cond     producer/consumer on a condition variable (COND_WAIT records):
 *            the producer signals 20 ms after the consumer waits
 *   name     a thread named from the main thread (THREAD_NAME with its tid)
 *   killed   child killed by SIGKILL, reaped with waitid (CHILD_STATUS 9)
 *   vfork    vfork + _exit(5) in the child; exits with the child's status
 *   vforkexec  a vfork child whose execve fails (_exit(9)), then one that
 *            execs sh -c 'exit 7' with an envp that lacks latprof's
 *            variables; then the parent names its thread "after-vfork";
 *            exits with the second child's status
 *   vforkloop  3 threads take one mutex in a loop while the main thread
 *            runs 50 vfork + execv("/bin/true"); exits 3 if a child failed
 *   system   system("exit 6"): exits with the shell's status
 *   sem      sem_wait contended (posted 20 ms after main waits), errno kept
 *            across a successful wait
 *   dlopen   dlopen("libm.so.6") by bare name; prints 1 on success
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lp_asleep.h"

static pthread_mutex_t lp_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lp_cv = PTHREAD_COND_INITIALIZER;
static int lp_ready;
static int lp_waiting; /* set by the consumer, under lp_mu, as it waits */
static sem_t lp_sem;

/* Signals 20 ms after the consumer waits. Not 20 ms after its start: on a
 * loaded machine the consumer may reach its wait later than that, find
 * lp_ready set and never wait. lp_waiting seen under lp_mu means the
 * consumer released lp_mu inside pthread_cond_wait. */
static void *lp_producer(void *arg)
{
	for (int waiting = 0; !waiting;) {
		pthread_mutex_lock(&lp_mu);
		waiting = lp_waiting;
		pthread_mutex_unlock(&lp_mu);
		if (!waiting)
			usleep(1000);
	}
	usleep(20000);
	pthread_mutex_lock(&lp_mu);
	lp_ready = 1;
	pthread_cond_signal(&lp_cv);
	pthread_mutex_unlock(&lp_mu);
	return arg;
}

static volatile int lp_stop;

static void *lp_locker(void *arg)
{
	while (!lp_stop) {
		pthread_mutex_lock(&lp_mu);
		for (volatile int i = 0; i < 2000; i++)
			;
		pthread_mutex_unlock(&lp_mu);
	}
	return arg;
}

/* vfork + execv in a frame of its own (no variable of the loop's for the
 * child to clobber); 0 when the child exec'd and exited 0. */
__attribute__((noinline)) static int lp_vfork_true(char *const argv[])
{
	pid_t pid = vfork();
	if (pid == 0) {
		execv("/bin/true", argv);
		_exit(9);
	}
	int st;
	return waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

static void *lp_sleeper(void *arg)
{
	usleep(50000);
	return arg;
}

/* Main's tid, and set by main just before it waits on lp_sem. */
static pid_t lp_main_tid;
static int lp_sem_waiting;

/* Posts 20 ms after main sleeps in sem_wait (10 s at most): after a fixed
 * delay from its start, a main thread kept off a loaded CPU could find the
 * count already up and never wait. */
static void *lp_poster(void *arg)
{
	lp_wait_asleep(getpid(), lp_main_tid, &lp_sem_waiting);
	usleep(20000);
	sem_post(&lp_sem);
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "cond";
	pthread_t t;
	if (!strcmp(mode, "cond")) {
		pthread_create(&t, NULL, lp_producer, NULL);
		pthread_mutex_lock(&lp_mu);
		while (!lp_ready) {
			lp_waiting = 1;
			pthread_cond_wait(&lp_cv, &lp_mu);
		}
		pthread_mutex_unlock(&lp_mu);
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "name")) {
		pthread_create(&t, NULL, lp_sleeper, NULL);
		if (pthread_setname_np(t, "sleepy") != 0)
			return 3;
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "killed")) {
		pid_t pid = fork();
		if (pid == 0) {
			pause();
			_exit(0);
		}
		kill(pid, SIGKILL);
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED) != 0 || si.si_status != SIGKILL)
			return 3;
	} else if (!strcmp(mode, "vfork")) {
		pid_t pid = vfork();
		if (pid == 0)
			_exit(5);
		int st;
		if (waitpid(pid, &st, 0) != pid)
			return 3;
		return WEXITSTATUS(st);
	} else if (!strcmp(mode, "vforkexec")) {
		static char *const argv_bad[] = {"nonexistent", NULL};
		static char *const argv_sh[] = {"sh", "-c", "exit 7", NULL};
		static char *const envp[] = {"LP_MARK=kept", NULL};
		int st;
		pid_t pid = vfork();
		if (pid == 0) {
			execve("/nonexistent/lp_misc", argv_bad, envp);
			_exit(9);
		}
		if (waitpid(pid, &st, 0) != pid || WEXITSTATUS(st) != 9)
			return 3;
		pid = vfork();
		if (pid == 0) {
			execve("/bin/sh", argv_sh, envp);
			_exit(4);
		}
		if (waitpid(pid, &st, 0) != pid)
			return 3;
		pthread_setname_np(pthread_self(), "after-vfork");
		return WEXITSTATUS(st);
	} else if (!strcmp(mode, "vforkloop")) {
		static char *const argv_true[] = {"true", NULL};
		pthread_t lk[3];
		int bad = 0;
		for (int i = 0; i < 3; i++)
			pthread_create(&lk[i], NULL, lp_locker, NULL);
		for (int i = 0; i < 50; i++)
			bad += lp_vfork_true(argv_true);
		lp_stop = 1;
		for (int i = 0; i < 3; i++)
			pthread_join(lk[i], NULL);
		return bad ? 3 : 0;
	} else if (!strcmp(mode, "system")) {
		int st = system("exit 6");
		return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
	} else if (!strcmp(mode, "sem")) {
		sem_init(&lp_sem, 0, 0);
		lp_main_tid = lp_gettid();
		pthread_create(&t, NULL, lp_poster, NULL);
		__atomic_store_n(&lp_sem_waiting, 1, __ATOMIC_RELEASE);
		errno = 4321;
		if (sem_wait(&lp_sem) != 0 || errno != 4321)
			return 3;
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "dlopen")) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		printf("%d\n", h != NULL);
		if (h)
			dlclose(h);
	}
	return 0;
}
