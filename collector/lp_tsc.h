/* SPDX-License-Identifier: MIT */
/*
 * TSC ticks to CLOCK_MONOTONIC ns, the arithmetic shared by the two clocks
 * that read the TSC instead of clock_gettime on their hot path: the
 * blocking-call hooks' (preload/lp_blk_clock.c) and the NVTX stamps'
 * (collector/nvtx/lp_nvtx.c). Each keeps its own state and policy.
 *
 * A point is an lp_now() read between two RDTSCs and placed at their
 * midpoint; w, their distance, bounds its error: the ns read belongs to
 * some tick within w/2 of the midpoint. A thread preempted between the
 * reads makes a wide point, which is why points are judged by w and not
 * trusted blindly. A rate is taken from two points only when their widths
 * add up to at most 1/q of the ticks between them: the rate then errs by at
 * most 1/q (plus NTP's slewing of CLOCK_MONOTONIC meanwhile).
 */
#ifndef LP_TSC_H
#define LP_TSC_H

#include <stdint.h>

#include "lp_core.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

struct lp_tsc_pt {
	uint64_t tsc, ns, w;
};

/* Ticks; 0 off x86-64, where no clock above ever uses the TSC. */
static inline uint64_t lp_tsc_read(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return 0;
#endif
}

static inline void lp_tsc_pt_take(struct lp_tsc_pt *p)
{
	uint64_t a = lp_tsc_read();
	uint64_t ns = lp_now();
	uint64_t b = lp_tsc_read();
	p->tsc = a + (b - a) / 2;
	p->ns = ns;
	p->w = b - a;
}

/* The narrowest of up to `tries` points, stopping at the first no wider
 * than `good` ticks. */
static inline void lp_tsc_pt_best(struct lp_tsc_pt *p, int tries, uint64_t good)
{
	lp_tsc_pt_take(p);
	for (int i = 1; i < tries && p->w > good; i++) {
		struct lp_tsc_pt q;
		lp_tsc_pt_take(&q);
		if (q.w < p->w)
			*p = q;
	}
}

/* ns per tick << 32 between points a and b (b later), or 0 when they are
 * too close for their widths at quality q. */
static inline uint64_t lp_tsc_rate(const struct lp_tsc_pt *a, const struct lp_tsc_pt *b, unsigned q)
{
	uint64_t span = b->tsc - a->tsc;
	if ((int64_t)span <= 0 || b->ns <= a->ns || (unsigned __int128)(a->w + b->w) * q > span)
		return 0;
	return (uint64_t)(((unsigned __int128)(b->ns - a->ns) << 32) / span);
}

static inline uint64_t lp_tsc_ticks_ns(uint64_t ticks, uint64_t mult)
{
	return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}

#endif
