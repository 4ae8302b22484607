/* SPDX-License-Identifier: MIT */
/*
 * The rule table of analyze/lp_findings.h. Shared inputs are loaded once
 * (requests and stages as per-thread interval sets, the breakdown, the lock
 * report); each rule then runs a query or two of its own and attributes
 * what it measures to the request that contains it, so the finding can
 * name the request where it cost the most.
 */
#define _GNU_SOURCE
#include "lp_findings.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_breakdown.h"
#include "lp_db.h"
#include "lp_locks.h"
#include "lp_map.h"
#include "lp_progress.h"
#include "lp_util.h"
#include "lp_waits.h"

struct req {
	int64_t id, proc, thread, tid, start, end;
};

struct lp_fnd_ctx {
	sqlite3 *db;
	char *err;
	size_t errlen;
	const struct lp_breakdown *bd; /* bd_own, or the caller's (opts->bd) */
	const struct lp_rset *rs;      /* the ranges bd loaded: rs_own or opts->ranges */
	struct lp_breakdown bd_own;
	struct lp_rset rs_own;
	struct lp_lock_report locks;
	int has_req;
	struct req *req; /* by (thread, start): requests on a thread never overlap */
	size_t nreq;
	int64_t req_ns, thread_ns, run_start;
	struct lp_ivset reqset, stageset;
	int64_t *stake;	    /* [nreq] per-request time at stake for the current rule */
	struct lp_map runq; /* thread id + 1 -> its waits that waited for a CPU */
	int runq_loaded;
	int gpu;
	char gpu_why[300];
	const char *api_domain; /* runtime when recorded, else driver */
	/* the current rule's output */
	struct lp_findings *out;
	size_t cap;
	int has_value;
	double value;
	char *why;
};

/* ---- small helpers ---------------------------------------------------- */

