/* SPDX-License-Identifier: MIT */
/*
 * `latprof report FILE.db --html OUT.html`: one self-contained page (no
 * external URL, no script; a Content-Security-Policy forbids both) with
 * findings, run summary, breakdown and tail attribution, gnuplot charts
 * inlined as SVG, locks, kernels and memcpy, the slowest requests and SVG
 * timelines of a median and a p99 request. Every recorded string is
 * escaped with lp_html_str.
 */
#ifndef LP_HTML_H
#define LP_HTML_H

#include <sqlite3.h>
#include <stdio.h>

struct lp_html_opts {
	const char *request; /* as --breakdown --request */
	int stage_depth;
	int top;
};

/* Runs the analyses and the charts (gnuplot into a temporary directory,
 * removed again); NULL with err on failure. Without gnuplot the page says
 * how to get the charts. */
void *lp_html_build(sqlite3 *db, const struct lp_html_opts *o, char *err, size_t errlen);
void lp_html_free(void *page);
/* The writer: only reads the built structs. */
void lp_html_write(FILE *f, const void *page);

#endif
