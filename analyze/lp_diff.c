/* SPDX-License-Identifier: MIT */
#include "lp_diff.h"
#include "lp_db.h"
#include "lp_findings.h"
#include "lp_stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rule engine of analyze/lp_findings.c lists each database's findings. */
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

const char *lp_verdict_name(enum lp_verdict v)
{
	switch (v) {
	case LP_V_REGRESSION:
		return "regression";
	case LP_V_IMPROVEMENT:
		return "improvement";
	case LP_V_NOT_ENOUGH:
		return "not enough data";
	default:
		return "unchanged";
	}
}

/* ---------------------------------------------------------------- samples */

static int series_push(struct lp_series *s, double v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		double *p = realloc(s->v, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n++] = v;
	return 0;
}

static void series_free(struct lp_series *s)
{
	free(s->name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct lp_series *lp_side_stage(const struct lp_side *side, const char *name)
{
	for (size_t i = 0; i < side->nstages; i++)
		if (strcmp(side->stages[i].name, name) == 0)
			return &side->stages[i];
	return NULL;
}

static struct lp_series *stage_get(struct lp_side *side, const char *name)
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
	if (!(s->name = strdup(name)))
		return NULL;
	side->nstages++;
	return s;
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

static int db_fail(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: database error: %s", path, sqlite3_errmsg(db));
	return -EIO;
}

static int text_row(sqlite3_stmt *st, void *ctx)
{
	*(char **)ctx = lp_db_col_strdup(st, 0);
	return 0;
}

/* Most frequent outermost range name; NULL when there is none. */
static char *pick_request(sqlite3 *db)
{
	char *name = NULL;
	lp_db_lookup(db,
		     "SELECT name, count(*) AS c FROM ranges_named WHERE depth = 0 AND "
		     "name IS NOT NULL GROUP BY name ORDER BY c DESC, name LIMIT 1",
		     NULL, 0, text_row, &name);
	return name;
}

static int request_row(sqlite3_stmt *st, void *ctx)
{
	return series_push(ctx, (double)sqlite3_column_int64(st, 0));
}

static int load_requests(sqlite3 *db, const char *path, struct lp_side *side, char *err,
			 size_t errlen)
{
	size_t before = side->req.n;
	struct lp_db_arg a = LP_DB_TEXT(side->req_name);
	int rc = lp_db_query(db,
			     "SELECT r.end_ns - r.start_ns FROM ranges r JOIN strings s ON s.id = "
			     "r.name_id WHERE r.depth = 0 AND s.value = ?1",
			     &a, 1, request_row, &side->req, err, errlen);
	if (rc == -EIO)
		return db_fail(db, path, err, errlen);
	if (!rc && side->req.n == before) {
		snprintf(err, errlen, "%s has no outermost range named '%s' (use --request NAME)",
			 path, side->req_name);
		return -EINVAL;
	}
	return rc;
}

static int stage_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_series *s = stage_get(ctx, (const char *)sqlite3_column_text(st, 0));
	return s ? series_push(s, (double)sqlite3_column_int64(st, 1)) : -ENOMEM;
}

static int load_stages(sqlite3 *db, const char *path, struct lp_side *side, char *err,
		       size_t errlen)
{
	struct lp_db_arg a = LP_DB_TEXT(side->req_name);
	int rc = lp_db_query(db,
			     "SELECT c.name, sum(c.end_ns - c.start_ns) FROM ranges r JOIN strings "
			     "s ON s.id = r.name_id JOIN ranges_named c ON c.parent_id = r.id "
			     "WHERE r.depth = 0 AND s.value = ?1 AND c.name IS NOT NULL "
			     "GROUP BY r.id, c.name",
			     &a, 1, stage_row, side, err, errlen);
	return rc == -EIO ? db_fail(db, path, err, errlen) : rc;
}

/* Rows (name, sum, count) into a named list; a NULL name is null_name. */
struct named_load {
	struct lp_named_total **v;
	size_t *n;
	const char *null_name;
};

static int named_total_row(sqlite3_stmt *st, void *ctx)
{
	struct named_load *l = ctx;
	const char *k = (const char *)sqlite3_column_text(st, 0);
	return named_add(l->v, l->n, k || !l->null_name ? k : l->null_name,
			 sqlite3_column_double(st, 1), sqlite3_column_int64(st, 2));
}

/* Lock names must match across runs: heap locks have no symbol and a new
 * address each run, so they are named by kind and innermost function. */
static int load_locks(sqlite3 *db, const char *path, struct lp_side *side, char *err, size_t errlen)
{
	if (!lp_db_has_table(db, "lock_waits"))
		return 0;
	struct named_load l = {&side->locks, &side->nlocks, NULL};
	int rc = lp_db_query(db,
			     "SELECT coalesce(l.name, l.kind || ' at ' || coalesce(f.function, "
			     "f.module, '?')), sum(w.dur_ns), count(*) FROM lock_waits w JOIN "
			     "locks l ON l.id = w.lock_id LEFT JOIN stacks k ON k.id = w.stack_id "
			     "LEFT JOIN frames f ON f.id = k.top_frame GROUP BY 1",
			     NULL, 0, named_total_row, &l, err, errlen);
	return rc == -EIO ? db_fail(db, path, err, errlen) : rc;
}

static int has_column(sqlite3 *db, const char *table, const char *col)
{
	char sql[128];
	struct lp_db_arg a = LP_DB_TEXT(col);
	snprintf(sql, sizeof(sql), "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
	return lp_db_lookup(db, sql, &a, 1, NULL, NULL);
}

/* The kernels table belongs to the CUDA source (schemas/cuda.sql); its name
 * and duration columns are looked up rather than assumed. */
static int load_kernels(sqlite3 *db, const char *path, struct lp_side *side, int first, char *err,
			size_t errlen)
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
	struct named_load l = {&side->kernels, &side->nkernels, "?"};
	snprintf(sql, sizeof(sql), "SELECT %s, sum(%s), count(*) FROM kernels GROUP BY 1", name,
		 dur);
	int rc = lp_db_query(db, sql, NULL, 0, named_total_row, &l, err, errlen);
	return rc == -EIO ? db_fail(db, path, err, errlen) : rc;
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

static int load_one(const char *path, const char *request, struct lp_side *side, int first,
		    char *err, size_t errlen)
{
	sqlite3 *db;
	int rc = lp_db_open_ro(path, &db, err, errlen);
	if (rc)
		return -EINVAL;
	if (lp_db_count(db, "ranges") == 0) {
		snprintf(err, errlen,
			 "%s has no NVTX ranges: requests are outermost NVTX ranges, so annotate "
			 "the program with NVTX (or record it with NVTX capture on)",
			 path);
		rc = -EINVAL;
		goto out;
	}
	if (first) {
		side->req_name = request ? strdup(request) : pick_request(db);
		side->has_findings = lp_findings_provider != NULL;
		if (!side->req_name) {
			snprintf(err, errlen, "%s has no named outermost range", path);
			rc = -EINVAL;
			goto out;
		}
	}
	if (!(rc = load_requests(db, path, side, err, errlen)) &&
	    !(rc = load_stages(db, path, side, err, errlen)) &&
	    !(rc = load_locks(db, path, side, err, errlen)) &&
	    !(rc = load_kernels(db, path, side, first, err, errlen)))
		rc = load_findings(db, side, err, errlen);
	if (!rc && lp_db_fault(db, err, errlen))
		rc = -EIO;
out:
	sqlite3_close(db);
	return rc;
}

int lp_side_load(const char *const *paths, size_t n, const char *request, struct lp_side *side,
		 char *err, size_t errlen)
{
	memset(side, 0, sizeof(*side));
	for (size_t i = 0; i < n; i++) {
		int rc = load_one(paths[i], request ? request : side->req_name, side, i == 0, err,
				  errlen);
		if (rc)
			return rc;
		side->ndbs++;
	}
	lp_sort_doubles(side->req.v, side->req.n);
	for (size_t i = 0; i < side->nstages; i++)
		lp_sort_doubles(side->stages[i].v, side->stages[i].n);
	return 0;
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
	for (size_t i = 0; i < side->nkernels; i++)
		free(side->kernels[i].name);
	free(side->kernels);
	for (size_t i = 0; i < side->nfindings; i++)
		free(side->findings[i]);
	free(side->findings);
	memset(side, 0, sizeof(*side));
}

/* ---------------------------------------------------------------- diff */

static double rel_change(double base, double now)
{
	return base != 0 ? (now - base) / base : NAN;
}

static int add_rows(struct lp_diff *d, const char *scope, int is_request, const struct lp_series *b,
		    const struct lp_series *n)
{
	static const struct lp_series empty;
	if (!b)
		b = &empty;
	if (!n)
		n = &empty;
	int enough = b->n >= LP_DIFF_MIN_SAMPLES && n->n >= LP_DIFF_MIN_SAMPLES;
	struct lp_mwu u = {.p = NAN};
	if (enough && lp_mwu_test(b->v, b->n, n->v, n->n, 0, &u))
		return -ENOMEM;
	for (int m = 0; m < LP_M_NMETRICS; m++) {
		if (!(d->opts.metrics & (1u << m)))
			continue;
		struct lp_diff_row *r = realloc(d->rows, (d->nrows + 1) * sizeof(*r));
		if (!r)
			return -ENOMEM;
		d->rows = r;
		r = &d->rows[d->nrows++];
		memset(r, 0, sizeof(*r));
		r->scope = strdup(scope);
		r->is_request = is_request;
		r->metric = m;
		r->n_base = b->n;
		r->n_new = n->n;
		r->base = lp_metric_value(m, b->v, b->n);
		r->new_ = lp_metric_value(m, n->v, n->n);
		r->rel = rel_change(r->base, r->new_);
		r->p = enough ? u.p : NAN;
		r->p_adj = NAN;
		r->exact = u.method == LP_MWU_EXACT;
		r->verdict = enough ? LP_V_UNCHANGED : LP_V_NOT_ENOUGH;
		if (!r->scope)
			return -ENOMEM;
	}
	return 0;
}

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
		if (r->p_adj > d->opts.alpha || isnan(r->rel))
			continue;
		if (r->rel >= d->opts.threshold) {
			r->verdict = LP_V_REGRESSION;
			d->regressions++;
		} else if (r->rel <= -d->opts.threshold) {
			r->verdict = LP_V_IMPROVEMENT;
			d->improvements++;
		}
	}
out:
	free(p);
	free(adj);
	return rc;
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

int lp_diff_compute(const struct lp_side *base, const struct lp_side *new_,
		    const struct lp_diff_opts *opts, struct lp_diff *d, char *err, size_t errlen)
{
	int rc = -ENOMEM;
	memset(d, 0, sizeof(*d));
	d->opts = *opts;
	if (!d->opts.metrics)
		d->opts.metrics = 1u << LP_M_P50 | 1u << LP_M_P99 | 1u << LP_M_MEAN;
	d->req_name = strdup(base->req_name);
	d->base_dbs = base->ndbs;
	d->new_dbs = new_->ndbs;
	d->n_base_req = base->req.n;
	d->n_new_req = new_->req.n;
	if (!d->req_name || (rc = add_rows(d, base->req_name, 1, &base->req, &new_->req)))
		goto nomem;
	for (size_t i = 0; i < base->nstages; i++) {
		const char *s = base->stages[i].name;
		if ((rc = add_rows(d, s, 0, &base->stages[i], lp_side_stage(new_, s))))
			goto nomem;
	}
	for (size_t i = 0; i < new_->nstages; i++) {
		const char *s = new_->stages[i].name;
		if (!lp_side_stage(base, s) && (rc = add_rows(d, s, 0, NULL, &new_->stages[i])))
			goto nomem;
	}
	if ((rc = holm_rows(d)) ||
	    (rc = diff_named(base->locks, base->nlocks, new_->locks, new_->nlocks,
			     (double)base->req.n, (double)new_->req.n, &d->locks, &d->nlocks)))
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
	free_named(d->kernels, d->nkernels);
	free_ids(d->new_findings, d->n_new_findings);
	free_ids(d->resolved_findings, d->n_resolved_findings);
	memset(d, 0, sizeof(*d));
}
