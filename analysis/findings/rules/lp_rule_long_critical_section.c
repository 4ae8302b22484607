/* SPDX-License-Identifier: MIT */
/*
 * Rule "long-critical-section": a contended lock is held long inside
 * requests. Its value is one lock's recorded holds (lock_holds: holds of
 * at least 50 us of a lock some thread waited on) inside requests over
 * request time; the finding names the lock, the call site and stage that
 * held it longest and the hold p99. The saving is that holding time: the
 * holders' own, which the lock-contention finding does not count (it
 * counts the waiters' time).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_util.h"

struct hold_acc {
	int64_t id, in_ns, holds;
};

struct hold_load {
	struct lp_findings_ctx *c;
	struct hold_acc *v;
	size_t n, cap;
};

static int hold_row(sqlite3_stmt *st, void *ctx)
{
	struct hold_load *l = ctx;
	int64_t id = sqlite3_column_int64(st, 0);
	if (!l->n || l->v[l->n - 1].id != id) {
		if (LP_GROW(l->v, l->n, l->cap))
			return -ENOMEM;
		l->v[l->n++] = (struct hold_acc){id, 0, 0};
	}
	int64_t in = lp_findings_attr(l->c, sqlite3_column_int64(st, 1),
				      sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	l->v[l->n - 1].in_ns += in;
	l->v[l->n - 1].holds += in > 0;
	return 0;
}

static int hold_acc_cmp(const void *a, const void *b)
{
	const struct hold_acc *x = a, *y = b;
	return (y->in_ns > x->in_ns) - (y->in_ns < x->in_ns);
}

static int rule_long_cs(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	if (!lp_db_has_table(c->db, "lock_holds"))
		return lp_findings_skip(c, "no hold times: the database predates lock_holds");
	struct hold_load l = {c, NULL, 0, 0};
	int rc =
	    lp_db_query(c->db,
			"SELECT lock_id, thread_id, start_ns, start_ns + dur_ns FROM lock_holds "
			"ORDER BY lock_id",
			NULL, 0, hold_row, &l, c->err, c->errlen);
	if (rc) {
		free(l.v);
		return rc;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), hold_acc_cmp);
	int64_t scope = c->has_req ? c->req_ns : c->thread_ns;
	int found = 0;
	lp_findings_quiet(c, l.n ? lp_findings_share(l.v[0].in_ns, scope) : 0);
	for (size_t i = 0; i < l.n && found < 3; i++) {
		double share = lp_findings_share(l.v[i].in_ns, scope);
		const struct lp_lock_row *row = lp_findings_lock_row(c, l.v[i].id);
		if (!lp_findings_passes(c, share) || !row)
			continue;
		struct lp_finding *f = lp_findings_new(c, r, share);
		if (!f) {
			free(l.v);
			return -ENOMEM;
		}
		found++;
		f->subject = strdup(row->name ? row->name : "(unknown lock)");
		lp_findings_num(f, "held_ns", c->has_req ? "held inside requests" : "held", "ns",
				(double)l.v[i].in_ns);
		lp_findings_num(f, "share", c->has_req ? "of request time" : "of thread time",
				"share", share);
		lp_findings_num(f, "holds", "holds of at least 50 us", "count", (double)row->holds);
		lp_findings_num(f, "p99_hold_ns", "p99 hold", "ns", (double)row->hold_p99_ns);
		lp_findings_num(f, "max_hold_ns", "longest hold", "ns", (double)row->hold_max_ns);
		lp_findings_num(f, "waits", "contended acquisitions", "count", (double)row->count);
		f->site_kind = "holding call sites";
		if (row->hold_site)
			lp_findings_site(f, row->hold_site, row->holds, row->hold_total_ns);
		const char *st = row->hold_stage;
		f->summary = lp_findings_fmt(
		    "%s is held %.1f%% of %s (p99 hold %.2f ms) at %s%s%s while %lld acquisitions "
		    "waited",
		    f->subject, 100 * share, c->has_req ? "request time" : "thread time",
		    (double)row->hold_p99_ns / 1e6, row->hold_site ? row->hold_site : "?",
		    st ? " in stage " : "", st ? st : "", row->count);
		lp_findings_saving(f, l.v[i].in_ns, l.v[i].in_ns,
				   c->has_req ? "lock held inside requests" : "lock held");
	}
	free(l.v);
	return found;
}

/* 5%, as lock-contention: a lock some thread waits on and that its holders
 * keep for a twentieth of request time serializes that share of the
 * requests, and the recorded holds alone (50 us and up, only once the lock
 * was contended) undercount it. */
const struct lp_rule lp_rule_long_critical_section = {
    .id = "long-critical-section",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.05,
    .needs = LP_NEED_TIME,
    .title = "A contended lock is held long",
    .measures = "holds (of at least 50 us) of one lock that others waited on, inside requests / "
		"request time (thread time without requests)",
    .fix = "Do the slow work outside the lock: compute into a local and take the lock only to "
	   "publish the result, or swap a pointer under it; split what the lock guards so the "
	   "long section and the short ones no longer share it.",
    .eval = rule_long_cs,
    .title_whole_run = "A contended lock is held long",
};
