/* SPDX-License-Identifier: MIT */
/*
 * NVTX push+pop cost: N nvtxRangePushA/nvtxRangePop pairs on one thread,
 * after a warm-up (the first call loads the tool, if any), beside the floor
 * a recorded pair cannot go under: two TSC reads (its two time stamps).
 * Batches of each alternate in this one process, so both see the same
 * load. Run it bare (NVTX is a no-op without NVTX_INJECTION64_PATH) and
 * under latprof; the runner (tests/nvtx/bench_nvtx.py) prints and gates
 * the ratio.
 *
 *   bench_nvtx [PAIRS]   prints: pairs=N ns_per_pair=X best_ns_per_pair=Y
 *                        tsc2_best_ns=F ratio=Y/F
 *
 * best_* are the fastest batch of 20,000: on a shared or virtual machine
 * the mean carries other tenants' load, the best batch is the cost of the
 * code itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t bench_sink;

/* Two TSC reads per iteration, both kept: a pair's two stamps. Off x86-64
 * two clock_gettime calls stand in (the recorder's clock there). */
static __attribute__((noinline)) void bench_tsc2(long n)
{
	uint64_t acc = 0;
	for (long i = 0; i < n; i++) {
#if defined(__x86_64__)
		acc += __rdtsc();
		acc ^= __rdtsc();
#else
		acc += now_ns();
		acc ^= now_ns();
#endif
	}
	bench_sink = acc;
}

static __attribute__((noinline)) void bench_pairs(long n)
{
	static const char *const names[4] = {"bench-a", "bench-b", "bench-c", "bench-d"};
	for (long i = 0; i < n; i++) {
		nvtxRangePushA(names[i & 3]);
		nvtxRangePop();
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	bench_pairs(1000);
	const long batch = 20000;
	double best = 1e30, floor = 1e30, spent = 0;
	for (long done = 0; done < n; done += batch) {
		uint64_t b0 = now_ns();
		bench_pairs(batch);
		uint64_t b1 = now_ns();
		bench_tsc2(batch);
		double ns = (double)(b1 - b0) / (double)batch;
		double fl = (double)(now_ns() - b1) / (double)batch;
		spent += (double)(b1 - b0);
		best = ns < best ? ns : best;
		floor = fl < floor ? fl : floor;
	}
	long pairs = (n + batch - 1) / batch * batch;
	printf("pairs=%ld ns_per_pair=%.2f best_ns_per_pair=%.2f tsc2_best_ns=%.2f ratio=%.3f\n",
	       pairs, spent / (double)pairs, best, floor, best / floor);
	return 0;
}
