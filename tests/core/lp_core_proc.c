/* SPDX-License-Identifier: MIT */
/*
 * Helper for the core e2e tests. Usage: lp_core_proc MODE [ARGS]
 *   exit N          exit(N)
 *   raise SIG       raise(SIG) with the default action (no core file)
 *   fork OUT        fork without exec
 *   forkexec OUT    fork, the child execs `leaf`
 *   spawn OUT       posix_spawn `leaf`
 *   scrubexec OUT   fork, the child execve's `leaf` with only LP_MARK=kept
 *                   in its environment (env -i style)
 *   scrubspawn OUT  posix_spawn `leaf` with only LP_MARK=kept
 *   clearenv OUT    fork, the child clearenv()s, sets LP_MARK, execv's `leaf`
 *   tree OUT        3 levels: fork -> the child fork+execs a leaf
 *   leaf OUT        start one thread, report, exit
 *   threads N       N short-lived threads, 10 alive at a time
 *   stress N        4 threads x N lock/unlock of one global mutex
 *   forkloop OUT N  fork N children one after the other, each waited for:
 *                   child i exits at once with status i % 50, child 1
 *                   kills itself with SIGKILL, child N/2 first makes two
 *                   threads contend for a mutex 5 times (2 ms holds); OUT
 *                   gets "parent=P" then "pid=C status=S locker=L" each
 *
 * Process modes make every process start one extra thread, then append
 * "pid=P ppid=Q threads=T mark=M" to OUT (M = 1 when LP_MARK=kept): the
 * ground truth the test compares with the database.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

pthread_mutex_t stress_lock = PTHREAD_MUTEX_INITIALIZER;
static long stress_n;
static volatile long shared_counter;

static void *nop_thread(void *arg)
{
	pthread_mutex_lock(&stress_lock);
	shared_counter++;
	pthread_mutex_unlock(&stress_lock);
	return arg;
}

/* One extra thread, then the report line (O_APPEND: one write per line). */
static void report(const char *out)
{
	pthread_t t;
	if (pthread_create(&t, NULL, nop_thread, NULL) == 0)
		pthread_join(t, NULL);
	char line[128];
	const char *mark = getenv("LP_MARK");
	int n = snprintf(line, sizeof(line), "pid=%d ppid=%d threads=2 mark=%d\n", (int)getpid(),
			 (int)getppid(), mark && !strcmp(mark, "kept"));
	int fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		perror(out);
	if (fd >= 0)
		close(fd);
}

static pthread_mutex_t loop_lock = PTHREAD_MUTEX_INITIALIZER;

static void *loop_contender(void *arg)
{
	for (int i = 0; i < 5; i++) {
		pthread_mutex_lock(&loop_lock);
		usleep(2000);
		pthread_mutex_unlock(&loop_lock);
		usleep(100);
	}
	return arg;
}

static int mode_forkloop(const char *out, int n)
{
	FILE *f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "parent=%d\n", (int)getpid());
	for (int i = 0; i < n; i++) {
		fflush(f);
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			if (i == 1)
				kill(getpid(), SIGKILL);
			if (i == n / 2) {
				pthread_t t[2];
				for (int k = 0; k < 2; k++)
					pthread_create(&t[k], NULL, loop_contender, NULL);
				for (int k = 0; k < 2; k++)
					pthread_join(t[k], NULL);
			}
			_exit(i % 50);
		}
		int st;
		if (waitpid(p, &st, 0) != p)
			return 1;
		fprintf(f, "pid=%d status=%d locker=%d\n", (int)p,
			WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), i == n / 2);
	}
	return fclose(f) ? 1 : 0;
}

