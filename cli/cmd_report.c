/* SPDX-License-Identifier: MIT */
/*
 * latprof report FILE.db [--VIEW] [--top N] [--format text|json|csv] [-o OUT]
 *
 * A view is one analysis (analyze/, returns a struct) plus its writers
 * (report/, one per format). Adding a view = an adapter of a few lines here
 * (every view's adapters live in this file: report/ knows no CLI type) and
 * one entry in lp_views[]; option parsing, output files and errors are
 * shared. Without a view flag the default view prints the run summary
 * followed by the top locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lp_breakdown.h"
#include "lp_cli.h"
#include "lp_db.h"
#include "lp_findings.h"
#include "lp_html.h"
#include "lp_locks.h"
#include "lp_progress.h"
#include "lp_report_breakdown.h"
#include "lp_report_counters.h"
#include "lp_report_locks.h"
#include "lp_report_cuda.h"
#include "lp_report_findings.h"
#include "lp_report_summary.h"
#include "lp_summary.h"
#include "lp_util.h"

enum lp_fmt { LP_FMT_TEXT, LP_FMT_JSON, LP_FMT_CSV, LP_FMT_N };
static const char *const lp_fmt_names[LP_FMT_N] = {"text", "json", "csv"};

struct report_opts {
	int top;
	enum lp_fmt fmt;
	const char *request;		 /* --breakdown --request NAME */
	int stage_depth;		 /* --breakdown --stage-depth N */
	struct lp_fnd_override over[64]; /* --rule-threshold ID=VALUE */
	size_t nover;
};

typedef void (*lp_writer_fn)(FILE *f, const void *res);

struct view {
	const char *flag; /* --flag; NULL marks the default view */
	/* A heap result, or NULL with one sentence in err. */
	void *(*analyze)(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen);
	void (*free)(void *res);
	lp_writer_fn write[LP_FMT_N]; /* NULL: format not offered by this view */
};

/* ---- --locks ---------------------------------------------------------- */

static void *view_locks(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	struct lp_lock_report *r = xcalloc(1, sizeof(*r));
	if (lp_locks_analyze(db, o->top, r, err, errlen)) {
		lp_lock_report_free(r);
		free(r);
		return NULL;
	}
	return r;
}

static void view_locks_free(void *r)
{
	lp_lock_report_free(r);
	free(r);
}

static void w_locks_text(FILE *f, const void *r)
{
	lp_locks_write_text(f, r);
}

static void w_locks_json(FILE *f, const void *r)
{
	lp_locks_write_json(f, r);
}

static void w_locks_csv(FILE *f, const void *r)
{
	lp_locks_write_csv(f, r);
}

/* ---- --breakdown and --ranges (analyze/lp_breakdown.h) --------------- */

static void *view_breakdown(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	struct lp_breakdown *b = xcalloc(1, sizeof(*b));
	struct lp_bd_opts bo = {.request = o->request, .stage_depth = o->stage_depth};
	if (lp_breakdown_compute(db, &bo, b, err, errlen)) {
		free(b);
		return NULL;
	}
	return b;
}

static void view_breakdown_free(void *r)
{
	lp_breakdown_free(r);
	free(r);
}

static void w_bd_text(FILE *f, const void *r)
{
	lp_breakdown_write_text(f, r);
}

static void w_bd_json(FILE *f, const void *r)
{
	lp_breakdown_write_json(f, r);
}

static void w_bd_csv(FILE *f, const void *r)
{
	lp_breakdown_write_csv(f, r);
}

static void *view_ranges(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	struct lp_range_stats *s = xcalloc(1, sizeof(*s));
	if (lp_range_stats_compute(db, s, err, errlen)) {
		free(s);
		return NULL;
	}
	return s;
}

static void view_ranges_free(void *r)
{
	lp_range_stats_free(r);
	free(r);
}

static void w_ranges_text(FILE *f, const void *r)
{
	lp_range_stats_write_text(f, r);
}

static void w_ranges_json(FILE *f, const void *r)
{
	lp_range_stats_write_json(f, r);
}

static void w_ranges_csv(FILE *f, const void *r)
{
	lp_range_stats_write_csv(f, r);
}

/* ---- --counters (analyze/lp_counters_report.h) ------------------------ */

