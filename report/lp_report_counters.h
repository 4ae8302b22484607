/* SPDX-License-Identifier: MIT */
/* Writers for `latprof report --counters` (analysis/lp_counter_totals.h).
 * Unavailable events print as "unavailable" (text, with the reason listed
 * once), null plus a reason (JSON) or an empty value plus the reason
 * (CSV); never as 0. */
#ifndef LP_REPORT_COUNTERS_H
#define LP_REPORT_COUNTERS_H

#include <stdio.h>

#include "lp_counter_totals.h"

void lp_counters_write_text(FILE *f, const struct lp_counter_totals *r);
void lp_counters_write_json(FILE *f, const struct lp_counter_totals *r);
void lp_counters_write_csv(FILE *f, const struct lp_counter_totals *r);

#endif
