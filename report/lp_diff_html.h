/* SPDX-License-Identifier: MIT */
/*
 * `latprof diff ... --format html`: one self-contained page (the report's
 * skeleton and Content-Security-Policy: no script, no external URL) with
 * the verdict, base and new side by side per stage and metric with the
 * regressions marked (CSS class and text), lock and kernel changes,
 * new/resolved findings and gnuplot charts overlaying base and new.
 */
#ifndef LP_DIFF_HTML_H
#define LP_DIFF_HTML_H

#include <stdio.h>

#include "lp_diff.h"

/* Draws the charts from the sides' samples (gnuplot into a temporary
 * directory, removed again) and keeps a pointer to d, which must outlive
 * the page. NULL with err when out of memory. Without gnuplot the page
 * says how to get the charts. */
void *lp_diff_html_build(const struct lp_side *base, const struct lp_side *new_,
			 const struct lp_diff *d, char *err, size_t errlen);
void lp_diff_html_free(void *page);
/* The writer: only reads the built page. */
void lp_diff_html_write(FILE *f, const void *page);

#endif
