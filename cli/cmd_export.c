/* SPDX-License-Identifier: MIT */
/* latprof export FILE.db --chrome OUT.json: the run as a Chrome/Perfetto trace. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "lp_chrome.h"
#include "lp_cli.h"
#include "lp_db.h"
#include "lp_timeseries.h"

static int export_cmd(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"chrome", required_argument, NULL, 'c'},
	    {"force", no_argument, NULL, 'f'},
	    {0},
	};
	const char *out = NULL;
	int c, force = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f", longopts, NULL)) != -1) {
		if (c == 'c')
			out = optarg;
		else if (c == 'f')
			force = 1;
		else
			return lp_cli_bad_option("export", argv[optind - 1], longopts);
	}
	if (optind != argc - 1)
		return lp_cli_usage_error("export", "give exactly one database file");
	if (!out)
		return lp_cli_usage_error("export", "give the output with --chrome OUT.json");
	const char *in = argv[optind];
	if (strcmp(out, "-") && lp_cli_out_check(out, force, 0, &in, 1))
		return LP_EXIT_USAGE;
	char err[1024];
	sqlite3 *db;
	if (lp_db_open_ro(argv[optind], &db, err, sizeof(err)))
		return lp_cli_error("%s", err);
	struct lp_trace t;
	int rc = lp_trace_load(db, &t, err, sizeof(err));
	if (!rc)
		rc = lp_db_fault(db, err, sizeof(err));
	sqlite3_close(db);
	if (rc) {
		lp_trace_free(&t);
		return lp_cli_error("%s: %s", argv[optind], err);
	}
	FILE *f = strcmp(out, "-") ? lp_cli_fopen_out(out, force) : stdout;
	if (!f) {
		lp_trace_free(&t);
		return LP_EXIT_USAGE;
	}
	struct lp_chrome_stats st;
	rc = lp_chrome_write(f, &t, &st);
	lp_trace_free(&t);
	if (f != stdout)
		rc = fclose(f) ? -EIO : rc;
	if (rc)
		return lp_cli_error("cannot write %s: %s", out, strerror(-rc));
	fprintf(stderr,
		"latprof: wrote %s: %lld slices (%lld as async spans), %lld flows, "
		"%lld counter samples, %lld marks\n",
		out, st.slices + st.async_slices, st.async_slices, st.flows, st.counters,
		st.instants);
	return LP_EXIT_OK;
}

const struct lp_cmd lp_cmd_export = {
    .name = "export",
    .run = export_cmd,
    .summary = "export a run as a Chrome/Perfetto trace",
    .usage = "usage: latprof export FILE.db --chrome OUT.json [--force]\n\n"
	     "Writes the Chrome Trace Event Format (opens in ui.perfetto.dev and\n"
	     "chrome://tracing): NVTX ranges, lock and condition waits and CUDA API calls\n"
	     "as slices on their threads, kernels, copies and memsets on one lane per GPU\n"
	     "stream, arrows from each CUDA API call to the GPU work it launched, CPU\n"
	     "counters as counter tracks (change since the previous sample) and NVTX marks\n"
	     "as instants. Times are µs since the first process started, ns exact.\n"
	     "Ranges that end on another thread or overlap without nesting are async spans.\n"
	     "OUT.json '-' is standard output; an existing OUT.json is overwritten only\n"
	     "with -f/--force, and never when it is FILE.db itself.\n",
};
