/* SPDX-License-Identifier: MIT */
/* Writers for the per-request breakdown and the per-name range statistics
 * (analysis/lp_breakdown.h): text, JSON (schemas/report-breakdown.schema.json),
 * CSV. They only read the structs. */
#ifndef LP_REPORT_BREAKDOWN_H
#define LP_REPORT_BREAKDOWN_H

#include <stdio.h>

#include "lp_breakdown.h"
#include "lp_range_stats.h"

void lp_breakdown_write_text(FILE *f, const struct lp_breakdown *b);
/* A whole JSON document. */
void lp_breakdown_write_json(FILE *f, const struct lp_breakdown *b);
/* The members (no braces), so the default view can embed them. */
void lp_breakdown_write_json_members(FILE *f, const struct lp_breakdown *b);
/* One row per stage; without ranges one row per thread. */
void lp_breakdown_write_csv(FILE *f, const struct lp_breakdown *b);

void lp_range_stats_write_text(FILE *f, const struct lp_range_stats *s);
void lp_range_stats_write_json(FILE *f, const struct lp_range_stats *s);
void lp_range_stats_write_csv(FILE *f, const struct lp_range_stats *s);

#endif
