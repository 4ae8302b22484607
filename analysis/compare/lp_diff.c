/* SPDX-License-Identifier: MIT */
#include "lp_diff.h"
#include "lp_boot.h"
#include "lp_breakdown.h"
#include "lp_db.h"
#include "lp_findings.h"
#include "lp_map.h"
#include "lp_stats.h"
#include "lp_util.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rule engine of analysis/findings/lp_findings.c lists each database's findings. */
lp_findings_fn lp_findings_provider = lp_findings_ids;

static const char *const metric_names[LP_M_NMETRICS] = {
    "p50", "p90", "p99", "p999", "mean", "max", "min", "count", "total", "share",
};

const char *lp_metric_name(enum lp_metric m)
{
	return (unsigned)m < LP_M_NMETRICS ? metric_names[m] : "?";
}

int lp_metric_parse(const char *s, size_t len)
{
	for (int i = 0; i < LP_M_NMETRICS; i++)
		if (strlen(metric_names[i]) == len && strncmp(s, metric_names[i], len) == 0)
			return i;
	return -1;
}

double lp_metric_value(enum lp_metric m, const double *v, size_t n)
{
	switch (m) {
	case LP_M_P50:
		return lp_quantile_nearest(v, n, 0.50);
	case LP_M_P90:
		return lp_quantile_nearest(v, n, 0.90);
	case LP_M_P99:
		return lp_quantile_nearest(v, n, 0.99);
	case LP_M_P999:
		return lp_quantile_nearest(v, n, 0.999);
	case LP_M_MEAN:
		return lp_mean(v, n);
	case LP_M_MAX:
		return n ? v[n - 1] : NAN;
	case LP_M_MIN:
		return n ? v[0] : NAN;
	case LP_M_COUNT:
		return (double)n;
	case LP_M_TOTAL: {
		double t = 0;
		for (size_t i = 0; i < n; i++)
			t += v[i];
		return t;
	}
	default:
		return NAN;
	}
}

double lp_metric_q(enum lp_metric m)
{
	static const double q[LP_M_NMETRICS] = {0.50, 0.90, 0.99, 0.999, -1, 1, 0, NAN, NAN, NAN};
	return (unsigned)m < LP_M_NMETRICS ? q[m] : NAN;
}

const char *lp_verdict_name(enum lp_verdict v)
{
	switch (v) {
	case LP_V_REGRESSION:
		return "regression";
	case LP_V_IMPROVEMENT:
		return "improvement";
	case LP_V_NOT_ENOUGH:
		return "not enough data";
	case LP_V_INCONCLUSIVE:
		return "inconclusive";
	default:
		return "unchanged";
	}
}

const char *lp_diff_state_name(enum lp_diff_state s)
{
	return s == LP_DS_REGRESSION	 ? "regression"
	       : s == LP_DS_INCONCLUSIVE ? "inconclusive"
					 : "no regression";
}

int lp_diff_exit_status(const struct lp_diff *d)
{
	return d->state == LP_DS_REGRESSION	? 1
	       : d->state == LP_DS_INCONCLUSIVE ? d->opts.inconclusive_exit
						: 0;
}

/* ---------------------------------------------------------------- samples */

