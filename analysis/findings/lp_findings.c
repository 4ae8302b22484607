/* SPDX-License-Identifier: MIT */
/*
 * The rule table of analysis/findings/lp_findings.h. Shared inputs are loaded once
 * (requests and stages as per-thread interval sets, the breakdown, the lock
 * report); each rule then runs a query or two of its own and attributes
 * what it measures to the request that contains it, so the finding can
 * name the request where it cost the most.
 */
#define _GNU_SOURCE
#include "lp_findings.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_util.h"
#include "lp_waits.h"

/* ---- small helpers ---------------------------------------------------- */

char *lp_findings_fmt(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

int lp_findings_skip(struct lp_findings_ctx *c, const char *why)
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

int lp_findings_quiet(struct lp_findings_ctx *c, double value)
{
	c->has_value = 1;
	c->value = value;
	return 0;
}

int lp_findings_passes(const struct lp_findings_ctx *c, double value)
{
	return lp_rule_passes(c->rule, value, c->thr);
}

int lp_findings_judge(struct lp_findings_ctx *c, double value)
{
	lp_findings_quiet(c, value);
	return lp_findings_passes(c, value);
}

int64_t lp_findings_q1(struct lp_findings_ctx *c, const char *sql)
{
	return lp_db_int(c->db, sql, 0);
}

double lp_findings_share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0;
}

/* A new finding of rule r; NULL on -ENOMEM. */
struct lp_finding *lp_findings_new(struct lp_findings_ctx *c, const struct lp_rule *r, double value)
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
	f->threshold = c->thr;
	f->fix = r->fix;
	f->scope_ns = c->has_req ? c->req_ns : c->thread_ns;
	c->has_value = 1;
	c->value = value;
	return f;
}

void lp_findings_num(struct lp_finding *f, const char *key, const char *label, const char *unit,
		     double v)
{
	if (f->nnum < LP_FINDINGS_MAXNUM)
		f->num[f->nnum++] = (struct lp_findings_num){key, label, unit, v};
}

void lp_findings_site(struct lp_finding *f, const char *what, int64_t count, int64_t ns)
{
	if (f->nsite < LP_FINDINGS_MAXSITES && what)
		f->site[f->nsite++] = (struct lp_findings_site){strdup(what), count, ns};
}

/* Saving, its basis and the severity; the saving is clamped to the basis
 * and the basis to the scope, whatever the rule computed. */
/* A basis longer than the time judged (copies on two GPUs against request
 * time) is capped at it, and then is that time: lp_findings_analyze names
 * it ("request time", "thread time") once the scope is known. */
static const char lp_basis_scope[] = "time judged";

void lp_findings_saving(struct lp_finding *f, int64_t saving, int64_t basis, const char *what)
{
	if (f->scope_ns > 0 && basis > f->scope_ns) {
		basis = f->scope_ns;
		what = lp_basis_scope;
	}
	if (saving > basis)
		saving = basis;
	if (saving < 0)
		saving = 0;
	f->saving_ns = saving;
	f->basis_ns = basis;
	f->basis = what;
	f->share = lp_findings_share(saving, f->scope_ns);
	f->severity = f->share >= LP_SEV_HIGH_SHARE	? LP_SEV_HIGH
		      : f->share >= LP_SEV_MEDIUM_SHARE ? LP_SEV_MEDIUM
							: LP_SEV_LOW;
}

void lp_findings_category(struct lp_finding *f, const char *category)
{
	f->category = category;
}

/* ---- requests: lookup and per-request attribution ---------------------- */

