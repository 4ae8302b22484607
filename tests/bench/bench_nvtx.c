/* SPDX-License-Identifier: MIT */
/*
 * NVTX push+pop cost: N nvtxRangePushA/nvtxRangePop pairs on one thread,
 * after a warm-up (the first call loads the tool, if any). Run it bare
 * (NVTX is a no-op without NVTX_INJECTION64_PATH) and under latprof; the
 * runner (tests/nvtx/bench_nvtx.py) prints both and their ratio.
 *
 *   bench_nvtx [PAIRS]   prints: pairs=N ns_per_pair=X
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
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		nvtxRangePushA(names[i & 3]);
		nvtxRangePop();
	}
	double ns = (double)(now_ns() - t0) / (double)n;
	printf("pairs=%ld ns_per_pair=%.2f\n", n, ns);
	return 0;
}