static void *view_counters(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	struct lp_counters_report *r = xcalloc(1, sizeof(*r));
	(void)o;
	if (lp_counters_report_compute(db, r, err, errlen)) {
		free(r);
		return NULL;
	}
	if (!r->has_counters) { /* an imported capture says why it has none */
		char buf[1024];
		const char *note = lp_db_meta(db, "counters_note", buf, sizeof(buf));
		r->note = note ? xstrdup(note) : NULL;
	}
	return r;
}

static void view_counters_free(void *r)
{
	lp_counters_report_free(r);
	free(r);
}

static void w_counters_text(FILE *f, const void *r)
{
	lp_counters_write_text(f, r);
}

static void w_counters_json(FILE *f, const void *r)
{
	lp_counters_write_json(f, r);
}

static void w_counters_csv(FILE *f, const void *r)
{
	lp_counters_write_csv(f, r);
}

/* ---- --kernels, --memcpy, --sync, --cuda-api (analyze/lp_cuda.h) ------ */

static void *view_cuda(sqlite3 *db, enum lp_cuda_view v, char *err, size_t errlen)
{
	struct lp_cuda_report *r = xcalloc(1, sizeof(*r));
	if (lp_cuda_analyze(db, v, r, err, errlen)) {
		lp_cuda_report_free(r);
		free(r);
		return NULL;
	}
	return r;
}

static void *view_kernels(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	(void)o;
	return view_cuda(db, LP_CUDA_KERNELS, err, errlen);
}

static void *view_memcpy(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	(void)o;
	return view_cuda(db, LP_CUDA_MEMCPY, err, errlen);
}

static void *view_sync(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	(void)o;
	return view_cuda(db, LP_CUDA_SYNC, err, errlen);
}

static void *view_cuda_api(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	(void)o;
	return view_cuda(db, LP_CUDA_API, err, errlen);
}

static void view_cuda_free(void *r)
{
	lp_cuda_report_free(r);
	free(r);
}

static void w_cuda_text(FILE *f, const void *r)
{
	lp_cuda_write_text(f, r);
}

static void w_cuda_json(FILE *f, const void *r)
{
	lp_cuda_write_json(f, r);
}

static void w_cuda_csv(FILE *f, const void *r)
{
	lp_cuda_write_csv(f, r);
}

/* ---- --bottlenecks (analyze/lp_findings.h) ---------------------------- */

static void *view_findings(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	struct lp_findings *r = xcalloc(1, sizeof(*r));
	struct lp_findings_opts fo = {.request = o->request, .nover = o->nover, .over = o->over};
	if (lp_findings_analyze(db, &fo, r, err, errlen)) {
		lp_findings_free(r);
		free(r);
		return NULL;
	}
	return r;
}

static void view_findings_free(void *r)
{
	lp_findings_free(r);
	free(r);
}

static void w_findings_text(FILE *f, const void *r)
{
	lp_findings_write_text(f, r);
}

static void w_findings_json(FILE *f, const void *r)
{
	lp_findings_write_json(f, r);
}

static void w_findings_csv(FILE *f, const void *r)
{
	lp_findings_write_csv(f, r);
}

/* ---- default: top findings, run summary, breakdown, top locks --------- */

struct summary_view {
	struct lp_findings findings;
	struct lp_run_summary run;
	struct lp_breakdown bd; /* shown when the run has NVTX ranges */
	struct lp_lock_report locks;
};

static void view_summary_free(void *res)
{
	struct summary_view *v = res;
	lp_findings_free(&v->findings);
	lp_summary_free(&v->run);
	lp_breakdown_free(&v->bd);
	lp_lock_report_free(&v->locks);
	free(v);
}

static void *view_summary(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	struct summary_view *v = xcalloc(1, sizeof(*v));
	/* the rules take the breakdown shown, and its ranges, as theirs */
	struct lp_rset ranges = {0};
	struct lp_bd_opts bo = {
	    .request = o->request, .stage_depth = o->stage_depth, .keep_ranges = &ranges};
	struct lp_findings_opts fo = {.request = o->request, .nover = o->nover, .over = o->over};
	int rc = lp_breakdown_compute(db, &bo, &v->bd, err, errlen);
	if (!rc && o->stage_depth <= 1) {
		fo.bd = &v->bd;
		fo.ranges = &ranges;
	}
	rc = rc || lp_findings_analyze(db, &fo, &v->findings, err, errlen) ||
	     lp_summary_analyze(db, &v->run, err, errlen) ||
	     lp_locks_analyze(db, o->top, &v->locks, err, errlen);
	lp_rset_free(&ranges);
	if (rc) {
		view_summary_free(v);
		return NULL;
	}
	return v;
}

