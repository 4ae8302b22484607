/* SPDX-License-Identifier: MIT */
/*
 * Charts as gnuplot input: per chart a data file (NAME.dat), an editable
 * script (NAME.gp) that reads it from its own directory, and the image
 * gnuplot makes from it. The data are the breakdown's and the time
 * series' numbers (ns, exact); scripts do the unit conversion.
 */
#ifndef LP_PLOT_H
#define LP_PLOT_H

#include <stdio.h>

#include "lp_breakdown.h"
#include "lp_timeseries.h"

enum lp_plot_fmt { LP_PLOT_SVG, LP_PLOT_PNG, LP_PLOT_PDF };

struct lp_plot_input {
	const struct lp_breakdown *bd;
	const struct lp_timeseries *ts;
};

#define LP_PLOT_NCHARTS 5

struct lp_plot_result {
	const char *name;  /* file stem, e.g. "latency_over_time" */
	const char *title;
	const char *skipped; /* NULL when produced; else why (static) */
	char image[4096];  /* DIR/NAME.EXT when produced */
};

extern const char *const lp_plot_ext[]; /* "svg", "png", "pdf" */

/* Full path of gnuplot on PATH, or NULL. */
const char *lp_plot_gnuplot(void);

/* Writes every chart with data into dir (created if missing) and runs
 * gnuplot there. res gets one entry per chart. Returns the number of
 * images made, or -errno with err (gnuplot failing is an error). */
int lp_plot_render(const char *dir, const struct lp_plot_input *in, enum lp_plot_fmt fmt,
		   struct lp_plot_result res[LP_PLOT_NCHARTS], char *err, size_t errlen);

#endif
