/* SPDX-License-Identifier: MIT */
/* Writers for the bottleneck findings (analysis/findings/lp_findings.h); JSON
 * follows schemas/report-findings.schema.json, CSV is described in
 * docs/rules.md. */
#ifndef LP_REPORT_FINDINGS_H
#define LP_REPORT_FINDINGS_H

#include <stdio.h>

#include "lp_findings.h"

void lp_findings_write_text(FILE *f, const struct lp_findings *r);
/* The top `max` findings in a few lines each, for the default report. */
void lp_findings_write_brief(FILE *f, const struct lp_findings *r, size_t max);
void lp_findings_write_json(FILE *f, const struct lp_findings *r);
/* One row per finding in rank order (state "found"), then one per rule
 * that did not fire (state "quiet" or "not_evaluated", no rank). */
void lp_findings_write_csv(FILE *f, const struct lp_findings *r);

#endif
