/* SPDX-License-Identifier: MIT */
/* report --bottlenecks: the rules' findings (analysis/findings/lp_findings.h). */
#include <stdlib.h>

#include "lp_findings.h"
#include "lp_report_findings.h"
#include "lp_view.h"

static void findings_free(void *res)
{
	lp_findings_free(res);
	free(res);
}

static void *findings_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct lp_findings *r = calloc(1, sizeof(*r));
	struct lp_findings_opts fo = {.request = o->request, .nover = o->nover, .over = o->over};
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (lp_findings_analyze(db, &fo, r, err, errlen)) {
		findings_free(r);
		return NULL;
	}
	return r;
}

LP_VIEW_WRITER(findings_text, lp_findings_write_text)
LP_VIEW_WRITER(findings_json, lp_findings_write_json)
LP_VIEW_WRITER(findings_csv, lp_findings_write_csv)

const struct lp_view lp_view_bottlenecks = {
    .flag = "bottlenecks",
    .help = "findings ranked by the request time a fix would save: the\n"
	    "rule, evidence, sites, an example request and the fix\n"
	    "(docs/rules.md); also takes --request NAME",
    .options_help = "--rule-threshold ID=VALUE  change one rule's threshold (repeatable)",
    .takes = LP_VIEW_REQUEST | LP_VIEW_RULE_THR,
    .schema = "findings",
    .schema_version = 1,
    .analyze = findings_analyze,
    .free = findings_free,
    .write = {findings_text, findings_json, findings_csv},
};
