/* SPDX-License-Identifier: MIT */
/* Interval sets and percentiles (analysis/lp_ivset.h): build by sort and
 * merge, query by binary search over prefix sums, select by quickselect. */
#include "lp_ivset.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- vectors ---- */

int lp_ivec_push(struct lp_ivec *a, int64_t thread, int64_t start, int64_t end, int64_t key)
{
	if (end <= start)
		return 0;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct lp_iv *v = realloc(a->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = (struct lp_iv){.start = start, .end = end, .key = key, .thread = thread};
	return 0;
}

void lp_ivec_free(struct lp_ivec *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static int iv_cmp(const void *pa, const void *pb)
{
	const struct lp_iv *a = pa, *b = pb;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

/*
 * Orders a->v by iv_cmp. The usual input is every thread's intervals in
 * start order already, interleaved across threads (rows read in id order):
 * a stable counting sort by thread then leaves each thread's run sorted,
 * which one pass checks; only runs that are not get qsort. O(n) for that
 * input against qsort's O(n log n) with a comparator call per step (at
 * 2 M ranges the sorts were a fifth of an HTML report's CPU). Thread ids
 * spread wider than the count fall back to qsort, as does a failed
 * allocation: sorting never fails.
 */
static void iv_sort(struct lp_ivec *a)
{
	size_t n = a->n;
	if (n < 2)
		return;
	int64_t lo = a->v[0].thread, hi = lo;
	int sorted = 1;
	for (size_t i = 1; i < n; i++) {
		lo = a->v[i].thread < lo ? a->v[i].thread : lo;
		hi = a->v[i].thread > hi ? a->v[i].thread : hi;
		sorted = sorted && iv_cmp(&a->v[i - 1], &a->v[i]) <= 0;
	}
	if (sorted)
		return;
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
	size_t *pos = span <= n && span <= (1u << 24) ? calloc(span + 1, sizeof(*pos)) : NULL;
	struct lp_iv *out = pos ? malloc(n * sizeof(*out)) : NULL;
	if (!out) {
		free(pos);
		qsort(a->v, n, sizeof(*a->v), iv_cmp);
		return;
	}
	for (size_t i = 0; i < n; i++)
		pos[(uint64_t)a->v[i].thread - (uint64_t)lo + 1]++;
	for (uint64_t t = 0; t < span; t++)
		pos[t + 1] += pos[t];
	for (size_t i = 0; i < n; i++)
		out[pos[(uint64_t)a->v[i].thread - (uint64_t)lo]++] = a->v[i];
	/* pos[t] is now the end of thread t's run, pos[t - 1] its start */
	for (uint64_t t = 0; t < span; t++) {
		size_t b = t ? pos[t - 1] : 0, e = pos[t];
		for (size_t i = b + 1; i < e; i++)
			if (iv_cmp(&out[i - 1], &out[i]) > 0) {
				qsort(out + b, e - b, sizeof(*out), iv_cmp);
				break;
			}
	}
	free(pos);
	free(a->v);
	a->v = out;
	a->cap = n;
}

/* ---- sets ---- */

struct ivb {
	struct lp_ivset s;
	size_t cap;
};

static int ivb_push(struct ivb *b, int64_t t, int64_t s, int64_t e)
{
	if (e <= s)
		return 0;
	struct lp_ivset *o = &b->s;
	if (o->n && o->thread[o->n - 1] == t && s <= o->end[o->n - 1]) {
		if (e > o->end[o->n - 1])
			o->end[o->n - 1] = e;
		return 0;
	}
	if (o->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		int64_t *t2 = realloc(o->thread, cap * sizeof(int64_t));
		if (t2)
			o->thread = t2;
		int64_t *s2 = realloc(o->start, cap * sizeof(int64_t));
		if (s2)
			o->start = s2;
		int64_t *e2 = realloc(o->end, cap * sizeof(int64_t));
		if (e2)
			o->end = e2;
		if (!t2 || !s2 || !e2)
			return -ENOMEM;
		b->cap = cap;
	}
	o->thread[o->n] = t;
	o->start[o->n] = s;
	o->end[o->n] = e;
	o->n++;
	return 0;
}

#ifndef NDEBUG
/* The invariant lp_ivset_overlap's binary searches rely on: per thread,
 * intervals are non-empty, sorted, disjoint and not touching. */
static int ivset_valid(const struct lp_ivset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->end[i] <= s->start[i])
			return 0;
		if (i && s->thread[i] < s->thread[i - 1])
			return 0;
		if (i && s->thread[i] == s->thread[i - 1] && s->start[i] <= s->end[i - 1])
			return 0;
	}
	return 1;
}
#endif

static int ivb_finish(struct ivb *b, struct lp_ivset *out)
{
	struct lp_ivset *o = &b->s;
	assert(ivset_valid(o));
	o->cum = malloc((o->n + 1) * sizeof(int64_t));
	if (!o->cum) {
		lp_ivset_free(o);
		return -ENOMEM;
	}
	o->cum[0] = 0;
	for (size_t i = 0; i < o->n; i++)
		o->cum[i + 1] = o->cum[i] + (o->end[i] - o->start[i]);
	*out = *o;
	return 0;
}

/* Emits [s, e) of thread t minus the intervals of m, m walked from *j. */
static int ivb_push_minus(struct ivb *b, const struct lp_ivset *m, size_t *j, int64_t t, int64_t s,
			  int64_t e)
{
	while (*j < m->n && (m->thread[*j] < t || (m->thread[*j] == t && m->end[*j] <= s)))
		(*j)++;
	for (size_t k = *j; k < m->n && m->thread[k] == t && m->start[k] < e && s < e; k++) {
		if (m->start[k] > s && ivb_push(b, t, s, m->start[k]))
			return -ENOMEM;
		if (m->end[k] > s)
			s = m->end[k];
	}
	return ivb_push(b, t, s, e);
}

int lp_ivset_build(struct lp_ivec *src, const struct lp_ivset *minus, struct lp_ivset *out)
{
	struct ivb b = {0};
	size_t j = 0;
	int rc = 0;

	assert(!minus || ivset_valid(minus)); /* ivb_push_minus walks it forward once */
	memset(out, 0, sizeof(*out));
	iv_sort(src);
	for (size_t i = 0; i < src->n && !rc; i++) {
		const struct lp_iv *v = &src->v[i];
		if (minus && minus->n)
			rc = ivb_push_minus(&b, minus, &j, v->thread, v->start, v->end);
		else
			rc = ivb_push(&b, v->thread, v->start, v->end);
	}
	if (rc) {
		lp_ivset_free(&b.s);
		return rc;
	}
	return ivb_finish(&b, out);
}

static int ivset_before(const struct lp_ivset *a, size_t i, const struct lp_ivset *b, size_t j)
{
	if (a->thread[i] != b->thread[j])
		return a->thread[i] < b->thread[j];
	return a->start[i] <= b->start[j];
}

int lp_ivset_union(const struct lp_ivset *a, const struct lp_ivset *b, struct lp_ivset *out)
{
	struct ivb u = {0};
	size_t i = 0, j = 0;
	int rc = 0;

	assert(ivset_valid(a) && ivset_valid(b)); /* the sweep merges two sorted sets */
	memset(out, 0, sizeof(*out));
	while (!rc && (i < a->n || j < b->n)) {
		if (j >= b->n || (i < a->n && ivset_before(a, i, b, j))) {
			rc = ivb_push(&u, a->thread[i], a->start[i], a->end[i]);
			i++;
		} else {
			rc = ivb_push(&u, b->thread[j], b->start[j], b->end[j]);
			j++;
		}
	}
	if (rc) {
		lp_ivset_free(&u.s);
		return rc;
	}
	return ivb_finish(&u, out);
}

int64_t lp_ivset_total(const struct lp_ivset *s)
{
	return s->n ? s->cum[s->n] : 0;
}

void lp_ivset_free(struct lp_ivset *s)
{
	free(s->thread);
	free(s->start);
	free(s->end);
	free(s->cum);
	memset(s, 0, sizeof(*s));
}

/* ---- from a query ---- */

static int iv_row(sqlite3_stmt *st, void *ctx)
{
	int64_t key = sqlite3_column_count(st) > 3 ? sqlite3_column_int64(st, 3) : 0;
	return lp_ivec_push(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			    sqlite3_column_int64(st, 2), key);
}

int lp_ivec_from_sql(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		     struct lp_ivec *out, char *err, size_t errlen)
{
	return lp_db_query(db, sql, args, nargs, iv_row, out, err, errlen);
}

int lp_ivset_from_sql(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		      struct lp_ivset *out, char *err, size_t errlen)
{
	struct lp_ivec v = {0};
	memset(out, 0, sizeof(*out));
	int rc = lp_ivec_from_sql(db, sql, args, nargs, &v, err, errlen);
	if (!rc)
		rc = lp_ivset_build(&v, NULL, out);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory loading intervals");
	lp_ivec_free(&v);
	return rc;
}

/* ---- percentiles ---- */

static void swap64(int64_t *a, int64_t *b)
{
	int64_t t = *a;
	*a = *b;
	*b = t;
}

/* Puts the k-th smallest of v[lo..hi] at v[k] with smaller ones before it. */
static void select_k(int64_t *v, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t k)
{
	while (hi - lo > 16) {
		ptrdiff_t mid = lo + (hi - lo) / 2;
		if (v[mid] < v[lo])
			swap64(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap64(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap64(&v[hi], &v[mid]);
		int64_t piv = v[mid];
		ptrdiff_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < piv)
				i++;
			while (v[j] > piv)
				j--;
			if (i <= j)
				swap64(&v[i++], &v[j--]);
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return; /* v[j+1..i-1] all equal the pivot */
	}
	for (ptrdiff_t i = lo + 1; i <= hi; i++)
		for (ptrdiff_t j = i; j > lo && v[j - 1] > v[j]; j--)
			swap64(&v[j - 1], &v[j]);
}

static ptrdiff_t rank_of(size_t n, double p)
{
	double r = ceil(p / 100.0 * (double)n) - 1;
	if (r < 0)
		r = 0;
	if (r > (double)n - 1)
		r = (double)n - 1;
	return (ptrdiff_t)r;
}

int64_t lp_pctl(int64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	ptrdiff_t k = rank_of(n, p);
	select_k(v, 0, (ptrdiff_t)n - 1, k);
	return v[k];
}

/* Later percentiles select only above the earlier rank. */
void lp_dist_of(int64_t *v, size_t n, struct lp_dist *st)
{
	memset(st, 0, sizeof(*st));
	st->n = (int64_t)n;
	if (!n)
		return;
	int64_t tot = 0, mx = v[0];
	for (size_t i = 0; i < n; i++) {
		tot += v[i];
		if (v[i] > mx)
			mx = v[i];
	}
	st->total = tot;
	st->max = mx;
	st->mean = (double)tot / (double)n;
	ptrdiff_t last = (ptrdiff_t)n - 1, k50 = rank_of(n, 50), k90 = rank_of(n, 90),
		  k99 = rank_of(n, 99);
	select_k(v, 0, last, k50);
	select_k(v, k50, last, k90);
	select_k(v, k90, last, k99);
	st->p50 = v[k50];
	st->p90 = v[k90];
	st->p99 = v[k99];
}
