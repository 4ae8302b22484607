/* SPDX-License-Identifier: MIT */
/* Writers for the run summary (analysis/lp_summary.h). */
#ifndef LP_REPORT_SUMMARY_H
#define LP_REPORT_SUMMARY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#include "lp_summary.h"

void lp_summary_write_text(FILE *f, const struct lp_run_summary *s);
/* The process table: all = 0 shows the app's processes (those with
 * recorded events or a tenth of the run), launcher chains folded into the
 * image they exec'd and identical siblings as "N x title"; all = 1 lists
 * every process image with its exec command line and title at exit. */
void lp_summary_write_procs(FILE *f, const struct lp_run_summary *s, int all);
/* One row of the default view's process table. */
struct lp_summary_row {
	const struct lp_summary_proc *p;
	const char *name; /* its title at exit, else its command line */
	size_t count;	  /* identical siblings it stands for (1: itself) */
	char via[256];	  /* the launchers it was exec'd through, "env > pyenv"; "" */
};
/* The processes the default view shows (lp_summary_write_procs, all = 0)
 * into rows (room for s->n_procs): launcher images folded into the image
 * they exec'd, identical siblings as one row, processes without recorded
 * events left out; *launchers and *hidden count what was folded and left
 * out. Returns the number of rows. The HTML page shows the same rows. */
size_t lp_summary_fold(const struct lp_run_summary *s, struct lp_summary_row *rows,
		       size_t *launchers, size_t *hidden);
/* The members of a JSON object (no braces), so a view can embed it. */
void lp_summary_write_json_members(FILE *f, const struct lp_run_summary *s);
/* One row per process. */
void lp_summary_write_csv(FILE *f, const struct lp_run_summary *s);

/* For a database imported from another profiler's capture, the line every
 * text report opens with: "imported from Nsight Systems 2025.5.2 export
 * (schema 3.24.0)", then a line naming what the source does not record;
 * NULL for latprof's own recordings. */
const char *lp_report_origin(sqlite3 *db, char *buf, size_t len);

#endif