static char *findings_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *findings_fmt(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static int findings_skip(struct lp_fnd_ctx *c, const char *why)
{
	free(c->why);
	c->why = strdup(why);
	return -ENODATA;
}

/* Whether a measured value crosses rule r's threshold thr (its default or
 * the --rule-threshold override), by the rule's own comparison: every rule
 * compares through here, so the table and docs/rules.md stay the truth. */
int lp_rule_passes(const struct lp_rule *r, double value, double thr)
{
	return r->cmp == LP_CMP_LT ? value < thr : value >= thr;
}

static int findings_quiet(struct lp_fnd_ctx *c, double value)
{
	c->has_value = 1;
	c->value = value;
	return 0;
}

static int64_t findings_q1(struct lp_fnd_ctx *c, const char *sql)
{
	return lp_db_int(c->db, sql, 0);
}

static double findings_share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* A new finding of rule r; NULL on -ENOMEM. */
static struct lp_finding *lp_fnd_new(struct lp_fnd_ctx *c, const struct lp_rule *r, double value,
				     double threshold)
{
	struct lp_findings *o = c->out;
	if (o->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct lp_finding *v = realloc(o->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		o->v = v;
		c->cap = cap;
	}
	struct lp_finding *f = &o->v[o->n++];
	memset(f, 0, sizeof(*f));
	f->rule = r;
	f->title = !c->has_req && r->title_whole_run ? r->title_whole_run : r->title;
	f->value = value;
	f->threshold = threshold;
	f->scope_ns = c->has_req ? c->req_ns : c->thread_ns;
	c->has_value = 1;
	c->value = value;
	return f;
}

static void findings_num(struct lp_finding *f, const char *key, const char *label, const char *unit,
			 double v)
{
	if (f->nnum < LP_FND_MAXNUM)
		f->num[f->nnum++] = (struct lp_fnd_num){key, label, unit, v};
}

static void findings_site(struct lp_finding *f, const char *what, int64_t count, int64_t ns)
{
	if (f->nsite < LP_FND_MAXSITES && what)
		f->site[f->nsite++] = (struct lp_fnd_site){strdup(what), count, ns};
}

/* Saving, its basis and the severity; the saving is clamped to the basis
 * and the basis to the scope, whatever the rule computed. */
static void findings_saving(struct lp_finding *f, int64_t saving, int64_t basis, const char *what)
{
	if (f->scope_ns > 0 && basis > f->scope_ns)
		basis = f->scope_ns;
	if (saving > basis)
		saving = basis;
	if (saving < 0)
		saving = 0;
	f->saving_ns = saving;
	f->basis_ns = basis;
	f->basis = what;
	f->share = findings_share(saving, f->scope_ns);
	f->severity = f->share >= LP_SEV_HIGH_SHARE	? LP_SEV_HIGH
		      : f->share >= LP_SEV_MEDIUM_SHARE ? LP_SEV_MEDIUM
							: LP_SEV_LOW;
}

/* ---- requests: lookup and per-request attribution ---------------------- */

/* First request on thread th with end > s (binary search). */
static size_t req_lower(const struct lp_fnd_ctx *c, int64_t th, int64_t s)
{
	size_t lo = 0, hi = c->nreq;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		const struct req *r = &c->req[m];
		if (r->thread < th || (r->thread == th && r->end <= s))
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* Adds the part of [s, e) on thread th that lies inside requests to their
 * stake; returns that part. Without requests, the whole interval counts. */
static int64_t findings_attr(struct lp_fnd_ctx *c, int64_t th, int64_t s, int64_t e)
{
	if (!c->has_req)
		return e > s ? e - s : 0;
	int64_t in = 0;
	for (size_t i = req_lower(c, th, s); i < c->nreq; i++) {
		const struct req *r = &c->req[i];
		if (r->thread != th || r->start >= e)
			break;
		int64_t a = s > r->start ? s : r->start, b = e < r->end ? e : r->end;
		if (b > a) {
			c->stake[i] += b - a;
			in += b - a;
		}
	}
	return in;
}

static void stake_reset(struct lp_fnd_ctx *c)
{
	if (c->stake)
		memset(c->stake, 0, c->nreq * sizeof(*c->stake));
}

/* The request with the most at stake becomes the finding's example. */
static void findings_example(struct lp_fnd_ctx *c, struct lp_finding *f)
{
	size_t best = c->nreq;
	for (size_t i = 0; i < c->nreq; i++)
		if (c->stake[i] > 0 && (best == c->nreq || c->stake[i] > c->stake[best]))
			best = i;
	if (best == c->nreq)
		return;
	const struct req *r = &c->req[best];
	f->ex = (struct lp_fnd_example){
	    1, r->id, r->tid, r->start, r->start - c->run_start, r->end - r->start, c->stake[best]};
}

static void example_req(struct lp_fnd_ctx *c, struct lp_finding *f, size_t i, int64_t stake)
{
	const struct req *r = &c->req[i];
	f->ex = (struct lp_fnd_example){
	    1, r->id, r->tid, r->start, r->start - c->run_start, r->end - r->start, stake};
}

static int req_cmp(const void *a, const void *b)
{
	const struct req *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* ?1, ?2: the request range's name and domain. */
static void req_args(const struct lp_fnd_ctx *c, struct lp_db_arg a[2])
{
	a[0] = LP_DB_TEXT(c->bd->req_name);
	a[1] = LP_DB_TEXT(c->bd->req_domain ? c->bd->req_domain : "");
}

/* threads.id -> (process_id, tid), sorted by id for a binary search. */
struct thr {
	int64_t id, proc, tid;
};

struct thr_load {
	struct thr *v;
	size_t n, cap;
};

static int thr_row(sqlite3_stmt *st, void *ctx)
{
	struct thr_load *l = ctx;
	if (LP_GROW(l->v, l->n, l->cap))
		return -ENOMEM;
	l->v[l->n++] = (struct thr){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				    sqlite3_column_int64(st, 2)};
	return 0;
}

static const struct thr *thr_find(const struct thr_load *t, int64_t id)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->v[lo].id == id ? &t->v[lo] : NULL;
}

/*
 * Requests, their intervals (reqset) and their children's (stageset), read
 * from the ranges the breakdown loaded: the same rows three queries over
 * ranges_named used to fetch, without scanning the table three more times
 * (at 2 M ranges those scans were 3.8 s of a 13 s HTML report).
 */
static int req_collect(struct lp_fnd_ctx *c, const uint8_t *isreq, const struct thr_load *thr,
		       struct lp_ivec *req_iv, struct lp_ivec *stage_iv)
{
	const struct lp_rset *rs = c->rs;
	size_t cap = 0;
	for (size_t i = 0; i < rs->n; i++) {
		const struct lp_rg *g = &rs->r[i];
		if (g->parent >= 0 && isreq[rs->r[g->parent].key] &&
		    lp_ivec_push(stage_iv, g->thread, g->start, g->end, 0))
			return -ENOMEM;
		if (!isreq[g->key])
			continue;
		if (lp_ivec_push(req_iv, g->thread, g->start, g->end, 0))
			return -ENOMEM;
		const struct thr *t = thr_find(thr, g->thread);
		if (!t || g->end <= g->start) /* as the join with threads did */
			continue;
		if (LP_GROW(c->req, c->nreq, cap))
			return -ENOMEM;
		c->req[c->nreq++] =
		    (struct req){rs->id[i], t->proc, g->thread, t->tid, g->start, g->end};
		c->req_ns += g->end - g->start;
	}
	return 0;
}

static int load_requests(struct lp_fnd_ctx *c)
{
	struct thr_load thr = {0};
	struct lp_ivec req_iv = {0}, stage_iv = {0};
	uint8_t *isreq = lp_rset_keys_named(c->rs, c->bd->req_domain, c->bd->req_name);
	int rc = isreq ? 0 : -ENOMEM;
	if (!rc)
		rc = lp_db_query(c->db, "SELECT id, process_id, tid FROM threads ORDER BY id", NULL,
				 0, thr_row, &thr, c->err, c->errlen);
	if (!rc)
		rc = req_collect(c, isreq, &thr, &req_iv, &stage_iv);
	if (!rc)
		rc = lp_ivset_build(&req_iv, NULL, &c->reqset);
	if (!rc)
		rc = lp_ivset_build(&stage_iv, NULL, &c->stageset);
	lp_ivec_free(&req_iv);
	lp_ivec_free(&stage_iv);
	free(thr.v);
	free(isreq);
	if (rc)
		return rc;
	if (c->nreq > 1) /* qsort(NULL, 0) is undefined */
		qsort(c->req, c->nreq, sizeof(*c->req), req_cmp);
	/* A request nested in another of the same name on its thread would
	 * count its time twice: keep the outer one. */
	size_t k = 0;
	for (size_t i = 0; i < c->nreq; i++) {
		if (k && c->req[k - 1].thread == c->req[i].thread &&
		    c->req[i].start < c->req[k - 1].end) {
			c->req_ns -= c->req[i].end - c->req[i].start;
			continue;
		}
		c->req[k++] = c->req[i];
	}
	c->nreq = k;
	c->has_req = k > 0;
	c->stake = calloc(k ? k : 1, sizeof(*c->stake));
	return c->stake ? 0 : -ENOMEM;
}

static int bd_cat(const struct lp_breakdown *b, const char *name)
{
	for (int i = 0; i < b->ncat; i++)
		if (b->cat_name[i] && !strcmp(b->cat_name[i], name))
			return i;
	return -1;
}

/* ---- CPU rules ---------------------------------------------------------- */

struct lock_acc {
	int64_t id, in_ns, waits;
	size_t row; /* in c->locks.locks, or n */
};

static int lock_acc_cmp(const void *a, const void *b)
{
	const struct lock_acc *x = a, *y = b;
	return (y->in_ns > x->in_ns) - (y->in_ns < x->in_ns);
}

static const struct lp_lock_row *lp_lock_row(const struct lp_fnd_ctx *c, int64_t id)
{
	for (size_t i = 0; i < c->locks.n; i++)
		if (c->locks.locks[i].id == id)
			return &c->locks.locks[i];
	return NULL;
}

struct lock_load {
	struct lp_fnd_ctx *c;
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
	int64_t in = findings_attr(l->c, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
				   sqlite3_column_int64(st, 3));
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
 * grouped waits (temp.lp_wagg, lp_locks.c) already hold the sums. */
static int lock_accumulate(struct lp_fnd_ctx *c, struct lock_acc **out, size_t *nout)
{
	struct lock_load l = {c, NULL, 0, 0, {0}};
	if (c->has_req)
		lp_db_progress(c->db, "attributing lock waits to requests", "lock_waits");
	int rc = c->has_req
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
	findings_attr(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
		      sqlite3_column_int64(st, 2));
	return 0;
}

/* The example for one lock: the request that waited on it the longest. */
static int lock_example(struct lp_fnd_ctx *c, struct lp_finding *f, int64_t lock_id)
{
	if (!c->has_req)
		return 0;
	stake_reset(c);
	struct lp_db_arg id = LP_DB_INT(lock_id);
	int rc = lp_db_query(c->db,
			     "SELECT thread_id, start_ns, start_ns + dur_ns FROM lock_waits WHERE "
			     "lock_id = ? AND class = 0",
			     &id, 1, attr_row, c, c->err, c->errlen);
	if (rc)
		return rc;
	findings_example(c, f);
	return 0;
}

static int rule_lock(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	struct lock_acc *acc = NULL;
	size_t n = 0;
	int found = 0;
	int64_t scope = c->has_req ? c->req_ns : c->thread_ns;
	if (scope <= 0)
		return findings_skip(c, "no request or thread time recorded");
	int rc = lock_accumulate(c, &acc, &n);
	if (rc)
		return rc;
	/* The lock that explains the p99 tail, if the breakdown found one. */
	const struct lp_bd_tail *t = &c->bd->tail;
	int64_t tail_lock = -1;
	if (c->has_req && t->valid && t->has_key && t->cat == bd_cat(c->bd, "lock_wait") &&
	    t->key_tail_ns - t->key_mid_ns > 0.5 * (double)(t->p99_ns - t->p60_ns))
		tail_lock = t->key;
	findings_quiet(c, n ? findings_share(acc[0].in_ns, scope) : 0);
	for (size_t i = 0; i < n && found < 3; i++) {
		double share = findings_share(acc[i].in_ns, scope);
		int tail = acc[i].id == tail_lock;
		if (!lp_rule_passes(r, share, thr) && !tail)
			continue;
		const struct lp_lock_row *row = lp_lock_row(c, acc[i].id);
		struct lp_finding *f = lp_fnd_new(c, r, share, thr);
		if (!f) {
			free(acc);
			return -ENOMEM;
		}
		found++;
		f->subject = strdup(row && row->name ? row->name : "(unknown lock)");
		findings_num(f, "wait_ns", c->has_req ? "wait inside requests" : "wait", "ns",
			     (double)acc[i].in_ns);
		findings_num(f, "share", c->has_req ? "of request time" : "of thread time", "share",
			     share);
		findings_num(f, "waits", "contended acquisitions", "count", (double)acc[i].waits);
		if (c->has_req)
			findings_num(f, "wait_per_request_ns", "wait per request", "ns",
				     (double)acc[i].in_ns / (double)c->nreq);
		if (row) {
			findings_num(f, "p99_wait_ns", "p99 wait", "ns", (double)row->p99_ns);
			findings_num(f, "waiting_threads", "threads waiting", "count",
				     (double)row->n_waiters);
			f->site_kind = "call sites";
			for (size_t k = 0; k < row->n_sites; k++)
				findings_site(f, row->sites[k].where, row->sites[k].count,
					      row->sites[k].wait_ns);
		}
		if (tail) {
			findings_num(f, "tail_wait_ns", "mean wait in p99 requests", "ns",
				     t->key_tail_ns);
			findings_num(f, "median_wait_ns", "mean wait in median requests", "ns",
				     t->key_mid_ns);
		}
		const char *hs = row ? row->holder_stage : NULL;
		if (hs)
			findings_num(f, "holder_stage_waits",
				     "waits whose holder was in that stage", "count",
				     (double)row->holder_stage_waits);
		f->summary = findings_fmt("%s threads waited %.1f%% of %s on %s%s%s%s",
					  c->has_req ? "request" : "the run's", 100 * share,
					  c->has_req ? "request time" : "their time", f->subject,
					  tail ? ", and it dominates the p99 tail" : "",
					  hs ? "; holders were in stage " : "", hs ? hs : "");
		findings_saving(f, acc[i].in_ns, acc[i].in_ns,
				c->has_req ? "lock wait inside requests" : "lock wait");
		rc = lock_example(c, f, acc[i].id);
		if (rc)
			break;
	}
	free(acc);
	return rc ? rc : found;
}

/* A grouped accumulation of (thread, start, end, label) rows inside
 * requests: total, count, top labels. */
struct acc {
	int64_t ns, n, all_n;
	struct lp_fnd_site top[LP_FND_MAXSITES];
	char cur[512];
	int64_t cur_n, cur_ns;
};

static void acc_flush(struct acc *a)
{
	for (int k = 0; a->cur_ns > 0 && k < LP_FND_MAXSITES; k++)
		if (a->cur_ns > a->top[k].ns) {
			free(a->top[LP_FND_MAXSITES - 1].what);
			memmove(&a->top[k + 1], &a->top[k],
				(LP_FND_MAXSITES - 1 - k) * sizeof(a->top[0]));
			a->top[k] = (struct lp_fnd_site){strdup(a->cur), a->cur_n, a->cur_ns};
			break;
		}
	a->cur_n = a->cur_ns = 0;
}

/* Starts label w's group when it differs from the current one. */
static void acc_label(struct acc *a, const char *w)
{
	if (strcmp(a->cur, w)) {
		acc_flush(a);
		snprintf(a->cur, sizeof(a->cur), "%s", w);
	}
}

struct acc_load {
	struct lp_fnd_ctx *c;
	struct acc *a;
};

static int acc_row(sqlite3_stmt *st, void *ctx)
{
	struct acc_load *l = ctx;
	struct acc *a = l->a;
	const char *w = (const char *)sqlite3_column_text(st, 3);
	acc_label(a, w ? w : "?");
	a->all_n++;
	int64_t in = findings_attr(l->c, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				   sqlite3_column_int64(st, 2));
	if (in <= 0 && l->c->has_req)
		return 0;
	a->n++;
	a->ns += in;
	a->cur_n++;
	a->cur_ns += in;
	return 0;
}

/* Rows: thread, start, end, label (ordered by label); ?1 = the API domain. */
static int acc_run(struct lp_fnd_ctx *c, const char *sql, struct acc *a)
{
	struct acc_load l = {c, a};
	struct lp_db_arg dom = LP_DB_TEXT(c->api_domain);
	memset(a, 0, sizeof(*a));
	stake_reset(c);
	int rc = lp_db_query(c->db, sql, &dom, 1, acc_row, &l, c->err, c->errlen);
	acc_flush(a);
	return rc;
}

static void acc_free(struct acc *a)
{
	for (int k = 0; k < LP_FND_MAXSITES; k++)
		free(a->top[k].what);
}

static void acc_sites(struct lp_finding *f, const struct acc *a, const char *kind)
{
	f->site_kind = kind;
	for (int k = 0; k < LP_FND_MAXSITES; k++)
		if (a->top[k].what)
			findings_site(f, a->top[k].what, a->top[k].count, a->top[k].ns);
}

/* Condition-variable and semaphore waits inside a request but outside its
 * stages: the request is queued, no work has started. */
static int queue_row(sqlite3_stmt *st, void *ctx)
{
	struct acc_load *l = ctx;
	struct lp_fnd_ctx *c = l->c;
	const char *w = (const char *)sqlite3_column_text(st, 3);
	acc_label(l->a, w ? w : "");
	int64_t th = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1),
		e = sqlite3_column_int64(st, 2);
	int64_t in_req = lp_ivset_overlap(&c->reqset, th, s, e);
	int64_t in_stage = lp_ivset_overlap(&c->stageset, th, s, e);
	int64_t q = in_req - in_stage;
	if (q <= 0)
		return 0;
	/* attribute only the queued part: clip to before the first stage */
	size_t i = req_lower(c, th, s);
	if (i < c->nreq && c->req[i].thread == th)
		c->stake[i] += q;
	l->a->cur_n++;
	l->a->cur_ns += q;
	l->a->ns += q;
	l->a->n++;
	return 0;
}

static int rule_queue(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges");
	struct acc a = {0};
	struct acc_load l = {c, &a};
	stake_reset(c);
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
	acc_flush(&a);
	if (rc) {
		acc_free(&a);
		return rc;
	}
	int64_t total = a.ns, waits = a.n;
	double share = findings_share(total, c->req_ns);
	int found = 0;
	if (lp_rule_passes(r, share, thr)) {
		struct lp_finding *f = lp_fnd_new(c, r, share, thr);
		if (!f)
			rc = -ENOMEM;
		else {
			found = 1;
			findings_num(f, "queued_ns", "queued before work", "ns", (double)total);
			findings_num(f, "share", "of request time", "share", share);
			findings_num(f, "waits", "waits", "count", (double)waits);
			findings_num(f, "queued_per_request_ns", "queued per request", "ns",
				     (double)total / (double)c->nreq);
			acc_sites(f, &a, "wait sites");
			f->summary =
			    findings_fmt("requests sat %.1f%% of their time in condition or "
					 "semaphore waits before any stage started",
					 100 * share);
			findings_saving(f, total, total, "queue wait inside requests");
			findings_example(c, f);
		}
	} else {
		findings_quiet(c, share);
	}
	acc_free(&a);
	return rc ? rc : found;
}

static int dur_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorted request durations (caller frees). */
static int64_t *req_durs(const struct lp_fnd_ctx *c)
{
	int64_t *d = malloc((c->nreq ? c->nreq : 1) * sizeof(*d));
	if (!d)
		return NULL;
	for (size_t i = 0; i < c->nreq; i++)
		d[i] = c->req[i].end - c->req[i].start;
	if (c->nreq > 1)
		qsort(d, c->nreq, sizeof(*d), dur_cmp);
	return d;
}

/* ---- tail causes: every part of the tail stage's growth ---------------
 * The breakdown names the one category that grows most; a tail often has
 * several (a locked path: the holder's CPU and the others' lock wait). Per
 * wait class (lock, GIL, condition) and blocking-call category (sleep, file
 * and socket I/O, poll, other), the mean wait inside the tail stage of tail
 * requests (>= p99) against median ones (p40..p60); CPU is the rest, and with
 * task-clock the off-CPU part of it net of the recorded waits. */

#define LP_TAIL_NBLOCK 5 /* blocking_calls.category: sleep .. other_block */
#define LP_TAIL_NWAIT (LP_WAIT_NCLASSES + LP_TAIL_NBLOCK)
_Static_assert(LP_WAIT_NCLASSES == 6 && LP_WAIT_JOIN == 3 && LP_WAIT_SYNC == 5,
	       "LP_TAIL_WAITS_SQL numbers join 3, sync 5, blocking calls from 6");
#define LP_TAIL_NCAUSE (LP_TAIL_NWAIT + 2) /* the waits, on CPU, descheduled */

struct tail_cause {
	double growth_ns; /* per tail request */
	int64_t lock;	  /* the lock (contention) that grew most, 0 none */
	double lock_growth_ns;
};

struct tail_acc {
	double ntail, nmid;
	double ns[2][LP_TAIL_NWAIT];
	struct tail_cause cause[LP_TAIL_NCAUSE];
};

static int tail_row(sqlite3_stmt *st, void *ctx)
{
	struct tail_acc *a = ctx;
	int grp = sqlite3_column_int(st, 0), cls = sqlite3_column_int(st, 1);
	if (grp < 0 || grp > 1 || cls < 0 || cls >= LP_TAIL_NWAIT)
		return 0;
	double ns = sqlite3_column_double(st, 3);
	a->ns[grp][cls] += ns;
	return 0;
}

static int tail_lock_row(sqlite3_stmt *st, void *ctx)
{
	struct tail_acc *a = ctx;
	double g = sqlite3_column_double(st, 1) / a->ntail - sqlite3_column_double(st, 2) / a->nmid;
	struct tail_cause *k = &a->cause[LP_WAIT_CONTENTION];
	if (g > k->lock_growth_ns) {
		k->lock_growth_ns = g;
		k->lock = sqlite3_column_int64(st, 0);
	}
	return 0;
}

/* Each wait against the stage interval on its thread that began last at or
 * before it (an index lookup per wait: no scan of waits per interval); a
 * wait that began before its stage is left out. A pthread_join is class
 * join, and the runtime call of a host sync with the GPU (the syncs the
 * --locks classes count) class sync, as in lp_locks.c's class totals; a
 * database without the CUDA tables leaves LP_TAIL_SYNC_SQL out. */
#define LP_TAIL_WAITS_SQL                                                                          \
	"WITH w(th, s, e, cls, lk) AS (SELECT thread_id, start_ns, start_ns + dur_ns, class, "     \
	"lock_id FROM lock_waits UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, class, " \
	"mutex_lock_id FROM cond_waits UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, "  \
	"CASE WHEN call = 'pthread_join' THEN 3 ELSE 6 + CASE category WHEN 'sleep' THEN 0 "       \
	"WHEN 'file_io' THEN 1 WHEN 'socket_io' THEN 2 WHEN 'poll_wait' THEN 3 ELSE 4 END END, "   \
	"NULL FROM blocking_calls%s), "                                                            \
	"m AS (SELECT w.*, (SELECT iv.rowid FROM temp.lp_tail_iv "                                 \
	"iv WHERE iv.th = w.th AND iv.s <= w.s ORDER BY iv.s DESC LIMIT 1) AS ivid FROM w), "      \
	"x AS (SELECT iv.grp AS grp, m.cls AS cls, m.lk AS lk, min(m.e, iv.e) - m.s AS ns FROM m " \
	"JOIN temp.lp_tail_iv iv ON iv.rowid = m.ivid AND iv.e > m.s) %s"
#define LP_TAIL_SYNC_SQL                                                                           \
	" UNION ALL SELECT a.thread_id, a.start_ns, a.end_ns, 5, NULL FROM syncs y JOIN cuda_api " \
	"a ON a.process_id = y.process_id AND a.correlation_id = y.correlation_id AND a.domain = " \
	"'runtime' WHERE y.correlation_id != 0 AND y.type != 'stream_wait_event'"

static int fnd_prep(struct lp_fnd_ctx *c, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	snprintf(c->err, c->errlen, "database error: %s", sqlite3_errmsg(c->db));
	return -EIO;
}

/* Fills a from the stage intervals of the tail and median requests. */
static int tail_waits(struct lp_fnd_ctx *c, const char *stage, const char *domain,
		      struct tail_acc *a)
{
	const struct lp_breakdown *b = c->bd;
	int rc = lp_db_exec(c->db,
			    "CREATE TEMP TABLE IF NOT EXISTS lp_tail_req(id INTEGER, grp INTEGER);"
			    /* typed: an untyped th compared with a wait's integer
			     * thread_id cannot use the index (a scan per wait) */
			    "CREATE TEMP TABLE IF NOT EXISTS lp_tail_iv(grp INTEGER, th INTEGER, "
			    "s INTEGER, e INTEGER);"
			    "CREATE INDEX IF NOT EXISTS temp.lp_tail_iv_at ON lp_tail_iv(th, s);"
			    "DELETE FROM temp.lp_tail_req; DELETE FROM temp.lp_tail_iv;",
			    c->err, c->errlen);
	sqlite3_stmt *st;
	if (rc || (rc = fnd_prep(c, "INSERT INTO temp.lp_tail_req VALUES (?, ?)", &st)))
		return rc;
	for (size_t i = 0; i < c->nreq; i++) {
		int64_t d = c->req[i].end - c->req[i].start;
		int grp = d >= b->req.p99 ? 0 : d >= b->tail.p40_ns && d <= b->tail.p60_ns ? 1 : -1;
		if (grp < 0)
			continue;
		a->ntail += grp == 0;
		a->nmid += grp == 1;
		sqlite3_bind_int64(st, 1, c->req[i].id);
		sqlite3_bind_int(st, 2, grp);
		if (!rc)
			rc = lp_db_step_all(st, NULL, NULL, c->err, c->errlen);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc || !a->ntail || !a->nmid)
		return rc ? rc : -ENODATA;
	if ((rc = fnd_prep(
		 c,
		 "INSERT INTO temp.lp_tail_iv SELECT q.grp, s.start_thread_id, s.start_ns, "
		 "s.end_ns FROM temp.lp_tail_req q JOIN ranges_named s ON s.parent_id = q.id "
		 "AND s.name = ?1 AND coalesce(s.domain, '') = ?2",
		 &st)))
		return rc;
	sqlite3_bind_text(st, 1, stage, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, domain ? domain : "", -1, SQLITE_STATIC);
	rc = lp_db_step_all(st, NULL, NULL, c->err, c->errlen);
	sqlite3_finalize(st);
	const char *cuda = lp_db_has_table(c->db, "syncs") && lp_db_has_table(c->db, "cuda_api")
			       ? LP_TAIL_SYNC_SQL
			       : "";
	/* fixed text under 2 KB: the buffer holds it whole */
	_Static_assert(sizeof(LP_TAIL_WAITS_SQL LP_TAIL_SYNC_SQL) + 200 < 4096, "sql[] too small");
	char sql[4096];
	snprintf(sql, sizeof(sql), LP_TAIL_WAITS_SQL, cuda,
		 "SELECT grp, cls, 0, sum(ns) FROM x GROUP BY 1, 2");
	rc = rc ? rc : lp_db_each(c->db, sql, NULL, 0, tail_row, a, c->err, c->errlen);
	snprintf(sql, sizeof(sql), LP_TAIL_WAITS_SQL, cuda,
		 "SELECT lk, sum(CASE WHEN grp = 0 THEN ns ELSE 0 END), sum(CASE WHEN grp = 1 THEN "
		 "ns ELSE 0 END) FROM x WHERE cls = 0 GROUP BY lk");
	rc = rc ? rc : lp_db_each(c->db, sql, NULL, 0, tail_lock_row, a, c->err, c->errlen);
	return rc;
}

static const char *tail_cause_label(int k)
{
	static const char *const l[LP_TAIL_NCAUSE] = {"lock wait",
						      "GIL wait",
						      "idle wait",
						      "join wait",
						      "cond wait",
						      "sync wait",
						      "sleep",
						      "file I/O",
						      "socket I/O",
						      "poll wait",
						      "other wait",
						      "cpu",
						      "descheduled (runnable, not running)"};
	return k >= 0 && k < LP_TAIL_NCAUSE ? l[k] : "?";
}

/* Appends ", cause +X ms [on lock]" for every cause >= 20% of the stage's
 * growth, largest first; the causes also become sites. Returns 0 or
 * -ENODATA when the stage's intervals cannot be found (--stage-depth > 1). */
static int tail_causes(struct lp_fnd_ctx *c, struct lp_finding *f, double grow, char *why,
		       size_t len, int n)
{
	const struct lp_breakdown *b = c->bd;
	const struct lp_bd_tail *t = &b->tail;
	const struct lp_bd_stage *sg = &b->stages[t->stage];
	if (b->stage_depth > 1 || grow <= 0)
		return -ENODATA;
	struct tail_acc a = {0};
	int rc = tail_waits(c, sg->name, sg->domain, &a);
	if (rc)
		return rc;
	double waits_tail = 0, waits_mid = 0, wgrow = 0;
	for (int k = 0; k < LP_TAIL_NWAIT; k++) {
		double tk = a.ns[0][k] / a.ntail, mk = a.ns[1][k] / a.nmid;
		a.cause[k].growth_ns = tk - mk;
		waits_tail += tk;
		waits_mid += mk;
		wgrow += tk - mk;
	}
	double rest = grow - wgrow, desched = 0;
	if (t->has_cnt) /* off-CPU net of the recorded waits, never negative */
		desched = fmax(0, fmax(0, t->offcpu_tail_ns - waits_tail) -
				      fmax(0, t->offcpu_mid_ns - waits_mid));
	desched = fmin(desched, fmax(0, rest));
	a.cause[LP_TAIL_NWAIT].growth_ns = rest - desched;
	a.cause[LP_TAIL_NWAIT + 1].growth_ns = desched;
	int done[LP_TAIL_NCAUSE] = {0}, listed = 0;
	for (;;) {
		int best = -1;
		for (int k = 0; k < LP_TAIL_NCAUSE; k++)
			if (!done[k] && a.cause[k].growth_ns >= 0.2 * grow &&
			    (best < 0 || a.cause[k].growth_ns > a.cause[best].growth_ns))
				best = k;
		if (best < 0)
			break;
		done[best] = 1;
		const struct lp_lock_row *lr = best == LP_WAIT_CONTENTION && a.cause[best].lock
						   ? lp_lock_row(c, a.cause[best].lock)
						   : NULL;
		char *what = findings_fmt("%s%s%s", tail_cause_label(best), lr ? " on " : "",
					  lr && lr->name ? lr->name : "");
		if (n > 0 && (size_t)n < len)
			n += snprintf(why + n, len - (size_t)n, "%s%s +%.3f ms",
				      listed ? ", " : ": ", what ? what : "",
				      a.cause[best].growth_ns / 1e6);
		findings_site(f, what, (int64_t)a.ntail,
			      (int64_t)(a.cause[best].growth_ns * a.ntail));
		free(what);
		listed++;
	}
	return listed ? 0 : -ENODATA;
}

static int rule_tail(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	const struct lp_breakdown *b = c->bd;
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges");
	if (!b->tail.valid || b->req.p50 <= 0)
		return findings_skip(c, "too few requests for a p99 (the breakdown needs 20)");
	double ratio = (double)b->req.p99 / (double)b->req.p50;
	if (!lp_rule_passes(r, ratio, thr))
		return findings_quiet(c, ratio);
	struct lp_finding *f = lp_fnd_new(c, r, ratio, thr);
	if (!f)
		return -ENOMEM;
	/* Basis: the tail requests' time above the median. */
	int64_t tail_ns = 0, excess = 0, ntail = 0;
	stake_reset(c);
	for (size_t i = 0; i < c->nreq; i++) {
		int64_t d = c->req[i].end - c->req[i].start;
		if (d < b->req.p99)
			continue;
		ntail++;
		tail_ns += d;
		excess += d - b->req.p50;
		c->stake[i] = d - b->req.p50;
	}
	const struct lp_bd_tail *t = &b->tail;
	int64_t saving = excess;
	char why[600] = "";
	if (t->stage >= 0 && (size_t)t->stage < b->nstages) {
		const char *sn = b->stages[t->stage].name;
		f->subject = strdup(sn);
		double grow = t->stage_tail_ns - t->stage_mid_ns;
		saving = min64(excess, (int64_t)(grow * (double)ntail));
		int n = snprintf(why, sizeof(why), "; stage %s grows from %.3f ms to %.3f ms", sn,
				 t->stage_mid_ns / 1e6, t->stage_tail_ns / 1e6);
		f->site_kind = "stages";
		findings_site(f, sn, ntail, (int64_t)(grow * (double)ntail));
		int causes = tail_causes(c, f, grow, why, sizeof(why), n);
		if (causes && causes != -ENODATA)
			return causes;
		if (causes == 0)
			f->site_kind = "the tail stage, then what grew in it";
		if (causes && t->cat >= 0 && t->cat < b->ncat && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n, ", mostly %s (+%.3f ms)",
				      b->cat_label[t->cat], (t->cat_tail_ns - t->cat_mid_ns) / 1e6);
		if (causes && t->has_key && t->key_name && n > 0 && (size_t)n < sizeof(why))
			snprintf(why + n, sizeof(why) - (size_t)n, " %s %s",
				 t->key_site ? "at" : "on", t->key_name);
		if (t->cat >= 0 && t->cat < b->ncat) {
			findings_num(f, "stage_tail_ns", "stage mean in p99 requests", "ns",
				     t->stage_tail_ns);
			findings_num(f, "stage_median_ns", "stage mean in median requests", "ns",
				     t->stage_mid_ns);
			findings_num(f, "category_growth_ns", b->cat_label[t->cat], "ns",
				     t->cat_tail_ns - t->cat_mid_ns);
		}
	}
	findings_num(f, "p50_ns", "p50", "ns", (double)b->req.p50);
	findings_num(f, "p99_ns", "p99", "ns", (double)b->req.p99);
	findings_num(f, "ratio", "p99 / p50", "ratio", ratio);
	findings_num(f, "tail_requests", "requests at or above p99", "count", (double)ntail);
	f->summary = findings_fmt("p99 is %.1fx the median (%.3f ms vs %.3f ms)%s", ratio,
				  b->req.p99 / 1e6, b->req.p50 / 1e6, why);
	findings_saving(f, saving, excess, "tail requests' time above the median");
	(void)tail_ns;
	findings_example(c, f);
	return 1;
}

/* Per thread, the leading requests slower than ratio x the median. */
static int rule_cold(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges");
	if (c->nreq < 20)
		return findings_skip(c, "fewer than 20 requests: no steady state to compare with");
	int64_t *d = req_durs(c);
	if (!d)
		return -ENOMEM;
	int64_t p50 = lp_pctl(d, c->nreq, 50);
	free(d);
	if (p50 <= 0)
		return findings_skip(c, "zero median request time");
	stake_reset(c);
	int64_t cold = 0, cold_ns = 0, excess = 0, first_ns = 0, worst = 0;
	size_t first = c->nreq, limit = c->nreq / 4;
	for (size_t i = 0; i < c->nreq;) {
		size_t j = i, lead = 0;
		for (; j < c->nreq && c->req[j].thread == c->req[i].thread; j++) {
			int64_t dur = c->req[j].end - c->req[j].start;
			if (lead == j - i && lead < limit &&
			    lp_rule_passes(r, (double)dur / (double)p50, thr)) {
				lead++;
				cold++;
				cold_ns += dur;
				excess += dur - p50;
				c->stake[j] = dur - p50;
				if (dur > worst)
					worst = dur;
				if (first == c->nreq || c->req[j].start < first_ns)
					first = j, first_ns = c->req[j].start;
			}
		}
		i = j;
	}
	/* The value: the first request of the run over the median. */
	size_t f0 = 0;
	for (size_t i = 1; i < c->nreq; i++)
		if (c->req[i].start < c->req[f0].start)
			f0 = i;
	double ratio = (double)(c->req[f0].end - c->req[f0].start) / (double)p50;
	if (!cold)
		return findings_quiet(c, ratio);
	ratio = (double)worst / (double)p50;
	struct lp_finding *f = lp_fnd_new(c, r, ratio, thr);
	if (!f)
		return -ENOMEM;
	findings_num(f, "cold_requests", "slow first requests", "count", (double)cold);
	findings_num(f, "cold_ns", "their time", "ns", (double)cold_ns);
	findings_num(f, "steady_p50_ns", "steady-state p50", "ns", (double)p50);
	findings_num(f, "worst_ratio", "slowest first request / p50", "ratio", ratio);
	f->summary =
	    findings_fmt("the first %" PRId64 " request(s) of their threads took up to %.1fx the "
			 "median (%.3f ms vs %.3f ms)",
			 cold, ratio, worst / 1e6, p50 / 1e6);
	findings_saving(f, excess, cold_ns, "the first requests' time");
	example_req(c, f, first, c->stake[first]);
	return 1;
}

/* Lock and condition waits and blocking calls that began inside a request
 * range, on the thread that opened it: each switches the thread out once. Waits elsewhere
 * (background threads, start-up) explain none of the requests' switches. */
static int64_t req_waits(struct lp_fnd_ctx *c)
{
#define LP_REQ_WAITS(table)                                                                        \
	"SELECT count(*) FROM ranges_named r JOIN " table " w ON w.thread_id = "                   \
	"r.start_thread_id AND w.start_ns >= r.start_ns AND w.start_ns < r.end_ns "                \
	"WHERE r.name = ?1 AND coalesce(r.domain, '') = ?2"
	static const char *const sql[] = {LP_REQ_WAITS("lock_waits"), LP_REQ_WAITS("cond_waits"),
					  LP_REQ_WAITS("blocking_calls")};
#undef LP_REQ_WAITS
	struct lp_db_arg a[2];
	int64_t n = 0;
	req_args(c, a);
	for (size_t i = 0; i < ARRAY_SIZE(sql); i++) {
		int64_t k;
		if (i == 2 && !lp_db_has_table(c->db, "blocking_calls"))
			break;
		int rc = lp_db_get_int(c->db, sql[i], a, 2, 0, &k, c->err, c->errlen);
		if (rc)
			return rc;
		n += k;
	}
	return n;
}

struct cpu_sums {
	double cs, mig, task, nr;
};

static int cpu_row(sqlite3_stmt *st, void *ctx)
{
	struct cpu_sums *x = ctx;
	const char *e = (const char *)sqlite3_column_text(st, 0);
	double v = sqlite3_column_double(st, 1);
	if (!e)
		return 0;
	if (!strcmp(e, "context-switches") || !strcmp(e, "cs"))
		x->cs = v, x->nr = sqlite3_column_double(st, 2);
	else if (!strcmp(e, "cpu-migrations") || !strcmp(e, "migrations"))
		x->mig = v;
	else if (!strcmp(e, "task-clock"))
		x->task = v;
	return 0;
}

/* Context switches and migrations per request from range_counters, and
 * the request time off the CPU that no recorded wait explains. */
static int rule_cpu(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges");
	if (!lp_db_has_table(c->db, "range_counters") ||
	    !findings_q1(c, "SELECT count(*) FROM range_counters"))
		return findings_skip(c, "no CPU counters (record with --counters)");
	struct cpu_sums x = {NAN, NAN, NAN, 0};
	struct lp_db_arg a[2];
	req_args(c, a);
	int rc = lp_db_query(c->db,
			     "SELECT e.name, sum(rc.delta), count(*) FROM range_counters rc JOIN "
			     "counter_events e ON e.id = rc.event_id JOIN ranges_named r ON r.id = "
			     "rc.range_id WHERE r.name = ?1 AND coalesce(r.domain, '') = ?2 AND "
			     "e.available GROUP BY e.name",
			     a, 2, cpu_row, &x, c->err, c->errlen);
	if (rc)
		return rc;
	double cs = x.cs, mig = x.mig, task = x.task, nr = x.nr;
	if (isnan(cs) || nr <= 0)
		return findings_skip(c, "context-switches was not counted for the request ranges");
	/* Blocking waits switch out voluntarily: one switch each is expected. */
	int64_t waits = 0, wait_ns = 0;
	static const char *const waits_cats[] = {"lock_wait", "cond_wait",  "sync_wait",
						 "sleep",     "file_io",    "socket_io",
						 "poll_wait", "other_block"};
	for (size_t k = 0; k < sizeof(waits_cats) / sizeof(waits_cats[0]); k++) {
		int i = bd_cat(c->bd, waits_cats[k]);
		wait_ns += i >= 0 ? c->bd->req_cat_ns[i] : 0;
	}
	waits = req_waits(c);
	if (waits < 0)
		return (int)waits;
	double per_req = cs / nr, excess = (cs - (double)waits) / nr;
	if (excess < 0)
		excess = 0;
	double mig_per = isnan(mig) ? NAN : mig / nr;
	double value = excess + (isnan(mig_per) ? 0 : mig_per);
	if (!lp_rule_passes(r, value, thr))
		return findings_quiet(c, value);
	struct lp_finding *f = lp_fnd_new(c, r, value, thr);
	if (!f)
		return -ENOMEM;
	findings_num(f, "context_switches_per_request", "context switches per request",
		     "per_request", per_req);
	findings_num(f, "unexplained_switches_per_request", "switches not from a recorded wait",
		     "per_request", excess);
	if (!isnan(mig_per))
		findings_num(f, "migrations_per_request", "CPU migrations per request",
			     "per_request", mig_per);
	/* Off-CPU time no wait explains: request time - on-CPU - waits. */
	int64_t off = 0;
	if (!isnan(task)) {
		off = c->req_ns - (int64_t)task - wait_ns;
		if (off < 0)
			off = 0;
		findings_num(f, "on_cpu_ns", "on-CPU (task-clock)", "ns", task);
		findings_num(f, "off_cpu_unexplained_ns", "off-CPU, not waiting", "ns",
			     (double)off);
	}
	f->summary =
	    findings_fmt("requests were switched out %.1f times each (%.1f not explained by "
			 "lock or condition waits or blocking calls)%s",
			 per_req, excess,
			 isnan(task) ? "; task-clock was not counted, so no time estimate" : "");
	findings_saving(f, off, off, "request time off the CPU without a recorded wait");
	return 1;
}

/* ---- GPU rules ------------------------------------------------------- */

static int need_gpu(struct lp_fnd_ctx *c)
{
	return c->gpu ? 0 : findings_skip(c, c->gpu_why);
}

static const char *findings_where(const struct lp_fnd_ctx *c)
{
	return c->has_req ? "of request time" : "of thread time";
}

/* ---- blocking calls and CPU starvation -------------------------------- */

/* Blocking calls of some categories, labelled by call, descriptor kind and
 * the function that made the call (stacks.top_frame). */
#define LP_BLOCK_ROWS(where)                                                                       \
	"SELECT b.thread_id, b.start_ns, b.start_ns + b.dur_ns, b.call || coalesce(' on ' || "     \
	"b.fd_kind, '') || coalesce(' in ' || f.function, '') || coalesce(' ' || f.file || ':' "   \
	"|| f.line, '') FROM blocking_calls b LEFT JOIN stacks s ON s.id = b.stack_id LEFT JOIN "  \
	"frames f ON f.id = s.top_frame WHERE " where " AND ?1 IS ?1 ORDER BY 4"

/* Shared by blocking-io-in-request and sleep-in-request: the calls' time
 * inside requests against request time. */
static int rule_block(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr, const char *sql,
		      const char *what, const char *basis)
{
	if (!c->has_req)
		return findings_skip(
		    c, "no NVTX request ranges: waiting for work and serving it cannot "
		       "be told apart");
	if (!lp_db_has_table(c->db, "blocking_calls"))
		return findings_skip(
		    c, "no blocking calls recorded (a database from an older latprof)");
	struct acc a;
	int rc = acc_run(c, sql, &a);
	if (rc)
		return rc;
	double share = findings_share(a.ns, c->req_ns);
	int found = 0;
	if (a.n > 0 && lp_rule_passes(r, share, thr)) {
		struct lp_finding *f = lp_fnd_new(c, r, share, thr);
		if (!f) {
			acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		findings_num(f, "calls", "calls inside requests", "count", (double)a.n);
		findings_num(f, "per_request", "per request", "per_request",
			     (double)a.n / (double)c->nreq);
		findings_num(f, "blocked_ns", "time in them inside requests", "ns", (double)a.ns);
		findings_num(f, "share", "of request time", "share", share);
		acc_sites(f, &a, "calls");
		f->summary = findings_fmt("requests spent %.1f%% of their time in %" PRId64 " %s "
					  "(%.2f per request, %.3f ms each on average)",
					  100 * share, a.n, what, (double)a.n / (double)c->nreq,
					  (double)a.ns / (double)a.n / 1e6);
		findings_saving(f, a.ns, a.ns, basis);
		findings_example(c, f);
	} else {
		findings_quiet(c, share);
	}
	acc_free(&a);
	return found;
}

static int rule_block_io(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	return rule_block(c, r, thr, LP_BLOCK_ROWS("b.category IN ('file_io', 'socket_io')"),
			  "blocking file or socket I/O calls",
			  "file and socket I/O inside requests");
}

static int rule_sleep(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	return rule_block(c, r, thr, LP_BLOCK_ROWS("b.category = 'sleep'"), "sleep calls",
			  "sleeping inside requests");
}

/* Threads on a CPU at least half of their life (thread task-clock), and
 * the cores all threads kept busy on average over the run. */
static int64_t findings_busy_threads(const struct lp_breakdown *b, double *cores)
{
	int on = bd_cat(b, "on_cpu");
	int64_t n = 0, on_ns = 0;
	for (size_t i = 0; on >= 0 && i < b->nthreads; i++) {
		n += b->threads[i].total_ns > 0 &&
		     2 * b->threads[i].cat_ns[on] >= b->threads[i].total_ns;
		on_ns += b->threads[i].cat_ns[on];
	}
	int64_t run = b->run_end_ns - b->run_start_ns;
	*cores = run > 0 ? (double)on_ns / (double)run : NAN;
	return n;
}

/* Requests runnable but not running: the breakdown's preempted share. */
static int rule_starved(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	const struct lp_breakdown *b = c->bd;
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges");
	int on = bd_cat(b, "on_cpu"), pre = bd_cat(b, "preempted");
	int64_t tot = 0;
	for (int k = 0; k < b->ncat; k++)
		tot += b->req_cat_ns[k];
	if (on < 0 || pre < 0 || !(b->req_cat_ns[on] + b->req_cat_ns[pre]))
		return findings_skip(c, "task-clock was not counted in the requests (record with "
					"--counters default)");
	int64_t pre_ns = b->req_cat_ns[pre];
	double share = findings_share(pre_ns, tot);
	if (!lp_rule_passes(r, share, thr))
		return findings_quiet(c, share);
	struct lp_finding *f = lp_fnd_new(c, r, share, thr);
	if (!f)
		return -ENOMEM;
	/* a lookup with a default: a read error is recorded for lp_db_fault */
	int64_t cpus = lp_db_int(c->db, "SELECT value FROM meta WHERE key = 'run.cpus_allowed'", 0);
	findings_num(f, "preempted_ns", "runnable, waiting for a CPU", "ns", (double)pre_ns);
	findings_num(f, "on_cpu_ns", "on-CPU (task-clock)", "ns", (double)b->req_cat_ns[on]);
	findings_num(f, "share", "of request time", "share", share);
	if (cpus > 0)
		findings_num(f, "cpus_allowed", "cores the process may use", "count", (double)cpus);
	double cores;
	int64_t busy = findings_busy_threads(b, &cores);
	findings_num(f, "busy_threads", "threads on a CPU half their life or more", "count",
		     (double)busy);
	if (!isnan(cores))
		findings_num(f, "cores_used",
			     "cores in use on average (all threads' task-clock / run)", "count",
			     cores);
	if (!isnan(b->req_cnt.v[LP_BD_CNT_CS]))
		findings_num(f, "context_switches_per_request", "context switches per request",
			     "per_request", b->req_cnt.v[LP_BD_CNT_CS]);
	char use[96] = "";
	if (!isnan(cores))
		snprintf(use, sizeof(use), "; the process kept %.1f cores busy on average", cores);
	if (!isnan(cores) && cpus > 0)
		snprintf(use + strlen(use), sizeof(use) - strlen(use), " of %" PRId64 " allowed",
			 cpus);
	f->summary = findings_fmt("requests waited %.1f%% of their time for a CPU (runnable, not "
				  "running)%s",
				  100 * share, use);
	findings_saving(f, pre_ns, pre_ns, "request time runnable but off the CPU");
	return 1;
}

static int runq_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_map *m = ctx;
	return lp_map_put(m, (uint64_t)sqlite3_column_int64(st, 0) + 1,
			  (uint64_t)sqlite3_column_int64(st, 1))
		   ? -ENOMEM
		   : 0;
}

/* Every thread's waits that waited for a CPU, in one pass per table. */
static int runq_load(struct lp_fnd_ctx *c)
{
	if (c->runq_loaded)
		return 0;
	c->runq_loaded = 1;
	/* lock_waits' count from its grouped waits (temp.lp_wagg, lp_locks.c) */
	return lp_db_query(
	    c->db,
	    "SELECT thread_id, SUM(k) FROM (SELECT thread_id, count(*) AS k FROM "
	    "blocking_calls WHERE runq_ns > 0 GROUP BY 1 UNION ALL SELECT thread_id, "
	    "SUM(rq) FROM temp.lp_wagg WHERE src = 0 GROUP BY 1 UNION ALL SELECT "
	    "thread_id, count(*) FROM cond_waits WHERE runq_ns > 0 GROUP BY 1) "
	    "GROUP BY thread_id",
	    NULL, 0, runq_row, &c->runq, c->err, c->errlen);
}

/* Threads by the time they waited for a CPU, most first. */
static int sat_cmp(const void *pa, const void *pb, void *arg)
{
	const struct lp_breakdown *b = arg;
	int pre = bd_cat(b, "preempted");
	int64_t x = b->threads[*(const size_t *)pa].cat_ns[pre];
	int64_t y = b->threads[*(const size_t *)pb].cat_ns[pre];
	return (x < y) - (x > y);
}

/* A thread as a site: "tid 123 (name, pid 45)", its waits that waited for a
 * CPU, and its preempted time. */
static void sat_site(struct lp_fnd_ctx *c, struct lp_finding *f, const struct lp_bd_thread *t,
		     int pre)
{
	struct lp_db_arg id = LP_DB_INT(t->thread_id);
	int64_t pid = lp_db_int_args(c->db,
				     "SELECT p.pid FROM threads t JOIN processes p ON p.id = "
				     "t.process_id WHERE t.id = ?",
				     &id, 1, 0);
	uint64_t w = 0;
	int64_t waits = lp_map_get(&c->runq, (uint64_t)t->thread_id + 1, &w) ? (int64_t)w : 0;
	char *what = findings_fmt("tid %lld (%s, pid %lld): %.0f%% of its life", (long long)t->tid,
				  t->name && *t->name ? t->name : "?", (long long)pid,
				  100 * findings_share(t->cat_ns[pre], t->total_ns));
	findings_site(f, what, waits, t->cat_ns[pre]);
	free(what);
}

/*
 * The whole run, requests or not: every thread's time waiting for a CPU
 * (the breakdown's preempted: its waits' run-queue part, from schedstat,
 * and the time outside waits not on a CPU by task-clock) against its life.
 * Only where the recorded threads themselves outnumber the CPUs: runnable
 * threads on average (time on a CPU or waiting for one, over the run) more
 * than the cores the app was allowed. A run that waits as much beside
 * other tenants' load is cpu-interference's, not too many threads.
 */
static int rule_saturated(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	const struct lp_breakdown *b = c->bd;
	int on = bd_cat(b, "on_cpu"), pre = bd_cat(b, "preempted");
	int un = bd_cat(b, "cpu_or_preempted");
	int64_t life = 0, runnable = 0, queued = 0, wall = b->run_end_ns - b->run_start_ns;
	for (size_t i = 0; on >= 0 && pre >= 0 && un >= 0 && i < b->nthreads; i++) {
		const struct lp_bd_thread *t = &b->threads[i];
		life += t->total_ns;
		queued += t->cat_ns[pre];
		runnable += t->cat_ns[on] + t->cat_ns[pre] + t->cat_ns[un];
	}
	if (!life || wall <= 0)
		return findings_skip(c, "no thread time recorded");
	double share = findings_share(queued, life), nrun = (double)runnable / (double)wall;
	int64_t cpus = lp_db_int(c->db, "SELECT value FROM meta WHERE key = 'run.cpus_allowed'", 0);
	if (cpus <= 0)
		cpus = lp_db_int(c->db, "SELECT value FROM meta WHERE key = 'host.cpus_online'", 0);
	if (!lp_rule_passes(r, share, thr) || (cpus > 0 && nrun <= (double)cpus))
		return findings_quiet(c, share);
	struct lp_finding *f = lp_fnd_new(c, r, share, thr);
	if (!f)
		return -ENOMEM;
	findings_num(f, "runnable_threads", "runnable threads on average (on or waiting for a CPU)",
		     "count", nrun);
	if (cpus > 0)
		findings_num(f, "cpus", "cores the app may use", "count", (double)cpus);
	findings_num(f, "queued_ns", "thread time waiting for a CPU", "ns", (double)queued);
	findings_num(f, "share", "of all threads' time", "share", share);
	double cores;
	findings_busy_threads(b, &cores);
	if (!isnan(cores))
		findings_num(f, "cores_used",
			     "cores in use on average (all threads' task-clock / run)", "count",
			     cores);
	int rc = runq_load(c);
	if (rc)
		return rc;
	size_t *ord = malloc(b->nthreads * sizeof(*ord));
	if (ord) {
		for (size_t i = 0; i < b->nthreads; i++)
			ord[i] = i;
		qsort_r(ord, b->nthreads, sizeof(*ord), sat_cmp, (void *)b);
		for (size_t i = 0; i < b->nthreads && i < LP_FND_MAXSITES; i++)
			if (b->threads[ord[i]].cat_ns[pre] > 0)
				sat_site(c, f, &b->threads[ord[i]], pre);
		free(ord);
	}
	f->site_kind = "threads waiting longest for a CPU (waits that did)";
	char on_m[32] = "";
	if (cpus > 0)
		snprintf(on_m, sizeof(on_m), " on %lld CPU%s", (long long)cpus,
			 cpus == 1 ? "" : "s");
	f->summary =
	    findings_fmt("CPU saturated: %.1f runnable threads%s; threads waited %.1f%% of "
			 "their time for a CPU",
			 nrun, on_m, 100 * share);
	findings_saving(f, queued, queued, "thread time runnable but off the CPU");
	return 1;
}

/* The API call that issued a GPU operation: the runtime one when both. */
#define LP_API_OF(tbl)                                                                             \
	"JOIN cuda_api a ON a.id = (SELECT x.id FROM cuda_api x WHERE x.process_id = " tbl         \
	".process_id AND x.correlation_id = " tbl ".correlation_id ORDER BY x.domain = "           \
	"'runtime' DESC, x.id LIMIT 1) LEFT JOIN strings n ON n.id = a.name_id "

/* Host blocked in synchronous copies; host-to-device copies <= 64 KB are
 * left out as nsys does (they are staged and return at once). */
static int rule_sync_memcpy(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int rc = need_gpu(c);
	if (rc)
		return rc;
	struct acc a;
	rc = acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, coalesce(n.value, 'cudaMemcpy') || "
	    "' ' || m.copy_kind || ' ' || m.src_kind || '->' || m.dst_kind FROM memcpys "
	    "m " LP_API_OF("m") "WHERE m.async = 0 AND NOT (m.copy_kind = 'HtoD' AND m.bytes <= "
				"65536) AND ?1 IS NOT NULL ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	int64_t bytes =
	    findings_q1(c, "SELECT coalesce(sum(bytes), 0) FROM memcpys WHERE async = 0 AND "
			   "NOT (copy_kind = 'HtoD' AND bytes <= 65536)");
	double share = findings_share(a.ns, c->has_req ? c->req_ns : c->thread_ns);
	int found = 0;
	if (a.n > 0 && lp_rule_passes(r, share, thr)) {
		struct lp_finding *f = lp_fnd_new(c, r, share, thr);
		if (!f) {
			acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		findings_num(f, "copies", "synchronous copies", "count", (double)a.n);
		findings_num(f, "blocked_ns", "host blocked in them", "ns", (double)a.ns);
		findings_num(f, "share", findings_where(c), "share", share);
		findings_num(f, "bytes", "bytes (whole run)", "bytes", (double)bytes);
		if (c->has_req)
			findings_num(f, "per_request", "per request", "per_request",
				     (double)a.n / (double)c->nreq);
		acc_sites(f, &a, "copies");
		f->summary = findings_fmt("the host sat %.1f%% %s blocked in %" PRId64
					  " synchronous cudaMemcpy calls",
					  100 * share, findings_where(c), a.n);
		findings_saving(f, a.ns, a.ns, "host time blocked in synchronous copies");
		findings_example(c, f);
	} else {
		findings_quiet(c, share);
	}
	acc_free(&a);
	return found;
}

static int rule_pageable(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int rc = need_gpu(c);
	if (rc)
		return rc;
	struct acc a;
	rc = acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, coalesce(n.value, 'memcpy') || ' ' "
	    "|| m.copy_kind || ' ' || m.src_kind || '->' || m.dst_kind FROM memcpys m " LP_API_OF(
		"m") "WHERE m.async = 1 AND (m.src_kind = 'pageable' OR m.dst_kind = "
		     "'pageable') AND ?1 IS NOT NULL ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	double per = c->has_req ? (double)a.n / (double)c->nreq : (double)a.n;
	int found = 0;
	if (a.n > 0 && lp_rule_passes(r, (double)a.n, thr)) {
		struct lp_finding *f = lp_fnd_new(c, r, (double)a.n, thr);
		if (!f) {
			acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		findings_num(f, "copies", "async copies with pageable memory", "count",
			     (double)a.n);
		findings_num(f, "per_request", "per request", "per_request", per);
		findings_num(f, "blocked_ns", "host time in those calls", "ns", (double)a.ns);
		acc_sites(f, &a, "copies");
		f->summary =
		    findings_fmt("%" PRId64 " cudaMemcpyAsync calls used pageable host memory: "
				 "they run synchronously, staged through a driver buffer",
				 a.n);
		findings_saving(f, a.ns, a.ns, "host time in async copies of pageable memory");
		findings_example(c, f);
	} else {
		findings_quiet(c, (double)a.n);
	}
	acc_free(&a);
	return found;
}

static int rule_sync(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int rc = need_gpu(c);
	if (rc)
		return rc;
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges: syncs per request are undefined");
	struct acc a;
	rc = acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, n.value FROM cuda_api a JOIN strings "
	    "n ON n.id = a.name_id WHERE a.domain = ?1 AND n.value LIKE '%Synchronize%' "
	    "ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	double per = (double)a.n / (double)c->nreq;
	double share = findings_share(a.ns, c->req_ns);
	int found = 0;
	if (lp_rule_passes(r, per, thr)) {
		struct lp_finding *f = lp_fnd_new(c, r, per, thr);
		if (!f) {
			acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		findings_num(f, "syncs_per_request", "sync calls per request", "per_request", per);
		findings_num(f, "blocked_ns", "host blocked in them", "ns", (double)a.ns);
		findings_num(f, "share", "of request time", "share", share);
		acc_sites(f, &a, "API calls");
		f->summary =
		    findings_fmt("%.1f synchronization calls per request; the host sat %.1f%% of "
				 "request time blocked in them",
				 per, 100 * share);
		/* One sync per request is needed to hand the result back. */
		findings_saving(f, (int64_t)((double)a.ns * (1.0 - 1.0 / per)), a.ns,
				"host time blocked in sync calls");
		findings_example(c, f);
	} else {
		findings_quiet(c, per);
	}
	acc_free(&a);
	return found;
}

/* GPU busy (any op of the process) inside requests that launched work. */
static int rule_gpu_idle(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int rc = need_gpu(c);
	if (rc)
		return rc;
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges");
	struct lp_ivset busy;
	rc = lp_ivset_from_sql(c->db, "SELECT process_id, start_ns, end_ns FROM gpu_ops", NULL, 0,
			       &busy, c->err, c->errlen);
	/* API time per request: what launch overhead costs the GPU. */
	struct acc a;
	if (rc == 0)
		rc =
		    acc_run(c,
			    "SELECT a.thread_id, a.start_ns, a.end_ns, 'api' FROM cuda_api a WHERE "
			    "a.domain = ?1",
			    &a);
	if (rc) {
		lp_ivset_free(&busy);
		return rc;
	}
	int64_t idle = 0, gpu_req_ns = 0, api_ns = 0, nreq = 0;
	int64_t *api = c->stake; /* per request API time, reused below */
	int64_t *permille = malloc((c->nreq ? c->nreq : 1) * sizeof(*permille));
	if (!permille) {
		lp_ivset_free(&busy);
		acc_free(&a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->nreq; i++) {
		if (api[i] <= 0)
			continue;
		const struct req *q = &c->req[i];
		int64_t d = q->end - q->start,
			id = d - lp_ivset_overlap(&busy, q->proc, q->start, q->end);
		nreq++;
		gpu_req_ns += d;
		idle += id;
		api_ns += min64(api[i], id);
		api[i] = id; /* the example: the request with the most idle GPU */
		permille[nreq - 1] = d > 0 ? id * 1000000 / d : 0;
	}
	lp_ivset_free(&busy);
	acc_free(&a);
	/* The value is the median request's idle share: a few requests the
	 * host was preempted in must not make a busy GPU look idle. */
	double med_share = nreq ? (double)lp_pctl(permille, (size_t)nreq, 50) / 1e6 : 0;
	free(permille);
	double share = findings_share(idle, gpu_req_ns);
	if (!nreq || !lp_rule_passes(r, med_share, thr))
		return findings_quiet(c, med_share);
	struct lp_finding *f = lp_fnd_new(c, r, med_share, thr);
	if (!f)
		return -ENOMEM;
	int64_t med = findings_q1(
	    c, "WITH d AS (SELECT min(start_ns) - api_end_ns AS v FROM gpu_launches "
	       "GROUP BY process_id, correlation_id) SELECT v FROM d ORDER BY 1 LIMIT 1 "
	       "OFFSET (SELECT count(*) / 2 FROM d)");
	findings_num(f, "idle_ns", "GPU idle inside requests", "ns", (double)idle);
	findings_num(f, "share", "of those requests' time", "share", share);
	findings_num(f, "median_share", "in the median request", "share", med_share);
	findings_num(f, "requests", "requests with GPU work", "count", (double)nreq);
	findings_num(f, "launch_api_ns", "host time in CUDA API while idle", "ns", (double)api_ns);
	findings_num(f, "launch_delay_p50_ns", "launch delay p50", "ns", (double)med);
	/* Launches that are CUDA graphs already: capturing a graph is not what
	 * is left to do, and the finding says so. */
	int64_t graphs =
	    findings_q1(c, "SELECT count(DISTINCT process_id || ':' || correlation_id) "
			   "FROM kernels WHERE graph_id <> 0");
	int64_t launches = findings_q1(c, "SELECT count(DISTINCT process_id || ':' || "
					  "correlation_id) FROM gpu_launches");
	if (graphs > 0)
		findings_num(f, "graph_launches", "launches that are CUDA graphs", "count",
			     (double)graphs);
	f->summary =
	    graphs > 0
		? findings_fmt("the GPU idled %.1f%% of the median request that used it (%.1f%% "
			       "overall): the host, not the GPU, sets the pace; %lld of %lld "
			       "launches are CUDA graphs already: larger graphs or batched "
			       "requests are what is left",
			       100 * med_share, 100 * share, (long long)graphs, (long long)launches)
		: findings_fmt("the GPU idled %.1f%% of the median request that used it (%.1f%% "
			       "overall): the host, not the GPU, sets the pace",
			       100 * med_share, 100 * share);
	findings_saving(f, api_ns, idle, "GPU idle time inside requests");
	findings_example(c, f);
	return 1;
}

/* Kernels shorter than the API call that launched them. A CUDA graph's
 * kernel nodes share one cudaGraphLaunch: its cost is paid once for all of
 * them, so they are not counted (and graphs are the fix offered). */
static int rule_small_kernels(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int rc = need_gpu(c);
	if (rc)
		return rc;
	struct acc a;
	rc = acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, coalesce(k2.value, '?') FROM "
	    "kernels k " LP_API_OF(
		"k") "LEFT JOIN strings k2 ON k2.id = k.name_id WHERE "
		     "k.end_ns - k.start_ns < a.end_ns - a.start_ns AND k.graph_id = 0 AND ?1 IS "
		     "NOT NULL ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	int64_t all = findings_q1(c, "SELECT count(*) FROM kernels");
	double per = c->has_req ? (double)a.n / (double)c->nreq : (double)a.n;
	int found = 0;
	if (a.n > 0 && lp_rule_passes(r, per, thr)) {
		struct lp_finding *f = lp_fnd_new(c, r, per, thr);
		if (!f) {
			acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		findings_num(f, "small_kernels", "kernels shorter than their launch", "count",
			     (double)a.n);
		findings_num(f, "per_request", "per request", "per_request", per);
		findings_num(f, "all_kernels", "kernels (whole run)", "count", (double)all);
		findings_num(f, "launch_ns", "host time launching them", "ns", (double)a.ns);
		acc_sites(f, &a, "kernels");
		f->summary =
		    findings_fmt("%.1f kernels per request ran shorter than the cudaLaunchKernel "
				 "call that issued them",
				 per);
		findings_saving(f, a.ns, a.ns, "host time launching short kernels");
		findings_example(c, f);
	} else {
		findings_quiet(c, per);
	}
	acc_free(&a);
	return found;
}

static int ivset_q(struct lp_fnd_ctx *c, const char *sql, struct lp_ivset *out)
{
	return lp_ivset_from_sql(c->db, sql, NULL, 0, out, c->err, c->errlen);
}

/* Copies and kernels on the same device that never run at the same time. */
static int rule_overlap(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int rc = need_gpu(c);
	if (rc)
		return rc;
	struct lp_ivset cp = {0}, kn = {0};
	/* key: process and device, so two GPUs never look overlapped */
	rc = ivset_q(c, "SELECT process_id * 1024 + device, start_ns, end_ns FROM memcpys", &cp);
	if (rc == 0)
		rc = ivset_q(c, "SELECT process_id * 1024 + device, start_ns, end_ns FROM kernels",
			     &kn);
	if (rc) {
		lp_ivset_free(&cp);
		lp_ivset_free(&kn);
		return rc;
	}
	int64_t copy = lp_ivset_total(&cp), kern = lp_ivset_total(&kn), both = 0;
	for (size_t i = 0; i < cp.n; i++)
		both += lp_ivset_overlap(&kn, cp.thread[i], cp.start[i], cp.end[i]);
	lp_ivset_free(&cp);
	lp_ivset_free(&kn);
	int64_t req = findings_q1(c, "SELECT count(DISTINCT correlation_id) FROM memcpys");
	/* A pipeline: copies and kernels both matter, repeatedly. */
	if (!copy || !kern || req < 2 || findings_share(copy, copy + kern) < 0.05)
		return findings_skip(
		    c, "no pipelined GPU work: copies or kernels missing or negligible");
	int64_t possible = min64(copy, kern);
	double v = findings_share(both, possible);
	if (!lp_rule_passes(r, v, thr))
		return findings_quiet(c, v);
	struct lp_finding *f = lp_fnd_new(c, r, v, thr);
	if (!f)
		return -ENOMEM;
	findings_num(f, "copy_ns", "GPU copy time", "ns", (double)copy);
	findings_num(f, "kernel_ns", "GPU kernel time", "ns", (double)kern);
	findings_num(f, "overlap_ns", "copies overlapping kernels", "ns", (double)both);
	findings_num(f, "overlap", "of the shorter of the two", "share", v);
	f->summary =
	    findings_fmt("copies and kernels overlapped %.1f%% of the time they could: %.3f ms "
			 "of copies ran while no kernel did",
			 100 * v, (double)(copy - both) / 1e6);
	findings_saving(f, possible - both, copy, "GPU copy time");
	return 1;
}

static int rule_alloc(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int rc = need_gpu(c);
	if (rc)
		return rc;
	if (!c->has_req)
		return findings_skip(
		    c, "no NVTX request ranges: start-up and serving cannot be told apart");
	struct acc a;
	rc = acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, n.value FROM cuda_api a JOIN strings "
	    "n ON n.id = a.name_id WHERE a.domain = ?1 AND n.value NOT LIKE '%Async%' AND "
	    "(n.value LIKE 'cudaMalloc%' OR n.value LIKE 'cudaFree%' OR n.value LIKE "
	    "'cudaHostAlloc%' OR n.value LIKE 'cuMemAlloc%' OR n.value LIKE 'cuMemFree%' "
	    "OR n.value LIKE 'cuMemHostAlloc%') ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	double per = (double)a.n / (double)c->nreq;
	int found = 0;
	if (a.n > 0 && lp_rule_passes(r, (double)a.n, thr)) {
		struct lp_finding *f = lp_fnd_new(c, r, (double)a.n, thr);
		if (!f) {
			acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		findings_num(f, "calls", "allocation calls inside requests", "count", (double)a.n);
		findings_num(f, "per_request", "per request", "per_request", per);
		findings_num(f, "alloc_ns", "time in them", "ns", (double)a.ns);
		findings_num(f, "outside", "allocation calls outside requests", "count",
			     (double)(a.all_n - a.n));
		acc_sites(f, &a, "API calls");
		f->summary = findings_fmt("%.1f CUDA allocation calls per request (%.3f ms each on "
					  "average) on the request path",
					  per, (double)a.ns / (double)a.n / 1e6);
		findings_saving(f, a.ns, a.ns, "time in allocation calls inside requests");
		findings_example(c, f);
	} else {
		findings_quiet(c, (double)a.n);
	}
	acc_free(&a);
	return found;
}

/* ---- Python and thread pools (issue 15) -------------------------------- */

#define LP_GIL_WAITS                                                                               \
	"SELECT thread_id, start_ns, start_ns + dur_ns, flags FROM lock_waits WHERE class = 1 "    \
	"UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, flags FROM cond_waits "          \
	"WHERE class = 1"

struct gil_acc {
	struct lp_fnd_ctx *c;
	int64_t in_ns, waits, timed_out;
	int64_t *threads; /* distinct thread ids that waited inside requests */
	size_t nthreads, cap;
};

static int gil_row(sqlite3_stmt *st, void *ctx)
{
	struct gil_acc *a = ctx;
	int64_t th = sqlite3_column_int64(st, 0);
	int64_t in =
	    findings_attr(a->c, th, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
	if (in <= 0)
		return 0;
	a->in_ns += in;
	a->waits++;
	a->timed_out += (sqlite3_column_int64(st, 3) & 1) != 0;
	for (size_t i = 0; i < a->nthreads; i++)
		if (a->threads[i] == th)
			return 0;
	if (a->nthreads == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 8;
		int64_t *v = realloc(a->threads, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		a->threads = v;
		a->cap = cap;
	}
	a->threads[a->nthreads++] = th;
	return 0;
}

static int gil_stage_row(sqlite3_stmt *st, void *ctx)
{
	findings_site(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
		      sqlite3_column_int64(st, 2));
	return 0;
}

/* GIL wait per stage of the requests (the stages are the sites). */
static int gil_stages(struct lp_fnd_ctx *c, struct lp_finding *f)
{
	/* The request's stages with an index on (thread, start); each GIL wait
	 * goes to the stage that began last at or before it on its thread. */
	int rc = lp_db_exec(c->db,
			    "CREATE TEMP TABLE IF NOT EXISTS lp_gil_st(th, s, e, name);"
			    "CREATE INDEX IF NOT EXISTS temp.lp_gil_st_at ON lp_gil_st(th, s);"
			    "DELETE FROM temp.lp_gil_st;",
			    c->err, c->errlen);
	sqlite3_stmt *st;
	if (rc ||
	    (rc = fnd_prep(c,
			   "INSERT INTO temp.lp_gil_st SELECT st.start_thread_id, st.start_ns, "
			   "st.end_ns, st.name FROM ranges_named st JOIN ranges_named p ON "
			   "p.id = st.parent_id AND p.name = ?1 AND coalesce(p.domain, '') = ?2",
			   &st)))
		return rc;
	sqlite3_bind_text(st, 1, c->bd->req_name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->bd->req_domain ? c->bd->req_domain : "", -1, SQLITE_STATIC);
	rc = lp_db_step_all(st, NULL, NULL, c->err, c->errlen);
	sqlite3_finalize(st);
	return rc ? rc
		  : lp_db_each(
			c->db,
			"WITH g(th, s, e, fl) AS (" LP_GIL_WAITS
			"), m AS (SELECT g.s AS s, g.e AS e, "
			"(SELECT x.rowid FROM temp.lp_gil_st x WHERE x.th = g.th AND x.s <= g.s "
			"ORDER "
			"BY x.s DESC LIMIT 1) AS sid FROM g) SELECT x.name, count(*), sum(min(m.e, "
			"x.e) - m.s) FROM m JOIN temp.lp_gil_st x ON x.rowid = m.sid AND x.e > m.s "
			"GROUP BY x.name ORDER BY 3 DESC LIMIT 5",
			NULL, 0, gil_stage_row, f, c->err, c->errlen);
}

/* The GIL: CPython threads waiting in take_gil (wait class gil) inside
 * requests. Sites are the request's stages the waits fell in. */
static int rule_gil(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	int64_t scope = c->has_req ? c->req_ns : c->thread_ns;
	if (scope <= 0)
		return findings_skip(c, "no request or thread time recorded");
	struct gil_acc a = {c, 0, 0, 0, NULL, 0, 0};
	stake_reset(c);
	/* most runs have no GIL: no scan of every wait to find none */
	int rc = 0;
	if (lp_db_int(c->db,
		      "SELECT EXISTS (SELECT 1 FROM temp.lp_wagg WHERE src = 0 AND class = 1) OR "
		      "EXISTS (SELECT 1 FROM cond_waits WHERE class = 1)",
		      1))
		rc = lp_db_each(c->db, LP_GIL_WAITS, NULL, 0, gil_row, &a, c->err, c->errlen);
	if (rc) {
		free(a.threads);
		return rc;
	}
	free(a.threads);
	double share = findings_share(a.in_ns, scope);
	if (!lp_rule_passes(r, share, thr))
		return findings_quiet(c, share);
	struct lp_finding *f = lp_fnd_new(c, r, share, thr);
	if (!f)
		return -ENOMEM;
	f->subject = strdup("the GIL");
	findings_num(f, "wait_ns", c->has_req ? "GIL wait inside requests" : "GIL wait", "ns",
		     (double)a.in_ns);
	findings_num(f, "share", c->has_req ? "of request time" : "of thread time", "share", share);
	findings_num(f, "waits", "GIL waits", "count", (double)a.waits);
	findings_num(f, "waiting_threads", "threads waiting", "count", (double)a.nthreads);
	/* take_gil's wait times out after the switch interval and then asks the
	 * holder to drop the GIL: each timeout is a forced switch. */
	findings_num(f, "switch_requests", "forced switches (switch interval ran out)", "count",
		     (double)a.timed_out);
	if (c->has_req) {
		findings_num(f, "wait_per_request_ns", "GIL wait per request", "ns",
			     (double)a.in_ns / (double)c->nreq);
		f->site_kind = "stages";
		int rs = gil_stages(c, f);
		if (rs)
			return rs;
	}
	f->summary = findings_fmt(
	    "%s threads waited %.1f%% of %s for the GIL (%lld threads, %lld waits)",
	    c->has_req ? "request" : "the run's", 100 * share,
	    c->has_req ? "request time" : "their time", (long long)a.nthreads, (long long)a.waits);
	findings_saving(f, a.in_ns, a.in_ns, c->has_req ? "GIL wait inside requests" : "GIL wait");
	findings_example(c, f);
	return 1;
}

struct spin_acc {
	int64_t req_cpu, req_threads; /* request threads' task-clock in the window */
	int64_t top_thread, top_tid, top_cpu, pool_cpu, pool_threads;
	char *top_name;
};

static int spin_row(sqlite3_stmt *st, void *ctx)
{
	struct spin_acc *a = ctx;
	int64_t cpu = sqlite3_column_int64(st, 3);
	if (sqlite3_column_int(st, 2)) { /* serves requests */
		a->req_cpu += cpu;
		a->req_threads++;
		return 0;
	}
	a->pool_cpu += cpu;
	a->pool_threads++;
	if (cpu > a->top_cpu) {
		free(a->top_name);
		a->top_name = lp_db_col_strdup(st, 4);
		a->top_thread = sqlite3_column_int64(st, 0);
		a->top_tid = sqlite3_column_int64(st, 1);
		a->top_cpu = cpu;
	}
	return 0;
}

/* A thread pool that spins: non-main threads of a process that serves
 * requests, running no request themselves, against that process's request
 * threads. A thread's task-clock counts in proportion to the part of its
 * life inside the window where requests were in flight (its totals are
 * per thread, not per request). */
static int rule_spin(struct lp_fnd_ctx *c, const struct lp_rule *r, double thr)
{
	if (!c->has_req)
		return findings_skip(c, "no NVTX request ranges");
	if (!lp_db_has_table(c->db, "thread_counters") ||
	    !findings_q1(c,
			 "SELECT count(*) FROM thread_counters tc JOIN counter_events e ON e.id = "
			 "tc.event_id WHERE e.name = 'task-clock'"))
		return findings_skip(c, "task-clock was not counted per thread");
	sqlite3_stmt *st;
	int rc = fnd_prep(
	    c,
	    "WITH req AS (SELECT r.start_thread_id AS th, r.process_id AS proc, r.start_ns AS s, "
	    "r.end_ns AS e FROM ranges_named r WHERE r.name = ?1 AND coalesce(r.domain, '') = ?2), "
	    "win AS (SELECT proc, min(s) AS s, max(e) AS e FROM req GROUP BY proc), "
	    "life AS (SELECT t.id, t.tid, t.name, t.process_id AS proc, p.pid, "
	    "coalesce(t.start_ns, p.start_ns) AS s, coalesce(t.end_ns, tc.end_ns, p.end_ns) AS e, "
	    "tc.value AS cpu FROM threads t JOIN processes p ON p.id = t.process_id "
	    "JOIN thread_counters tc ON tc.thread_id = t.id JOIN counter_events ev ON ev.id = "
	    "tc.event_id AND ev.name = 'task-clock') "
	    "SELECT l.id, l.tid, l.id IN (SELECT th FROM req), CAST(l.cpu * "
	    "max(0, min(l.e, w.e) - max(l.s, w.s)) / max(1.0, l.e - l.s) AS INTEGER), l.name "
	    "FROM life l JOIN win w ON w.proc = l.proc "
	    "WHERE l.tid != l.pid OR l.id IN (SELECT th FROM req)",
	    &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, c->bd->req_name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->bd->req_domain ? c->bd->req_domain : "", -1, SQLITE_STATIC);
	struct spin_acc a = {0};
	rc = lp_db_step_all(st, spin_row, &a, c->err, c->errlen);
	sqlite3_finalize(st);
	if (rc || !a.req_threads) {
		free(a.top_name);
		return rc ? rc
			  : findings_skip(c, "task-clock was not counted on the request threads");
	}
	double per_req_thread = (double)a.req_cpu / (double)a.req_threads;
	double value = per_req_thread > 0 ? (double)a.top_cpu / per_req_thread : 0;
	if (!lp_rule_passes(r, value, thr) || a.top_cpu <= 0) {
		free(a.top_name);
		return findings_quiet(c, value);
	}
	struct lp_finding *f = lp_fnd_new(c, r, value, thr);
	if (!f) {
		free(a.top_name);
		return -ENOMEM;
	}
	/* the library the pool thread waits in: its most frequent top frame */
	char *lib = NULL;
	sqlite3_stmt *ls;
	if (fnd_prep(c,
		     "SELECT f.module, count(*) FROM (SELECT stack_id FROM cond_waits WHERE "
		     "thread_id = ?1 UNION ALL SELECT stack_id FROM lock_waits WHERE thread_id = "
		     "?1) w JOIN stacks s ON s.id = w.stack_id JOIN frames f ON f.id = s.top_frame "
		     "WHERE f.module IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
		     &ls) == 0) {
		sqlite3_bind_int64(ls, 1, a.top_thread);
		if (lp_db_step_row(ls))
			lib = lp_db_col_strdup(ls, 0);
		sqlite3_finalize(ls);
	}
	const char *base = lib && strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	f->subject = findings_fmt("thread %lld%s%s%s%s%s", (long long)a.top_tid,
				  a.top_name ? " (" : "", a.top_name ? a.top_name : "",
				  a.top_name ? ")" : "", base ? " in " : "", base ? base : "");
	findings_num(f, "pool_thread_cpu_ns", "busiest non-request thread's CPU while serving",
		     "ns", (double)a.top_cpu);
	findings_num(f, "request_thread_cpu_ns", "mean request thread's CPU while serving", "ns",
		     per_req_thread);
	findings_num(f, "pool_threads", "non-request threads", "count", (double)a.pool_threads);
	findings_num(f, "request_threads", "request threads", "count", (double)a.req_threads);
	double all = (double)(a.pool_cpu + a.req_cpu);
	findings_num(f, "pool_cpu_share", "non-request threads' share of the process CPU", "share",
		     all > 0 ? (double)a.pool_cpu / all : 0);
	if (lib)
		findings_site(f, lib, 0, 0);
	f->site_kind = "library";
	f->summary =
	    findings_fmt("a thread that serves no request burned %.1fx the CPU of a request "
			 "thread while requests were in flight%s%s",
			 value, base ? ", waiting in " : "", base ? base : "");
	/* what it takes from the cores the requests run on: all of it, as
	 * turning the pool off shows (onnxruntime: p99 16 -> 7 ms) */
	findings_saving(f, a.top_cpu, a.top_cpu, "the thread's CPU while requests were in flight");
	free(lib);
	free(a.top_name);
	return 1;
}

/* ---- the table ----------------------------------------------------------- */

const struct lp_rule lp_rules[] = {
    {"lock-contention", "A lock serializes requests",
     "wait on one lock inside requests / request time (thread time without requests); also "
     "flagged when the lock explains the p99 tail",
     "share", LP_CMP_GE, 0.05,
     "Give each worker its own instance of the state the lock guards (one model per thread), "
     "split the lock so readers and unrelated fields do not queue together, or move the "
     "shared update behind a batching queue with one owner thread.",
     rule_lock, "A lock serializes the threads"},
    {"gil-contention", "Python threads queue on the GIL",
     "GIL wait (CPython take_gil) inside requests / request time (thread time without "
     "requests)",
     "share", LP_CMP_GE, 0.05,
     "Move the CPU work to code that releases the GIL (NumPy, a C extension, onnxruntime), "
     "serve with processes or several server workers instead of threads, or use a "
     "free-threaded CPython build (3.13t).",
     rule_gil, NULL},
    {"spinning-pool", "A thread pool spins beside the requests",
     "CPU of the busiest thread of the serving process that runs no request, while requests "
     "are in flight / CPU of a request thread (task-clock)",
     "ratio", LP_CMP_GE, 0.5,
     "Size the intra-op pool to the cores left to it (onnxruntime intra_op_num_threads, "
     "OMP_NUM_THREADS, torch.set_num_threads) and disable spinning (onnxruntime "
     "session.intra_op.allow_spinning=0, OMP_WAIT_POLICY=passive).",
     rule_spin, NULL},
    {"queue-wait", "Requests queue before work starts",
     "condition-variable and semaphore wait inside requests but outside every stage / request "
     "time",
     "share", LP_CMP_GE, 0.05,
     "Add workers (or GPU streams) until the queue drains, or cap concurrency at the door so "
     "requests are refused or shed early instead of waiting inside the server.",
     rule_queue, NULL},
    {"tail-outlier", "The p99 tail is far from the median",
     "p99 / p50 of request latency; the stage and category that grow in the tail", "ratio",
     LP_CMP_GE, 3.0,
     "Look at the stage and category named in the evidence: that is where the slow requests "
     "spend their extra time; fix that, not the median path.",
     rule_tail, NULL},
    {"cold-start", "The first requests are much slower",
     "slowest leading request of a thread / median request (leading requests slower than the "
     "threshold count as cold)",
     "ratio", LP_CMP_GE, 3.0,
     "Warm up before serving: run a few dummy requests at start-up so lazy initialization, "
     "JIT compilation, module loading and first-touch page faults happen before traffic.",
     rule_cold, NULL},
    {"cpu-interference", "Requests lose the CPU",
     "context switches per request not explained by recorded lock/condition waits or blocking "
     "calls, plus CPU "
     "migrations per request (CPU counters)",
     "count", LP_CMP_GE, 2.0,
     "Pin serving threads to dedicated cores (taskset -c, cgroups cpusets), run no more busy "
     "threads than cores, and keep background jobs off those cores.",
     rule_cpu, NULL},
    {"blocking-io-in-request", "Requests block on file or socket I/O",
     "time in blocking file and socket calls (read, write, recv, send, fsync, ... of at least "
     "the recording threshold) inside requests / request time",
     "share", LP_CMP_GE, 0.05,
     "Take the I/O off the request path: log through a queue a background thread drains, "
     "load models and configuration once at start-up, cache name lookups, and batch or "
     "pipeline calls to other services instead of waiting on each.",
     rule_block_io, NULL},
    {"sleep-in-request", "Requests sleep",
     "time in nanosleep/clock_nanosleep/usleep/sleep inside requests / request time", "share",
     LP_CMP_GE, 0.05,
     "Wait for the event itself (a condition variable, a future, poll on the descriptor) "
     "instead of sleeping and retrying; for SQLite's busy handler, use WAL mode and short "
     "write transactions so writers do not collide.",
     rule_sleep, NULL},
    {"cpu-starved", "Requests wait for a CPU",
     "preempted time (the recorded waits' run-queue part, from schedstat, plus request time not "
     "in a recorded wait minus task-clock) / request time",
     "share", LP_CMP_GE, 0.10,
     "Run no more busy threads than the cores the process may use (size thread pools to the "
     "affinity mask), pin serving threads to cores of their own, and keep background work "
     "off those cores.",
     rule_starved, NULL},
    {"cpu-saturated", "CPU saturated",
     "all threads' time waiting for a CPU (preempted, as cpu-starved measures it) / all threads' "
     "time, with or without requests; a finding only when the recorded threads outnumber the "
     "cores (runnable threads on average > run.cpus_allowed)",
     "share", LP_CMP_GE, 0.10,
     "Run fewer busy threads than the cores the app may use (client and worker pools, "
     "connections, parallel builds), or give it more cores; the threads listed waited longest.",
     rule_saturated, NULL},
    {"sync-memcpy", "Synchronous copies on the request path",
     "host time blocked in synchronous cudaMemcpy (host-to-device copies <= 64 KB excluded, "
     "as nsys does) / request time",
     "share", LP_CMP_GE, 0.01,
     "Use cudaMemcpyAsync from pinned memory on a non-default stream and synchronize once, "
     "when the result is needed.",
     rule_sync_memcpy, NULL},
    {"pageable-memcpy", "Async copies from pageable memory",
     "cudaMemcpyAsync calls whose host side is pageable (they are silently synchronous and "
     "staged)",
     "count", LP_CMP_GE, 1.0,
     "Allocate the host buffers with cudaHostAlloc / cudaMallocHost, or pin existing ones "
     "with cudaHostRegister, so the copies run asynchronously by DMA.",
     rule_pageable, NULL},
    {"excessive-sync", "Too many host-device synchronizations",
     "cudaDeviceSynchronize / StreamSynchronize / EventSynchronize calls per request", "count",
     LP_CMP_GE, 3.0,
     "Synchronize once per request, when the host needs the result; order GPU work with "
     "streams and events (cudaStreamWaitEvent) instead of blocking the host.",
     rule_sync, NULL},
    {"gpu-idle", "The GPU idles inside requests",
     "GPU idle share of the median request that launched GPU work", "share", LP_CMP_GE, 0.5,
     "Batch requests so each launch does more work, capture the launch sequence in a CUDA "
     "graph, and move CPU pre/post-processing off the launching thread.",
     rule_gpu_idle, NULL},
    {"small-kernels", "Many kernels shorter than their launch",
     "kernels per request whose GPU time is shorter than the API call that launched them", "count",
     LP_CMP_GE, 10.0,
     "Fuse the small kernels (torch.compile, TensorRT, hand fusion) or replay them as a CUDA "
     "graph, which launches the whole sequence with one call.",
     rule_small_kernels, NULL},
    {"no-overlap", "Copies and kernels never overlap",
     "GPU time where copies and kernels run together / the shorter of copy and kernel time",
     "share", LP_CMP_LT, 0.05,
     "Double-buffer: copy batch n+1 on one stream while batch n computes on another, with "
     "pinned buffers and events between the streams.",
     rule_overlap, NULL},
    {"alloc-in-path", "GPU memory allocated inside requests",
     "cudaMalloc/cudaFree/cudaHostAlloc calls inside requests", "count", LP_CMP_GE, 1.0,
     "Allocate at start-up and reuse, or use a memory pool (cudaMallocAsync with a pool, "
     "the framework's caching allocator).",
     rule_alloc, NULL},
};
const size_t lp_nrules = ARRAY_SIZE(lp_rules);

const struct lp_rule *lp_rule_find(const char *id)
{
	for (size_t i = 0; i < lp_nrules; i++)
		if (!strcmp(lp_rules[i].id, id))
			return &lp_rules[i];
	return NULL;
}

int lp_findings_parse_threshold(const char *arg, struct lp_fnd_override *o, char *err,
				size_t errlen)
{
	const char *eq = strchr(arg, '=');
	static char id[64];
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(id)) {
		snprintf(err, errlen, "--rule-threshold wants ID=VALUE, not '%s'", arg);
		return -EINVAL;
	}
	memcpy(id, arg, (size_t)(eq - arg));
	id[eq - arg] = 0;
	const struct lp_rule *r = lp_rule_find(id);
	if (!r) {
		snprintf(err, errlen, "--rule-threshold: no rule '%s' (see docs/rules.md)", id);
		return -EINVAL;
	}
	char *end;
	errno = 0;
	double v = strtod(eq + 1, &end);
	int pct = *end == '%' && !strcmp(r->unit, "share");
	if (pct)
		end++, v /= 100;
	if (errno || end == eq + 1 || *end || !isfinite(v) || v < 0) {
		snprintf(err, errlen, "--rule-threshold %s wants a non-negative %s%s, not '%s'",
			 r->id, r->unit, !strcmp(r->unit, "share") ? " (0.05 or 5%)" : "", eq + 1);
		return -EINVAL;
	}
	o->id = r->id;
	o->value = v;
	return 0;
}

static int lp_fnd_cmp(const void *a, const void *b)
{
	const struct lp_finding *x = a, *y = b;
	if (x->saving_ns != y->saving_ns)
		return x->saving_ns < y->saving_ns ? 1 : -1;
	return (x->share < y->share) - (x->share > y->share);
}

static void gpu_inputs(struct lp_fnd_ctx *c)
{
	char buf[256];
	c->api_domain = "runtime";
	if (!lp_db_has_table(c->db, "cuda_api")) {
		snprintf(c->gpu_why, sizeof(c->gpu_why),
			 "no GPU data: the database has no CUDA tables");
		return;
	}
	const char *cap = lp_db_meta(c->db, "cuda.captured", buf, sizeof(buf));
	if (!findings_q1(c, "SELECT count(*) FROM cuda_api") || !cap || atoi(cap) <= 0) {
		const char *st = lp_db_meta(c->db, "cuda.status", buf, sizeof(buf));
		snprintf(c->gpu_why, sizeof(c->gpu_why), "no GPU data: %s",
			 st ? st : "no CUDA activity was recorded");
		return;
	}
	c->gpu = 1;
	if (!findings_q1(c, "SELECT count(*) FROM cuda_api WHERE domain = 'runtime'"))
		c->api_domain = "driver";
}

static int ctx_load(struct lp_fnd_ctx *c, const struct lp_findings_opts *o)
{
	int rc = 0;
	if (o && o->bd && o->ranges) {
		c->bd = o->bd;
		c->rs = o->ranges;
	} else {
		struct lp_bd_opts bo = {
		    .request = o ? o->request : NULL, .stage_depth = 1, .keep_ranges = &c->rs_own};
		rc = lp_breakdown_compute(c->db, &bo, &c->bd_own, c->err, c->errlen);
		c->bd = &c->bd_own;
		c->rs = &c->rs_own;
	}
	if (rc)
		return rc;
	rc = lp_locks_analyze_flags(c->db, 50, LP_LOCKS_NOFOLD, &c->locks, c->err, c->errlen);
	if (rc)
		return rc;
	c->thread_ns = c->locks.thread_time_ns;
	c->run_start = c->bd->run_start_ns;
	if (c->bd->has_ranges && c->bd->req_name && (rc = load_requests(c)))
		return rc;
	if (!c->stake && !(c->stake = calloc(1, sizeof(*c->stake))))
		return -ENOMEM;
	gpu_inputs(c);
	return 0;
}

static double findings_threshold(const struct lp_findings_opts *o, const struct lp_rule *r)
{
	double v = r->threshold;
	for (size_t i = 0; o && i < o->nover; i++)
		if (!strcmp(o->over[i].id, r->id))
			v = o->over[i].value;
	return v;
}

static void ctx_free(struct lp_fnd_ctx *c)
{
	lp_breakdown_free(&c->bd_own);
	lp_rset_free(&c->rs_own);
	lp_lock_report_free(&c->locks);
	lp_ivset_free(&c->reqset);
	lp_ivset_free(&c->stageset);
	free(c->req);
	free(c->stake);
	free(c->why);
	lp_map_free(&c->runq);
}

int lp_findings_analyze(sqlite3 *db, const struct lp_findings_opts *opts, struct lp_findings *out,
			char *err, size_t errlen)
{
	struct lp_fnd_ctx c = {.db = db, .err = err, .errlen = errlen, .out = out};
	memset(out, 0, sizeof(*out));
	err[0] = 0;
	int rc = ctx_load(&c, opts);
	out->rules = calloc(lp_nrules, sizeof(*out->rules));
	if (rc == 0 && !out->rules)
		rc = -ENOMEM;
	out->has_requests = c.has_req;
	out->req_name = strdup(c.has_req && c.bd->req_name ? c.bd->req_name : "");
	out->requests = (int64_t)c.nreq;
	out->request_ns = c.req_ns;
	out->thread_ns = c.thread_ns;
	for (size_t i = 0; rc == 0 && i < lp_nrules; i++) {
		const struct lp_rule *r = &lp_rules[i];
		struct lp_fnd_rule_status *s = &out->rules[i];
		s->rule = r;
		s->threshold = findings_threshold(opts, r);
		c.has_value = 0;
		c.value = 0;
		int n = r->eval(&c, r, s->threshold);
		if (n == -ENODATA) {
			s->state = LP_RULE_SKIPPED;
			s->why = c.why;
			c.why = NULL;
			continue;
		}
		if (n < 0) {
			rc = n;
			break;
		}
		s->state = n > 0 ? LP_RULE_FOUND : LP_RULE_QUIET;
		s->has_value = c.has_value;
		s->value = c.value;
	}
	out->nrules = out->rules ? lp_nrules : 0;
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory while evaluating the rules");
	else if (rc && !err[0])
		snprintf(err, errlen, "cannot evaluate the rules: %s", sqlite3_errmsg(db));
	ctx_free(&c);
	if (rc)
		return rc;
	if (out->n > 1) /* qsort(NULL, 0) is undefined */
		qsort(out->v, out->n, sizeof(*out->v), lp_fnd_cmp);
	return 0;
}

void lp_findings_free(struct lp_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		struct lp_finding *x = &f->v[i];
		free(x->subject);
		free(x->summary);
		for (size_t k = 0; k < x->nsite; k++)
			free(x->site[k].what);
	}
	for (size_t i = 0; i < f->nrules && f->rules; i++)
		free(f->rules[i].why);
	free(f->v);
	free(f->rules);
	free(f->req_name);
	memset(f, 0, sizeof(*f));
}

size_t lp_findings_count(const struct lp_findings *f, const char *id)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += !strcmp(f->v[i].rule->id, id);
	return n;
}

int lp_findings_ids(sqlite3 *db, char ***ids, size_t *n, char *err, size_t errlen)
{
	struct lp_findings f;
	*ids = NULL;
	*n = 0;
	int rc = lp_findings_analyze(db, NULL, &f, err, errlen);
	if (rc) {
		lp_findings_free(&f);
		return rc;
	}
	char **v = calloc(f.n + 1, sizeof(*v));
	for (size_t i = 0; v && i < f.n; i++)
		if (!(v[i] = strdup(f.v[i].rule->id)))
			rc = -ENOMEM;
	if (!v)
		rc = -ENOMEM;
	if (rc) {
		for (size_t i = 0; v && i < f.n; i++)
			free(v[i]);
		free(v);
		snprintf(err, errlen, "out of memory listing findings");
	} else {
		*ids = v;
		*n = f.n;
	}
	lp_findings_free(&f);
	return rc;
}
