/* SPDX-License-Identifier: MIT */
/* report --breakdown: per-request latency by stage (analysis/lp_breakdown.h). */
#include <stdlib.h>

#include "lp_breakdown.h"
#include "lp_report_breakdown.h"
#include "lp_view.h"

static void bd_free(void *res)
{
	lp_breakdown_free(res);
	free(res);
}

static void *bd_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct lp_breakdown *b = calloc(1, sizeof(*b));
	struct lp_breakdown_opts bo = {.request = o->request, .stage_depth = o->stage_depth};
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (lp_breakdown_compute(db, &bo, b, err, errlen)) {
		free(b);
		return NULL;
	}
	return b;
}

LP_VIEW_WRITER(bd_text, lp_breakdown_write_text)
LP_VIEW_WRITER(bd_json, lp_breakdown_write_json)
LP_VIEW_WRITER(bd_csv, lp_breakdown_write_csv)

const struct lp_view lp_view_breakdown = {
    .flag = "breakdown",
    .help = "per-request latency by stage from NVTX ranges: count, mean,\n"
	    "p50/p90/p99/max, share; time split into GIL / lock / cond wait,\n"
	    "I/O, on-CPU, preempted; tail attribution (p99 vs median) and\n"
	    "the slowest requests",
    .options_help = "--request NAME    the request range (NAME or DOMAIN::NAME); default:\n"
		    "                  the most frequent outermost range\n"
		    "--stage-depth N   stages are ranges N levels below it (default 1)",
    .takes = LP_VIEW_REQUEST | LP_VIEW_STAGE_DEPTH,
    .schema = "breakdown",
    .schema_version = 1,
    .analyze = bd_analyze,
    .free = bd_free,
    .write = {bd_text, bd_json, bd_csv},
};
