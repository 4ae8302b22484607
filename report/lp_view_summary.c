/* SPDX-License-Identifier: MIT */
/*
 * report without a view flag: the top findings, the run summary, the
 * breakdown when the run has NVTX ranges, the most contended locks; and
 * report --processes: every process image.
 */
#include <stdlib.h>

#include "lp_breakdown.h"
#include "lp_findings.h"
#include "lp_locks.h"
#include "lp_report_breakdown.h"
#include "lp_report_findings.h"
#include "lp_report_locks.h"
#include "lp_report_summary.h"
#include "lp_rset.h"
#include "lp_summary.h"
#include "lp_view.h"

struct summary_view {
	struct lp_findings findings;
	struct lp_run_summary run;
	struct lp_breakdown bd; /* shown when the run has NVTX ranges */
	struct lp_lock_report locks;
};

static void summary_free(void *res)
{
	struct summary_view *v = res;
	lp_findings_free(&v->findings);
	lp_summary_free(&v->run);
	lp_breakdown_free(&v->bd);
	lp_lock_report_free(&v->locks);
	free(v);
}

static void *summary_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct summary_view *v = calloc(1, sizeof(*v));
	/* the rules take the breakdown shown, and its ranges, as theirs */
	struct lp_rset ranges = {0};
	struct lp_breakdown_opts bo = {
	    .request = o->request, .stage_depth = o->stage_depth, .keep_ranges = &ranges};
	struct lp_findings_opts fo = {.request = o->request, .nover = o->nover, .over = o->over};
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
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
		summary_free(v);
		return NULL;
	}
	return v;
}

static void summary_text(FILE *f, const void *res)
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

static void summary_json(FILE *f, const void *res)
{
	const struct summary_view *v = res;
	lp_view_json_open(f, lp_view_summary.schema, lp_view_summary.schema_version);
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

static void summary_csv(FILE *f, const void *res)
{
	lp_summary_write_csv(f, &((const struct summary_view *)res)->run);
}

const struct lp_view lp_view_summary = {
    .takes = LP_VIEW_REQUEST | LP_VIEW_STAGE_DEPTH | LP_VIEW_RULE_THR,
    .schema = "summary",
    .schema_version = 1,
    .analyze = summary_analyze,
    .free = summary_free,
    .write = {summary_text, summary_json, summary_csv},
};

/* ---- --processes ---- */

static void procs_free(void *res)
{
	lp_summary_free(res);
	free(res);
}

static void *procs_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct lp_run_summary *s = calloc(1, sizeof(*s));
	(void)o;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (lp_summary_analyze(db, s, err, errlen)) {
		procs_free(s);
		return NULL;
	}
	return s;
}

static void procs_text(FILE *f, const void *res)
{
	lp_summary_write_procs(f, res, 1);
}

static void procs_json(FILE *f, const void *res)
{
	lp_view_json_open(f, lp_view_processes.schema, lp_view_processes.schema_version);
	lp_summary_write_json_members(f, res);
	fputs("}\n", f);
}

LP_VIEW_WRITER(procs_csv, lp_summary_write_csv)

const struct lp_view lp_view_processes = {
    .flag = "processes",
    .help = "every process image: exec command line, title at exit, exit\n"
	    "status (the default view folds launchers and identical siblings)",
    .schema = "processes",
    .schema_version = 1,
    .analyze = procs_analyze,
    .free = procs_free,
    .write = {procs_text, procs_json, procs_csv},
};
