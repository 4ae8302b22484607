/* SPDX-License-Identifier: MIT */
/*
 * Rule "queue-wait": Requests queue before work starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_util.h"
#include "lp_waits.h"

/* Condition-variable and semaphore waits inside a request but outside its
 * stages: the request is queued, no work has started. */
static int queue_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_findings_acc_load *l = ctx;
	struct lp_findings_ctx *c = l->c;
	const char *w = (const char *)sqlite3_column_text(st, 3);
	lp_findings_acc_label(l->a, w ? w : "");
	int64_t th = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1),
		e = sqlite3_column_int64(st, 2);
	int64_t in_req = lp_ivset_overlap(&c->reqset, th, s, e);
	int64_t in_stage = lp_ivset_overlap(&c->stageset, th, s, e);
	int64_t q = in_req - in_stage;
	if (q <= 0)
		return 0;
	/* attribute only the queued part: clip to before the first stage */
	size_t i = lp_findings_req_lower(c, th, s);
	if (i < c->nreq && c->req[i].thread == th)
		c->stake[i] += q;
	l->a->cur_n++;
	l->a->cur_ns += q;
	l->a->ns += q;
	l->a->n++;
	return 0;
}

static int rule_queue(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	struct lp_findings_acc a = {0};
	struct lp_findings_acc_load l = {c, &a};
	lp_findings_stake_reset(c);
	int rc = lp_db_query(
	    c->db,
	    "SELECT w.thread_id, w.start_ns, w.start_ns + w.dur_ns, coalesce(f.function || "
	    "coalesce(' ' || f.file || ':' || f.line, ''), printf('cond 0x%x', w.cond_addr)) FROM "
	    "cond_waits w LEFT JOIN stacks s ON s.id = w.stack_id LEFT JOIN frames f ON f.id = "
	    "s.top_frame WHERE w.class = 4 UNION ALL SELECT w.thread_id, w.start_ns, w.start_ns + "
	    "w.dur_ns, "
	    "coalesce(f.function || coalesce(' ' || f.file || ':' || f.line, ''), 'sem_wait') FROM "
	    "lock_waits w JOIN locks l ON l.id = w.lock_id AND l.kind = 'sem' LEFT JOIN stacks s "
	    "ON s.id = w.stack_id LEFT JOIN frames f ON f.id = s.top_frame WHERE w.class = 4 ORDER "
	    "BY 4",
	    NULL, 0, queue_row, &l, c->err, c->errlen);
	lp_findings_acc_flush(&a);
	if (rc) {
		lp_findings_acc_free(&a);
		return rc;
	}
	int64_t total = a.ns, waits = a.n;
	double share = lp_findings_share(total, c->req_ns);
	int found = 0;
	if (lp_findings_judge(c, share)) {
		struct lp_finding *f = lp_findings_new(c, r, share);
		if (!f)
			rc = -ENOMEM;
		else {
			found = 1;
			lp_findings_num(f, "queued_ns", "queued before work", "ns", (double)total);
			lp_findings_num(f, "share", "of request time", "share", share);
			lp_findings_num(f, "waits", "waits", "count", (double)waits);
			lp_findings_num(f, "queued_per_request_ns", "queued per request", "ns",
					(double)total / (double)c->nreq);
			lp_findings_acc_sites(f, &a, "wait sites");
			f->summary =
			    lp_findings_fmt("requests sat %.1f%% of their time in condition or "
					    "semaphore waits before any stage started",
					    100 * share);
			lp_findings_category(f, "cond_wait");
			lp_findings_saving(f, total, total, "queue wait inside requests");
			lp_findings_example(c, f);
		}
	}
	lp_findings_acc_free(&a);
	return rc ? rc : found;
}

const struct lp_rule lp_rule_queue_wait = {
    .id = "queue-wait",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.05,
    .needs = LP_NEED_REQUESTS,
    .title = "Requests queue before work starts",
    .measures =
	"condition-variable and semaphore wait inside requests but outside every stage / request "
	"time",
    .fix = "Add workers (or GPU streams) until the queue drains, or cap concurrency at the door so "
	   "requests are refused or shed early instead of waiting inside the server.",
    .eval = rule_queue,
};
