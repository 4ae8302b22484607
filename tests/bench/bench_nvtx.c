/* SPDX-License-Identifier: MIT */
/*
 * NVTX push+pop cost: N nvtxRangePushA/nvtxRangePop pairs on one thread,
 * after a warm-up (the first call loads the tool, if any). Run it bare
 * (NVTX is a no-op without NVTX_INJECTION64_PATH) and under latprof; the
 * runner (tests/nvtx/bench_nvtx.py) prints both and their ratio.
 *
 *   bench_nvtx [PAIRS]   prints: pairs=N ns_per_pair=X best_ns_per_pair=Y
 *
 * best_ns_per_pair is the fastest batch of 20,000 pairs: on a shared or
 * virtual machine the mean carries other tenants' load, the best batch is
 * the cost of the code itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	static const char *const names[4] = {"bench-a", "bench-b", "bench-c", "bench-d"};
	for (int i = 0; i < 1000; i++) {
		nvtxRangePushA(names[i & 3]);
		nvtxRangePop();
	}
	const long batch = 20000;
	double best = 1e30;
	uint64_t t0 = now_ns();
	for (long done = 0; done < n; done += batch) {
		uint64_t b0 = now_ns();
		for (long i = 0; i < batch; i++) {
			nvtxRangePushA(names[i & 3]);
			nvtxRangePop();
		}
		double ns = (double)(now_ns() - b0) / (double)batch;
		if (ns < best)
			best = ns;
	}
	long pairs = (n + batch - 1) / batch * batch;
	double ns = (double)(now_ns() - t0) / (double)pairs;
	printf("pairs=%ld ns_per_pair=%.2f best_ns_per_pair=%.2f\n", pairs, ns, best);
	return 0;
}
