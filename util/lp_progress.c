/* SPDX-License-Identifier: MIT */
/* Progress on a terminal (lp_progress.h). */
#define _GNU_SOURCE
#include "lp_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int lp_progress_active;

static struct {
	int enabled;
	int64_t t0;	  /* command start */
	int64_t after_ns; /* quiet until the command has run this long */
	int64_t step_t0;  /* this step's start */
	int64_t shown_at; /* last line written, 0 none */
	uint64_t done, total, since_check;
	char what[64], unit[16];
} lp_pg;

#define LP_PG_EVERY_NS 200000000LL /* at most 5 lines a second */
#define LP_PG_CHECK_EVERY 4096	   /* units between two clock reads */

static int64_t pg_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void lp_progress_init(int quiet)
{
	memset(&lp_pg, 0, sizeof(lp_pg));
	lp_pg.enabled = !quiet && isatty(STDERR_FILENO);
	lp_pg.t0 = pg_now();
	/* the first second by default; tests shorten it to see short work */
	const char *d = getenv("LATPROF_PROGRESS_DELAY_MS");
	char *end;
	long ms = d ? strtol(d, &end, 10) : -1;
	lp_pg.after_ns = d && *d && !*end && ms >= 0 ? ms * 1000000LL : 1000000000LL;
	lp_progress_active = 0;
}

int lp_progress_enabled(void)
{
	return lp_pg.enabled;
}

void lp_progress_begin(const char *what, uint64_t total, const char *unit)
{
	if (!lp_pg.enabled)
		return;
	lp_progress_end();
	snprintf(lp_pg.what, sizeof(lp_pg.what), "%s", what);
	snprintf(lp_pg.unit, sizeof(lp_pg.unit), "%s", unit);
	lp_pg.total = total;
	lp_pg.done = lp_pg.since_check = 0;
	lp_pg.step_t0 = pg_now();
	lp_progress_active = 1;
}

/* "12.3 M" for counts, "45.6 MB" for bytes. */
static void pg_amount(char *buf, size_t len, double v, const char *unit)
{
	int bytes = !strcmp(unit, "bytes");
	const char *sfx = bytes ? "B" : "";
	if (v >= 1e9)
		snprintf(buf, len, "%.1f G%s", v / 1e9, sfx);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1f M%s", v / 1e6, sfx);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1f k%s", v / 1e3, sfx);
	else
		snprintf(buf, len, "%.0f%s%s", v, bytes ? " " : "", sfx);
}

static void pg_show(int64_t now)
{
	char done[32], total[32], rate[32], left[32] = "";
	double secs = (double)(now - lp_pg.step_t0) / 1e9;
	double r = secs > 0 ? (double)lp_pg.done / secs : 0;
	uint64_t d = lp_pg.done < lp_pg.total ? lp_pg.done : lp_pg.total;
	pg_amount(done, sizeof(done), (double)d, lp_pg.unit);
	pg_amount(total, sizeof(total), (double)lp_pg.total, lp_pg.unit);
	pg_amount(rate, sizeof(rate), r, lp_pg.unit);
	if (r > 0)
		snprintf(left, sizeof(left), ", %.0f s left", (double)(lp_pg.total - d) / r);
	fprintf(stderr, "\rlatprof: %s: %s of %s%s (%.0f%%), %s%s/s%s\033[K", lp_pg.what, done,
		total, strcmp(lp_pg.unit, "bytes") ? " rows" : "",
		lp_pg.total ? 100.0 * (double)d / (double)lp_pg.total : 0.0, rate,
		strcmp(lp_pg.unit, "bytes") ? " rows" : "", left);
	fflush(stderr);
	lp_pg.shown_at = now;
}

void lp_progress_slow_add(uint64_t n)
{
	lp_pg.done += n;
	lp_pg.since_check += n;
	if (lp_pg.since_check < LP_PG_CHECK_EVERY)
		return;
	lp_pg.since_check = 0;
	int64_t now = pg_now();
	if (now - lp_pg.t0 < lp_pg.after_ns ||
	    (lp_pg.shown_at && now - lp_pg.shown_at < LP_PG_EVERY_NS))
		return;
	pg_show(now);
}

void lp_progress_end(void)
{
	lp_progress_active = 0;
	if (lp_pg.shown_at) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	lp_pg.shown_at = 0;
}
