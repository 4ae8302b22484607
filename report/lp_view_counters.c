/* SPDX-License-Identifier: MIT */
/* report --counters: CPU counters per stage and thread (analysis/lp_counter_totals.h). */
#include <stdlib.h>
#include <string.h>

#include "lp_counter_totals.h"
#include "lp_db.h"
#include "lp_report_counters.h"
#include "lp_view.h"

static void counters_free(void *res)
{
	lp_counter_totals_free(res);
	free(res);
}

static void *counters_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct lp_counter_totals *r = calloc(1, sizeof(*r));
	(void)o;
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (lp_counter_totals_compute(db, r, err, errlen)) {
		free(r);
		return NULL;
	}
	if (!r->has_counters) { /* an imported capture says why it has none */
		char buf[1024];
		const char *note = lp_db_meta(db, "counters_note", buf, sizeof(buf));
		r->note = note ? strdup(note) : NULL;
	}
	return r;
}

LP_VIEW_WRITER(counters_text, lp_counters_write_text)
LP_VIEW_WRITER(counters_json, lp_counters_write_json)
LP_VIEW_WRITER(counters_csv, lp_counters_write_csv)

const struct lp_view lp_view_counters = {
    .flag = "counters",
    .help = "CPU counters (context switches, migrations, faults, task clock,\n"
	    "cycles/IPC where available) per stage and per thread",
    .schema = "counters",
    .schema_version = 1,
    .analyze = counters_analyze,
    .free = counters_free,
    .write = {counters_text, counters_json, counters_csv},
};
