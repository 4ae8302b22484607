/* SPDX-License-Identifier: MIT */
/*
 * bd_nested: NVTX nesting three levels deep, for --request/--stage-depth:
 *   "warmup" (once, outermost)
 *   "request" x N: "prep" { "load" A us, "parse" B us }, "run" { "step" C us },
 *   and a gap of G us inside "request" covered by no stage.
 * then one more "request" left open at exit (its end is the process end).
 * Costs are busy-waits to CLOCK_MONOTONIC deadlines.
 *   bd_nested N A B C G
 */
#define _GNU_SOURCE
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

static void spin_us(long us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000u;
	while (now_ns() < end)
		;
}

static void ranged(const char *name, long us)
{
	nvtxRangePushA(name);
	spin_us(us);
	nvtxRangePop();
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: bd_nested N LOAD_US PARSE_US STEP_US GAP_US\n");
		return 2;
	}
	long n = atol(argv[1]), a = atol(argv[2]), b = atol(argv[3]), c = atol(argv[4]),
	     g = atol(argv[5]);
	ranged("warmup", 1000);
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("request");
		nvtxRangePushA("prep");
		ranged("load", a);
		ranged("parse", b);
		nvtxRangePop();
		spin_us(g);
		nvtxRangePushA("run");
		ranged("step", c);
		nvtxRangePop();
		nvtxRangePop();
	}
	nvtxRangePushA("request");
	ranged("prep", 100);
	return 0; /* "request" still open */
}
