/* SPDX-License-Identifier: MIT */
/*
 * A process-heavy workload for bench_spawn.py: fork N children one after
 * the other, each exits at once, the parent waits for each (a pre-forking
 * server's or a test runner's pattern). Prints "forks=N seconds=S".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	double t0 = now();
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("fork");
			return 1;
		}
		if (p == 0)
			_exit(0);
		int st;
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "child %d failed\n", (int)p);
			return 1;
		}
	}
	printf("forks=%d seconds=%.4f\n", n, now() - t0);
	return 0;
}
