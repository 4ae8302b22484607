/* SPDX-License-Identifier: MIT */
/*
 * The cost of the blocking-call hooks on calls that do not block long:
 * bench_block pipe [N]: 64-byte write() + read() on a pipe, N times (each
 * call far under the 10 us threshold: a clock read pair, no record);
 * bench_block nanosleep [N]: nanosleep(0), N times (the timer slack makes
 * each one last tens of microseconds: every call is recorded).
 * Prints "ns_per_op=X iterations=N".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int pipe_loop(long n, const int *p)
{
	char buf[64];
	memset(buf, 1, sizeof(buf));
	for (long i = 0; i < n; i++)
		if (write(p[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
		    read(p[0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -1;
	return 0;
}

static int sleep_loop(long n)
{
	struct timespec zero = {0, 0};
	for (long i = 0; i < n; i++)
		if (nanosleep(&zero, NULL) != 0)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int sleep_mode = argc > 1 && !strcmp(argv[1], "nanosleep");
	if (argc < 2 || (!sleep_mode && strcmp(argv[1], "pipe")))
		return fprintf(stderr, "usage: bench_block pipe|nanosleep [N]\n"), 2;
	long n = argc > 2 ? atol(argv[2]) : sleep_mode ? 20000 : 1000000;
	int p[2];
	if (n <= 0 || pipe(p))
		return 2;
	/* warm up: the first calls resolve the interposer's functions */
	if (sleep_mode ? sleep_loop(10) : pipe_loop(1000, p))
		return 1;
	double t0 = now_ns();
	if (sleep_mode ? sleep_loop(n) : pipe_loop(n, p))
		return 1;
	double t1 = now_ns();
	printf("ns_per_op=%.3f iterations=%ld\n", (t1 - t0) / (double)n, n);
	return 0;
}
