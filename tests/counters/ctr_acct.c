/* SPDX-License-Identifier: MIT */
/*
 * ctr_acct: threads whose own accounting the test compares with latprof's
 * whole-thread totals (tests/counters/test_acct.py). Prints one line per
 * thread, "<role> tid=T cpu_ns=C switches=S minflt=F majflt=M perf_fds=P":
 * its getrusage(RUSAGE_THREAD) and CLOCK_THREAD_CPUTIME_ID, and the
 * perf_event descriptors the process held then.
 *   plain   spins ~spin_ms, touches `pages` fresh pages, naps `naps`
 *           times, then exits: no NVTX, so no counter group of its own
 *   ranges  the same inside NVTX ranges: its group opens at its first one
 *   alive   the same without NVTX, prints, then blocks until the process
 *           exits (its totals are read by the exiting thread)
 * usage: ctr_acct [spin_ms] [pages] [naps]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long spin_ms = 30, pages = 300, naps = 20;
static int hold[2];  /* the alive thread blocks reading it */
static int ready[2]; /* it writes here once it reported */

static long perf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;
	struct dirent *e;
	char path[300], target[64];
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = 0;
			n += strstr(target, "perf_event") != NULL;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void work(int ranges)
{
	size_t len = (size_t)pages * 4096;
	if (ranges)
		nvtxRangePushA("spin");
	uint64_t until = cpu_ns() + (uint64_t)spin_ms * 1000000u;
	while (cpu_ns() < until)
		;
	if (ranges) {
		nvtxRangePop();
		nvtxRangePushA("touch");
	}
	volatile char *p =
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		madvise((void *)p, len, MADV_NOHUGEPAGE);
		for (long i = 0; i < pages; i++)
			p[i * 4096] = 1;
	}
	if (ranges) {
		nvtxRangePop();
		nvtxRangePushA("nap");
	}
	for (long i = 0; i < naps; i++)
		usleep(1000);
	if (ranges)
		nvtxRangePop();
}

static void report(const char *role)
{
	long fds = perf_fds(); /* before the figures: its page faults are its own */
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	uint64_t cpu = cpu_ns();
	printf("%s tid=%d cpu_ns=%llu switches=%ld minflt=%ld majflt=%ld perf_fds=%ld\n", role,
	       gettid(), (unsigned long long)cpu, ru.ru_nvcsw + ru.ru_nivcsw, ru.ru_minflt,
	       ru.ru_majflt, fds);
	fflush(stdout);
}

static void *plain(void *arg)
{
	(void)arg;
	work(0);
	report("plain");
	return NULL;
}

static void *ranged(void *arg)
{
	(void)arg;
	work(1);
	report("ranges");
	return NULL;
}

static void *alive(void *arg)
{
	(void)arg;
	work(0);
	report("alive");
	char c = 1;
	if (write(ready[1], &c, 1) != 1)
		return NULL;
	while (read(hold[0], &c, 1) < 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	spin_ms = argc > 1 ? atol(argv[1]) : spin_ms;
	pages = argc > 2 ? atol(argv[2]) : pages;
	naps = argc > 3 ? atol(argv[3]) : naps;
	if (pipe(hold) || pipe(ready))
		return 1;
	pthread_t a, b, c;
	/* one at a time: each thread's perf_fds counts the others' too */
	if (pthread_create(&a, NULL, plain, NULL) || pthread_join(a, NULL))
		return 1;
	if (pthread_create(&b, NULL, ranged, NULL) || pthread_join(b, NULL))
		return 1;
	if (pthread_create(&c, NULL, alive, NULL))
		return 1;
	char r;
	if (read(ready[0], &r, 1) != 1)
		return 1;
	usleep(20000); /* let it block in its read() */
	return 0;      /* exit() with the alive thread still there */
}