/* Room for want samples in all. */
static int series_reserve(struct lp_series *s, size_t want)
{
	if (want <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap * 2 : 64;
	cap = cap < want ? want : cap;
	double *p = realloc(s->v, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	lp_huge_advise(p, cap * sizeof(*p));
	s->v = p;
	s->cap = cap;
	return 0;
}

static int series_push(struct lp_series *s, double v)
{
	if (s->n == s->cap && series_reserve(s, s->n + 1))
		return -ENOMEM;
	s->v[s->n++] = v;
	return 0;
}

/* Appends run p's samples to s; an empty s takes p's array whole. */
static int series_take(struct lp_series *s, struct lp_series *p)
{
	if (!s->v) {
		s->v = p->v;
		s->n = p->n;
		s->cap = p->cap;
		p->v = NULL;
		p->n = p->cap = 0;
		return 0;
	}
	if (series_reserve(s, s->n + p->n))
		return -ENOMEM;
	memcpy(s->v + s->n, p->v, p->n * sizeof(*p->v));
	s->n += p->n;
	return 0;
}

static void series_free(struct lp_series *s)
{
	free(s->name);
	free(s->run_buf);
	free(s->v);
	free(s->run_v);
	free(s->run_n);
	memset(s, 0, sizeof(*s));
}

const struct lp_series *lp_side_stage(const struct lp_side *side, const char *name)
{
	for (size_t i = 0; i < side->nstages; i++)
		if (strcmp(side->stages[i].name, name) == 0)
			return &side->stages[i];
	return NULL;
}

/* run_n has room for every database of the side (nruns). */
static struct lp_series *stage_get(struct lp_side *side, const char *name, size_t nruns)
{
	struct lp_series *s = (struct lp_series *)lp_side_stage(side, name);
	if (s)
		return s;
	s = realloc(side->stages, (side->nstages + 1) * sizeof(*s));
	if (!s)
		return NULL;
	side->stages = s;
	s = &side->stages[side->nstages];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	s->run_n = calloc(nruns + 1, sizeof(*s->run_n));
	if (!s->name || !s->run_n) {
		free(s->name);
		free(s->run_n);
		return NULL;
	}
	side->nstages++;
	return s;
}

/* v holds the runs one after the other, each sorted by its job: keeps
 * them apart in run_buf, then sorts the pooled samples. */
static int series_finish(struct lp_series *s, size_t nruns)
{
	if (!(s->run_v = calloc(nruns + 1, sizeof(*s->run_v))))
		return -ENOMEM;
	if (nruns == 1) {
		s->run_v[0] = s->v;
		return 0;
	}
	if (!(s->run_buf = malloc((s->n + 1) * sizeof(double))))
		return -ENOMEM;
	memcpy(s->run_buf, s->v, s->n * sizeof(double));
	for (size_t r = 0, off = 0; r < nruns; off += s->run_n[r++])
		s->run_v[r] = s->run_buf + off;
	lp_sort_doubles(s->v, s->n);
	return 0;
}

static int named_add(struct lp_named_total **v, size_t *n, const char *name, double ns,
		     long long count)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].name, name) == 0) {
			(*v)[i].total_ns += ns;
			(*v)[i].count += count;
			return 0;
		}
	struct lp_named_total *p = realloc(*v, (*n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*v = p;
	p[*n] = (struct lp_named_total){strdup(name), ns, count};
	if (!p[*n].name)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* ---- requests and stages: one scan of the ranges table ----
 *
 * A join of ranges with its children, grouped per request, takes tens of
 * seconds on a million requests; one scan of the outermost two levels
 * into arrays, then hash lookups of each child's parent, takes one. The
 * importer may write a child before its parent, so the rows are kept and
 * matched after the scan. */

struct rrow {
	int64_t id; /* depth 0: own id; depth 1: parent's */
	int64_t name_id;
	double dur;
};

struct rscan {
	struct rrow *top, *child;
	size_t ntop, nchild, ctop, cchild;
};

#define RSCAN_RESERVE_MAX (16ll << 20)

static int rrow_reserve(struct rrow **v, size_t *cap, size_t want)
{
	struct rrow *p = realloc(*v, want * sizeof(*p));
	if (!p)
		return -ENOMEM;
	lp_huge_advise(p, want * sizeof(*p));
	*v = p;
	*cap = want;
	return 0;
}

static int rrow_push(struct rrow **v, size_t *n, size_t *cap, struct rrow r)
{
	if (*n == *cap && rrow_reserve(v, cap, *cap ? *cap * 2 : 1024))
		return -ENOMEM;
	(*v)[(*n)++] = r;
	return 0;
}

static int rscan_row(sqlite3_value **v, void *ctx)
{
	struct rscan *sc = ctx;
	/* name_id and parent_id are NULL or >= 1 (INTEGER PRIMARY KEYs the
	 * importer numbers from 1): 0 reads as NULL, no type check per row. */
	struct rrow r = {sqlite3_value_int64(v[0]), sqlite3_value_int64(v[1]),
			 (double)sqlite3_value_int64(v[3])};
	if (r.name_id == 0)
		return 0; /* unnamed: neither a request nor a stage */
	if (sqlite3_value_int64(v[2]) == 0)
		return rrow_push(&sc->top, &sc->ntop, &sc->ctop, r);
	if ((r.id = sqlite3_value_int64(v[4])) == 0)
		return 0;
	return rrow_push(&sc->child, &sc->nchild, &sc->cchild, r);
}

static int str_row(sqlite3_stmt *st, void *ctx)
{
	char **out = ctx;
	if (!*out && !(*out = lp_db_col_strdup(st, 0)))
		return -ENOMEM;
	return 0;
}

/* The string of a name id (NULL when missing or out of memory). */
static char *name_of(sqlite3 *db, int64_t id, char *err, size_t errlen)
{
	char *s = NULL;
	if (lp_db_each(db, "SELECT value FROM strings WHERE id = ?1", &id, 1, str_row, &s, err,
		       errlen)) {
		free(s);
		return NULL;
	}
	return s;
}

/* Most frequent outermost name id (ties: the smaller string). */
static int pick_request(sqlite3 *db, const struct rscan *sc, char **name, char *err, size_t errlen)
{
	struct lp_map cnt = {0};
	uint64_t c;
	int rc = 0;
	/* one map update per run of equal names (requests follow each other) */
	for (size_t i = 0, j; !rc && i < sc->ntop; i = j) {
		for (j = i + 1; j < sc->ntop && sc->top[j].name_id == sc->top[i].name_id; j++)
			;
		uint64_t k = (uint64_t)sc->top[i].name_id + 1;
		c = 0;
		lp_map_get(&cnt, k, &c);
		rc = lp_map_put(&cnt, k, c + (j - i)) ? -ENOMEM : 0;
	}
	uint64_t best = 0;
	for (size_t i = 0; !rc && i < cnt.cap; i++) {
		if (!cnt.keys[i] || cnt.vals[i] < best)
			continue;
		char *s = name_of(db, (int64_t)cnt.keys[i] - 1, err, errlen);
		if (s && (cnt.vals[i] > best || !*name || strcmp(s, *name) < 0)) {
			free(*name);
			*name = s;
			best = cnt.vals[i];
		} else {
			free(s);
		}
	}
	lp_map_free(&cnt);
	return rc;
}

static int id_row(sqlite3_stmt *st, void *ctx)
{
	return lp_map_put(ctx, (uint64_t)sqlite3_column_int64(st, 0) + 1, 1) ? -ENOMEM : 0;
}

/* Name ids whose string is name (a database may hold one twice). */
static int ids_of(sqlite3 *db, const char *name, struct lp_map *ids, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT id FROM strings WHERE value = ?1", -1, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "database error: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int rc = lp_db_step_all(st, id_row, ids, err, errlen);
	sqlite3_finalize(st);
	return rc;
}

/* Request index by range id: a dense array over the ids' span when it is
 * at most 8x the requests (the importer numbers ranges densely, so this is
 * the rule: no hashing for millions of lookups), else a hash map. */
struct req_index {
	int64_t lo;
	size_t span;
	uint32_t *dense; /* index + 1; 0 = not a request */
	struct lp_map map;
};

static int req_index_put(struct req_index *x, int64_t id, size_t i)
{
	if (x->dense && id >= x->lo && (uint64_t)(id - x->lo) < x->span) {
		x->dense[id - x->lo] = (uint32_t)i + 1;
		return 0;
	}
	return lp_map_put(&x->map, (uint64_t)id + 1, i) ? -ENOMEM : 0;
}

static int req_index_get(const struct req_index *x, int64_t id, uint64_t *i)
{
	if (x->dense && id >= x->lo && (uint64_t)(id - x->lo) < x->span) {
		*i = (uint64_t)x->dense[id - x->lo] - 1;
		return x->dense[id - x->lo] != 0;
	}
	return lp_map_get(&x->map, (uint64_t)id + 1, i);
}

static void req_index_init(struct req_index *x, const struct rscan *sc)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	memset(x, 0, sizeof(*x));
	for (size_t i = 0; i < sc->ntop; i++) {
		lo = sc->top[i].id < lo ? sc->top[i].id : lo;
		hi = sc->top[i].id > hi ? sc->top[i].id : hi;
	}
	if (sc->ntop && sc->ntop < UINT32_MAX &&
	    (uint64_t)(hi - lo) < 8 * (uint64_t)sc->ntop + 1024) {
		x->lo = lo;
		x->span = (size_t)(hi - lo) + 1;
		x->dense = calloc(x->span, sizeof(*x->dense)); /* NULL: the map does it all */
		lp_huge_advise(x->dense, x->dense ? x->span * sizeof(*x->dense) : 0);
	}
}

static void req_index_free(struct req_index *x)
{
	free(x->dense);
	lp_map_free(&x->map);
}

/* Per stage name id: sum per request (NAN: the request lacks the stage). */
struct stage_acc {
	int64_t name_id;
	double *sum;
};

static int accumulate(const struct rscan *sc, const struct req_index *req_of, size_t nreq,
		      struct stage_acc **acc, size_t *nacc)
{
	struct lp_map slot = {0};
	int64_t last = 0; /* the name id of slot si: siblings come in turn */
	uint64_t si = 0;
	int rc = 0;
	for (size_t i = 0; !rc && i < sc->nchild; i++) {
		const struct rrow *c = &sc->child[i];
		uint64_t ri;
		if (!req_index_get(req_of, c->id, &ri))
			continue;
		if (c->name_id == last) {
			/* slot si */
		} else if (lp_map_get(&slot, (uint64_t)c->name_id + 1, &si)) {
			last = c->name_id;
		} else {
			struct stage_acc *p = realloc(*acc, (*nacc + 1) * sizeof(*p));
			double *sum = malloc((nreq + 1) * sizeof(*sum));
			lp_huge_advise(sum, sum ? (nreq + 1) * sizeof(*sum) : 0);
			if (!p || !sum || lp_map_put(&slot, (uint64_t)c->name_id + 1, *nacc)) {
				free(sum);
				*acc = p ? p : *acc;
				rc = -ENOMEM;
				break;
			}
			for (size_t k = 0; k < nreq; k++)
				sum[k] = NAN;
			*acc = p;
			p[*nacc] = (struct stage_acc){c->name_id, sum};
			si = (*nacc)++;
			last = c->name_id;
		}
		double *v = &(*acc)[si].sum[ri];
		*v = isnan(*v) ? c->dur : *v + c->dur;
	}
	lp_map_free(&slot);
	return rc;
}

static int add_stages(sqlite3 *db, struct lp_side *side, size_t run, size_t nruns,
		      const struct stage_acc *acc, size_t nacc, size_t nreq, char *err,
		      size_t errlen)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < nacc; i++) {
		char *name = name_of(db, acc[i].name_id, err, errlen);
		struct lp_series *s = name ? stage_get(side, name, nruns) : NULL;
		free(name);
		if (!s || series_reserve(s, s->n + nreq))
			return -ENOMEM;
		for (size_t k = 0; k < nreq; k++)
			if (!isnan(acc[i].sum[k])) {
				s->v[s->n++] = acc[i].sum[k];
				s->run_n[run]++;
			}
	}
	return rc;
}

/* Requests of the scanned rows named req_name, and their stages, into
 * side's run `run` (of nruns). */
