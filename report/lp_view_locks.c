/* SPDX-License-Identifier: MIT */
/* report --locks: the most contended locks (analysis/lp_locks.h). */
#include <stdlib.h>

#include "lp_locks.h"
#include "lp_report_locks.h"
#include "lp_view.h"

static void locks_free(void *res)
{
	lp_lock_report_free(res);
	free(res);
}

static void *locks_analyze(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)
{
	struct lp_lock_report *r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (lp_locks_analyze_flags(db, o->top, o->native ? LP_LOCKS_NATIVE : 0, r, err, errlen)) {
		locks_free(r);
		return NULL;
	}
	return r;
}

LP_VIEW_WRITER(locks_text, lp_locks_write_text)
LP_VIEW_WRITER(locks_json, lp_locks_write_json)
LP_VIEW_WRITER(locks_csv, lp_locks_write_csv)

const struct lp_view lp_view_locks = {
    .flag = "locks",
    .help = "contended locks: waits, total/mean/p50/p99/max wait, share of\n"
	    "thread time, call sites, waiter and owner threads; a wait with\n"
	    "Python frames has its Python call site (docs/python.md)",
    .options_help = "--native          native call sites even where waits have Python frames",
    .takes = LP_VIEW_NATIVE,
    .schema = "locks",
    .schema_version = 1,
    .analyze = locks_analyze,
    .free = locks_free,
    .write = {locks_text, locks_json, locks_csv},
};
