/* SPDX-License-Identifier: MIT */
/* Unit tests of collector/lp_tsc.h. Synthetic points: the rate between two
 * points is their ns over their ticks, refused when the points' widths are
 * too large for the quality asked or the points are out of order; ticks
 * convert back at that rate. This machine: a point's width bounds where its
 * ns lies (between the two RDTSCs), the best of several points is no wider
 * than any one, and a rate measured over 20 ms converts a 5 ms span of
 * ticks to within 1e-3 of CLOCK_MONOTONIC (skipped off x86-64); the TSC is
 * judged usable exactly when the kernel shows it invariant and keeps time
 * with it. A calibration's second rate waits until the run is `refine`
 * times longer. */
#include "lp_tsc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_check.h"

static struct lp_tsc_pt pt(uint64_t tsc, uint64_t ns, uint64_t w)
{
	struct lp_tsc_pt p = {tsc, ns, w};
	return p;
}

static void synthetic(void)
{
	/* 2 ticks per ns: ns per tick << 32 is 2^31 */
	struct lp_tsc_pt a = pt(1000000, 500000, 100), b = pt(21000000, 10500000, 100);
	uint64_t m = lp_tsc_rate(&a, &b, 50000);
	CHECK(m == (1ull << 31), "2 ticks per ns: rate 2^31 (%llu)", (unsigned long long)m);
	CHECK(lp_tsc_ticks_ns(2000000, m) == 1000000, "2,000,000 ticks are 1 ms at that rate");
	/* widths 100 + 100 over 20 M ticks: exactly 1/100,000 of the span */
	CHECK(lp_tsc_rate(&a, &b, 100000) != 0 && lp_tsc_rate(&a, &b, 100001) == 0,
	      "refused exactly when the widths exceed 1/q of the span");
	CHECK(lp_tsc_rate(&b, &a, 10) == 0, "points out of order: no rate");
	struct lp_tsc_pt c = pt(21000000, 500000, 1);
	CHECK(lp_tsc_rate(&a, &c, 10) == 0, "time that did not move: no rate");
}

/* A clock's calibration: the first rate whenever p is good enough, later
 * ones only once the run has grown `refine` times, published with its span. */
static void calibration(void)
{
	struct lp_tsc_cal c = {pt(1000000, 500000, 100), 0, 0};
	struct lp_tsc_pt near = pt(1001000, 500500, 100), p = pt(21000000, 10500000, 100);
	CHECK(lp_tsc_cal_offer(&c, &near, 50000, 16) == 0, "a point too near pt0: no rate");
	uint64_t m = lp_tsc_cal_offer(&c, &p, 50000, 16);
	CHECK(m == (1ull << 31) && c.mult == 0, "the first rate offered, nothing stored yet");
	lp_tsc_cal_publish(&c, &p, m);
	CHECK(c.mult == m && c.span == 20000000, "published: rate and its span of 20 M ticks");
	struct lp_tsc_pt early = pt(1000000 + 16 * 20000000 - 2, 160500000, 100);
	struct lp_tsc_pt due = pt(1000000 + 16 * 20000000, 160500001, 100);
	CHECK(lp_tsc_cal_offer(&c, &early, 50000, 16) == 0,
	      "no new rate before the run is 16x the last span");
	CHECK(lp_tsc_cal_offer(&c, &due, 50000, 16) != 0, "a new rate once it is");
}

/* The TSC's use against the kernel's own view of it: the flags it shows in
 * /proc/cpuinfo (set from the same CPUID bit) and the clocksource file. */
static void usable_agrees_with_kernel(void)
{
	char *line = NULL, cs[32] = {0};
	size_t cap = 0;
	int constant = 0, nonstop = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");
	while (f && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	if (f)
		fclose(f);
	free(line);
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (f && !fgets(cs, sizeof(cs), f))
		cs[0] = 0;
	if (f)
		fclose(f);
	int kernel = constant && nonstop && !strcmp(cs, "tsc\n");
	CHECK(lp_tsc_usable() == kernel,
	      "lp_tsc_usable() %d, kernel: constant_tsc %d, nonstop_tsc %d, clocksource %.*s",
	      lp_tsc_usable(), constant, nonstop, (int)strcspn(cs, "\n"), cs);
}

static void this_machine(void)
{
#if defined(__x86_64__)
	int inside = 1;
	uint64_t best_single = UINT64_MAX;
	for (int i = 0; i < 1000; i++) {
		uint64_t before = lp_now();
		struct lp_tsc_pt p;
		lp_tsc_pt_take(&p);
		uint64_t after = lp_now();
		inside &= p.ns >= before && p.ns <= after && p.w < (1ull << 40);
		if (p.w < best_single)
			best_single = p.w;
	}
	CHECK(inside, "1,000 points: each ns between the program's own reads around it");
	struct lp_tsc_pt best;
	lp_tsc_pt_best(&best, 8, 0);
	CHECK(best.w < 100000, "best of 8 points: %llu ticks wide (narrowest single seen %llu)",
	      (unsigned long long)best.w, (unsigned long long)best_single);

	struct lp_tsc_pt a, b;
	lp_tsc_pt_best(&a, 8, 0);
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
	lp_tsc_pt_best(&b, 8, 0);
	uint64_t m = lp_tsc_rate(&a, &b, 1000);
	if (!m) {
		printf("skip: no rate to 1e-3 over 20 ms (points %llu and %llu ticks wide)\n",
		       (unsigned long long)a.w, (unsigned long long)b.w);
		return;
	}
	struct lp_tsc_pt c, d;
	lp_tsc_pt_best(&c, 8, 0);
	ts.tv_nsec = 5000000;
	nanosleep(&ts, NULL);
	lp_tsc_pt_best(&d, 8, 0);
	double conv = (double)lp_tsc_ticks_ns(d.tsc - c.tsc, m), real = (double)(d.ns - c.ns);
	double slack = (double)lp_tsc_ticks_ns(c.w + d.w, m) / 2 + 1e-3 * real;
	CHECK(conv > real - slack && conv < real + slack,
	      "5 ms of ticks at the measured rate: %.0f ns, CLOCK_MONOTONIC %.0f ns (within %.0f)",
	      conv, real, slack);
#else
	printf("skip: not x86-64\n");
#endif
}

int main(void)
{
	synthetic();
	calibration();
	usable_agrees_with_kernel();
	this_machine();
	return lp_check_done();
}
