/* SPDX-License-Identifier: MIT */
/* Writers for latprof diff (analysis/compare/lp_diff.h). The JSON follows
 * schemas/report-diff.schema.json; the markdown fits a PR comment. */
#ifndef LP_REPORT_DIFF_H
#define LP_REPORT_DIFF_H

#include <stdio.h>

#include "lp_diff.h"

void lp_diff_write_text(FILE *f, const struct lp_diff *d);
void lp_diff_write_markdown(FILE *f, const struct lp_diff *d);
void lp_diff_write_json(FILE *f, const struct lp_diff *d);

#endif