static void w_summary_text(FILE *f, const void *res)
{
	const struct summary_view *v = res;
	lp_findings_write_brief(f, &v->findings, 3);
	fputc('\n', f);
	lp_summary_write_text(f, &v->run);
	if (v->bd.has_ranges) {
		fputc('\n', f);
		lp_breakdown_write_text(f, &v->bd);
		fputc('\n', f);
	}
	lp_locks_write_text(f, &v->locks);
}

static void w_summary_json(FILE *f, const void *res)
{
	const struct summary_view *v = res;
	fputs("{\n  \"format\": \"latprof.report.summary\",\n  \"version\": 1,\n  ", f);
	lp_summary_write_json_members(f, &v->run);
	if (v->bd.has_ranges) {
		fputs(",\n  \"breakdown\": {", f);
		lp_breakdown_write_json_members(f, &v->bd);
		fputs("}", f);
	}
	fputs(",\n  \"locks\": ", f);
	lp_locks_write_json(f, &v->locks);
	fputs(",\n  \"findings\": ", f);
	lp_findings_write_json(f, &v->findings);
	fputs("}\n", f);
}

static void w_summary_csv(FILE *f, const void *res)
{
	lp_summary_write_csv(f, &((const struct summary_view *)res)->run);
}

/* ---- --processes: every process image, titles included --------------- */

static void view_procs_free(void *res)
{
	lp_summary_free(res);
	free(res);
}

static void *view_procs(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	(void)o;
	struct lp_run_summary *s = xcalloc(1, sizeof(*s));
	if (lp_summary_analyze(db, s, err, errlen)) {
		view_procs_free(s);
		return NULL;
	}
	return s;
}

static void w_procs_text(FILE *f, const void *res)
{
	lp_summary_write_procs(f, res, 1);
}

static void w_procs_json(FILE *f, const void *res)
{
	fputs("{\n  \"format\": \"latprof.report.summary\",\n  \"version\": 1,\n  ", f);
	lp_summary_write_json_members(f, res);
	fputs("}\n", f);
}

static void w_procs_csv(FILE *f, const void *res)
{
	lp_summary_write_csv(f, res);
}

/* ---- --html OUT (report/lp_html.h): every view on one page ----------- */

static void *view_html(sqlite3 *db, const struct report_opts *o, char *err, size_t errlen)
{
	struct lp_html_opts ho = {o->request, o->stage_depth, o->top};
	return lp_html_build(db, &ho, err, errlen);
}

static const struct view lp_html_view = {
    "html", view_html, lp_html_free, {lp_html_write, lp_html_write, lp_html_write}};

/* ---- the table: one line per view ------------------------------------- */

static const struct view lp_views[] = {
    {NULL, view_summary, view_summary_free, {w_summary_text, w_summary_json, w_summary_csv}},
    {"locks", view_locks, view_locks_free, {w_locks_text, w_locks_json, w_locks_csv}},
    {"breakdown", view_breakdown, view_breakdown_free, {w_bd_text, w_bd_json, w_bd_csv}},
    {"ranges", view_ranges, view_ranges_free, {w_ranges_text, w_ranges_json, w_ranges_csv}},
    {"counters",
     view_counters,
     view_counters_free,
     {w_counters_text, w_counters_json, w_counters_csv}},
    {"kernels", view_kernels, view_cuda_free, {w_cuda_text, w_cuda_json, w_cuda_csv}},
    {"memcpy", view_memcpy, view_cuda_free, {w_cuda_text, w_cuda_json, w_cuda_csv}},
    {"sync", view_sync, view_cuda_free, {w_cuda_text, w_cuda_json, w_cuda_csv}},
    {"cuda-api", view_cuda_api, view_cuda_free, {w_cuda_text, w_cuda_json, w_cuda_csv}},
    {"processes", view_procs, view_procs_free, {w_procs_text, w_procs_json, w_procs_csv}},
    {"bottlenecks",
     view_findings,
     view_findings_free,
     {w_findings_text, w_findings_json, w_findings_csv}},
};
#define LP_N_VIEWS (ARRAY_SIZE(lp_views))