static int wait_child(pid_t p)
{
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static pid_t fork_exec_leaf(const char *self, const char *out)
{
	pid_t p = fork();
	if (p == 0) {
		execl(self, self, "leaf", out, (char *)NULL);
		_exit(127);
	}
	return p;
}

static int mode_tree(const char *self, const char *out)
{
	pid_t p = fork();
	if (p == 0) {
		int rc = wait_child(fork_exec_leaf(self, out));
		report(out);
		exit(rc);
	}
	int rc = wait_child(p);
	report(out);
	return rc;
}

static int mode_spawn(const char *self, const char *out)
{
	pid_t p;
	char *argv[] = {(char *)self, "leaf", (char *)out, NULL};
	int rc = posix_spawn(&p, self, NULL, NULL, argv, environ);
	if (rc) {
		fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
		return 1;
	}
	rc = wait_child(p);
	report(out);
	return rc;
}

/* A child environment without latprof's variables, three ways. */
static int mode_scrubbed(const char *how, const char *self, const char *out)
{
	char *argv[] = {(char *)self, "leaf", (char *)out, NULL};
	char *envp[] = {"LP_MARK=kept", NULL};
	pid_t p;
	if (!strcmp(how, "scrubspawn")) {
		int rc = posix_spawn(&p, self, NULL, NULL, argv, envp);
		if (rc)
			return fprintf(stderr, "posix_spawn: %s\n", strerror(rc)), 1;
	} else if ((p = fork()) == 0) {
		if (!strcmp(how, "clearenv")) {
			clearenv();
			setenv("LP_MARK", "kept", 1);
			execv(self, argv);
		} else {
			execve(self, argv, envp);
		}
		_exit(127);
	}
	int rc = wait_child(p);
	report(out);
	return rc;
}

static int mode_fork(const char *out)
{
	pid_t p = fork();
	if (p == 0) {
		report(out);
		exit(0);
	}
	int rc = wait_child(p);
	report(out);
	return rc;
}

static int mode_threads(long n)
{
	enum { BATCH = 10 };
	pthread_t t[BATCH];
	for (long i = 0; i < n; i += BATCH) {
		int k = 0;
		for (; k < BATCH && i + k < n; k++)
			if (pthread_create(&t[k], NULL, nop_thread, NULL))
				return 1;
		while (k--)
			pthread_join(t[k], NULL);
	}
	printf("threads=%ld counter=%ld\n", n, shared_counter);
	return shared_counter == n ? 0 : 1;
}

static void *stress_thread(void *arg)
{
	long *contended = arg;
	for (long i = 0; i < stress_n; i++) {
		if (pthread_mutex_trylock(&stress_lock) != 0) {
			pthread_mutex_lock(&stress_lock);
			++*contended;
		}
		shared_counter++;
		pthread_mutex_unlock(&stress_lock);
	}
	return NULL;
}

static int mode_stress(long n)
{
	pthread_t t[4];
	long contended[4] = {0};
	stress_n = n;
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, stress_thread, &contended[i]))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("counter=%ld contended=%ld\n", shared_counter,
	       contended[0] + contended[1] + contended[2] + contended[3]);
	return shared_counter == 4 * n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: lp_core_proc MODE ARG\n");
		return 2;
	}
	const char *m = argv[1], *a = argv[2];
	if (!strcmp(m, "exit"))
		exit(atoi(a));
	if (!strcmp(m, "raise")) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		raise(atoi(a));
		return 1;
	}
	if (!strcmp(m, "fork"))
		return mode_fork(a);
	if (!strcmp(m, "forkexec")) {
		int rc = wait_child(fork_exec_leaf("/proc/self/exe", a));
		report(a);
		return rc;
	}
	if (!strcmp(m, "spawn"))
		return mode_spawn("/proc/self/exe", a);
	if (!strcmp(m, "tree"))
		return mode_tree("/proc/self/exe", a);
	if (!strcmp(m, "scrubexec") || !strcmp(m, "scrubspawn") || !strcmp(m, "clearenv"))
		return mode_scrubbed(m, "/proc/self/exe", a);
	if (!strcmp(m, "leaf")) {
		report(a);
		return 0;
	}
	if (!strcmp(m, "threads"))
		return mode_threads(atol(a));
	if (!strcmp(m, "stress"))
		return mode_stress(atol(a));
	if (!strcmp(m, "forkloop") && argc == 4)
		return mode_forkloop(a, atoi(argv[3]));
	fprintf(stderr, "lp_core_proc: unknown mode %s\n", m);
	return 2;
}
