/* SPDX-License-Identifier: MIT */
/*
 * NVTX storms for tests/reliability/test_logspace.py and test_storms.py:
 *   ranges N EXIT     N push/pop pairs of one name, then exit EXIT
 *   names N WORK_US   N requests, each a range named after the request
 *                     ("req <i>": N distinct names) around WORK_US of work;
 *                     prints the loop's own time. Work and time are the
 *                     thread's CPU time: on a loaded machine being
 *                     descheduled neither shortens the work nor counts.
 * Without latprof the NVTX calls are no-ops: the same binary is the bare
 * reference.
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void work_us(double us)
{
	double end = now(CLOCK_THREAD_CPUTIME_ID) + us / 1e6;
	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

static int mode_ranges(long n, int code)
{
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("storm");
		nvtxRangePop();
	}
	printf("ranges=%ld\n", n);
	return code;
}

static int mode_names(long n, double us)
{
	char name[32];
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "req %ld", i);
		nvtxRangePushA(name);
		work_us(us);
		nvtxRangePop();
	}
	printf("names=%ld cpu_seconds=%.4f wall_seconds=%.4f\n", n,
	       now(CLOCK_THREAD_CPUTIME_ID) - t0, now(CLOCK_MONOTONIC) - w0);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "ranges"))
		return mode_ranges(atol(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "names"))
		return mode_names(atol(argv[2]), atof(argv[3]));
	fprintf(stderr, "usage: lp_rel_storm ranges N EXIT | names N WORK_US\n");
	return 2;
}