/* ---- command ---------------------------------------------------------- */

enum {
	LP_OPT_TOP = 256,
	LP_OPT_FORMAT,
	LP_OPT_REQUEST,
	LP_OPT_STAGE_DEPTH,
	LP_OPT_RULE_THR,
	LP_OPT_HTML,
	LP_OPT_VIEW0
};

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

static int parse_fmt(const char *s, enum lp_fmt *fmt)
{
	for (int i = 0; i < LP_FMT_N; i++)
		if (!strcmp(s, lp_fmt_names[i])) {
			*fmt = (enum lp_fmt)i;
			return 0;
		}
	return lp_cli_usage_error("report", "--format is text, json or csv, not '%s'", s);
}

static int report_write(const struct view *v, const struct report_opts *o, void *res,
			const char *out, int force, const char *origin)
{
	FILE *f = stdout;
	if (out && !(f = lp_cli_fopen_out(out, force)))
		return LP_EXIT_USAGE;
	/* An imported capture says so first: its numbers are another profiler's. */
	if (origin && o->fmt == LP_FMT_TEXT && v != &lp_html_view)
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

static int report_cmd(int argc, char **argv)
{
	struct option longopts[LP_N_VIEWS + 10] = {
	    {"top", required_argument, NULL, LP_OPT_TOP},
	    {"format", required_argument, NULL, LP_OPT_FORMAT},
	    {"output", required_argument, NULL, 'o'},
	    {"request", required_argument, NULL, LP_OPT_REQUEST},
	    {"stage-depth", required_argument, NULL, LP_OPT_STAGE_DEPTH},
	    {"rule-threshold", required_argument, NULL, LP_OPT_RULE_THR},
	    {"html", required_argument, NULL, LP_OPT_HTML},
	    {"force", no_argument, NULL, 'f'},
	    {"quiet", no_argument, NULL, 'q'},
	};
	size_t nopt = 9;
	for (size_t i = 0; i < LP_N_VIEWS; i++)
		if (lp_views[i].flag)
			longopts[nopt++] = (struct option){lp_views[i].flag, no_argument, NULL,
							   LP_OPT_VIEW0 + (int)i};
	struct report_opts o = {.top = 10, .fmt = LP_FMT_TEXT};
	const struct view *view = NULL;
	const char *out = NULL;
	int c, force = 0, quiet = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:fq", longopts, NULL)) != -1) {
		if (c == LP_OPT_TOP) {
			if (parse_top(optarg, &o.top))
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
		} else if (c == LP_OPT_REQUEST) {
			o.request = optarg;
		} else if (c == LP_OPT_STAGE_DEPTH) {
			char *end;
			long d = strtol(optarg, &end, 10);
			if (end == optarg || *end || d < 1 || d > 1000)
				return lp_cli_usage_error(
				    "report", "--stage-depth wants 1 to 1000, not '%s'", optarg);
			o.stage_depth = (int)d;
		} else if (c == LP_OPT_RULE_THR) {
			char e[256];
			if (o.nover == sizeof(o.over) / sizeof(o.over[0]))
				return lp_cli_usage_error("report",
							  "too many --rule-threshold options");
			if (lp_findings_parse_threshold(optarg, &o.over[o.nover++], e, sizeof(e)))
				return lp_cli_usage_error("report", "%s", e);
		} else if (c == LP_OPT_HTML) {
			if (view && view != &lp_html_view)
				return lp_cli_usage_error("report", "choose one view per report");
			view = &lp_html_view;
			out = optarg;
		} else if (c >= LP_OPT_VIEW0 && c < LP_OPT_VIEW0 + (int)LP_N_VIEWS) {
			if (view && view != &lp_views[c - LP_OPT_VIEW0])
				return lp_cli_usage_error("report", "choose one view per report");
			view = &lp_views[c - LP_OPT_VIEW0];
		} else {
			return lp_cli_bad_option("report", argv[optind - 1], longopts);
		}
	}
	if (optind != argc - 1)
		return lp_cli_usage_error("report", "give exactly one database file");
	if (!view)
		view = &lp_views[0];
	if ((o.request || o.stage_depth) && view->flag && strcmp(view->flag, "breakdown") &&
	    view != &lp_html_view && (o.stage_depth || strcmp(view->flag, "bottlenecks")))
		return lp_cli_usage_error("report",
					  "--request and --stage-depth go with --breakdown");
	if (o.nover && view->flag && strcmp(view->flag, "bottlenecks"))
		return lp_cli_usage_error("report", "--rule-threshold goes with --bottlenecks");
	const char *path = argv[optind];
	if (!view->write[o.fmt])
		return lp_cli_usage_error("report", "--%s has no %s output",
					  view->flag ? view->flag : "(summary)",
					  lp_fmt_names[o.fmt]);
	if (out && lp_cli_out_check(out, force, 0, &path, 1))
		return LP_EXIT_USAGE;

	char err[1024];
	sqlite3 *db;
	lp_progress_init(quiet);
	if (lp_db_open_ro(path, &db, err, sizeof(err)))
		return lp_cli_error("%s", err);
	/* An imported Kineto trace names its requests (ProfilerStep) */
	char req[256], obuf[1024];
	if (!o.request && (!view->flag || view == &lp_html_view ||
			   !strcmp(view->flag, "breakdown") || !strcmp(view->flag, "bottlenecks")))
		o.request = lp_db_meta(db, "import.default_request", req, sizeof(req));
	const char *origin = lp_report_origin(db, obuf, sizeof(obuf));
	void *res = view->analyze(db, &o, err, sizeof(err));
	/* a lookup that answered its default for a failed read: no report */
	if (res && lp_db_fault(db, err, sizeof(err))) {
		view->free(res);
		res = NULL;
	}
	sqlite3_close(db);
	if (!res)
		return lp_cli_error("%s: %s", path, err);
	int rc = report_write(view, &o, res, out, force, origin);
	view->free(res);
	return rc;
}

