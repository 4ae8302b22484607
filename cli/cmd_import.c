/* SPDX-License-Identifier: MIT */
/*
 * latprof import: a log directory a killed `latprof run` left, an Nsight
 * Systems SQLite export, or a PyTorch profiler (Kineto) trace -> a database.
 * The input is recognized by its content, not its name.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_progress.h"
#include "lp_import.h"
#include "lp_captures.h"

/* A log directory (NULL, *is_dir set), the capture format whose probe
 * takes the file's first bytes, or NULL with err set. */
static const struct lp_capture_format *import_detect(const char *path, int *is_dir, char *err,
						     size_t errlen)
{
	struct stat st;
	unsigned char head[LP_CAPTURE_HEAD] = {0};
	*is_dir = 0;
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		*is_dir = 1;
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, head, sizeof(head)) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	for (int i = 0; lp_capture_formats[i]; i++)
		if (lp_capture_formats[i]->probe(head, (size_t)n))
			return lp_capture_formats[i];
	int len = snprintf(err, errlen, "%s is neither a latprof log directory", path);
	for (int i = 0; lp_capture_formats[i] && len >= 0 && (size_t)len < errlen; i++)
		len += snprintf(err + len, errlen - (size_t)len, "%s%s",
				lp_capture_formats[i + 1] ? ", " : " nor ",
				lp_capture_formats[i]->noun);
	return NULL;
}

static int import_logs(const char *dir, const char *out, const struct lp_import_opts *io)
{
	char err[1024];
	struct lp_import_stats st;
	if (lp_import_dir(dir, out, io, &st, err, sizeof(err)))
		return lp_cli_error("%s", err);
	fprintf(stderr,
		"latprof: imported %d process log%s: %lld threads, %lld lock waits (%lld records "
		"dropped while recording)\n",
		st.processes, st.processes == 1 ? "" : "s", st.threads, st.lock_waits,
		st.dropped_records);
	if (st.dropped_strings)
		fprintf(stderr, "latprof: %lld names or stacks lost while recording\n",
			st.dropped_strings);
	if (st.dropped_holds)
		fprintf(stderr, "latprof: %lld lock holds not timed while recording\n",
			st.dropped_holds);
	if (st.damaged_chunks)
		fprintf(stderr,
			"latprof: %lld damaged chunk%s skipped: their records are not in the "
			"database\n",
			st.damaged_chunks, st.damaged_chunks == 1 ? "" : "s");
	return LP_EXIT_OK;
}

static int import_cmd(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"force", no_argument, NULL, 'f'},
	    {"quiet", no_argument, NULL, 'q'},
	    {0},
	};
	const char *out = NULL;
	struct lp_import_opts io = {0};
	int c, quiet = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:fq", longopts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'f')
			io.force = 1;
		else if (c == 'q')
			quiet = 1;
		else
			return lp_cli_bad_option("import", argv[optind - 1], longopts);
	}
	if (optind != argc - 1)
		return lp_cli_usage_error("import", "give exactly one log directory or capture");
	if (!out)
		return lp_cli_usage_error("import", "-o FILE.db is required");
	lp_progress_init(quiet);
	char err[1024];
	const char *in = argv[optind];
	int rc;
	if (lp_cli_out_check(out, io.force, 1, &in, 1))
		return LP_EXIT_USAGE;
	int is_dir;
	const struct lp_capture_format *fmt = import_detect(in, &is_dir, err, sizeof(err));
	if (is_dir) {
		rc = import_logs(in, out, &io);
		if (rc != LP_EXIT_OK)
			return rc;
	} else if (!fmt) {
		return lp_cli_error("%s", err);
	} else {
		if (fmt->import(in, out, &io, err, sizeof(err)))
			return lp_cli_error("%s", err);
		fprintf(stderr, "latprof: imported %s %s\n", fmt->what, in);
	}
	fprintf(stderr, "latprof: wrote %s\n", out);
	return LP_EXIT_OK;
}

const struct lp_cmd lp_cmd_import = {
    .name = "import",
    .run = import_cmd,
    .summary = "import a run's event logs, an nsys export or a Kineto trace",
    .usage = "usage: latprof import INPUT -o FILE.db [--force] [--quiet]\n\n"
	     "INPUT is recognized by its content:\n"
	     "  a log directory    the event logs a 'latprof run' left behind when it was\n"
	     "                     killed or its import failed\n"
	     "  an nsys export     nsys export --type sqlite REPORT.nsys-rep\n"
	     "  a Kineto trace     a PyTorch profiler trace, .json or .json.gz\n"
	     "                     (*.pt.trace.json[.gz])\n"
	     "The database works with every report, plot, export, check and diff.\n"
	     "Damaged or foreign input is refused with one line and exit status 2;\n"
	     "nothing is written then. A log directory's import shows its progress on\n"
	     "stderr when that is a terminal and the work runs over a second; --quiet\n"
	     "(-q) hides it.\n\n"
	     "Symbols are cached per module file (build-id) in $XDG_CACHE_HOME/latprof\n"
	     "(default ~/.cache/latprof), so a later import of the same binaries does not\n"
	     "symbolize them again: LATPROF_SYMCACHE=off disables it, LATPROF_SYMCACHE_MB\n"
	     "bounds it (default 128; least recently used entries go first).\n",
};