/* First request on thread th with end > s (binary search). */
size_t lp_findings_req_lower(const struct lp_findings_ctx *c, int64_t th, int64_t s)
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
int64_t lp_findings_attr(struct lp_findings_ctx *c, int64_t th, int64_t s, int64_t e)
{
	if (!c->has_req)
		return e > s ? e - s : 0;
	int64_t in = 0;
	for (size_t i = lp_findings_req_lower(c, th, s); i < c->nreq; i++) {
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

void lp_findings_stake_reset(struct lp_findings_ctx *c)
{
	if (c->stake)
		memset(c->stake, 0, c->nreq * sizeof(*c->stake));
}

/* The request with the most at stake becomes the finding's example. */
void lp_findings_example(struct lp_findings_ctx *c, struct lp_finding *f)
{
	size_t best = c->nreq;
	for (size_t i = 0; i < c->nreq; i++)
		if (c->stake[i] > 0 && (best == c->nreq || c->stake[i] > c->stake[best]))
			best = i;
	if (best == c->nreq)
		return;
	const struct req *r = &c->req[best];
	f->ex = (struct lp_findings_example){
	    1, r->id, r->tid, r->start, r->start - c->run_start, r->end - r->start, c->stake[best]};
}

void lp_findings_example_req(struct lp_findings_ctx *c, struct lp_finding *f, size_t i,
			     int64_t stake)
{
	const struct req *r = &c->req[i];
	f->ex = (struct lp_findings_example){
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
void lp_findings_req_args(const struct lp_findings_ctx *c, struct lp_db_arg a[2])
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
static int req_collect(struct lp_findings_ctx *c, const uint8_t *isreq, const struct thr_load *thr,
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

static int load_requests(struct lp_findings_ctx *c)
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

int lp_findings_bd_cat(const struct lp_breakdown *b, const char *name)
{
	for (int i = 0; i < b->ncat; i++)
		if (b->cat_name[i] && !strcmp(b->cat_name[i], name))
			return i;
	return -1;
}

const struct lp_lock_row *lp_findings_lock_row(const struct lp_findings_ctx *c, int64_t id)
{
	for (size_t i = 0; i < c->locks.n; i++)
		if (c->locks.locks[i].id == id)
			return &c->locks.locks[i];
	return NULL;
}

void lp_findings_acc_flush(struct lp_findings_acc *a)
{
	for (int k = 0; a->cur_ns > 0 && k < LP_FINDINGS_MAXSITES; k++)
		if (a->cur_ns > a->top[k].ns) {
			free(a->top[LP_FINDINGS_MAXSITES - 1].what);
			memmove(&a->top[k + 1], &a->top[k],
				(LP_FINDINGS_MAXSITES - 1 - k) * sizeof(a->top[0]));
			a->top[k] = (struct lp_findings_site){strdup(a->cur), a->cur_n, a->cur_ns};
			break;
		}
	a->cur_n = a->cur_ns = 0;
}

/* Starts label w's group when it differs from the current one. */
void lp_findings_acc_label(struct lp_findings_acc *a, const char *w)
{
	if (strcmp(a->cur, w)) {
		lp_findings_acc_flush(a);
		snprintf(a->cur, sizeof(a->cur), "%s", w);
	}
}

static int acc_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_findings_acc_load *l = ctx;
	struct lp_findings_acc *a = l->a;
	const char *w = (const char *)sqlite3_column_text(st, 3);
	lp_findings_acc_label(a, w ? w : "?");
	a->all_n++;
	int64_t in = lp_findings_attr(l->c, sqlite3_column_int64(st, 0),
				      sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
	if (in <= 0 && l->c->has_req)
		return 0;
	a->n++;
	a->ns += in;
	a->cur_n++;
	a->cur_ns += in;
	return 0;
}

/* Rows: thread, start, end, label (ordered by label); ?1 = the API domain. */
int lp_findings_acc_run(struct lp_findings_ctx *c, const char *sql, struct lp_findings_acc *a)
{
	struct lp_findings_acc_load l = {c, a};
	struct lp_db_arg dom = LP_DB_TEXT(c->api_domain);
	memset(a, 0, sizeof(*a));
	lp_findings_stake_reset(c);
	int rc = lp_db_query(c->db, sql, &dom, 1, acc_row, &l, c->err, c->errlen);
	lp_findings_acc_flush(a);
	return rc;
}

void lp_findings_acc_free(struct lp_findings_acc *a)
{
	for (int k = 0; k < LP_FINDINGS_MAXSITES; k++)
		free(a->top[k].what);
}

void lp_findings_acc_sites(struct lp_finding *f, const struct lp_findings_acc *a, const char *kind)
{
	f->site_kind = kind;
	for (int k = 0; k < LP_FINDINGS_MAXSITES; k++)
		if (a->top[k].what)
			lp_findings_site(f, a->top[k].what, a->top[k].count, a->top[k].ns);
}

static int dur_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorted request durations (caller frees). */
int64_t *lp_findings_req_durs(const struct lp_findings_ctx *c)
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

int lp_findings_prep(struct lp_findings_ctx *c, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	snprintf(c->err, c->errlen, "database error: %s", sqlite3_errmsg(c->db));
	return -EIO;
}

const char *lp_findings_where(const struct lp_findings_ctx *c)
{
	return c->has_req ? "of request time" : "of thread time";
}

double lp_findings_runnable(struct lp_findings_ctx *c, int64_t *cpus)
{
	const struct lp_breakdown *b = c->bd;
	int on = lp_findings_bd_cat(b, "on_cpu"), pre = lp_findings_bd_cat(b, "preempted");
	int un = lp_findings_bd_cat(b, "cpu_or_preempted");
	int64_t runnable = 0, wall = b->run_end_ns - b->run_start_ns;
	/* a lookup with a default: a read error is recorded for lp_db_fault */
	*cpus = lp_db_int(c->db, "SELECT value FROM meta WHERE key = 'run.cpus_threads'", 0);
	if (*cpus <= 0)
		*cpus =
		    lp_db_int(c->db, "SELECT value FROM meta WHERE key = 'run.cpus_allowed'", 0);
	if (*cpus <= 0)
		*cpus =
		    lp_db_int(c->db, "SELECT value FROM meta WHERE key = 'host.cpus_online'", 0);
	if (on < 0 || pre < 0 || un < 0 || wall <= 0 || !b->nthreads)
		return NAN;
	for (size_t i = 0; i < b->nthreads; i++) {
		const struct lp_breakdown_thread *t = &b->threads[i];
		runnable += t->cat_ns[on] + t->cat_ns[pre] + t->cat_ns[un];
	}
	return (double)runnable / (double)wall;
}

int lp_findings_load_source(struct lp_findings_ctx *c, struct lp_finding *f, char *why, size_t len)
{
	int64_t cpus;
	double nrun = lp_findings_runnable(c, &cpus);
	why[0] = 0;
	if (isnan(nrun) || cpus <= 0)
		return -1;
	lp_findings_num(f, "runnable_threads", "the app's runnable threads on average", "count",
			nrun);
	if (nrun > (double)cpus) {
		snprintf(why, len, "; its own %.1f runnable threads outnumber the %lld cores", nrun,
			 (long long)cpus);
		return 1;
	}
	snprintf(why, len,
		 "; its own threads needed %.1f of the %lld cores: the load came from other "
		 "processes",
		 nrun, (long long)cpus);
	f->fix = "Keep other work off the cores this app runs on (a cpuset or taskset -c of its "
		 "own, batch jobs and builds elsewhere, or a machine with more cores); its own "
		 "threads do not outnumber its cores, so shrinking its thread pools will not help.";
	return 0;
}

/* ---- blocking calls and CPU starvation -------------------------------- */

/* Shared by blocking-io-in-request and sleep-in-request: the calls' time
 * inside requests against request time. */
int lp_findings_block_rule(struct lp_findings_ctx *c, const struct lp_rule *r, const char *sql,
			   const char *what, const char *basis, const char *category)
{
	struct lp_findings_acc a;
	int rc = lp_findings_acc_run(c, sql, &a);
	if (rc)
		return rc;
	double share = lp_findings_share(a.ns, c->req_ns);
	int found = 0;
	if (lp_findings_judge(c, share) && a.n > 0) {
		struct lp_finding *f = lp_findings_new(c, r, share);
		if (!f) {
			lp_findings_acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		lp_findings_category(f, category);
		lp_findings_num(f, "calls", "calls inside requests", "count", (double)a.n);
		lp_findings_num(f, "per_request", "per request", "per_request",
				(double)a.n / (double)c->nreq);
		lp_findings_num(f, "blocked_ns", "time in them inside requests", "ns",
				(double)a.ns);
		lp_findings_num(f, "share", "of request time", "share", share);
		lp_findings_acc_sites(f, &a, "calls");
		f->summary =
		    lp_findings_fmt("requests spent %.1f%% of their time in %" PRId64 " %s "
				    "(%.2f per request, %.3f ms each on average)",
				    100 * share, a.n, what, (double)a.n / (double)c->nreq,
				    (double)a.ns / (double)a.n / 1e6);
		lp_findings_saving(f, a.ns, a.ns, basis);
		lp_findings_example(c, f);
	}
	lp_findings_acc_free(&a);
	return found;
}

int64_t lp_findings_busy_threads(const struct lp_breakdown *b, double *cores)
{
	int on = lp_findings_bd_cat(b, "on_cpu");
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

const struct lp_rule *lp_rule_find(const char *id)
{
	for (size_t i = 0; i < lp_nrules; i++)
		if (!strcmp(lp_rules[i]->id, id))
			return lp_rules[i];
	return NULL;
}

int lp_findings_parse_threshold(const char *arg, struct lp_findings_override *o, char *err,
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

static int lp_findings_cmp(const void *a, const void *b)
{
	const struct lp_finding *x = a, *y = b;
	if (x->saving_ns != y->saving_ns)
		return x->saving_ns < y->saving_ns ? 1 : -1;
	return (x->share < y->share) - (x->share > y->share);
}

static void gpu_inputs(struct lp_findings_ctx *c)
{
	char buf[256];
	c->api_domain = "runtime";
	if (!lp_db_has_table(c->db, "cuda_api")) {
		snprintf(c->gpu_why, sizeof(c->gpu_why),
			 "no GPU data: the database has no CUDA tables");
		return;
	}
	const char *cap = lp_db_meta(c->db, "cuda.captured", buf, sizeof(buf));
	if (!lp_findings_q1(c, "SELECT count(*) FROM cuda_api") || !cap || atoi(cap) <= 0) {
		const char *st = lp_db_meta(c->db, "cuda.status", buf, sizeof(buf));
		snprintf(c->gpu_why, sizeof(c->gpu_why), "no GPU data: %s",
			 st ? st : "no CUDA activity was recorded");
		return;
	}
	c->gpu = 1;
	if (!lp_findings_q1(c, "SELECT count(*) FROM cuda_api WHERE domain = 'runtime'"))
		c->api_domain = "driver";
}

static int ctx_load(struct lp_findings_ctx *c, const struct lp_findings_opts *o)
{
	int rc = 0;
	if (o && o->bd && o->ranges) {
		c->bd = o->bd;
		c->rs = o->ranges;
	} else {
		struct lp_breakdown_opts bo = {
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

static void ctx_free(struct lp_findings_ctx *c)
{
	lp_breakdown_free(&c->bd_own);
	lp_rset_free(&c->rs_own);
	lp_lock_report_free(&c->locks);
	lp_ivset_free(&c->reqset);
	lp_ivset_free(&c->stageset);
	free(c->req);
	free(c->stake);
	free(c->why);
}

static int has_rows(struct lp_findings_ctx *c, const char *table, const char *sql)
{
	return lp_db_has_table(c->db, table) && lp_findings_q1(c, sql) > 0;
}

/* The inputs r->needs that this run lacks: -ENODATA with the reason. */
static int findings_needs(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	unsigned n = r->needs;
	if ((n & LP_NEED_GPU) && !c->gpu)
		return lp_findings_skip(c, c->gpu_why);
	if ((n & LP_NEED_REQUESTS) && !c->has_req) {
		char why[256];
		snprintf(why, sizeof(why), "no NVTX request ranges%s%s",
			 r->why_requests ? ": " : "", r->why_requests ? r->why_requests : "");
		return lp_findings_skip(c, why);
	}
	if ((n & LP_NEED_TIME) && (c->has_req ? c->req_ns : c->thread_ns) <= 0)
		return lp_findings_skip(c, "no request or thread time recorded");
	if ((n & LP_NEED_BLOCKING) && !lp_db_has_table(c->db, "blocking_calls"))
		return lp_findings_skip(
		    c, "no blocking calls recorded (a database from an older latprof)");
	if ((n & LP_NEED_RANGE_CPU) &&
	    !has_rows(c, "range_counters", "SELECT count(*) FROM range_counters"))
		return lp_findings_skip(c, "no CPU counters (record with --counters)");
	if ((n & LP_NEED_THREAD_CPU) &&
	    !has_rows(c, "thread_counters",
		      "SELECT count(*) FROM thread_counters tc JOIN counter_events e ON e.id = "
		      "tc.event_id WHERE e.name = 'task-clock'"))
		return lp_findings_skip(c, "task-clock was not counted per thread");
	return 0;
}

static int64_t bd_thread_cat(const struct lp_breakdown *b, int cat)
{
	int64_t ns = 0;
	for (size_t i = 0; i < b->nthreads; i++)
		ns += b->threads[i].cat_ns[cat];
	return ns;
}

/* A smaller saving for f: its share and severity follow. */
static void findings_resave(struct lp_finding *f, int64_t saving)
{
	f->saving_ns = saving > 0 ? saving : 0;
	f->share = lp_findings_share(f->saving_ns, f->scope_ns);
	f->severity = f->share >= LP_SEV_HIGH_SHARE	? LP_SEV_HIGH
		      : f->share >= LP_SEV_MEDIUM_SHARE ? LP_SEV_MEDIUM
							: LP_SEV_LOW;
}

/* The rule status of finding f's rule. */
static struct lp_findings_rule_status *findings_status(struct lp_findings *out,
						       const struct lp_finding *f)
{
	for (size_t i = 0; i < out->nrules; i++)
		if (out->rules[i].rule == f->rule)
			return &out->rules[i];
	return NULL;
}

static void finding_free(struct lp_finding *x)
{
	free(x->subject);
	free(x->summary);
	for (size_t k = 0; k < x->nsite; k++)
		free(x->site[k].what);
}

/*
 * One account (causes, then symptoms: each sorted by saving, largest
 * first): a finding's saving is what is left of its category's time once
 * the findings before it on the same category took theirs (the
 * breakdown's time in it over requests, or over all threads without them),
 * and what is left of the scope once all findings before it took theirs. The first finding on a
 * category holds it; a later one names it in counted_in. A finding left under LP_FINDINGS_MIN_SHARE
 * of the scope is dropped: its rule goes quiet with its value and what it would have saved.
 */
static void findings_account(struct lp_findings *out, const struct lp_breakdown *b)
{
	int64_t used[LP_BREAKDOWN_MAXCAT] = {0}, total = 0;
	const char *holder[LP_BREAKDOWN_MAXCAT] = {0};
	size_t k = 0;
	/* causes first, then symptoms, each largest first: out->v is sorted,
	 * so a stable pass over the causes and then the symptoms keeps that */
	struct lp_finding *ord = malloc((out->n ? out->n : 1) * sizeof(*ord));
	if (!ord)
		return;
	for (int pass = 0, j = 0; pass < 2; pass++)
		for (size_t i = 0; i < out->n; i++)
			if (!out->v[i].rule->symptom == !pass)
				ord[j++] = out->v[i];
	if (out->n) /* memcpy(NULL, ..., 0) is undefined: a run with no finding */
		memcpy(out->v, ord, out->n * sizeof(*ord));
	free(ord);
	for (size_t i = 0; i < out->n; i++) {
		struct lp_finding *f = &out->v[i];
		int cat = f->category ? lp_findings_bd_cat(b, f->category) : -1;
		if (cat < 0) /* a category this breakdown does not have */
			f->category = NULL;
		int64_t saving = f->saving_ns;
		if (cat >= 0) {
			int64_t have =
			    out->has_requests ? b->req_cat_ns[cat] : bd_thread_cat(b, cat);
			int64_t left = have - used[cat] > 0 ? have - used[cat] : 0;
			if (saving > left && holder[cat])
				f->counted_in = holder[cat];
			saving = lp_findings_min64(saving, left);
		}
		if (f->scope_ns > 0)
			saving = lp_findings_min64(saving, f->scope_ns - total);
		if (saving < f->saving_ns)
			findings_resave(f, saving);
		if (f->scope_ns <= 0 ||
		    lp_findings_share(saving, f->scope_ns) < LP_FINDINGS_MIN_SHARE) {
			struct lp_findings_rule_status *s = findings_status(out, f);
			/* another finding of the rule (a second lock) may stay */
			if (s && s->state != LP_RULE_FOUND_KEPT) {
				s->state = LP_RULE_QUIET;
				s->has_value = 1;
				s->value = f->value;
				s->counted_in = f->counted_in;
				s->below_min = 1;
				s->saving_ns = saving;
			}
			finding_free(f);
			continue;
		}
		if (cat >= 0) {
			used[cat] += saving;
			if (!holder[cat])
				holder[cat] = f->rule->id;
		}
		total += saving;
		struct lp_findings_rule_status *s = findings_status(out, f);
		if (s)
			s->state = LP_RULE_FOUND_KEPT;
		out->v[k++] = *f;
	}
	out->n = k;
	for (size_t i = 0; i < out->nrules; i++)
		if (out->rules[i].state == LP_RULE_FOUND_KEPT)
			out->rules[i].state = LP_RULE_FOUND;
}

int lp_findings_analyze(sqlite3 *db, const struct lp_findings_opts *opts, struct lp_findings *out,
			char *err, size_t errlen)
{
	struct lp_findings_ctx c = {.db = db, .err = err, .errlen = errlen, .out = out};
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
		const struct lp_rule *r = lp_rules[i];
		struct lp_findings_rule_status *s = &out->rules[i];
		s->rule = r;
		s->threshold = findings_threshold(opts, r);
		c.rule = r;
		c.thr = s->threshold;
		c.has_value = 0;
		c.value = 0;
		int n = findings_needs(&c, r);
		if (n == 0)
			n = r->eval(&c, r);
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
	if (rc == 0)
		for (size_t i = 0; i < out->n; i++)
			if (out->v[i].basis == lp_basis_scope)
				out->v[i].basis =
				    out->has_requests ? "request time" : "thread time";
	if (rc == 0 && out->n > 1) /* qsort(NULL, 0) is undefined */
		qsort(out->v, out->n, sizeof(*out->v), lp_findings_cmp);
	if (rc == 0)
		findings_account(out, c.bd);
	/* what the account left of each saving decides the order */
	if (rc == 0 && out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), lp_findings_cmp);
	ctx_free(&c);
	return rc;
}

void lp_findings_free(struct lp_findings *f)
{
	for (size_t i = 0; i < f->n; i++)
		finding_free(&f->v[i]);
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