static int resolve_ranges(sqlite3 *db, const char *path, struct rscan *sc, const char *req_name,
			  struct lp_side *side, size_t run, size_t nruns, char *err, size_t errlen)
{
	struct lp_map ids = {0};
	struct req_index req_of;
	struct stage_acc *acc = NULL;
	size_t nacc = 0, nreq = 0;
	req_index_init(&req_of, sc);
	int rc = ids_of(db, req_name, &ids, err, errlen);
	int64_t last = 0; /* a name id, and whether it is the request's */
	int is_req = 0;
	for (size_t i = 0; !rc && i < sc->ntop; i++) {
		uint64_t one;
		if (sc->top[i].name_id != last) {
			last = sc->top[i].name_id;
			is_req = lp_map_get(&ids, (uint64_t)last + 1, &one);
		}
		if (!is_req)
			continue;
		if (req_index_put(&req_of, sc->top[i].id, nreq) ||
		    series_push(&side->req, sc->top[i].dur))
			rc = -ENOMEM;
		nreq++;
	}
	side->req.run_n[run] = nreq;
	if (!rc && !nreq) {
		snprintf(err, errlen, "%s has no outermost range named '%s' (use --request NAME)",
			 path, req_name);
		rc = -EINVAL;
	}
	free(sc->top);
	sc->top = NULL;
	if (!rc && !(rc = accumulate(sc, &req_of, nreq, &acc, &nacc)))
		rc = add_stages(db, side, run, nruns, acc, nacc, nreq, err, errlen);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	for (size_t i = 0; i < nacc; i++)
		free(acc[i].sum);
	free(acc);
	free(sc->child);
	sc->child = NULL;
	lp_map_free(&ids);
	req_index_free(&req_of);
	return rc;
}

/* Lock names must match across runs: heap locks have no symbol and a new
 * address each run, so they are named by kind and innermost function. */
struct named_ctx {
	struct lp_named_total **v;
	size_t *n;
};

static int named_row_add(sqlite3_stmt *st, void *ctx)
{
	struct named_ctx *c = ctx;
	const char *k = (const char *)sqlite3_column_text(st, 0);
	return named_add(c->v, c->n, k ? k : "?", sqlite3_column_double(st, 1),
			 sqlite3_column_int64(st, 2));
}

static int load_locks(sqlite3 *db, struct lp_side *side, char *err, size_t errlen)
{
	struct named_ctx c = {&side->locks, &side->nlocks};
	if (!lp_db_has_table(db, "lock_waits"))
		return 0;
	return lp_db_each(db,
			  "SELECT coalesce(l.name, l.kind || ' at ' || coalesce(f.function, "
			  "f.module, '?')), sum(w.dur_ns), count(*) FROM lock_waits w JOIN "
			  "locks l ON l.id = w.lock_id LEFT JOIN stacks k ON k.id = w.stack_id "
			  "LEFT JOIN frames f ON f.id = k.top_frame GROUP BY 1",
			  NULL, 0, named_row_add, &c, err, errlen);
}

/* Each stage's time, on-CPU and preempted parts (and the request's under
 * its own name): what tells a stage's own slowdown from a CPU it waited for. */
static int load_stage_cpu(const struct lp_breakdown *bd, struct lp_side *side)
{
	int on = bd->ncat - LP_BREAKDOWN_NREST + LP_BREAKDOWN_ONCPU,
	    pre = bd->ncat - LP_BREAKDOWN_NREST + LP_BREAKDOWN_PREEMPTED;
	int rc = 0;
	side->cpu_dbs++;
	side->cpu_known += bd->has_counters != 0;
	for (size_t i = 0; !rc && i < bd->nstages; i++) {
		const struct lp_breakdown_stage *st = &bd->stages[i];
		if (st->unattributed)
			continue;
		int64_t wall = 0;
		for (int k = 0; k < bd->ncat; k++)
			wall += st->cat_ns[k];
		if ((rc = named_add(&side->st_wall, &side->nst_wall, st->name, (double)wall,
				    st->st.n)) ||
		    (rc = named_add(&side->st_oncpu, &side->nst_oncpu, st->name,
				    (double)st->cat_ns[on], st->st.n)))
			break;
		rc = named_add(&side->st_pre, &side->nst_pre, st->name, (double)st->cat_ns[pre],
			       st->st.n);
	}
	return rc;
}

/* Request time by breakdown category (lock wait, sleep, socket I/O, on-CPU,
 * preempted, ...): where the time went, whatever the stages are called.
 * Pooled over the side's runs. */
static int load_cats(sqlite3 *db, const char *path, struct lp_side *side, char *err, size_t errlen)
{
	struct lp_breakdown_opts o = {.request = side->req_name};
	struct lp_breakdown bd;
	char why[256];
	int rc = lp_breakdown_compute(db, &o, &bd, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, why);
		return rc == -ENOENT ? -EINVAL : rc;
	}
	for (int k = 0; !rc && bd.has_ranges && k < bd.ncat; k++)
		if (bd.req_cat_ns[k])
			rc = named_add(&side->cats, &side->ncats, bd.cat_name[k],
				       (double)bd.req_cat_ns[k], bd.req.n);
	if (!rc && bd.has_ranges)
		rc = load_stage_cpu(&bd, side);
	lp_breakdown_free(&bd);
	return rc;
}

static int has_column(sqlite3 *db, const char *table, const char *col)
{
	char sql[160];
	snprintf(sql, sizeof(sql), "SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'", table,
		 col);
	return lp_db_int(db, sql, 0) == 1;
}

/* The kernels table belongs to the CUDA source (schemas/cuda.sql); its name
 * and duration columns are looked up rather than assumed. */
static int load_kernels(sqlite3 *db, struct lp_side *side, int first, char *err, size_t errlen)
{
	const char *name = NULL, *dur = NULL;
	if (lp_db_has_table(db, "kernels")) {
		if (has_column(db, "kernels", "name"))
			name = "name";
		else if (has_column(db, "kernels", "name_id"))
			name = "(SELECT value FROM strings WHERE id = name_id)";
		if (has_column(db, "kernels", "dur_ns"))
			dur = "dur_ns";
		else if (has_column(db, "kernels", "end_ns") &&
			 has_column(db, "kernels", "start_ns"))
			dur = "end_ns - start_ns";
	}
	if (!name || !dur) {
		side->has_kernels = 0;
		return 0;
	}
	if (first)
		side->has_kernels = 1;
	char sql[256];
	struct named_ctx c = {&side->kernels, &side->nkernels};
	snprintf(sql, sizeof(sql), "SELECT %s, sum(%s), count(*) FROM kernels GROUP BY 1", name,
		 dur);
	return lp_db_each(db, sql, NULL, 0, named_row_add, &c, err, errlen);
}

static int load_findings(sqlite3 *db, struct lp_side *side, char *err, size_t errlen)
{
	char **ids = NULL;
	size_t n = 0;
	if (!lp_findings_provider) {
		side->has_findings = 0;
		return 0;
	}
	int rc = lp_findings_provider(db, &ids, &n, err, errlen);
	if (rc)
		return rc;
	char **p = realloc(side->findings, (side->nfindings + n + 1) * sizeof(*p));
	if (!p) {
		for (size_t i = 0; i < n; i++)
			free(ids[i]);
		free(ids);
		return -ENOMEM;
	}
	side->findings = p;
	memcpy(p + side->nfindings, ids, n * sizeof(*p));
	side->nfindings += n;
	free(ids);
	return 0;
}

/* ---- loading sides: databases in parallel ----
 * One job per database. Phase 1 (threads): open, scan the ranges, sum the
 * locks and kernels. Then the request name is fixed (--request, or the
 * most frequent outermost name of the first base database). Phase 2
 * (threads): requests and stages of that name, each sorted. The jobs are
 * merged in order, run by run (one run per side: its arrays are moved, not
 * copied); findings run last on one thread (the rule engine keeps global
 * state). */

struct db_job {
	const char *path;
	sqlite3 *db;
	struct rscan sc;
	struct lp_side part; /* this database alone, as run 0 of 1 */
	const char *req_name;
	int rc;
	char err[1024];
};

