/* SPDX-License-Identifier: MIT */
/*
 * Cost of lp_counters_boundary() in a loop, two ways:
 *   read_ns  a boundary that reads (each ts a whole interval after the
 *            last read): one read() of the thread's perf_event group + one
 *            record; the cost a stage boundary pays
 *   skip_ns  a boundary within LATPROF_COUNTERS_INTERVAL_NS of the last
 *            read (a tight loop of tiny ranges): one TLS compare
 * Run with LATPROF_DIR set and LATPROF_COUNTERS=default (or none for the
 * baseline). Figures are the best of 5 rounds (the machine may be loaded).
 * usage: bench_counters [iterations]   prints: read_ns=X skip_ns=Y
 */
#include <stdio.h>
#include <stdlib.h>

#include "lp_core.h"
#include "lp_counters.h"

#define LP_BENCH_STEP (1ull << 40) /* ts step far beyond any interval */

static double best_of(long n, int advance)
{
	uint64_t best = UINT64_MAX, ts = lp_now();
	for (int round = 0; round < 5; round++) {
		uint64_t t0 = lp_now();
		for (long i = 0; i < n; i++)
			lp_counters_boundary(advance ? (ts += LP_BENCH_STEP) : ts);
		uint64_t dt = lp_now() - t0;
		best = dt < best ? dt : best;
	}
	return (double)best / (double)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	if (n <= 0 || lp_core_init() != 0) {
		fprintf(stderr, "bench_counters: set LATPROF_DIR; usage: bench_counters [N]\n");
		return 2;
	}
	lp_counters_thread_start();
	double rd = best_of(n, 1);
	double sk = best_of(n * 100, 0);
	printf("read_ns=%.1f skip_ns=%.2f\n", rd, sk);
	return 0;
}