const struct lp_cmd lp_cmd_report = {
    .name = "report",
    .run = report_cmd,
    .summary = "report on a recorded run",
    .usage = "usage: latprof report FILE.db [VIEW] [--top N] [--format text|json|csv] [-o OUT]\n"
	     "                      [--force] [--quiet]\n\n"
	     "Without a VIEW: the top three bottleneck findings, the run summary\n"
	     "(processes, exit status, threads, duration,\n"
	     "records dropped, GPU data), the per-request breakdown when the run has NVTX\n"
	     "ranges, then the most contended locks.\n\n"
	     "views:\n"
	     "  --locks      contended locks: waits, total/mean/p50/p99/max wait, share of\n"
	     "               thread time, call sites, waiter and owner threads\n"
	     "  --breakdown  per-request latency by stage from NVTX ranges: count, mean,\n"
	     "               p50/p90/p99/max, share, lock wait / cond wait / cpu split,\n"
	     "               tail attribution (p99 vs median) and the slowest requests\n"
	     "     --request NAME    the request range (NAME or DOMAIN::NAME); default:\n"
	     "                       the most frequent outermost range\n"
	     "     --stage-depth N   stages are ranges N levels below it (default 1)\n"
	     "  --ranges     count, total, mean, p50/p90/p99/max of every NVTX range name\n"
	     "  --html OUT.html  one self-contained page: findings, summary, breakdown,\n"
	     "               tail, charts (needs gnuplot), locks, kernels, memcpy, slowest\n"
	     "               requests, timelines of a median and a p99 request\n"
	     "  --counters   CPU counters (context switches, migrations, faults, task clock,\n"
	     "               cycles/IPC where available) per stage and per thread\n"
	     "  --bottlenecks  findings ranked by the request time a fix would save: the\n"
	     "               rule, evidence, sites, an example request and the fix\n"
	     "               (docs/rules.md); also takes --request NAME\n"
	     "     --rule-threshold ID=VALUE  change one rule's threshold (repeatable)\n"
	     "  --processes  every process image: exec command line, title at exit, exit\n"
	     "               status (the default view folds launchers and identical siblings)\n\n"
	     "options:\n"
	     "  --top N      rows per table (locks, call sites, threads); default 10\n"
	     "  --format F   text (default), json (schemas/report-*.schema.json) or csv\n"
	     "  -o OUT       write to OUT instead of standard output\n"
	     "  -f, --force  overwrite an existing OUT (or --html file); never FILE.db\n"
	     "  -q, --quiet  no progress line on a terminal (shown on stderr for work that\n"
	     "               runs over a second)\n\n"
	     "A file that is not a latprof database of this schema version is refused\n"
	     "with exit status 2; the database is only read.\n",
};