static void job_scan(struct db_job *j)
{
	if (lp_db_open_ro(j->path, &j->db, j->err, sizeof(j->err))) {
		j->rc = -EINVAL;
		return;
	}
	long long nr = lp_db_count(j->db, "ranges");
	if (nr == 0) {
		snprintf(j->err, sizeof(j->err),
			 "%s has no NVTX ranges: requests are outermost NVTX ranges, so annotate "
			 "the program with NVTX (or record it with NVTX capture on)",
			 j->path);
		j->rc = -EINVAL;
		return;
	}
	/* room for every range (up to 16 M: address space, not memory, until
	 * written), so that the arrays never move */
	nr = nr < RSCAN_RESERVE_MAX ? nr : RSCAN_RESERVE_MAX;
	if (rrow_reserve(&j->sc.top, &j->sc.ctop, (size_t)nr) ||
	    rrow_reserve(&j->sc.child, &j->sc.cchild, (size_t)nr)) {
		snprintf(j->err, sizeof(j->err), "out of memory");
		j->rc = -ENOMEM;
		return;
	}
	/* the scan reads the whole table: map it rather than copy it page by page */
	lp_db_exec(j->db, "PRAGMA mmap_size = 4294967296", j->err, sizeof(j->err));
	j->rc = lp_db_fold(j->db,
			   "SELECT lp_rows(id, name_id, depth, end_ns - start_ns, parent_id) FROM "
			   "ranges WHERE depth <= 1",
			   rscan_row, &j->sc, j->err, sizeof(j->err));
	if (!j->rc)
		j->rc = load_locks(j->db, &j->part, j->err, sizeof(j->err));
	if (!j->rc)
		j->rc = load_kernels(j->db, &j->part, 1, j->err, sizeof(j->err));
}

static void job_resolve(struct db_job *j)
{
	if (!(j->part.req.run_n = calloc(2, sizeof(size_t))))
		j->rc = -ENOMEM;
	else
		j->rc = resolve_ranges(j->db, j->path, &j->sc, j->req_name, &j->part, 0, 1, j->err,
				       sizeof(j->err));
	/* each run sorted here, on the job's thread: one run per side needs no
	 * more (the bootstrap and the quantiles read sorted samples) */
	lp_sort_doubles(j->part.req.v, j->part.req.n);
	for (size_t i = 0; !j->rc && i < j->part.nstages; i++)
		lp_sort_doubles(j->part.stages[i].v, j->part.stages[i].n);
}

struct job_pool {
	struct db_job *jobs;
	size_t n, next;
	void (*fn)(struct db_job *);
};

static void *pool_worker(void *arg)
{
	struct job_pool *p = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (i >= p->n)
			return NULL;
		if (!p->jobs[i].rc)
			p->fn(&p->jobs[i]);
	}
}

/* fn over every job still without an error, on up to 8 threads. */
static void pool_run(struct db_job *jobs, size_t n, void (*fn)(struct db_job *))
{
	struct job_pool p = {jobs, n, 0, fn};
	pthread_t th[7];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = 0, want = n < (size_t)(cpus > 1 ? cpus : 1) ? n : (size_t)(cpus > 1 ? cpus : 1);
	while (nt + 1 < want && nt < 7 && pthread_create(&th[nt], NULL, pool_worker, &p) == 0)
		nt++;
	pool_worker(&p);
	while (nt)
		pthread_join(th[--nt], NULL);
}

/* Appends job r's database to side as its run r. */
static int side_merge(struct lp_side *side, struct db_job *j, size_t r, size_t nruns)
{
	struct lp_side *p = &j->part;
	side->req.run_n[r] = p->req.n;
	int rc = series_take(&side->req, &p->req);
	for (size_t k = 0; !rc && k < p->nstages; k++) {
		struct lp_series *s = stage_get(side, p->stages[k].name, nruns);
		if (!s)
			return -ENOMEM;
		s->run_n[r] = p->stages[k].n;
		rc = series_take(s, &p->stages[k]);
	}
	for (size_t i = 0; !rc && i < p->nlocks; i++)
		rc = named_add(&side->locks, &side->nlocks, p->locks[i].name, p->locks[i].total_ns,
			       p->locks[i].count);
	for (size_t i = 0; !rc && i < p->nkernels; i++)
		rc = named_add(&side->kernels, &side->nkernels, p->kernels[i].name,
			       p->kernels[i].total_ns, p->kernels[i].count);
	side->has_kernels = r == 0 ? p->has_kernels : side->has_kernels && p->has_kernels;
	side->ndbs++;
	return rc;
}

static int side_build(struct lp_side *side, struct db_job *jobs, size_t n, const char *req_name,
		      char *err, size_t errlen)
{
	int rc = 0;
	side->has_findings = lp_findings_provider != NULL;
	if (!(side->req_name = strdup(req_name)) ||
	    !(side->req.run_n = calloc(n + 1, sizeof(size_t))))
		rc = -ENOMEM;
	for (size_t r = 0; !rc && r < n; r++)
		rc = side_merge(side, &jobs[r], r, n);
	if (!rc)
		rc = series_finish(&side->req, n);
	for (size_t i = 0; !rc && i < side->nstages; i++)
		rc = series_finish(&side->stages[i], n);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

struct build_arg {
	struct lp_side *side;
	struct db_job *jobs;
	size_t n;
	const char *req_name;
	int rc;
	char err[1024];
};

static void *build_thread(void *arg)
{
	struct build_arg *b = arg;
	b->rc = side_build(b->side, b->jobs, b->n, b->req_name, b->err, sizeof(b->err));
	return NULL;
}

/* Both sides merged and sorted at once (two threads), then the findings of
 * every database on this thread. */
static int sides_build(struct build_arg *b, size_t nsides, int findings, char *err, size_t errlen)
{
	pthread_t th;
	int started = nsides == 2 && pthread_create(&th, NULL, build_thread, &b[1]) == 0;
	build_thread(&b[0]);
	if (started)
		pthread_join(th, NULL);
	else if (nsides == 2)
		build_thread(&b[1]);
	for (size_t k = 0; k < nsides; k++)
		if (b[k].rc) {
			snprintf(err, errlen, "%s", b[k].err);
			return b[k].rc;
		}
	for (size_t k = 0; k < nsides && !findings; k++)
		b[k].side->has_findings = 0;
	for (size_t k = 0; k < nsides && findings; k++)
		for (size_t r = 0; r < b[k].n; r++) {
			int rc = load_findings(b[k].jobs[r].db, b[k].side, err, errlen);
			/* the breakdown is as costly as the rules: --no-findings skips both */
			if (!rc && lp_findings_provider)
				rc = load_cats(b[k].jobs[r].db, b[k].jobs[r].path, b[k].side, err,
					       errlen);
			if (rc)
				return rc == -EIO ? -EINVAL : rc;
		}
	return 0;
}

static void jobs_free(struct db_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(jobs[i].sc.top);
		free(jobs[i].sc.child);
		lp_side_free(&jobs[i].part);
		sqlite3_close(jobs[i].db);
	}
	free(jobs);
}

/* The first failed job's error; -EIO (a read error) is bad input too. */
static int jobs_err(struct db_job *jobs, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (jobs[i].rc) {
			snprintf(err, errlen, "%s", jobs[i].err);
			return jobs[i].rc == -EIO ? -EINVAL : jobs[i].rc;
		}
	return 0;
}

static int sides_load(const char *const *bpaths, size_t nb, const char *const *npaths, size_t nn,
		      const char *request, struct lp_side *base, struct lp_side *new_, int findings,
		      char *err, size_t errlen)
{
	struct db_job *jobs = calloc(nb + nn + 1, sizeof(*jobs));
	char *picked = NULL;
	int rc;
	memset(base, 0, sizeof(*base));
	if (new_)
		memset(new_, 0, sizeof(*new_));
	if (!jobs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < nb + nn; i++)
		jobs[i].path = i < nb ? bpaths[i] : npaths[i - nb];
	pool_run(jobs, nb + nn, job_scan);
	if ((rc = jobs_err(jobs, nb + nn, err, errlen)))
		goto out;
	if (!request && (rc = pick_request(jobs[0].db, &jobs[0].sc, &picked, err, errlen)))
		goto out;
	if (!request && !(request = picked)) {
		snprintf(err, errlen, "%s has no named outermost range", jobs[0].path);
		rc = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < nb + nn; i++)
		jobs[i].req_name = request;
	pool_run(jobs, nb + nn, job_resolve);
	struct build_arg b[2] = {{base, jobs, nb, request, 0, ""},
				 {new_, jobs + nb, nn, request, 0, ""}};
	if (!(rc = jobs_err(jobs, nb + nn, err, errlen)))
		rc = sides_build(b, new_ ? 2 : 1, findings, err, errlen);
out:
	free(picked);
	jobs_free(jobs, nb + nn);
	return rc;
}

