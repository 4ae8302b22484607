/* SPDX-License-Identifier: MIT */
/*
 * Chrome Trace Event Format (JSON object form) of a lp_trace, for Perfetto
 * UI and chrome://tracing. Timestamps are µs since the trace base with
 * three decimals (ns exact, as Kineto writes them). Slices that do not nest
 * on their thread (NVTX start/end ranges ending elsewhere or overlapping)
 * become async b/e pairs so that every X slice nests per (pid, tid).
 */
#ifndef LP_CHROME_H
#define LP_CHROME_H

#include <stdio.h>

#include "lp_timeseries.h"

struct lp_chrome_stats {
	long long slices, async_slices, flows, counters, instants;
};

/* 0, or -ENOMEM / -EIO (write error). */
int lp_chrome_write(FILE *f, const struct lp_trace *t, struct lp_chrome_stats *st);

#endif
