/* SPDX-License-Identifier: MIT */
/* report --html OUT.html: every view on one page (report/lp_html.h). */
#include "lp_html.h"
#include "lp_view.h"

static void *html_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct lp_html_opts ho = {o->request, o->stage_depth, o->top};
	return lp_html_build(db, &ho, err, errlen);
}

const struct lp_view lp_view_html = {
    .flag = "html",
    .arg = "OUT.html",
    .help = "one self-contained page: findings, summary, breakdown,\n"
	    "tail, charts (needs gnuplot), locks, kernels, memcpy, slowest\n"
	    "requests, timelines of a median and a p99 request",
    .takes = LP_VIEW_REQUEST | LP_VIEW_STAGE_DEPTH,
    .analyze = html_analyze,
    .free = lp_html_free,
    .write = {lp_html_write, lp_html_write, lp_html_write},
};
