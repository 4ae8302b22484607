/* SPDX-License-Identifier: MIT */
/*
 * What latprof must not miss without saying so, or must not take from the
 * app (tests/reliability/test_unseen.py):
 *   clone T P S   T threads and P processes by glibc's clone(), S processes
 *                 by syscall(SYS_clone) and syscall(SYS_clone3); each child
 *                 process sleeps 20 ms (a blocking call that must not land
 *                 in the parent's log), the parent sleeps 20 ms before
 *                 them (and records nothing after them)
 *   uring N MS    N io_uring_enter(GETEVENTS, min_complete 1) waits of MS ms
 *                 each through syscall() (lp_rel_uringapp: through a library's
 *                 exported io_uring_enter2), timed out by the kernel (ETIME);
 *                 exit 3 when io_uring is not permitted
 *   nofile [MS]   (sleep MS ms first, so a recorder creates its log) open
 *                 /dev/null until EMFILE
 *   tiny CODE     print "tiny" and exit with CODE (built -m32 as well)
 *   threads N MS  N threads alive together, each sleeping MS ms, joined;
 *                 then _exit(0) ("_exit" as argv[4]) or return 0
 * Each mode prints what it did ("key value" lines) and exits 1 when a call
 * failed or errno was not the one the kernel gave.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int tiny(int code)
{
	printf("tiny\n");
	return code;
}

#if defined(__x86_64__) || defined(__aarch64__)
#define STACK (64 * 1024)

static int started;

/* No libc call: this task shares the creating thread's TLS. */
static int thread_fn(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int proc_fn(void *arg)
{
	(void)arg;
	usleep(20000);
	return 7;
}

static int reap(pid_t p, int want)
{
	int st;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != want) {
		fprintf(stderr, "child %d: status %#x, want exit %d\n", (int)p, st, want);
		return -1;
	}
	return 0;
}

static int clones(int nt, int np, int ns)
{
	static pid_t ctid[64];
	char *stacks = malloc((size_t)(nt + np) * STACK);
	if (!stacks || nt > 64)
		return 1;
	usleep(20000); /* a recorder has its log open (and mapped) before the clones */
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
	for (int i = 0; i < nt; i++)
		if (clone(thread_fn, stacks + (size_t)(i + 1) * STACK, flags, NULL, &ctid[i], NULL,
			  &ctid[i]) < 0) {
			perror("clone thread");
			return 1;
		}
	for (int i = 0; i < nt; i++) /* the kernel clears ctid and wakes us at its exit */
		for (pid_t v; (v = __atomic_load_n(&ctid[i], __ATOMIC_SEQ_CST));)
			syscall(SYS_futex, &ctid[i], FUTEX_WAIT, v, NULL, NULL, 0);
	for (int i = 0; i < np; i++) {
		pid_t p = clone(proc_fn, stacks + (size_t)(nt + i + 1) * STACK, SIGCHLD, NULL);
		if (p < 0 || reap(p, 7))
			return 1;
	}
	for (int i = 0; i < ns; i++) {
		long p;
		if (i % 2 == 0) {
			p = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		} else {
			uint64_t args[11] = {0}; /* struct clone_args: flags, ..., exit_signal */
			args[4] = SIGCHLD;
			p = syscall(SYS_clone3, args, 88);
		}
		if (p == 0) {
			usleep(20000);
			_exit(9);
		}
		if (p < 0 || reap((pid_t)p, 9))
			return 1;
	}
	free(stacks);
	printf("threads %d\nprocesses %d\nstarted %d\n", nt, np + ns,
	       __atomic_load_n(&started, __ATOMIC_SEQ_CST));
	return __atomic_load_n(&started, __ATOMIC_SEQ_CST) == nt ? 0 : 1;
}
#endif

#ifndef IORING_ENTER_GETEVENTS
#define IORING_ENTER_GETEVENTS 1u
#endif
#ifndef IORING_ENTER_EXT_ARG
#define IORING_ENTER_EXT_ARG 8u
#endif

#ifdef LP_REL_URINGLIB
int io_uring_enter2(unsigned fd, unsigned submit, unsigned wait, unsigned flags, sigset_t *sig,
		    size_t sz);
#endif

static int uring(int n, int ms)
{
	uint32_t params[30] = {0}; /* struct io_uring_params: 120 bytes */
	long fd = syscall(SYS_io_uring_setup, 4, params);
	if (fd < 0) {
		printf("io_uring_setup failed: %s\n", strerror(errno));
		return 3;
	}
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	/* struct io_uring_getevents_arg: sigmask, sigmask_sz, pad, ts */
	uint64_t arg[3] = {0, 0, (uint64_t)(uintptr_t)&ts};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		errno = 0;
#ifdef LP_REL_URINGLIB /* through the library's exported wrapper */
		long rc = io_uring_enter2((unsigned)fd, 0, 1,
					  IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
					  (sigset_t *)arg, sizeof(arg));
#else
		long rc = syscall(SYS_io_uring_enter, (int)fd, 0, 1,
				  IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, arg, sizeof(arg));
#endif
		if (rc != -1 || errno != ETIME) {
			printf("io_uring_enter: rc %ld errno %d (want -1, ETIME)\n", rc, errno);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double took =
	    (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	printf("waits %d\nwaited_ms %.3f\n", n, took);
	close((int)fd);
	return 0;
}

static int nofile(int ms)
{
	if (ms)
		usleep((useconds_t)ms * 1000);
	static int fds[65536];
	int n = 0, fd;
	while (n < 65536 && (fd = open("/dev/null", O_RDONLY)) >= 0)
		fds[n++] = fd;
	int e = errno;
	for (int i = 0; i < n; i++) /* a sanitizer's exit checks need one */
		close(fds[i]);
	printf("opened %d\nerrno %s\n", n, e == EMFILE ? "EMFILE" : strerror(e));
	return e == EMFILE ? 0 : 1;
}

static void *sleeper(void *arg)
{
	usleep((useconds_t)(uintptr_t)arg * 1000);
	return NULL;
}

static int threads(int n, int ms, int uexit)
{
	pthread_t th[256];
	int made = 0;
	for (int i = 0; i < n && i < 256; i++)
		if (pthread_create(&th[made], NULL, sleeper, (void *)(uintptr_t)ms) == 0)
			made++;
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	printf("threads %d\n", made);
	if (uexit)
		_exit(made == n ? 0 : 1);
	return made == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "tiny"))
		return tiny(atoi(argv[2]));
#if defined(__x86_64__) || defined(__aarch64__)
	if (argc == 5 && !strcmp(argv[1], "clone"))
		return clones(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
#endif
	if (argc == 4 && !strcmp(argv[1], "uring"))
		return uring(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]), atoi(argv[3]), argc > 4 && !strcmp(argv[4], "_exit"));
	if (argc >= 2 && !strcmp(argv[1], "nofile"))
		return nofile(argc > 2 ? atoi(argv[2]) : 0);
	fprintf(stderr, "usage: lp_rel_unseen clone T P S | uring N MS | nofile [MS] | tiny CODE | "
			"threads N MS [_exit]\n");
	return 2;
}
