/* SPDX-License-Identifier: MIT */
/*
 * The clock of the blocking-call hooks (lp_blk_clock.c). A hook reads
 * lp_blk_clk_now() before and after the real call, both times in the unit
 * that lp_blk_clk_tsc() said before the call: TSC ticks where the TSC is
 * invariant and calibrated, else CLOCK_MONOTONIC ns (lp_now()). Only a call
 * found long enough is converted to CLOCK_MONOTONIC ns, the core's clock.
 */
#ifndef LP_BLK_CLOCK_H
#define LP_BLK_CLOCK_H

#include <stdint.h>

#include "lp_core.h"
#include "lp_tsc.h"

struct lp_blk_clk {
	int tsc;	    /* 1: hooks time calls in TSC ticks (set once) */
	uint64_t thr_ns;    /* recording threshold; UINT64_MAX: recording off */
	uint64_t thr_ticks; /* the threshold in ticks, once tsc is set */
	uint64_t cal_at;    /* lp_now() at which to calibrate; UINT64_MAX: never */
};

extern struct lp_blk_clk lp_blk_clk;

/* Read once per hooked call, before the first clock read. */
static inline int lp_blk_clk_tsc(void)
{
	return __atomic_load_n(&lp_blk_clk.tsc, __ATOMIC_ACQUIRE);
}

/* tsc is never set off x86-64 (lp_blk_clk_init). */
static inline uint64_t lp_blk_clk_now(int tsc)
{
	if (__builtin_expect(tsc, 1))
		return lp_tsc_read();
	return lp_now();
}

/* True when a call read as t0..t1 needs lp_blk_clk_span(): it may be over
 * the threshold, or (CLOCK_MONOTONIC mode) it is time to calibrate. */
static inline int lp_blk_clk_past(int tsc, uint64_t t0, uint64_t t1)
{
	if (__builtin_expect(tsc, 1))
		return t1 - t0 >= __atomic_load_n(&lp_blk_clk.thr_ticks, __ATOMIC_RELAXED);
	return t1 - t0 >= __atomic_load_n(&lp_blk_clk.thr_ns, __ATOMIC_RELAXED) ||
	       t1 >= __atomic_load_n(&lp_blk_clk.cal_at, __ATOMIC_RELAXED);
}

/* From the constructor: the threshold and, unless !tsc_ok
 * (LATPROF_BLOCK_CLOCK=monotonic), the first calibration point. */
void lp_blk_clk_init(uint64_t thr_ns, int tsc_ok);
/* In a forked child (pthread_atfork). */
void lp_blk_clk_after_fork_child(void);
/* For a call lp_blk_clk_past() flagged: its start and end in CLOCK_MONOTONIC
 * ns; 1 when it lasted at least the threshold (record it), else 0. Keeps
 * errno. */
int lp_blk_clk_span(int tsc, uint64_t t0, uint64_t t1, uint64_t *start, uint64_t *end);

#endif
