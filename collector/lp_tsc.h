/* SPDX-License-Identifier: MIT */
/*
 * TSC ticks to CLOCK_MONOTONIC ns, the arithmetic shared by the two clocks
 * that read the TSC instead of clock_gettime on their hot path: the
 * blocking-call hooks' (preload/lp_blk_clock.c) and the NVTX stamps'
 * (collector/nvtx/lp_nvtx.c).
 *
 * A point is an lp_now() read between two RDTSCs and placed at their
 * midpoint; w, their distance, bounds its error: the ns read belongs to
 * some tick within w/2 of the midpoint. A thread preempted between the
 * reads makes a wide point, which is why points are judged by w and not
 * trusted blindly. A rate is taken from two points only when their widths
 * add up to at most 1/q of the ticks between them: the rate then errs by at
 * most 1/q (plus NTP's slewing of CLOCK_MONOTONIC meanwhile).
 *
 * Both clocks measure their rate the same way (struct lp_tsc_cal): from one
 * point taken at start-up to a later one, first once the run is long
 * enough for quality q, then again each time the run has grown `refine`
 * times, so the rate only gets better. When to offer points, and what each
 * derives from a new rate, is each clock's own.
 */
#ifndef LP_TSC_H
#define LP_TSC_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "lp_core.h"
#include "lp_raw.h"

#if defined(__x86_64__)
#include <cpuid.h>
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

/* Whether the TSC may stand in for CLOCK_MONOTONIC: it is invariant
 * (constant rate, running in every C-state: CPUID 0x80000007 EDX bit 8,
 * from which the kernel sets both constant_tsc and nonstop_tsc) and the
 * kernel keeps time with it (clocksource "tsc": it found the CPUs' TSCs
 * synchronized, and would have switched away had it found otherwise since).
 * Raw system calls, so no interposer hook times latprof's own read; errno
 * kept. Never off x86-64. */
static inline int lp_tsc_usable(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return 0;
	char buf[16] = {0};
	long n = -1;
	int saved = errno;
	long fd = LP_RAW(SYS_openat, AT_FDCWD,
			 "/sys/devices/system/clocksource/clocksource0/current_clocksource",
			 O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd >= 0) {
		n = LP_RAW(SYS_read, fd, buf, sizeof(buf) - 1, 0, 0, 0);
		LP_RAW(SYS_close, fd, 0, 0, 0, 0, 0);
	}
	errno = saved;
	return n > 0 && !strncmp(buf, "tsc\n", 4);
#else
	return 0;
#endif
}

/* A clock's rate, measured from its fixed start point. mult and span are
 * written by whichever thread measures and read by all. */
struct lp_tsc_cal {
	struct lp_tsc_pt pt0; /* taken at start-up, fixed */
	uint64_t mult;	      /* ns per tick << 32; 0 until measured */
	uint64_t span;	      /* ticks from pt0 the rate was measured over */
};

/* The rate from pt0 to p when one is due (none yet, or the run has grown
 * `refine` times since the last) and p is far and narrow enough for quality
 * q; else 0. Stores nothing: the caller derives what its readers need from
 * the rate, then publishes it with lp_tsc_cal_publish. */
static inline uint64_t lp_tsc_cal_offer(const struct lp_tsc_cal *c, const struct lp_tsc_pt *p,
					unsigned q, unsigned refine)
{
	uint64_t span = __atomic_load_n(&c->span, __ATOMIC_RELAXED);
	if ((unsigned __int128)(p->tsc - c->pt0.tsc) < (unsigned __int128)refine * span)
		return 0;
	return lp_tsc_rate(&c->pt0, p, q);
}

/* Publishes the rate offered for p: its span, then (release) the rate. */
static inline void lp_tsc_cal_publish(struct lp_tsc_cal *c, const struct lp_tsc_pt *p,
				      uint64_t mult)
{
	__atomic_store_n(&c->span, p->tsc - c->pt0.tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&c->mult, mult, __ATOMIC_RELEASE);
}

#endif
