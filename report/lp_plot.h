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
	const char *name; /* file stem, e.g. "latency_over_time" */
	const char *title;
	const char *skipped; /* NULL when produced; else why (static) */
	char image[4096];    /* DIR/NAME.EXT when produced */
};

extern const char *const lp_plot_ext[]; /* "svg", "png", "pdf" */

/* Full path of gnuplot on PATH, or NULL. */
const char *lp_plot_gnuplot(void);

/* One chart: dat writes NAME.dat, gp the plot commands after the common
 * head (terminal, output NAME.EXT, title); both get arg. */
struct lp_plot_chart {
	const char *name, *title;
	void (*dat)(FILE *f, const void *arg);
	void (*gp)(FILE *f, const void *arg, const char *name);
};

/* Writes NAME.dat and NAME.gp into the existing dir and runs gnuplot there;
 * image gets DIR/NAME.EXT. 0 or -errno with err. */
int lp_plot_render_chart(const char *dir, const struct lp_plot_chart *c, const void *arg,
			 enum lp_plot_fmt fmt, char *image, size_t imagelen, char *err,
			 size_t errlen);

/* Shared by the charts of one run and of a diff. */
/* A gnuplot single-quoted string: quotes doubled, control characters and
 * invalid UTF-8 dropped (the svg terminal escapes < and & itself). */
void lp_plot_gp_str(FILE *f, const char *s);
/* CDF rows "latency_ns fraction" of n ascending samples, thinned to about
 * 2000 points, the last sample always included. */
void lp_plot_cdf_rows(FILE *f, const double *sorted, size_t n);
/* The CDF chart's axes: log-scaled x when the tail needs it. */
void lp_plot_cdf_axes(FILE *f, double min_ns, double max_ns, double p50_ns);

/* on[s] = 1 for the k stages with the largest share (all of them when
 * there are at most k), in a calloc'd array; NULL when out of memory. */
unsigned char *lp_plot_top_stages(const struct lp_breakdown *b, size_t k);

/* Requests the latency-over-time chart draws one by one: all of them up
 * to a bound, else 0 (it draws a bounded sample, said in its key). */
size_t lp_plot_lat_points(const struct lp_timeseries *ts);

/* The file stem of chart i (0 to LP_PLOT_NCHARTS - 1): its files are
 * DIR/NAME.dat, DIR/NAME.gp and DIR/NAME.EXT. */
const char *lp_plot_chart_name(int i);

/* Writes every chart with data into dir (created if missing) and runs
 * gnuplot there. res gets one entry per chart. Returns the number of
 * images made, or -errno with err (gnuplot failing is an error). */
int lp_plot_render(const char *dir, const struct lp_plot_input *in, enum lp_plot_fmt fmt,
		   struct lp_plot_result res[LP_PLOT_NCHARTS], char *err, size_t errlen);

#endif
