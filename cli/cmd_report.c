/* SPDX-License-Identifier: MIT */
/*
 * latprof report FILE.db [--VIEW] [--top N] [--format text|json|csv] [-o OUT]
 *
 * The views, their options, help and writers come from the table in
 * report/lp_views.c (one line per view, one report/lp_view_*.c file each);
 * this file parses the options, opens the database and the output and
 * reports errors, the same for every view. Without a view flag the default
 * view prints the top findings, the run summary, the breakdown and the top
 * locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lp_cli.h"
#include "lp_progress.h"
#include "lp_db.h"
#include "lp_findings.h"
#include "lp_report_summary.h"
#include "lp_util.h"
#include "lp_view.h"

struct report_opts {
	struct lp_view_opts v;
	enum lp_view_fmt fmt;
	struct lp_findings_override over[64]; /* --rule-threshold ID=VALUE */
};

/* ---- command ---------------------------------------------------------- */

enum {
	LP_OPT_TOP = 256,
	LP_OPT_FORMAT,
	LP_OPT_REQUEST,
	LP_OPT_STAGE_DEPTH,
	LP_OPT_RULE_THR,
	LP_OPT_NATIVE,
	LP_OPT_VIEW0
};

#define LP_MAX_VIEWS 32

static int parse_top(const char *s, int *top)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1000000)
		return lp_cli_usage_error("report",
					  "--top wants a count from 1 to 1000000, not '%s'", s);
	*top = (int)v;
	return 0;
}

static int parse_fmt(const char *s, enum lp_view_fmt *fmt)
{
	for (int i = 0; i < LP_VIEW_NFMT; i++)
		if (!strcmp(s, lp_view_fmt_names[i])) {
			*fmt = (enum lp_view_fmt)i;
			return 0;
		}
	return lp_cli_usage_error("report", "--format is text, json or csv, not '%s'", s);
}

static int report_write(const struct lp_view *v, const struct report_opts *o, void *res,
			const char *out, int force, const char *origin)
{
	FILE *f = stdout;
	if (out && !(f = lp_cli_fopen_out(out, force)))
		return LP_EXIT_USAGE;
	/* An imported capture says so first: its numbers are another profiler's;
	 * a view with its own output file (--html) says it its own way. */
	if (origin && o->fmt == LP_VIEW_TEXT && !v->arg)
		fprintf(f, "%s\n\n", origin);
	v->write[o->fmt](f, res);
	int bad = ferror(f);
	if (f != stdout)
		bad |= fclose(f) != 0;
	else
		bad |= fflush(f) != 0;
	if (bad)
		return lp_cli_error("cannot write %s: %s", out ? out : "standard output",
				    strerror(errno));
	return LP_EXIT_OK;
}

/* The options the chosen view does not take: one usage error. */
static int check_view_opts(const struct lp_view *view, const struct report_opts *o)
{
	if ((o->v.request && !(view->takes & LP_VIEW_REQUEST)) ||
	    (o->v.stage_depth && !(view->takes & LP_VIEW_STAGE_DEPTH)))
		return lp_cli_usage_error("report",
					  "--request and --stage-depth go with --breakdown");
	if (o->v.nover && !(view->takes & LP_VIEW_RULE_THR))
		return lp_cli_usage_error("report", "--rule-threshold goes with --bottlenecks");
	if (o->v.native && !(view->takes & LP_VIEW_NATIVE))
		return lp_cli_usage_error("report", "--native goes with --locks");
	if (!view->write[o->fmt])
		return lp_cli_usage_error("report", "--%s has no %s output",
					  view->flag ? view->flag : "(summary)",
					  lp_view_fmt_names[o->fmt]);
	return 0;
}

static int report_run(const char *path, const struct lp_view *view, struct report_opts *o,
		      const char *out, int force)
{
	char err[1024];
	sqlite3 *db;
	if (lp_db_open_ro(path, &db, err, sizeof(err)))
		return lp_cli_error("%s", err);
	/* An imported Kineto trace names its requests (ProfilerStep) */
	char req[256], obuf[1024];
	if (!o->v.request && (view->takes & LP_VIEW_REQUEST))
		o->v.request = lp_db_meta(db, "import.default_request", req, sizeof(req));
	const char *origin = lp_report_origin(db, obuf, sizeof(obuf));
	void *res = view->analyze(db, &o->v, err, sizeof(err));
	/* a lookup that answered its default for a failed read: no report */
	if (res && lp_db_fault(db, err, sizeof(err))) {
		view->free(res);
		res = NULL;
	}
	sqlite3_close(db);
	if (!res)
		return lp_cli_error("%s: %s", path, err);
	int rc = report_write(view, o, res, out, force, origin);
	view->free(res);
	return rc;
}

