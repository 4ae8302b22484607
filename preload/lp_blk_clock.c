/* SPDX-License-Identifier: MIT */
/*
 * Timing blocking calls with the TSC. A hooked call that does not block
 * costs its two clock reads and little else, so the clock is most of the
 * hooks' cost: clock_gettime(CLOCK_MONOTONIC) through the vDSO costs about
 * 35 ns on the VMs we measured (a fenced TSC read under a sequence lock,
 * then scaling), a bare RDTSC about 20 ns. Where the TSC is invariant
 * (constant rate, running in every C-state) and the kernel keeps time with
 * it (lp_tsc_usable), a call is timed in ticks. Only a call found over the
 * threshold reads CLOCK_MONOTONIC, to place its end on the core's clock;
 * its start is that end less its duration.
 *
 * Ticks become ns at a rate measured against CLOCK_MONOTONIC, without
 * making any process wait for it (a short process would pay that wait for
 * nothing): the constructor takes one (tsc, ns) point, and the first call
 * flagged LP_BLK_CAL_NS later takes a second and switches the hooks to
 * ticks. Until then they read CLOCK_MONOTONIC, as they do for good without
 * an invariant TSC, off x86-64, or with LATPROF_BLOCK_CLOCK=monotonic.
 * Every recorded call takes a point too, and re-estimates the rate over the
 * whole run once the run has grown LP_BLK_REFINE times since the last
 * estimate, so the rate only gets better.
 *
 * Precision (lp_tsc.h): a point is an lp_now() between two RDTSCs, at their
 * midpoint; a rate is only taken from points whose two brackets add up to
 * at most 1/LP_BLK_CAL_Q of the ticks between them: their half-widths, all
 * the error there is, are then at most 1e-4 of the span. A recorded
 * duration errs by at most 1e-4 of itself (0.2 us of a 2 ms sleep, less as
 * the run goes on), plus any change in NTP's slewing of CLOCK_MONOTONIC
 * since the rate was measured; its end by half its point's bracket (some
 * 30 ns).
 */
#define _GNU_SOURCE
#include "lp_blk_clock.h"

#include <errno.h>

#include "lp_preload.h"
#include "lp_rseq.h"

#define LP_BLK_CAL_NS 2000000ull /* first calibration after 2 ms */
#define LP_BLK_CAL_Q 5000u	 /* brackets <= 1/5000 of the span: rate error <= 1e-4 */
#define LP_BLK_REFINE 16u

struct lp_blk_clk lp_blk_clk = {0, 10000u, UINT64_MAX, UINT64_MAX};
LP_RSEQ_DEFINE;

static struct lp_tsc_cal lp_blk_cal; /* pt0 the constructor's */
static int lp_blk_cal_busy;	     /* a thread is calibrating */

static uint64_t lp_blk_ticks_ns(uint64_t ticks)
{
	return lp_tsc_ticks_ns(ticks, __atomic_load_n(&lp_blk_cal.mult, __ATOMIC_RELAXED));
}

/* The rate from pt0 to p, when one is due and p is far enough and both
 * brackets narrow enough; 1 when it was taken. */
static int lp_blk_rate_from(const struct lp_tsc_pt *p)
{
	uint64_t mult = lp_tsc_cal_offer(&lp_blk_cal, p, LP_BLK_CAL_Q, LP_BLK_REFINE);
	if (!mult)
		return 0;
	unsigned __int128 thr = ((unsigned __int128)lp_blk_clk.thr_ns << 32) / mult;
	__atomic_store_n(&lp_blk_clk.thr_ticks, thr > UINT64_MAX ? UINT64_MAX : (uint64_t)thr,
			 __ATOMIC_RELAXED);
	lp_tsc_cal_publish(&lp_blk_cal, p, mult);
	return 1;
}

/* Once, by the first thread past cal_at: switch to ticks, or retry
 * LP_BLK_CAL_NS later when a bracket was too wide (preempted inside it). */
static void lp_blk_calibrate(uint64_t now)
{
	static int usable = -1;
	if (__atomic_exchange_n(&lp_blk_cal_busy, 1, __ATOMIC_ACQUIRE))
		return;
	uint64_t next = UINT64_MAX;
	if (usable < 0)
		usable = lp_tsc_usable();
	if (usable) {
		struct lp_tsc_pt p;
		lp_tsc_pt_take(&p);
		if (lp_blk_rate_from(&p))
			__atomic_store_n(&lp_blk_clk.tsc, 1, __ATOMIC_RELEASE);
		else
			next = now + LP_BLK_CAL_NS;
	}
	__atomic_store_n(&lp_blk_clk.cal_at, next, __ATOMIC_RELAXED);
	__atomic_store_n(&lp_blk_cal_busy, 0, __ATOMIC_RELEASE);
}

void lp_blk_clk_after_fork_child(void)
{
	/* forked while another thread calibrated: that thread is not here to
	 * finish, and every call past cal_at would try again in vain */
	if (__atomic_load_n(&lp_blk_cal_busy, __ATOMIC_RELAXED))
		__atomic_store_n(&lp_blk_cal_busy, 0, __ATOMIC_RELAXED);
}

void lp_blk_clk_init(uint64_t thr_ns, int tsc_ok)
{
	lp_blk_clk.thr_ns = thr_ns;
#if defined(__x86_64__)
	if (thr_ns == UINT64_MAX || !tsc_ok)
		return;
	lp_tsc_pt_best(&lp_blk_cal.pt0, 2, 0); /* the narrower of two: one may be preempted */
	lp_blk_clk.cal_at = lp_blk_cal.pt0.ns + LP_BLK_CAL_NS;
#endif
}

int lp_blk_clk_span(int tsc, uint64_t t0, uint64_t t1, uint64_t *start, uint64_t *end)
{
	uint64_t thr = __atomic_load_n(&lp_blk_clk.thr_ns, __ATOMIC_RELAXED);
	if (!tsc) {
		if (t1 >= __atomic_load_n(&lp_blk_clk.cal_at, __ATOMIC_RELAXED)) {
			int saved = errno;
			lp_blk_calibrate(t1);
			errno = saved;
		}
		*start = t0;
		*end = t1;
		return t1 - t0 >= thr;
	}
	/* Read on two CPUs whose TSCs disagree (which clocksource "tsc" rules
	 * out, but the kernel may find so later): no duration to record. */
	if ((int64_t)(t1 - t0) < 0)
		return 0;
	struct lp_tsc_pt p;
	lp_tsc_pt_take(&p);
	lp_blk_rate_from(&p); /* when the run has grown LP_BLK_REFINE times */
	uint64_t since = (int64_t)(p.tsc - t1) > 0 ? p.tsc - t1 : 0;
	uint64_t dur = lp_blk_ticks_ns(t1 - t0);
	*end = p.ns - lp_blk_ticks_ns(since);
	*start = *end - dur;
	return dur >= thr;
}
