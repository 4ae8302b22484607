/* SPDX-License-Identifier: MIT */
/* Writers for the run summary (analyze/lp_summary.h). */
#ifndef LP_REPORT_SUMMARY_H
#define LP_REPORT_SUMMARY_H

#include <stdio.h>

#include "lp_summary.h"

void lp_summary_write_text(FILE *f, const struct lp_run_summary *s);
/* The members of a JSON object (no braces), so a view can embed it. */
void lp_summary_write_json_members(FILE *f, const struct lp_run_summary *s);
/* One row per process. */
void lp_summary_write_csv(FILE *f, const struct lp_run_summary *s);

#endif
