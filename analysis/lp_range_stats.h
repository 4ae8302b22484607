/* SPDX-License-Identifier: MIT */
/* `report --ranges`: count, total, mean and p50/p90/p99/max of the
 * durations of every NVTX range name. report/lp_report_breakdown.c writes
 * it. */
#ifndef LP_RANGE_STATS_H
#define LP_RANGE_STATS_H

#include <sqlite3.h>
#include <stddef.h>

#include "lp_ivset.h" /* struct lp_dist */

struct lp_range_stat {
	char *domain, *name;
	struct lp_dist st; /* over range durations */
};

struct lp_range_stats {
	int has_ranges;
	size_t n; /* sorted by total time, descending */
	struct lp_range_stat *v;
};

int lp_range_stats_compute(sqlite3 *db, struct lp_range_stats *out, char *err, size_t errlen);
void lp_range_stats_free(struct lp_range_stats *s);

#endif
