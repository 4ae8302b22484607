/* SPDX-License-Identifier: MIT */
/*
 * Rule "lock-contention": A lock serializes requests: one lock's contention-class wait inside
 * requests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_locks.h"
#include "lp_map.h"
#include "lp_progress.h"
#include "lp_util.h"
#include "lp_waits.h"

struct lock_acc {
	int64_t id, in_ns, waits;
	size_t row; /* in c->locks.locks, or n */
};

static int lock_acc_cmp(const void *a, const void *b)
{
	const struct lock_acc *x = a, *y = b;
	return (y->in_ns > x->in_ns) - (y->in_ns < x->in_ns);
}

struct lock_load {
	struct lp_findings_ctx *c;
	struct lock_acc *v;
	size_t n, cap;
	struct lp_map at; /* lock id + 2^63 (never 0) -> index in v */
};

static int lock_wait_row(sqlite3_stmt *st, void *ctx)
{
	struct lock_load *l = ctx;
	int64_t id = sqlite3_column_int64(st, 0);
	uint64_t key = (uint64_t)id + (1ull << 63), k;
	if (!lp_map_get(&l->at, key, &k)) {
		if (LP_GROW(l->v, l->n, l->cap) || lp_map_put(&l->at, key, l->n))
			return -ENOMEM;
		k = l->n;
		l->v[l->n++] = (struct lock_acc){id, 0, 0, 0};
	}
	int64_t in = lp_findings_attr(l->c, sqlite3_column_int64(st, 1),
				      sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	l->v[k].in_ns += in;
	l->v[k].waits += in > 0;
	return 0;
}

static int lock_id_cmp(const void *a, const void *b)
{
	const struct lock_acc *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int lock_sum_row(sqlite3_stmt *st, void *ctx)
{
	struct lock_load *l = ctx;
	if (LP_GROW(l->v, l->n, l->cap))
		return -ENOMEM;
	l->v[l->n++] = (struct lock_acc){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					 sqlite3_column_int64(st, 2), 0};
	return 0;
}

/* Per lock, the wait inside requests (or in the whole run without them):
 * one pass over the waits in table order, each lock's sums found by id;
 * without requests every wait counts whole, and the lock analysis's
 * grouped waits (temp.lp_wagg, lp_locks_group) already hold the sums. */
static int lock_accumulate(struct lp_findings_ctx *c, struct lock_acc **out, size_t *nout)
{
	struct lock_load l = {c, NULL, 0, 0, {0}};
	int rc = c->has_req ? 0 : lp_locks_group(c->db, c->err, c->errlen);
	if (c->has_req)
		lp_db_progress(c->db, "attributing lock waits to requests", "lock_waits");
	rc = rc ? rc
	     : c->has_req
		 ? lp_db_query(c->db,
			       "SELECT w.lock_id, w.thread_id, w.start_ns, w.start_ns + "
			       "w.dur_ns FROM lock_waits w WHERE w.class = 0",
			       NULL, 0, lock_wait_row, &l, c->err, c->errlen)
		 : lp_db_query(c->db,
			       "SELECT lock_id, SUM(pos_ns), SUM(pos) FROM temp.lp_wagg WHERE "
			       "src = 0 AND class = 0 GROUP BY lock_id",
			       NULL, 0, lock_sum_row, &l, c->err, c->errlen);
	lp_progress_end();
	lp_map_free(&l.at);
	if (rc) {
		free(l.v);
		return rc;
	}
	/* by id first: equal waits keep the order they always had */
	if (l.n > 1) { /* qsort(NULL, 0) is undefined */
		qsort(l.v, l.n, sizeof(*l.v), lock_id_cmp);
		qsort(l.v, l.n, sizeof(*l.v), lock_acc_cmp);
	}
	*out = l.v;
	*nout = l.n;
	return 0;
}

/* Rows (thread, start, end): their time inside requests goes to the stake. */
static int attr_row(sqlite3_stmt *st, void *ctx)
{
	lp_findings_attr(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			 sqlite3_column_int64(st, 2));
	return 0;
}

/* The example for one lock: the request that waited on it the longest. */
static int lock_example(struct lp_findings_ctx *c, struct lp_finding *f, int64_t lock_id)
{
	if (!c->has_req)
		return 0;
	lp_findings_stake_reset(c);
	struct lp_db_arg id = LP_DB_INT(lock_id);
	int rc = lp_db_query(c->db,
			     "SELECT thread_id, start_ns, start_ns + dur_ns FROM lock_waits WHERE "
			     "lock_id = ? AND class = 0",
			     &id, 1, attr_row, c, c->err, c->errlen);
	if (rc)
		return rc;
	lp_findings_example(c, f);
	return 0;
}

static int rule_lock(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	struct lock_acc *acc = NULL;
	size_t n = 0;
	int found = 0;
	int64_t scope = c->has_req ? c->req_ns : c->thread_ns;
	int rc = lock_accumulate(c, &acc, &n);
	if (rc)
		return rc;
	/* The lock that explains the p99 tail, if the breakdown found one. */
	const struct lp_breakdown_tail *t = &c->bd->tail;
	int64_t tail_lock = -1;
	if (c->has_req && t->valid && t->has_key &&
	    t->cat == lp_findings_bd_cat(c->bd, "lock_wait") &&
	    t->key_tail_ns - t->key_mid_ns > 0.5 * (double)(t->p99_ns - t->p60_ns))
		tail_lock = t->key;
	lp_findings_quiet(c, n ? lp_findings_share(acc[0].in_ns, scope) : 0);
	for (size_t i = 0; i < n && found < 3; i++) {
		double share = lp_findings_share(acc[i].in_ns, scope);
		int tail = acc[i].id == tail_lock;
		if (!lp_findings_passes(c, share) && !tail)
			continue;
		const struct lp_lock_row *row = lp_findings_lock_row(c, acc[i].id);
		struct lp_finding *f = lp_findings_new(c, r, share);
		if (!f) {
			free(acc);
			return -ENOMEM;
		}
		found++;
		f->subject = strdup(row && row->name ? row->name : "(unknown lock)");
		lp_findings_num(f, "wait_ns", c->has_req ? "wait inside requests" : "wait", "ns",
				(double)acc[i].in_ns);
		lp_findings_num(f, "share", c->has_req ? "of request time" : "of thread time",
				"share", share);
		lp_findings_num(f, "waits", "contended acquisitions", "count",
				(double)acc[i].waits);
		if (c->has_req)
			lp_findings_num(f, "wait_per_request_ns", "wait per request", "ns",
					(double)acc[i].in_ns / (double)c->nreq);
		if (row) {
			lp_findings_num(f, "p99_wait_ns", "p99 wait", "ns", (double)row->p99_ns);
			lp_findings_num(f, "waiting_threads", "threads waiting", "count",
					(double)row->n_waiters);
			f->site_kind = "call sites";
			for (size_t k = 0; k < row->n_sites; k++)
				lp_findings_site(f, row->sites[k].where, row->sites[k].count,
						 row->sites[k].wait_ns);
		}
		if (tail) {
			lp_findings_num(f, "tail_wait_ns", "mean wait in p99 requests", "ns",
					t->key_tail_ns);
			lp_findings_num(f, "median_wait_ns", "mean wait in median requests", "ns",
					t->key_mid_ns);
		}
		const char *hs = row ? row->holder_stage : NULL;
		if (hs)
			lp_findings_num(f, "holder_stage_waits",
					"waits whose holder was in that stage", "count",
					(double)row->holder_stage_waits);
		/* the holds, where recorded, name the critical section itself */
		const char *site = row ? row->hold_site : NULL;
		char *held = site ? lp_findings_fmt("; held longest at %s (p99 hold %.2f ms)", site,
						    (double)row->hold_p99_ns / 1e6)
				  : NULL;
		f->summary = lp_findings_fmt("%s threads waited %.1f%% of %s on %s%s%s%s%s",
					     c->has_req ? "request" : "the run's", 100 * share,
					     c->has_req ? "request time" : "their time", f->subject,
					     tail ? ", and it dominates the p99 tail" : "",
					     hs ? "; holders were in stage " : "", hs ? hs : "",
					     held ? held : "");
		free(held);
		lp_findings_category(f, "lock_wait");
		lp_findings_saving(f, acc[i].in_ns, acc[i].in_ns,
				   c->has_req ? "lock wait inside requests" : "lock wait");
		rc = lock_example(c, f, acc[i].id);
		if (rc)
			break;
	}
	free(acc);
	return rc ? rc : found;
}

const struct lp_rule lp_rule_lock_contention = {
    .id = "lock-contention",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.05,
    .needs = LP_NEED_TIME,
    .title = "A lock serializes requests",
    .measures =
	"wait on one lock inside requests / request time (thread time without requests); also "
	"flagged when the lock explains the p99 tail",
    .fix = "Give each worker its own instance of the state the lock guards (one model per thread), "
	   "split the lock so readers and unrelated fields do not queue together, or move the "
	   "shared update behind a batching queue with one owner thread.",
    .eval = rule_lock,
    .title_whole_run = "A lock serializes the threads",
};