int lp_sides_load(const char *const *bpaths, size_t nb, const char *const *npaths, size_t nn,
		  const char *request, struct lp_side *base, struct lp_side *new_, char *err,
		  size_t errlen)
{
	return sides_load(bpaths, nb, npaths, nn, request, base, new_, 1, err, errlen);
}

int lp_side_load(const char *const *paths, size_t n, const char *request, struct lp_side *side,
		 char *err, size_t errlen)
{
	return lp_sides_load(paths, n, NULL, 0, request, side, NULL, err, errlen);
}

int lp_side_load_requests(const char *const *paths, size_t n, const char *request,
			  struct lp_side *side, char *err, size_t errlen)
{
	return sides_load(paths, n, NULL, 0, request, side, NULL, 0, err, errlen);
}

void lp_side_free(struct lp_side *side)
{
	free(side->req_name);
	series_free(&side->req);
	for (size_t i = 0; i < side->nstages; i++)
		series_free(&side->stages[i]);
	free(side->stages);
	for (size_t i = 0; i < side->nlocks; i++)
		free(side->locks[i].name);
	free(side->locks);
	for (size_t i = 0; i < side->ncats; i++)
		free(side->cats[i].name);
	free(side->cats);
	for (size_t i = 0; i < side->nkernels; i++)
		free(side->kernels[i].name);
	free(side->kernels);
	for (size_t i = 0; i < side->nfindings; i++)
		free(side->findings[i]);
	free(side->findings);
	for (size_t i = 0; i < side->nst_wall; i++)
		free(side->st_wall[i].name);
	for (size_t i = 0; i < side->nst_oncpu; i++)
		free(side->st_oncpu[i].name);
	for (size_t i = 0; i < side->nst_pre; i++)
		free(side->st_pre[i].name);
	free(side->st_wall);
	free(side->st_oncpu);
	free(side->st_pre);
	memset(side, 0, sizeof(*side));
}

/* ---------------------------------------------------------------- diff */

static double rel_change(double base, double now)
{
	return base != 0 ? (now - base) / base : NAN;
}

/* One metric to compare: a named one (q from lp_metric_q) or a quantile
 * asked by number. */
struct metric_spec {
	enum lp_metric m;
	double q;
	char name[16];
};

static size_t metric_specs(const struct lp_diff_opts *o, struct metric_spec *out)
{
	size_t n = 0;
	for (int m = 0; m < LP_M_COUNT; m++)
		if (o->metrics & (1u << m)) {
			out[n] = (struct metric_spec){m, lp_metric_q(m), ""};
			snprintf(out[n++].name, sizeof(out->name), "%s", lp_metric_name(m));
		}
	for (size_t i = 0; i < o->nquant; i++) {
		out[n] = (struct metric_spec){LP_M_QUANTILE, o->quant[i], ""};
		snprintf(out[n++].name, sizeof(out->name), "p%g", o->quant[i] * 100);
	}
	return n;
}

/* Why a side has too few requests for the metric; "" when it has enough. */
static void enough(const struct lp_series *s, double q, const char *side, char *why, size_t len)
{
	size_t below, above;
	if (q < 0) {
		if (s->n < LP_DIFF_MIN_SAMPLES)
			snprintf(why, len, "%zu requests on the %s side, need %d", s->n, side,
				 LP_DIFF_MIN_SAMPLES);
		return;
	}
	lp_boot_tails(s->n, q, &below, &above);
	if (above < LP_DIFF_MIN_TAIL || below < LP_DIFF_MIN_TAIL)
		snprintf(why, len, "%zu requests %s it on the %s side, need %d",
			 above < below ? above : below, above < below ? "above" : "below", side,
			 LP_DIFF_MIN_TAIL);
}

static size_t runs_with_samples(const struct lp_series *s, size_t nruns)
{
	size_t k = 0;
	for (size_t r = 0; r < nruns; r++)
		k += s->run_n && s->run_n[r] > 0;
	return k;
}

