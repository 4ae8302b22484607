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