static int report_cmd(int argc, char **argv)
{
	struct option longopts[LP_MAX_VIEWS + 10] = {
	    {"top", required_argument, NULL, LP_OPT_TOP},
	    {"format", required_argument, NULL, LP_OPT_FORMAT},
	    {"output", required_argument, NULL, 'o'},
	    {"request", required_argument, NULL, LP_OPT_REQUEST},
	    {"stage-depth", required_argument, NULL, LP_OPT_STAGE_DEPTH},
	    {"rule-threshold", required_argument, NULL, LP_OPT_RULE_THR},
	    {"force", no_argument, NULL, 'f'},
	    {"native", no_argument, NULL, LP_OPT_NATIVE},
	    {"quiet", no_argument, NULL, 'q'},
	};
	size_t nopt = 9, nviews = 0;
	for (; lp_views[nviews] && nviews < LP_MAX_VIEWS; nviews++)
		if (lp_views[nviews]->flag)
			longopts[nopt++] =
			    (struct option){lp_views[nviews]->flag,
					    lp_views[nviews]->arg ? required_argument : no_argument,
					    NULL, LP_OPT_VIEW0 + (int)nviews};
	struct report_opts o = {.v.top = 10, .fmt = LP_VIEW_TEXT};
	o.v.over = o.over;
	const struct lp_view *view = NULL;
	const char *out = NULL;
	int c, force = 0, quiet = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:fq", longopts, NULL)) != -1) {
		if (c == LP_OPT_TOP) {
			if (parse_top(optarg, &o.v.top))
				return LP_EXIT_USAGE;
		} else if (c == LP_OPT_FORMAT) {
			if (parse_fmt(optarg, &o.fmt))
				return LP_EXIT_USAGE;
		} else if (c == 'o') {
			out = optarg;
		} else if (c == 'f') {
			force = 1;
		} else if (c == 'q') {
			quiet = 1;
		} else if (c == LP_OPT_NATIVE) {
			o.v.native = 1;
		} else if (c == LP_OPT_REQUEST) {
			o.v.request = optarg;
		} else if (c == LP_OPT_STAGE_DEPTH) {
			char *end;
			long d = strtol(optarg, &end, 10);
			if (end == optarg || *end || d < 1 || d > 1000)
				return lp_cli_usage_error(
				    "report", "--stage-depth wants 1 to 1000, not '%s'", optarg);
			o.v.stage_depth = (int)d;
		} else if (c == LP_OPT_RULE_THR) {
			char e[256];
			if (o.v.nover == sizeof(o.over) / sizeof(o.over[0]))
				return lp_cli_usage_error("report",
							  "too many --rule-threshold options");
			if (lp_findings_parse_threshold(optarg, &o.over[o.v.nover++], e, sizeof(e)))
				return lp_cli_usage_error("report", "%s", e);
		} else if (c >= LP_OPT_VIEW0 && c < LP_OPT_VIEW0 + (int)nviews) {
			if (view && view != lp_views[c - LP_OPT_VIEW0])
				return lp_cli_usage_error("report", "choose one view per report");
			view = lp_views[c - LP_OPT_VIEW0];
			if (view->arg) /* the view's own output file */
				out = optarg;
		} else {
			return lp_cli_bad_option("report", argv[optind - 1], longopts);
		}
	}
	if (optind != argc - 1)
		return lp_cli_usage_error("report", "give exactly one database file");
	if (!view)
		view = lp_views[0];
	const char *path = argv[optind];
	if (check_view_opts(view, &o))
		return LP_EXIT_USAGE;
	if (out && lp_cli_out_check(out, force, 0, &path, 1))
		return LP_EXIT_USAGE;
	lp_progress_init(quiet);
	return report_run(path, view, &o, out, force);
}

static const char report_usage[] =
    "usage: latprof report FILE.db [VIEW] [--top N] [--format text|json|csv] [-o OUT]\n"
    "                      [--force] [--quiet]\n\n"
    "Without a VIEW: the top three bottleneck findings, the run summary\n"
    "(processes, exit status, threads, duration,\n"
    "records dropped, GPU data), the per-request breakdown when the run has NVTX\n"
    "ranges, then the most contended locks.\n\n";

static void report_help(FILE *f)
{
	fputs(report_usage, f);
	lp_views_write_help(f);
	fputs("\noptions:\n"
	      "  --top N      rows per table (locks, call sites, threads); default 10\n"
	      "  --format F   text (default), json (schemas/report-*.schema.json) or csv\n"
	      "  -o OUT       write to OUT instead of standard output\n"
	      "  -f, --force  overwrite an existing OUT (or --html file); never FILE.db\n"
	      "  -q, --quiet  no progress line (shown on stderr when it is a terminal and\n"
	      "               the work runs over a second)\n\n"
	      "A file that is not a latprof database of this schema version is refused\n"
	      "with exit status 2; the database is only read.\n",
	      f);
}

const struct lp_cmd lp_cmd_report = {
    .name = "report",
    .run = report_cmd,
    .summary = "report on a recorded run",
    .usage = report_usage,
    .write_help = report_help,
};
