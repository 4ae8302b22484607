/* SPDX-License-Identifier: MIT */
/*
 * Shared by the HTML pages (report --html, diff --format html): the page
 * head with its Content-Security-Policy and CSS, duration cells, and
 * gnuplot SVG made fit for inlining.
 */
#ifndef LP_HTML_UTIL_H
#define LP_HTML_UTIL_H

#include <stdio.h>

/* From <!DOCTYPE> to <body>: a CSP that allows no script, no external
 * resource (only inline style and data: images); the common CSS, then
 * extra_css (may be NULL). title is escaped. */
void lp_html_head(FILE *f, const char *title, const char *extra_css);
/* A duration in ns as "1.23 ms" etc. */
void lp_html_dur(FILE *f, double ns);
void lp_html_td_dur(FILE *f, double ns);
/* A left-aligned cell with escaped text (NULL: empty). */
void lp_html_td_str(FILE *f, const char *s);
struct lp_plot_result;
/* The #charts section: each chart's inline <svg> (svg[i], NULL when not
 * drawn: a note says why), or without gnuplot a note on how to get the
 * charts, naming cmd (static text) to run again. */
void lp_html_charts_section(FILE *f, const char *cmd, int has_gnuplot, const char *chart_err,
			    const struct lp_plot_result *res, char *const *svg, int n);

/* A fresh temporary directory for gnuplot's files into dir; -errno. */
int lp_html_tmpdir(char *dir, size_t len);
/* Removes dir and the files in it. */
void lp_html_rmtree(const char *dir);
/* The <svg>...</svg> of a gnuplot SVG file, ready to inline (no namespace
 * URL); malloc'd, NULL when unreadable. */
char *lp_html_svg_file(const char *path);

#endif
