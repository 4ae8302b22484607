/* SPDX-License-Identifier: MIT */
/* latprof import: turn the logs a killed `latprof run` left into a database. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "lp_cli.h"
#include "lp_import.h"

static int lp_import_cmd(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"force", no_argument, NULL, 'f'},
	    {0},
	};
	const char *out = NULL;
	struct lp_import_opts io = {0};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:f", longopts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'f')
			io.force = 1;
		else
			return lp_cli_usage_error("import", "unknown or incomplete option '%s'",
						  argv[optind - 1]);
	}
	if (optind != argc - 1)
		return lp_cli_usage_error("import", "give exactly one log directory");
	if (!out)
		return lp_cli_usage_error("import", "-o FILE.db is required");
	char err[1024];
	struct lp_import_stats st;
	int rc = lp_import_dir(argv[optind], out, &io, &st, err, sizeof(err));
	if (rc)
		return lp_cli_error("%s", err);
	fprintf(stderr,
		"latprof: imported %d process log%s: %lld threads, %lld lock waits (%lld records "
		"dropped while recording)\n",
		st.processes, st.processes == 1 ? "" : "s", st.threads, st.lock_waits,
		st.dropped_records);
	if (st.dropped_strings)
		fprintf(stderr, "latprof: %lld names or stacks lost while recording\n",
			st.dropped_strings);
	if (st.damaged_chunks)
		fprintf(stderr,
			"latprof: %lld damaged chunk%s skipped: their records are not in the "
			"database\n",
			st.damaged_chunks, st.damaged_chunks == 1 ? "" : "s");
	fprintf(stderr, "latprof: wrote %s\n", out);
	return LP_EXIT_OK;
}

const struct lp_cmd lp_cmd_import = {
    .name = "import",
    .run = lp_import_cmd,
    .summary = "import the event logs of a run into a database",
    .usage = "usage: latprof import DIR -o FILE.db [--force]\n\n"
	     "DIR is the log directory a 'latprof run' left behind when it was killed or\n"
	     "its import failed. Damaged or foreign logs are refused with exit status 2.\n",
};
