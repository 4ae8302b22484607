/* SPDX-License-Identifier: MIT */
/*
 * Cost of one stage boundary with CPU counters: lp_counters_boundary()
 * (one read() of the thread's perf_event group + one record) in a loop.
 * Run with LATPROF_DIR set and LATPROF_COUNTERS=default (or none for the
 * baseline); prints "boundary_ns <mean ns per call>".
 * usage: bench_counters [iterations]
 */
#include <stdio.h>
#include <stdlib.h>

#include "lp_core.h"
#include "lp_counters.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	if (n <= 0 || lp_core_init() != 0) {
		fprintf(stderr, "bench_counters: set LATPROF_DIR; usage: bench_counters [N]\n");
		return 2;
	}
	lp_counters_boundary(lp_now()); /* opens the group */
	uint64_t best = UINT64_MAX;
	for (int round = 0; round < 5; round++) {
		uint64_t t0 = lp_now();
		for (long i = 0; i < n; i++)
			lp_counters_boundary(t0);
		uint64_t dt = lp_now() - t0;
		best = dt < best ? dt : best;
	}
	printf("boundary_ns %.1f\n", (double)best / (double)n);
	return 0;
}