static int add_row(struct lp_diff *d, const char *scope, int is_request, const struct lp_series *b,
		   const struct lp_series *n, const struct metric_spec *ms)
{
	struct lp_diff_row *r = realloc(d->rows, (d->nrows + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	d->rows = r;
	r = &d->rows[d->nrows++];
	memset(r, 0, sizeof(*r));
	r->scope = strdup(scope);
	r->is_request = is_request;
	r->metric = ms->m;
	r->q = ms->q;
	memcpy(r->metric_name, ms->name, sizeof(r->metric_name));
	r->n_base = b->n;
	r->n_new = n->n;
	r->runs_base = runs_with_samples(b, d->base_dbs);
	r->runs_new = runs_with_samples(n, d->new_dbs);
	r->base = ms->q < 0 ? lp_mean(b->v, b->n)
		  : b->n    ? lp_quantile_nearest(b->v, b->n, ms->q)
			    : NAN;
	r->new_ = ms->q < 0 ? lp_mean(n->v, n->n)
		  : n->n    ? lp_quantile_nearest(n->v, n->n, ms->q)
			    : NAN;
	r->rel = r->base > 0 ? r->new_ / r->base - 1 : NAN;
	r->lo = r->hi = r->p = r->p_adj = NAN;
	r->verdict = LP_V_NOT_ENOUGH;
	enough(b, ms->q, "base", r->why, sizeof(r->why));
	if (!r->why[0])
		enough(n, ms->q, "new", r->why, sizeof(r->why));
	if (!r->why[0] && !(r->base > 0))
		snprintf(r->why, sizeof(r->why), "base value is 0");
	if (!r->why[0])
		r->verdict = LP_V_UNCHANGED; /* tested below */
	return r->scope ? 0 : -ENOMEM;
}

static int add_rows(struct lp_diff *d, const char *scope, int is_request, const struct lp_series *b,
		    const struct lp_series *n, const struct metric_spec *ms, size_t nms)
{
	static const struct lp_series empty;
	int rc = 0;
	for (size_t i = 0; !rc && i < nms; i++) {
		rc = add_row(d, scope, is_request, b ? b : &empty, n ? n : &empty, &ms[i]);
		if (!rc && (!b || !n)) { /* not too few requests: none has it */
			struct lp_diff_row *r = &d->rows[d->nrows - 1];
			r->absent = !b ? 1 : 2;
			snprintf(r->why, sizeof(r->why), "absent on the %s side",
				 !b ? "base" : "new");
		}
	}
	return rc;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Bootstrap draws of one side's metric into out[nb]. */
static int side_draws(const struct lp_series *s, size_t nruns, double q, struct lp_rng *rng,
		      double *out, size_t nb)
{
	struct lp_boot_runs br;
	const double *const *v = (const double *const *)s->run_v;
	int rc = lp_boot_runs_init(&br, v, s->run_n, nruns);
	if (!rc)
		rc = lp_boot_draw(&br, q, rng, out, nb);
	lp_boot_runs_free(&br);
	return rc;
}

/*
 * The row's interval and p. Ratios new/base of independent resamples of
 * each side; with one run on a side the run-to-run change is unknown, so
 * the interval is widened by the noise floor (a ratio of 1 +- noise) and
 * the thresholds move out by it.
 */
static int test_row(struct lp_diff *d, struct lp_diff_row *r, const struct lp_series *b,
		    const struct lp_series *n, size_t nb, double *db, double *dn, uint64_t seed)
{
	struct lp_rng rng;
	int rc;
	lp_rng_seed(&rng, seed);
	if ((rc = side_draws(b, d->base_dbs, r->q, &rng, db, nb)) ||
	    (rc = side_draws(n, d->new_dbs, r->q, &rng, dn, nb)))
		return rc;
	size_t m = 0;
	for (size_t i = 0; i < nb; i++)
		if (db[i] > 0 && !isnan(dn[i]))
			db[m++] = dn[i] / db[i];
	if (m < nb / 2) {
		snprintf(r->why, sizeof(r->why), "too few resamples with a base value above 0");
		r->verdict = LP_V_NOT_ENOUGH;
		return 0;
	}
	qsort(db, m, sizeof(*db), cmp_dbl);
	int hier = r->runs_base >= 2 && r->runs_new >= 2;
	r->noise = hier ? 0 : d->noise;
	r->method = hier ? "hierarchical bootstrap (runs, then requests)"
		    : r->runs_base >= 2 || r->runs_new >= 2
			? "bootstrap over runs, then requests, on the side with 2+ runs; over "
			  "requests on the other; noise floor"
			: "bootstrap over requests; noise floor";
	d->single_run |= !hier;
	double a = d->opts.alpha, f = 1 + r->noise;
	size_t ilo = (size_t)floor(a / 2 * (double)(m - 1)),
	       ihi = (size_t)ceil((1 - a / 2) * (double)(m - 1));
	r->lo = db[ilo] / f - 1;
	r->hi = db[ihi] * f - 1;
	/* p: normal tails of the log ratios' bootstrap distribution (2000
	 * resamples cannot resolve the alpha / 15 a Holm family needs by
	 * counting); the verdict also needs the percentile interval itself
	 * beyond the threshold. */
	double mu = 0, var = 0;
	for (size_t i = 0; i < m; i++)
		mu += log(db[i]);
	mu /= (double)m;
	for (size_t i = 0; i < m; i++)
		var += (log(db[i]) - mu) * (log(db[i]) - mu);
	double sd = sqrt(var / (double)(m - 1 ? m - 1 : 1));
	double zu = (mu - log((1 + d->opts.threshold) * f)) / sd,
	       zd = (log((1 - d->opts.threshold) / f) - mu) / sd;
	if (!(sd > 0)) { /* every resample alike: beyond the threshold or not */
		zu = mu > log((1 + d->opts.threshold) * f) ? INFINITY : -INFINITY;
		zd = mu < log((1 - d->opts.threshold) / f) ? INFINITY : -INFINITY;
	}
	r->p = fmin(1, erfc(fmax(zu, zd) / M_SQRT2));
	r->verdict = r->lo > d->opts.threshold	  ? LP_V_REGRESSION
		     : r->hi < -d->opts.threshold ? LP_V_IMPROVEMENT
						  : LP_V_UNCHANGED;
	return 0;
}

/* Holm over the rows with a p; a row keeps its direction only when its
 * adjusted p is at most alpha. */
static int holm_rows(struct lp_diff *d)
{
	double *p = malloc((d->nrows + 1) * sizeof(*p)), *adj = malloc((d->nrows + 1) * sizeof(*p));
	size_t m = 0;
	int rc = -ENOMEM;
	if (!p || !adj)
		goto out;
	for (size_t i = 0; i < d->nrows; i++)
		if (!isnan(d->rows[i].p))
			p[m++] = d->rows[i].p;
	if ((rc = lp_holm(p, m, adj)))
		goto out;
	d->ntested = m;
	m = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		struct lp_diff_row *r = &d->rows[i];
		if (isnan(r->p))
			continue;
		r->p_adj = adj[m++];
		if (r->p_adj > d->opts.alpha)
			r->verdict = LP_V_UNCHANGED;
		d->regressions += r->verdict == LP_V_REGRESSION;
		d->improvements += r->verdict == LP_V_IMPROVEMENT;
	}
out:
	free(p);
	free(adj);
	return rc;
}

static const struct lp_series *row_series(const struct lp_side *side, const struct lp_diff_row *r)
{
	return r->is_request ? &side->req : lp_side_stage(side, r->scope);
}

/* Resamples: LP_DIFF_RESAMPLES, more when the Holm family is large so that
 * the smallest p the resamples can show stays below alpha / family. */
static int test_rows(struct lp_diff *d, const struct lp_side *base, const struct lp_side *new_)
{
	size_t fam = 0;
	for (size_t i = 0; i < d->nrows; i++)
		fam += d->rows[i].verdict != LP_V_NOT_ENOUGH;
	double want = 4 * (double)fam / d->opts.alpha;
	size_t nb = want > LP_DIFF_RESAMPLES ? (size_t)want : LP_DIFF_RESAMPLES;
	if (nb > 20 * LP_DIFF_RESAMPLES)
		nb = 20 * LP_DIFF_RESAMPLES;
	d->resamples = nb;
	double *db = malloc(nb * sizeof(*db)), *dn = malloc(nb * sizeof(*dn));
	int rc = db && dn ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < d->nrows; i++) {
		struct lp_diff_row *r = &d->rows[i];
		if (r->verdict == LP_V_NOT_ENOUGH)
			continue;
		rc = test_row(d, r, row_series(base, r), row_series(new_, r), nb, db, dn,
			      LP_DIFF_SEED + i);
	}
	free(db);
	free(dn);
	return rc ? rc : holm_rows(d);
}

static const struct lp_named_total *named_find(const struct lp_named_total *v, size_t n,
					       const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

static int named_row(struct lp_diff_named **out, size_t *nout, const char *name,
		     const struct lp_named_total *b, const struct lp_named_total *n, double breq,
		     double nreq)
{
	struct lp_diff_named *p = realloc(*out, (*nout + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*out = p;
	p = &p[(*nout)++];
	memset(p, 0, sizeof(*p));
	p->name = strdup(name);
	p->base_ns = b ? b->total_ns : 0;
	p->new_ns = n ? n->total_ns : 0;
	p->base_count = b ? b->count : 0;
	p->new_count = n ? n->count : 0;
	p->base_per_req = breq > 0 ? p->base_ns / breq : 0;
	p->new_per_req = nreq > 0 ? p->new_ns / nreq : 0;
	p->rel = rel_change(p->base_per_req, p->new_per_req);
	return p->name ? 0 : -ENOMEM;
}

static int cmp_named(const void *a, const void *b)
{
	const struct lp_diff_named *x = a, *y = b;
	double dx = fabs(x->new_per_req - x->base_per_req),
	       dy = fabs(y->new_per_req - y->base_per_req);
	return (dx < dy) - (dx > dy);
}

/* Union by name, base order first; per-request values make runs of
 * different lengths comparable. */
static int diff_named(const struct lp_named_total *b, size_t nb, const struct lp_named_total *n,
		      size_t nn, double breq, double nreq, struct lp_diff_named **out, size_t *nout)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < nb; i++)
		rc = named_row(out, nout, b[i].name, &b[i], named_find(n, nn, b[i].name), breq,
			       nreq);
	for (size_t i = 0; !rc && i < nn; i++)
		if (!named_find(b, nb, n[i].name))
			rc = named_row(out, nout, n[i].name, NULL, &n[i], breq, nreq);
	if (*nout > 1)
		qsort(*out, *nout, sizeof(**out), cmp_named);
	return rc;
}

static int in_list(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

/* Ids in a that b lacks, each once. */
static int id_minus(char **a, size_t na, char **b, size_t nb, char ***out, size_t *nout)
{
	for (size_t i = 0; i < na; i++) {
		if (in_list(b, nb, a[i]) || in_list(*out, *nout, a[i]))
			continue;
		char **p = realloc(*out, (*nout + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*out = p;
		if (!(p[(*nout)++] = strdup(a[i])))
			return -ENOMEM;
	}
	return 0;
}

/* ---- the answer: three states, the resolution, the reasons ---- */

static double per_req(const struct lp_named_total *v, size_t n, const char *name)
{
	const struct lp_named_total *x = named_find(v, n, name);
	return x && x->count > 0 ? x->total_ns / (double)x->count : 0;
}

static double cats_total(const struct lp_side *s)
{
	double t = 0;
	for (size_t i = 0; i < s->ncats; i++)
		t += s->cats[i].total_ns;
	return t;
}

static int cpu_add(struct lp_diff *d, const char *scope, int is_request)
{
	struct lp_diff_cpu *p = realloc(d->cpu, (d->ncpu + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	d->cpu = p;
	p = &p[d->ncpu];
	memset(p, 0, sizeof(*p));
	p->is_request = is_request;
	if (!(p->scope = strdup(scope)))
		return -ENOMEM;
	d->ncpu++;
	return 0;
}

/* The request's and each stage's time, on-CPU and preempted parts per
 * request on both sides; none when a side has no breakdown (--no-findings). */
static int build_cpu(struct lp_diff *d, const struct lp_side *b, const struct lp_side *n)
{
	if (!b->cpu_dbs || !n->cpu_dbs)
		return 0;
	d->cpu_known = b->cpu_known == b->cpu_dbs && n->cpu_known == n->cpu_dbs;
	double breq = (double)b->req.n, nreq = (double)n->req.n;
	if (cpu_add(d, d->req_name, 1))
		return -ENOMEM;
	struct lp_diff_cpu *c = &d->cpu[0];
	c->base_wall = breq > 0 ? cats_total(b) / breq : 0;
	c->new_wall = nreq > 0 ? cats_total(n) / nreq : 0;
	c->base_oncpu = per_req(b->cats, b->ncats, "on_cpu");
	c->new_oncpu = per_req(n->cats, n->ncats, "on_cpu");
	c->base_pre = per_req(b->cats, b->ncats, "preempted");
	c->new_pre = per_req(n->cats, n->ncats, "preempted");
	for (size_t i = 0; i < b->nst_wall; i++) {
		const char *s = b->st_wall[i].name;
		if (!named_find(n->st_wall, n->nst_wall, s))
			continue;
		if (cpu_add(d, s, 0))
			return -ENOMEM;
		c = &d->cpu[d->ncpu - 1];
		c->base_wall = per_req(b->st_wall, b->nst_wall, s);
		c->new_wall = per_req(n->st_wall, n->nst_wall, s);
		c->base_oncpu = per_req(b->st_oncpu, b->nst_oncpu, s);
		c->new_oncpu = per_req(n->st_oncpu, n->nst_oncpu, s);
		c->base_pre = per_req(b->st_pre, b->nst_pre, s);
		c->new_pre = per_req(n->st_pre, n->nst_pre, s);
	}
	for (size_t i = 0; !d->cpu_known && i < d->ncpu; i++)
		d->cpu[i].base_oncpu = d->cpu[i].new_oncpu = NAN;
	return 0;
}

static const struct lp_diff_cpu *cpu_of(const struct lp_diff *d, const struct lp_diff_row *r)
{
	for (size_t i = 0; i < d->ncpu; i++)
		if (d->cpu[i].is_request == r->is_request &&
		    (r->is_request || strcmp(d->cpu[i].scope, r->scope) == 0))
			return &d->cpu[i];
	return NULL;
}

/*
 * Whether a change in direction dir (+1 slower, -1 faster) of this scope is
 * preemption rather than its own time: the preempted time per request moved
 * that way by at least half the change of its time, while its on-CPU time
 * did not move that way beyond the threshold (busy work that ends on the
 * clock loses on-CPU time when preempted).
 */
static int preemption_explains(const struct lp_diff *d, const struct lp_diff_row *r, int dir,
			       char *why, size_t len)
{
	const struct lp_diff_cpu *c = cpu_of(d, r);
	if (!c)
		return 0;
	double dw = dir * (c->new_wall - c->base_wall), dp = dir * (c->new_pre - c->base_pre);
	double don = dir * (c->new_oncpu - c->base_oncpu);
	if (!(dp > 0) || dp < 0.5 * dw)
		return 0;
	if (!isnan(don) && don > d->opts.threshold * c->base_oncpu)
		return 0;
	char on[48] = "on-CPU not counted";
	if (!isnan(don) && c->base_oncpu > 0)
		snprintf(on, sizeof(on), "on-CPU %+.1f%%",
			 100 * (c->new_oncpu / c->base_oncpu - 1));
	snprintf(why, len, "preemption: preempted %.3f -> %.3f ms per request, %s",
		 c->base_pre / 1e6, c->new_pre / 1e6, on);
	return 1;
}

static void judge_row(struct lp_diff *d, struct lp_diff_row *r)
{
	double t = d->opts.threshold;
	if (r->verdict == LP_V_NOT_ENOUGH || isnan(r->lo))
		return;
	/* Maybe slower: above 0 or past the threshold at its estimate, and the
	 * interval reaches past the threshold; one wholly inside (-t, t) is
	 * unchanged within the resolution, however sure its sign. */
	int dir = r->verdict == LP_V_REGRESSION		     ? 1
		  : r->verdict == LP_V_IMPROVEMENT	     ? -1
		  : (r->lo > 0 || r->rel > t) && r->hi > t   ? 1
		  : (r->hi < 0 || r->rel < -t) && r->lo < -t ? -1
							     : 0;
	char why[sizeof(r->why)];
	if (!dir && r->hi > fmax(LP_DIFF_MAX_RESOLUTION, 3 * (t + r->noise))) {
		if (!preemption_explains(d, r, 1, why, sizeof(why)))
			snprintf(why, sizeof(why),
				 "too wide: the interval [%+.1f%%, %+.1f%%] cannot rule out a "
				 "large regression",
				 100 * r->lo, 100 * r->hi);
		r->verdict = LP_V_INCONCLUSIVE;
		r->up = 1;
		memcpy(r->why, why, sizeof(r->why));
		return;
	}
	if (!dir)
		return;
	if (preemption_explains(d, r, dir, why, sizeof(why))) {
		d->regressions -= r->verdict == LP_V_REGRESSION;
		d->improvements -= r->verdict == LP_V_IMPROVEMENT;
	} else if (r->verdict != LP_V_UNCHANGED) {
		return;
	} else if ((dir > 0 ? r->lo : -r->hi) > t) {
		snprintf(
		    why, sizeof(why),
		    "interval beyond the threshold but p %.3g > alpha after Holm over %zu rows",
		    r->p_adj, d->ntested);
	} else {
		snprintf(why, sizeof(why),
			 "%s: the interval [%+.1f%%, %+.1f%%] reaches both sides of the threshold",
			 dir > 0 ? "maybe slower" : "maybe faster", 100 * r->lo, 100 * r->hi);
	}
	r->verdict = LP_V_INCONCLUSIVE;
	r->up = dir > 0;
	memcpy(r->why, why, sizeof(r->why));
}

static void note(char (*v)[200], size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(char (*v)[200], size_t *n, const char *fmt, ...)
{
	if (*n >= LP_DIFF_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v[(*n)++], sizeof(v[0]), fmt, ap);
	va_end(ap);
}

/* Largest relative spread of the runs' medians on a side, 0 with one run. */
static double run_spread(const struct lp_series *s, size_t nruns)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t k = 0;
	for (size_t i = 0; i < nruns; i++) {
		if (!s->run_n || !s->run_n[i])
			continue;
		double m = lp_quantile_nearest(s->run_v[i], s->run_n[i], 0.5);
		lo = fmin(lo, m);
		hi = fmax(hi, m);
		k++;
	}
	return k >= 2 && lo > 0 ? hi / lo - 1 : 0;
}

/* Preemption or run-to-run spread as large as half the effect (or half the
 * threshold where the effect is smaller): the verdicts may measure the
 * machine, not the program. The effect is the change of request time
 * outside preemption where the breakdown ran, else the largest tested
 * change of a request metric. */
static void noise_warnings(struct lp_diff *d, const struct lp_side *b, const struct lp_side *n)
{
	double t = d->opts.threshold, eff = 0;
	const struct lp_diff_cpu *c = d->ncpu && d->cpu[0].base_wall > 0 ? &d->cpu[0] : NULL;
	if (c)
		eff =
		    fabs((c->new_wall - c->new_pre) - (c->base_wall - c->base_pre)) / c->base_wall;
	else
		for (size_t i = 0; i < d->nrows; i++)
			if (d->rows[i].is_request && !isnan(d->rows[i].lo))
				eff = fmax(eff, fabs(d->rows[i].rel));
	double bar = 0.5 * fmax(eff, t);
	if (c) {
		double pb = c->base_pre / c->base_wall, pn = c->new_pre / fmax(c->new_wall, 1);
		if (fmax(pb, pn) >= bar)
			note(
			    d->warn, &d->nwarn,
			    "preemption: %.1f%% of request time on the base side, %.1f%% on the "
			    "new, against an effect of %.1f%% outside it: the machine's load is in "
			    "the numbers",
			    100 * pb, 100 * pn, 100 * eff);
	}
	double sb = run_spread(&b->req, b->ndbs), sn = run_spread(&n->req, n->ndbs);
	if (fmax(sb, sn) >= bar)
		note(d->warn, &d->nwarn,
		     "run-to-run spread: request p50 varies %.1f%% between base runs, %.1f%% "
		     "between new runs, against an effect of %.1f%%",
		     100 * sb, 100 * sn, 100 * eff);
}

static void judge(struct lp_diff *d, const struct lp_side *b, const struct lp_side *n)
{
	int req_tested = 0, preempt = 0, holm = 0, wide = 0, few = 0, coarse = 0;
	d->resolution = NAN;
	for (size_t i = 0; i < d->nrows; i++) {
		struct lp_diff_row *r = &d->rows[i];
		judge_row(d, r);
		req_tested |= r->is_request && !isnan(r->lo);
		few |= r->is_request && r->verdict == LP_V_NOT_ENOUGH;
		if (r->verdict == LP_V_INCONCLUSIVE && r->up) {
			d->inconclusives++;
			preempt |= strncmp(r->why, "preemption", 10) == 0;
			holm |= strstr(r->why, "Holm") != NULL;
			wide |= strstr(r->why, "both sides") != NULL;
			coarse |= strncmp(r->why, "too wide", 8) == 0;
		}
		if (r->verdict != LP_V_REGRESSION && !isnan(r->hi) &&
		    (isnan(d->resolution) || r->hi > d->resolution))
			d->resolution = r->hi;
	}
	noise_warnings(d, b, n);
	d->state = d->regressions			      ? LP_DS_REGRESSION
		   : d->inconclusives || (!req_tested && few) ? LP_DS_INCONCLUSIVE
							      : LP_DS_OK;
	if (d->state != LP_DS_INCONCLUSIVE)
		return;
	if (!req_tested && few)
		note(d->reason, &d->nreasons,
		     "too few requests: no request metric has enough on both sides; record "
		     "longer runs or ask --metric p50");
	if (preempt)
		note(d->reason, &d->nreasons,
		     "preemption: the change is time waiting for a CPU, not on-CPU time; rerun on "
		     "a quieter machine (or at real-time priority: chrt -r 1)");
	if (coarse)
		note(d->reason, &d->nreasons,
		     "an interval is too wide to rule out a regression of +%.0f%% or more: "
		     "run-to-run variance or too few requests; record more requests and runs",
		     100 * LP_DIFF_MAX_RESOLUTION);
	if (d->single_run && (holm || wide || coarse))
		note(d->reason, &d->nreasons,
		     "one run a side: run-to-run noise is unknown, so each interval is widened by "
		     "+-%.0f%%; record 3+ runs per side (--base A B C --new D E F)",
		     100 * d->noise);
	if (holm)
		note(d->reason, &d->nreasons,
		     "not confirmed after Holm over %zu rows: ask fewer metrics (--metric p50) or "
		     "record more runs",
		     d->ntested);
	if (wide && !d->single_run)
		note(d->reason, &d->nreasons,
		     "run-to-run variance is large against the effect: the interval reaches both "
		     "sides of the threshold; record more runs per side");
	else if (wide)
		note(d->reason, &d->nreasons,
		     "the interval reaches both sides of the threshold: record more requests");
}

int lp_diff_compute(const struct lp_side *base, const struct lp_side *new_,
		    const struct lp_diff_opts *opts, struct lp_diff *d, char *err, size_t errlen)
{
	struct metric_spec ms[LP_M_NMETRICS + 8];
	int rc = -ENOMEM;
	memset(d, 0, sizeof(*d));
	d->opts = *opts;
	if (!d->opts.metrics && !d->opts.nquant)
		d->opts.metrics = 1u << LP_M_P50 | 1u << LP_M_P99;
	d->noise = d->opts.noise < 0 ? LP_DIFF_NOISE_DEFAULT : d->opts.noise;
	size_t nms = metric_specs(&d->opts, ms);
	d->req_name = strdup(base->req_name);
	d->base_dbs = base->ndbs;
	d->new_dbs = new_->ndbs;
	d->n_base_req = base->req.n;
	d->n_new_req = new_->req.n;
	if (!d->req_name || (rc = add_rows(d, base->req_name, 1, &base->req, &new_->req, ms, nms)))
		goto nomem;
	for (size_t i = 0; i < base->nstages; i++) {
		const char *s = base->stages[i].name;
		if ((rc = add_rows(d, s, 0, &base->stages[i], lp_side_stage(new_, s), ms, nms)))
			goto nomem;
	}
	for (size_t i = 0; i < new_->nstages; i++) {
		const char *s = new_->stages[i].name;
		if (!lp_side_stage(base, s) &&
		    (rc = add_rows(d, s, 0, NULL, &new_->stages[i], ms, nms)))
			goto nomem;
	}
	if ((rc = test_rows(d, base, new_)) || (rc = build_cpu(d, base, new_)) ||
	    (rc = diff_named(base->locks, base->nlocks, new_->locks, new_->nlocks,
			     (double)base->req.n, (double)new_->req.n, &d->locks, &d->nlocks)) ||
	    (rc = diff_named(base->cats, base->ncats, new_->cats, new_->ncats, (double)base->req.n,
			     (double)new_->req.n, &d->cats, &d->ncats)))
		goto nomem;
	d->has_kernels = base->has_kernels && new_->has_kernels;
	if (d->has_kernels &&
	    (rc = diff_named(base->kernels, base->nkernels, new_->kernels, new_->nkernels,
			     (double)base->req.n, (double)new_->req.n, &d->kernels, &d->nkernels)))
		goto nomem;
	d->has_findings = base->has_findings && new_->has_findings;
	if (d->has_findings &&
	    ((rc = id_minus(new_->findings, new_->nfindings, base->findings, base->nfindings,
			    &d->new_findings, &d->n_new_findings)) ||
	     (rc = id_minus(base->findings, base->nfindings, new_->findings, new_->nfindings,
			    &d->resolved_findings, &d->n_resolved_findings))))
		goto nomem;
	judge(d, base, new_);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return rc ? rc : -ENOMEM;
}

static void free_named(struct lp_diff_named *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static void free_ids(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void lp_diff_free(struct lp_diff *d)
{
	free(d->req_name);
	for (size_t i = 0; i < d->nrows; i++)
		free(d->rows[i].scope);
	free(d->rows);
	free_named(d->locks, d->nlocks);
	free_named(d->cats, d->ncats);
	free_named(d->kernels, d->nkernels);
	free_ids(d->new_findings, d->n_new_findings);
	free_ids(d->resolved_findings, d->n_resolved_findings);
	for (size_t i = 0; i < d->ncpu; i++)
		free(d->cpu[i].scope);
	free(d->cpu);
	memset(d, 0, sizeof(*d));
}
