/* SPDX-License-Identifier: MIT */
/*
 * Preload test program, one mode per run: lp_misc MODE
 *   cond     producer/consumer on a condition variable (COND_WAIT records)
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
 *   sem      sem_wait contended, errno kept across a successful wait
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

static pthread_mutex_t lp_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lp_cv = PTHREAD_COND_INITIALIZER;
static int lp_ready;
static sem_t lp_sem;

static void *lp_producer(void *arg)
{
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

static void *lp_poster(void *arg)
{
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
		while (!lp_ready)
			pthread_cond_wait(&lp_cv, &lp_mu);
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
		pthread_create(&t, NULL, lp_poster, NULL);
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
