/* SPDX-License-Identifier: MIT */
/* latprof plot FILE.db -o DIR [--format svg|png|pdf]: gnuplot charts (report/lp_plot.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lp_breakdown.h"
#include "lp_cli.h"
#include "lp_db.h"
#include "lp_plot.h"
#include "lp_timeseries.h"

/* Every file a chart may write into dir, under the rule of every output
 * (lp_cli_out_check); a dir that does not exist yet holds none. */
static int plot_out_check(const char *dir, enum lp_plot_fmt fmt, int force, const char *in)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return lp_cli_error("%s exists and is not a directory; plot -o takes a directory",
				    dir);
	const char *ext[] = {"dat", "gp", lp_plot_ext[fmt]};
	for (int i = 0; i < LP_PLOT_NCHARTS; i++)
		for (int k = 0; k < 3; k++) {
			char *path = xasprintf("%s/%s.%s", dir, lp_plot_chart_name(i), ext[k]);
			int rc = lp_cli_out_check(path, force, 0, &in, 1);
			free(path);
			if (rc)
				return rc;
		}
	return 0;
}

static int plot_cmd(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'F'},
	    {"force", no_argument, NULL, 'f'},
	    {0},
	};
	const char *dir = NULL;
	int force = 0;
	enum lp_plot_fmt fmt = LP_PLOT_SVG;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:f", longopts, NULL)) != -1) {
		if (c == 'o') {
			dir = optarg;
		} else if (c == 'f') {
			force = 1;
		} else if (c == 'F') {
			int i;
			for (i = 0; i < 3 && strcmp(optarg, lp_plot_ext[i]); i++)
				;
			if (i == 3)
				return lp_cli_usage_error(
				    "plot", "--format is svg, png or pdf, not '%s'", optarg);
			fmt = (enum lp_plot_fmt)i;
		} else {
			return lp_cli_bad_option("plot", argv[optind - 1], longopts);
		}
	}
	if (optind != argc - 1)
		return lp_cli_usage_error("plot", "give exactly one database file");
	if (!dir)
		return lp_cli_usage_error("plot", "give the output directory with -o DIR");
	if (!lp_plot_gnuplot())
		return lp_cli_error("plot needs gnuplot on PATH: install the gnuplot-nox package "
				    "(apt-get install gnuplot-nox)");

	if (plot_out_check(dir, fmt, force, argv[optind]))
		return LP_EXIT_USAGE;
	char err[1024];
	sqlite3 *db;
	if (lp_db_open_ro(argv[optind], &db, err, sizeof(err)))
		return lp_cli_error("%s", err);
	struct lp_breakdown bd = {0};
	struct lp_timeseries ts = {0};
	struct lp_rset ranges = {0};
	struct lp_breakdown_opts bo = {.keep_ranges = &ranges};
	int rc = lp_breakdown_compute(db, &bo, &bd, err, sizeof(err));
	if (!rc)
		rc = lp_timeseries_compute(db, &bd, &ranges, &ts, err, sizeof(err));
	lp_rset_free(&ranges);
	if (!rc)
		rc = lp_db_fault(db, err, sizeof(err));
	sqlite3_close(db);
	struct lp_plot_result res[LP_PLOT_NCHARTS];
	struct lp_plot_input in = {&bd, &ts};
	if (!rc)
		rc = lp_plot_render(dir, &in, fmt, res, err, sizeof(err));
	lp_timeseries_free(&ts);
	lp_breakdown_free(&bd);
	if (rc < 0)
		return lp_cli_error("%s: %s", argv[optind], err);
	for (int i = 0; i < LP_PLOT_NCHARTS; i++) {
		if (res[i].skipped)
			printf("skipped %s: %s\n", res[i].name, res[i].skipped);
		else
			printf("wrote %s (%s.dat, %s.gp)\n", res[i].image, res[i].name,
			       res[i].name);
	}
	return LP_EXIT_OK;
}

const struct lp_cmd lp_cmd_plot = {
    .name = "plot",
    .run = plot_cmd,
    .summary = "gnuplot charts of a recorded run",
    .usage = "usage: latprof plot FILE.db -o DIR [--format svg|png|pdf] [--force]\n\n"
	     "Writes, per chart, DIR/NAME.dat (the numbers), DIR/NAME.gp (an editable\n"
	     "gnuplot script; `cd DIR && gnuplot NAME.gp` remakes the image) and the image:\n"
	     "  latency_over_time   request latency over the run with p50 and p99 lines\n"
	     "  latency_cdf         request latency CDF (log x when the tail needs it)\n"
	     "  stage_percentiles   stacked per-stage p50, p90 and p99\n"
	     "  utilization         CPU thread and GPU stream busy share per time bin\n"
	     "  lock_wait           lock wait over the run\n"
	     "A chart without data (no NVTX requests, no lock waits) is skipped and the\n"
	     "reason printed. Needs gnuplot (package gnuplot-nox); without it exits 2.\n"
	     "A chart file that exists already in DIR is replaced only with -f/--force\n"
	     "(never FILE.db itself).\n",
};
