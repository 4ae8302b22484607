/* SPDX-License-Identifier: MIT */
/* report --ranges: statistics of every NVTX range name (analysis/lp_range_stats.h). */
#include <stdlib.h>

#include "lp_range_stats.h"
#include "lp_report_breakdown.h"
#include "lp_view.h"

static void ranges_free(void *res)
{
	lp_range_stats_free(res);
	free(res);
}

static void *ranges_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct lp_range_stats *s = calloc(1, sizeof(*s));
	(void)o;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (lp_range_stats_compute(db, s, err, errlen)) {
		free(s);
		return NULL;
	}
	return s;
}

LP_VIEW_WRITER(ranges_text, lp_range_stats_write_text)
LP_VIEW_WRITER(ranges_json, lp_range_stats_write_json)
LP_VIEW_WRITER(ranges_csv, lp_range_stats_write_csv)

const struct lp_view lp_view_ranges = {
    .flag = "ranges",
    .help = "count, total, mean, p50/p90/p99/max of every NVTX range name",
    .schema = "ranges",
    .schema_version = 1,
    .analyze = ranges_analyze,
    .free = ranges_free,
    .write = {ranges_text, ranges_json, ranges_csv},
};
