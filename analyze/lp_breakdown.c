/* SPDX-License-Identifier: MIT */
/*
 * Request/stage model over the ranges table. Data flow:
 *   ranges (one rowid-ordered scan) -> compact arrays -> requests + stage
 *   instances in CSR order per request -> per-request stage times ->
 *   percentiles by selection, category time by prefix-sum interval sets.
 */
#include "lp_breakdown.h"
#include "lp_counters_report.h" /* event availability and reasons */
#include "lp_cuda.h"		/* CUDA category providers */
#include "lp_db.h"
#include "lp_map.h"
#include "lp_nvtx_db.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- ivec */

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

/* ---------------------------------------------------------------- ivset */

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

static int ivb_finish(struct ivb *b, struct lp_ivset *out)
{
	struct lp_ivset *o = &b->s;
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

	memset(out, 0, sizeof(*out));
	if (src->n) /* qsort(NULL, 0) is undefined (C11 7.22.5p1) */
		qsort(src->v, src->n, sizeof(*src->v), iv_cmp);
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

/* First index whose interval is past x on thread t (keyed on end or start). */
static size_t ivset_lower(const struct lp_ivset *s, int64_t t, int64_t x, int by_end)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int after = s->thread[mid] > t || (s->thread[mid] == t &&
						   (by_end ? s->end[mid] > x : s->start[mid] >= x));
		if (after)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int64_t lp_ivset_overlap(const struct lp_ivset *s, int64_t thread, int64_t start, int64_t end)
{
	if (!s->n || end <= start)
		return 0;
	size_t i = ivset_lower(s, thread, start, 1);
	size_t j = ivset_lower(s, thread, end, 0);
	if (j <= i || s->thread[i] != thread)
		return 0;
	int64_t sum = s->cum[j] - s->cum[i];
	if (start > s->start[i])
		sum -= start - s->start[i];
	if (s->end[j - 1] > end)
		sum -= s->end[j - 1] - end;
	return sum;
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

/* ---------------------------------------------------------------- percentiles */

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

/* Fills st from v[0..n); reorders v. Later percentiles select only above the
 * earlier rank, so the three cost about 1.5 passes. */
static void stat_of(int64_t *v, size_t n, struct lp_bd_stat *st)
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

/* ---------------------------------------------------------------- categories */

static int load_waits(sqlite3 *db, const char *table, const char *sql, struct lp_ivec *out,
		      char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (!lp_db_has_table(db, table))
		return -ENOENT;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database error reading %s: %s", table, sqlite3_errmsg(db));
		return -EIO;
	}
	int rc = 0, s;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 1);
		rc = lp_ivec_push(out, sqlite3_column_int64(st, 0), start,
				  start + sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	}
	if (!rc && s != SQLITE_DONE) {
		snprintf(err, errlen, "database error reading %s: %s", table, sqlite3_errmsg(db));
		rc = -EIO;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Semaphores and Python locks are recorded as lock_waits too (kind 'sem'):
 * for this split a semaphore is a lock, so they stay in lock wait. */
static int load_lock_waits(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return load_waits(db, "lock_waits",
			  "SELECT thread_id, start_ns, dur_ns, lock_id FROM lock_waits", out, err,
			  errlen);
}

static int load_cond_waits(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return load_waits(db, "cond_waits", "SELECT thread_id, start_ns, dur_ns, 0 FROM cond_waits",
			  out, err, errlen);
}

static const char *describe_lock(sqlite3 *db, int64_t id, char *buf, size_t len)
{
	sqlite3_stmt *st;
	const char *res = NULL;
	if (sqlite3_prepare_v2(db, "SELECT name, kind, address FROM locks WHERE id = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (name && *name)
			snprintf(buf, len, "%s", name);
		else
			snprintf(buf, len, "%s@0x%" PRIx64,
				 sqlite3_column_text(st, 1)
				     ? (const char *)sqlite3_column_text(st, 1)
				     : "lock",
				 (uint64_t)sqlite3_column_int64(st, 2));
		res = buf;
	}
	sqlite3_finalize(st);
	return res;
}

/* Blocking calls by their category column (docs/schema.md, blocking_calls);
 * the key is the call's stack, which names the call site in tail attribution. */
#define LP_LOAD_BLOCK(fn, category)                                                                \
	static int fn(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)                  \
	{                                                                                          \
		return load_waits(db, "blocking_calls",                                            \
				  "SELECT thread_id, start_ns, dur_ns, coalesce(stack_id, 0) "     \
				  "FROM blocking_calls WHERE category = '" category "'",           \
				  out, err, errlen);                                               \
	}
LP_LOAD_BLOCK(load_sleep, "sleep")
LP_LOAD_BLOCK(load_file_io, "file_io")
LP_LOAD_BLOCK(load_socket_io, "socket_io")
LP_LOAD_BLOCK(load_poll_wait, "poll_wait")
LP_LOAD_BLOCK(load_other_block, "other_block")
#undef LP_LOAD_BLOCK

struct site_desc {
	char *buf;
	size_t len;
};

static int site_row(sqlite3_stmt *st, void *ctx)
{
	struct site_desc *d = ctx;
	const char *call = (const char *)sqlite3_column_text(st, 0);
	const char *kind = (const char *)sqlite3_column_text(st, 1);
	const char *fn = (const char *)sqlite3_column_text(st, 2);
	snprintf(d->buf, d->len, "%s%s%s%s%s", call ? call : "?", kind ? " on " : "",
		 kind ? kind : "", fn ? " in " : "", fn ? fn : "");
	return 0;
}

/* A blocking call site: "recv on socket in fetch_reply". */
static const char *describe_site(sqlite3 *db, int64_t stack, char *buf, size_t len)
{
	struct site_desc d = {buf, len};
	char err[256];
	int64_t arg = stack;
	buf[0] = 0;
	if (!stack)
		return NULL;
	lp_db_each(db,
		   "SELECT b.call, b.fd_kind, f.function FROM blocking_calls b "
		   "LEFT JOIN stacks s ON s.id = b.stack_id LEFT JOIN frames f ON f.id = "
		   "s.top_frame WHERE b.stack_id = ?1 LIMIT 1", /* the first is enough */
		   &arg, 1, site_row, &d, err, sizeof(err));
	return buf[0] ? buf : NULL;
}

/* Order is precedence: a poll inside cudaStreamSynchronize is CUDA time. */
const struct lp_bd_category lp_bd_categories[] = {
    {"lock_wait", "lock wait", load_lock_waits, describe_lock},
    {"cond_wait", "cond wait", load_cond_waits, NULL},
    {"sync_wait", "sync wait", lp_cuda_load_sync_wait, NULL},
    {"cuda_api", "CUDA API", lp_cuda_load_api, NULL},
    {"gpu_kernel", "GPU kernel", lp_cuda_load_gpu_kernel, NULL},
    {"gpu_memcpy", "GPU memcpy", lp_cuda_load_gpu_memcpy, NULL},
    {"sleep", "sleep", load_sleep, describe_site},
    {"file_io", "file I/O", load_file_io, describe_site},
    {"socket_io", "socket I/O", load_socket_io, describe_site},
    {"poll_wait", "poll wait", load_poll_wait, describe_site},
    {"other_block", "other wait", load_other_block, describe_site},
};
const size_t lp_bd_ncategories = sizeof(lp_bd_categories) / sizeof(lp_bd_categories[0]);

/* Loaded categories: sets disjoint across categories (precedence = order). */
struct cats {
	int n; /* providers */
	struct lp_ivset set[LP_BD_MAXCAT];
	struct lp_ivec raw[LP_BD_MAXCAT]; /* sorted by (thread, start), kept for keys */
};

static void cats_free(struct cats *c)
{
	for (int k = 0; k < c->n; k++) {
		lp_ivset_free(&c->set[k]);
		lp_ivec_free(&c->raw[k]);
	}
}

static int cats_load(sqlite3 *db, struct cats *c, char *err, size_t errlen)
{
	struct lp_ivset claimed = {0};
	int rc = 0;
	memset(c, 0, sizeof(*c));
	c->n = (int)lp_bd_ncategories;
	for (int k = 0; k < c->n && !rc; k++) {
		const struct lp_bd_category *cat = &lp_bd_categories[k];
		rc = cat->load(db, &c->raw[k], err, errlen);
		if (rc == -ENOENT)
			rc = 0;
		if (!rc)
			rc = lp_ivset_build(&c->raw[k], &claimed, &c->set[k]);
		if (!rc && k + 1 < c->n) {
			struct lp_ivset u;
			rc = lp_ivset_union(&claimed, &c->set[k], &u);
			lp_ivset_free(&claimed);
			claimed = u;
		}
		if (!cat->describe)
			lp_ivec_free(&c->raw[k]);
	}
	lp_ivset_free(&claimed);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory loading wait intervals");
	return rc;
}

/* Per-category time of [s, e) on thread t; last slot = cpu (the rest).
 * Categories whose bit is clear in `maybe` are known to be 0 there (the
 * enclosing request has none of them): most stages skip every lookup. */
static void cats_split_some(const struct cats *c, int64_t t, int64_t s, int64_t e, int64_t *acc,
			    uint32_t maybe)
{
	int64_t rest = e - s;
	for (int k = 0; k < c->n; k++) {
		if (!(maybe & (1u << k)))
			continue;
		int64_t o = lp_ivset_overlap(&c->set[k], t, s, e);
		acc[k] += o;
		rest -= o;
	}
	acc[c->n] += rest > 0 ? rest : 0;
}

static void cats_split(const struct cats *c, int64_t t, int64_t s, int64_t e, int64_t *acc)
{
	cats_split_some(c, t, s, e, acc, ~0u);
}

/* Bits of the categories with time in acc (cpu excluded). */
static uint32_t cats_present(const struct cats *c, const int64_t *acc)
{
	uint32_t m = 0;
	for (int k = 0; k < c->n; k++)
		m |= acc[k] ? 1u << k : 0;
	return m;
}

/* ---------------------------------------------------------------- helpers */

static char *q_text_id(sqlite3 *db, const char *sql, int64_t id)
{
	sqlite3_stmt *st;
	char *v = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return strdup("");
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v ? v : strdup("");
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * elem);
	if (q)
		*cap = c;
	return q;
}

/* ---------------------------------------------------------------- ranges */

/* A range name: (domain, name string) pair. */
struct rkey {
	int64_t domain_id, name_id;
	char *domain, *name;
};

/* 32 bytes per range: 10M ranges fit in 320 MB plus 80 MB of ids. */
struct rg {
	int64_t start, end;
	int32_t parent; /* index, -1 for none */
	int32_t key;	/* index into keys */
	int32_t thread;
	int16_t depth;
	uint16_t flags; /* ranges.flags (LP_RANGEF_*) */
};

struct rset {
	struct rg *r;
	int64_t *id;
	size_t n;
	struct rkey *keys;
	size_t nkeys, keycap;
	struct lp_map keymap; /* (domain_id, name_id) -> key index + 1 */
};

static void rset_free(struct rset *rs)
{
	free(rs->r);
	free(rs->id);
	for (size_t i = 0; i < rs->nkeys; i++) {
		free(rs->keys[i].domain);
		free(rs->keys[i].name);
	}
	free(rs->keys);
	lp_map_free(&rs->keymap);
	memset(rs, 0, sizeof(*rs));
}

static int rset_key(struct rset *rs, int64_t dom, int64_t name)
{
	uint64_t mk = ((uint64_t)(dom + 1) << 32) ^ (uint64_t)(name + 1), v;
	if (lp_map_get(&rs->keymap, mk, &v))
		return (int)v - 1;
	struct rkey *k = grow(rs->keys, &rs->keycap, rs->nkeys + 1, sizeof(*k));
	if (!k)
		return -1;
	rs->keys = k;
	k[rs->nkeys] = (struct rkey){.domain_id = dom, .name_id = name};
	if (lp_map_put(&rs->keymap, mk, rs->nkeys + 1))
		return -1;
	return (int)rs->nkeys++;
}

static int32_t rset_index(const struct rset *rs, int64_t id)
{
	if (!rs->n)
		return -1;
	int64_t guess = id - rs->id[0]; /* ids are usually dense */
	if (guess >= 0 && (size_t)guess < rs->n && rs->id[guess] == id)
		return (int32_t)guess;
	size_t lo = 0, hi = rs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rs->id[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rs->n && rs->id[lo] == id ? (int32_t)lo : -1;
}

/* One scan in rowid order; max_depth < 0 loads every depth. */
static int rset_load(sqlite3 *db, struct rset *rs, int max_depth, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	size_t cap = (size_t)lp_db_int(db, "SELECT max(id) FROM ranges", 0);
	int64_t *pid = NULL; /* parent ids, resolved to indexes after the scan */
	int rc = 0, s = SQLITE_DONE;

	memset(rs, 0, sizeof(*rs));
	if (cap > ((size_t)1 << 26))
		cap = (size_t)1 << 26;
	if (cap < 64)
		cap = 64;
	rs->r = malloc(cap * sizeof(*rs->r));
	rs->id = malloc(cap * sizeof(*rs->id));
	pid = malloc(cap * sizeof(*pid));
	if (!rs->r || !rs->id || !pid) {
		free(pid);
		goto nomem;
	}
	if (sqlite3_prepare_v2(
		db,
		"SELECT id, parent_id, domain_id, name_id, start_ns, end_ns, "
		"start_thread_id, depth, flags FROM ranges WHERE ?1 < 0 OR depth <= ?1 "
		"ORDER BY id",
		-1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database error reading ranges: %s", sqlite3_errmsg(db));
		free(pid);
		return -EIO;
	}
	sqlite3_bind_int(st, 1, max_depth);
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
		size_t n = rs->n;
		if (n == cap) {
			cap *= 2;
			struct rg *r2 = realloc(rs->r, cap * sizeof(*r2));
			rs->r = r2 ? r2 : rs->r;
			int64_t *i2 = realloc(rs->id, cap * sizeof(*i2));
			rs->id = i2 ? i2 : rs->id;
			int64_t *p2 = realloc(pid, cap * sizeof(*p2));
			pid = p2 ? p2 : pid;
			if (!r2 || !i2 || !p2) {
				rc = -ENOMEM;
				break;
			}
		}
		int key = rset_key(rs, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
		if (key < 0) {
			rc = -ENOMEM;
			break;
		}
		rs->id[n] = sqlite3_column_int64(st, 0);
		pid[n] =
		    sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
		rs->r[n] = (struct rg){.start = sqlite3_column_int64(st, 4),
				       .end = sqlite3_column_int64(st, 5),
				       .key = key,
				       .thread = (int32_t)sqlite3_column_int64(st, 6),
				       .depth = (int16_t)sqlite3_column_int(st, 7),
				       .flags = (uint16_t)sqlite3_column_int(st, 8)};
		rs->n++;
	}
	if (!rc && s != SQLITE_DONE) {
		snprintf(err, errlen, "database error reading ranges: %s", sqlite3_errmsg(db));
		rc = -EIO;
	}
	sqlite3_finalize(st);
	if (!rc)
		for (size_t i = 0; i < rs->n; i++)
			rs->r[i].parent = pid[i] < 0 ? -1 : rset_index(rs, pid[i]);
	free(pid);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc)
		return rc;
	for (size_t k = 0; k < rs->nkeys; k++) {
		rs->keys[k].name =
		    q_text_id(db, "SELECT value FROM strings WHERE id = ?", rs->keys[k].name_id);
		rs->keys[k].domain =
		    q_text_id(db, "SELECT name FROM domains WHERE id = ?", rs->keys[k].domain_id);
		if (!rs->keys[k].name || !rs->keys[k].domain)
			goto nomem;
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory loading %zu ranges", rs->n);
	return -ENOMEM;
}

/* ---------------------------------------------------------------- requests */

static int key_matches(const struct rkey *k, const char *req)
{
	if (!strcmp(k->name, req))
		return 1;
	/* DOMAIN::NAME; names may hold "::" themselves, so try every split */
	for (const char *p = strstr(req, "::"); p; p = strstr(p + 1, "::")) {
		size_t dl = (size_t)(p - req);
		if (strlen(k->domain) == dl && !strncmp(k->domain, req, dl) &&
		    !strcmp(k->name, p + 2))
			return 1;
	}
	return 0;
}

/* Marks request keys in isreq[]; returns how many keys match. */
static int pick_request(const struct rset *rs, const char *req, uint8_t *isreq, int64_t *rootcnt)
{
	int found = 0;
	if (req) {
		for (size_t k = 0; k < rs->nkeys; k++)
			if (key_matches(&rs->keys[k], req)) {
				isreq[k] = 1;
				found++;
			}
		return found;
	}
	int64_t *tot = calloc(rs->nkeys, sizeof(*tot));
	if (!tot)
		return -ENOMEM;
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].parent < 0 && rs->r[i].depth == 0) {
			rootcnt[rs->r[i].key]++;
			tot[rs->r[i].key] += rs->r[i].end - rs->r[i].start;
		}
	ptrdiff_t best = -1;
	for (size_t k = 0; k < rs->nkeys; k++)
		if (rootcnt[k] && (best < 0 || rootcnt[k] > rootcnt[best] ||
				   (rootcnt[k] == rootcnt[best] && tot[k] > tot[best])))
			best = (ptrdiff_t)k;
	free(tot);
	if (best >= 0) {
		isreq[best] = 1;
		found = 1;
	}
	return found;
}

/* Working state of one computation. */
struct bd {
	sqlite3 *db;
	struct rset rs;
	struct cats cats;
	int stage_depth;
	size_t nreq;
	int32_t *req; /* request -> range index */
	int64_t *dur; /* request -> duration */
	uint8_t *tag; /* 2 = tail (>= p99), 1 = around the median, 0 = other */
	size_t *off;  /* CSR: stage instances of request r at sidx[off[r]..off[r+1]) */
	int32_t *sidx;
	int32_t *slot_of_key; /* range key -> stage slot, -1 */
	size_t nslot;	      /* stage slots; slot nslot is (unattributed) */
	int64_t open_skipped; /* request ranges open at exit, left out */
	int32_t *key_of_slot;
	int64_t *cv;	 /* [rs.n * RC_N] counter deltas per range, NULL when none */
	uint16_t *cmask; /* [rs.n] RC_ bits present, RC_SCALED */
};

static void bd_free(struct bd *b)
{
	rset_free(&b->rs);
	cats_free(&b->cats);
	free(b->req);
	free(b->dur);
	free(b->tag);
	free(b->off);
	free(b->sidx);
	free(b->slot_of_key);
	free(b->key_of_slot);
	free(b->cv);
	free(b->cmask);
}

static int32_t ancestor(const struct rset *rs, int32_t i, int levels)
{
	while (levels-- > 0 && i >= 0)
		i = rs->r[i].parent;
	return i;
}

static int cmp_start_idx(const struct rset *rs, int32_t a, int32_t b)
{
	return rs->r[a].start > rs->r[b].start;
}

/* Requests, then stage instances grouped per request (counting sort). */
static int bd_index(struct bd *b, const uint8_t *isreq)
{
	struct rset *rs = &b->rs;
	int32_t *reqof = malloc(rs->n * sizeof(*reqof));
	if (!reqof)
		return -ENOMEM;
	for (size_t i = 0; i < rs->n; i++) {
		/* a request still open at exit ends at the process end: not a latency */
		int open = rs->r[i].flags & LP_RANGEF_OPEN_AT_EXIT;
		int is = isreq[rs->r[i].key] && !open;
		reqof[i] = is ? (int32_t)b->nreq : -1;
		b->nreq += (size_t)is;
		b->open_skipped += isreq[rs->r[i].key] && open;
	}
	b->req = malloc((b->nreq + 1) * sizeof(*b->req));
	b->dur = malloc((b->nreq + 1) * sizeof(*b->dur));
	b->tag = calloc(b->nreq + 1, 1);
	b->off = calloc(b->nreq + 2, sizeof(*b->off));
	b->slot_of_key = malloc((rs->nkeys + 1) * sizeof(int32_t));
	b->key_of_slot = malloc((rs->nkeys + 1) * sizeof(int32_t));
	if (!b->req || !b->dur || !b->tag || !b->off || !b->slot_of_key || !b->key_of_slot) {
		free(reqof);
		return -ENOMEM;
	}
	for (size_t k = 0; k < rs->nkeys; k++)
		b->slot_of_key[k] = -1;
	size_t total = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (reqof[i] >= 0) {
			b->req[reqof[i]] = (int32_t)i;
			b->dur[reqof[i]] = rs->r[i].end - rs->r[i].start;
		}
		int32_t a = ancestor(rs, (int32_t)i, b->stage_depth);
		if (a >= 0 && reqof[a] >= 0) {
			b->off[reqof[a] + 1]++;
			total++;
			int32_t k = rs->r[i].key;
			if (b->slot_of_key[k] < 0) {
				b->key_of_slot[b->nslot] = k;
				b->slot_of_key[k] = (int32_t)b->nslot++;
			}
		}
	}
	for (size_t r = 0; r < b->nreq; r++)
		b->off[r + 1] += b->off[r];
	b->sidx = malloc((total + 1) * sizeof(*b->sidx));
	size_t *fill = malloc((b->nreq + 1) * sizeof(*fill));
	if (!b->sidx || !fill) {
		free(fill);
		free(reqof);
		return -ENOMEM;
	}
	memcpy(fill, b->off, b->nreq * sizeof(*fill));
	for (size_t i = 0; i < rs->n; i++) {
		int32_t a = ancestor(rs, (int32_t)i, b->stage_depth);
		if (a >= 0 && reqof[a] >= 0)
			b->sidx[fill[reqof[a]]++] = (int32_t)i;
	}
	free(fill);
	free(reqof);
	/* rowid order is push order, nearly start order: insertion sort is cheap */
	for (size_t r = 0; r < b->nreq; r++)
		for (size_t i = b->off[r] + 1; i < b->off[r + 1]; i++)
			for (size_t j = i;
			     j > b->off[r] && cmp_start_idx(rs, b->sidx[j - 1], b->sidx[j]); j--) {
				int32_t t = b->sidx[j];
				b->sidx[j] = b->sidx[j - 1];
				b->sidx[j - 1] = t;
			}
	return 0;
}

/* Stage instance i clipped to request range q. */
static void clip(const struct rset *rs, int32_t q, int32_t i, int64_t *s, int64_t *e)
{
	*s = rs->r[i].start > rs->r[q].start ? rs->r[i].start : rs->r[q].start;
	*e = rs->r[i].end < rs->r[q].end ? rs->r[i].end : rs->r[q].end;
	if (*e < *s)
		*e = *s;
}

/* Time of request r in each slot (acc[nslot] = unattributed); returns 1 when
 * stages overlap. acc must be zeroed, nslot + 1 wide. */
static int req_stage_times(const struct bd *b, size_t r, int64_t *acc)
{
	const struct rset *rs = &b->rs;
	int32_t q = b->req[r];
	int64_t cover = 0, cur_s = 0, cur_e = INT64_MIN;
	int overlap = 0;
	for (size_t j = b->off[r]; j < b->off[r + 1]; j++) {
		int64_t s, e;
		clip(rs, q, b->sidx[j], &s, &e);
		acc[b->slot_of_key[rs->r[b->sidx[j]].key]] += e - s;
		if (s < cur_e) {
			overlap |= s < cur_e && e > s;
			if (e > cur_e)
				cur_e = e;
		} else {
			if (cur_e > cur_s)
				cover += cur_e - cur_s;
			cur_s = s;
			cur_e = e;
		}
	}
	if (cur_e > cur_s)
		cover += cur_e - cur_s;
	acc[b->nslot] = b->dur[r] - cover;
	return overlap;
}

/* Category split of slot `slot` inside request r (slot == nslot: the
 * unattributed rest = request minus its stages, clamped at 0). */
static void req_slot_cats(const struct bd *b, size_t r, size_t slot, int64_t *cat)
{
	const struct rset *rs = &b->rs;
	int32_t q = b->req[r];
	int64_t all[LP_BD_MAXCAT] = {0}, st[LP_BD_MAXCAT] = {0};
	int nc = b->cats.n + 1;
	for (size_t j = b->off[r]; j < b->off[r + 1]; j++) {
		int32_t i = b->sidx[j];
		if (slot != b->nslot && (size_t)b->slot_of_key[rs->r[i].key] != slot)
			continue;
		int64_t s, e;
		clip(rs, q, i, &s, &e);
		cats_split(&b->cats, rs->r[i].thread, s, e, st);
	}
	if (slot != b->nslot) {
		memcpy(cat, st, nc * sizeof(*cat));
		return;
	}
	cats_split(&b->cats, rs->r[q].thread, rs->r[q].start, rs->r[q].end, all);
	for (int k = 0; k < nc; k++)
		cat[k] = all[k] > st[k] ? all[k] - st[k] : 0;
}

/* Sums a category's keyed waits (locks) inside [s, e) of thread t into a
 * per-key table, with sign (+1 request, -1 stage to get the rest). */
struct keysum {
	struct lp_map map; /* key + 1 -> index + 1 */
	int64_t *key;
	double *sum[2]; /* [0] tail, [1] mid */
	size_t n, cap;
};

static int keysum_add(struct keysum *ks, int which, int64_t key, double v)
{
	uint64_t idx;
	if (!lp_map_get(&ks->map, (uint64_t)key + 1, &idx)) {
		size_t c0 = ks->cap, c1 = ks->cap, c2 = ks->cap;
		int64_t *k2 = grow(ks->key, &c0, ks->n + 1, sizeof(int64_t));
		ks->key = k2 ? k2 : ks->key;
		double *s0 = grow(ks->sum[0], &c1, ks->n + 1, sizeof(double));
		ks->sum[0] = s0 ? s0 : ks->sum[0];
		double *s1 = grow(ks->sum[1], &c2, ks->n + 1, sizeof(double));
		ks->sum[1] = s1 ? s1 : ks->sum[1];
		if (!k2 || !s0 || !s1 || lp_map_put(&ks->map, (uint64_t)key + 1, ks->n + 1))
			return -ENOMEM;
		ks->cap = c0;
		ks->key[ks->n] = key;
		ks->sum[0][ks->n] = ks->sum[1][ks->n] = 0;
		idx = ++ks->n;
	}
	ks->sum[which][idx - 1] += v;
	return 0;
}

static int keysum_span(struct keysum *ks, int which, double sign, const struct lp_ivec *raw,
		       int64_t t, int64_t s, int64_t e)
{
	size_t lo = 0, hi = raw->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lp_iv *v = &raw->v[mid];
		if (v->thread < t || (v->thread == t && v->start < s))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* waits of one thread do not nest: one step back finds a straddling one */
	if (lo > 0 && raw->v[lo - 1].thread == t && raw->v[lo - 1].end > s)
		lo--;
	for (size_t i = lo; i < raw->n && raw->v[i].thread == t && raw->v[i].start < e; i++) {
		int64_t a = raw->v[i].start > s ? raw->v[i].start : s;
		int64_t z = raw->v[i].end < e ? raw->v[i].end : e;
		if (z > a && keysum_add(ks, which, raw->v[i].key, sign * (double)(z - a)))
			return -ENOMEM;
	}
	return 0;
}

static void keysum_free(struct keysum *ks)
{
	lp_map_free(&ks->map);
	free(ks->key);
	free(ks->sum[0]);
	free(ks->sum[1]);
}

/* Which key of category cat grows most in `slot` between tail and median. */
static int tail_key(struct bd *b, size_t slot, int cat, struct lp_bd_tail *t)
{
	const struct rset *rs = &b->rs;
	const struct lp_ivec *raw = &b->cats.raw[cat];
	struct keysum ks = {0};
	int rc = 0;
	for (size_t r = 0; r < b->nreq && !rc; r++) {
		if (!b->tag[r])
			continue;
		int w = b->tag[r] == 2 ? 0 : 1;
		int32_t q = b->req[r];
		if (slot == b->nslot)
			rc = keysum_span(&ks, w, 1, raw, rs->r[q].thread, rs->r[q].start,
					 rs->r[q].end);
		for (size_t j = b->off[r]; j < b->off[r + 1] && !rc; j++) {
			int32_t i = b->sidx[j];
			if (slot != b->nslot && (size_t)b->slot_of_key[rs->r[i].key] != slot)
				continue;
			int64_t s, e;
			clip(rs, q, i, &s, &e);
			rc = keysum_span(&ks, w, slot == b->nslot ? -1 : 1, raw, rs->r[i].thread, s,
					 e);
		}
	}
	ptrdiff_t best = -1;
	double bestg = 0;
	for (size_t i = 0; i < ks.n && !rc; i++) {
		double g = ks.sum[0][i] / (double)t->n_tail - ks.sum[1][i] / (double)t->n_mid;
		if (g > bestg) {
			bestg = g;
			best = (ptrdiff_t)i;
		}
	}
	if (best >= 0) {
		char buf[512];
		const char *name =
		    lp_bd_categories[cat].describe(b->db, ks.key[best], buf, sizeof(buf));
		t->has_key = 1;
		t->key_site = lp_bd_categories[cat].describe == describe_site;
		t->key = ks.key[best];
		t->key_name = strdup(name ? name : "?");
		t->key_tail_ns = ks.sum[0][best] / (double)t->n_tail;
		t->key_mid_ns = ks.sum[1][best] / (double)t->n_mid;
		if (!t->key_name)
			rc = -ENOMEM;
	}
	keysum_free(&ks);
	return rc;
}

/* ---------------------------------------------------------------- counters */

/* Per-range kinds loaded from range_counters; faults fold minor + major (or
 * page-faults when the minor/major pair was not recorded). */
enum { RC_CS, RC_MIG, RC_FAULTS, RC_TASK, RC_CYC, RC_INS, RC_N };
#define RC_SCALED 0x8000u

static const struct {
	const char *name;
	int kind, col;
} rc_events[] = {
    {"context-switches", RC_CS, LP_BD_CNT_CS},
    {"cpu-migrations", RC_MIG, LP_BD_CNT_MIG},
    {"minor-faults", RC_FAULTS, LP_BD_CNT_FAULTS},
    {"major-faults", RC_FAULTS, LP_BD_CNT_FAULTS},
    {"page-faults", RC_FAULTS, LP_BD_CNT_FAULTS},
    {"task-clock", RC_TASK, LP_BD_CNT_ONCPU},
    {"cycles", RC_CYC, LP_BD_CNT_IPC},
    {"instructions", RC_INS, LP_BD_CNT_IPC},
};
#define RC_NEVENTS (sizeof(rc_events) / sizeof(rc_events[0]))

static const char *const cnt_names[LP_BD_NCNT] = {"context_switches_per_request",
						  "migrations_per_request", "faults_per_request",
						  "on_cpu_share", "ipc"};
static const char *const cnt_labels[LP_BD_NCNT] = {"cs/req", "migr/req", "faults/req", "on-CPU",
						   "IPC"};

/* Column availability and reasons for the whole run, from the event list
 * of lp_counters_report (one reason per event name). Returns 1 when the run
 * counted anything, 0 when not, -errno with err. */
static int cnt_columns(sqlite3 *db, struct lp_breakdown *out, int *use_pf, char *err, size_t errlen)
{
	struct lp_counters_report r;
	int rc = lp_counters_report_compute(db, &r, err, errlen);
	if (rc || !r.has_counters)
		return rc;
	int avail[LP_BD_NCNT] = {0};
	const char *why[LP_BD_NCNT] = {0};
	for (size_t k = 0; k < RC_NEVENTS; k++) {
		int e = lp_counters_event(&r, rc_events[k].name), c = rc_events[k].col;
		if (e < 0)
			continue;
		out->cnt_recorded[c] = 1;
		avail[c] |= r.events[e].available;
		why[c] = why[c] ? why[c] : r.events[e].reason;
	}
	*use_pf = lp_counters_event(&r, "minor-faults") < 0;
	for (int c = 0; c < LP_BD_NCNT && !rc; c++) {
		char buf[600];
		out->cnt_name[c] = cnt_names[c];
		out->cnt_label[c] = cnt_labels[c];
		if (c == LP_BD_CNT_IPC && r.ipc_reason)
			snprintf(buf, sizeof(buf), "%s", r.ipc_reason);
		else if (!out->cnt_recorded[c])
			snprintf(buf, sizeof(buf), "not recorded (see latprof run --counters)");
		else if (!avail[c])
			snprintf(buf, sizeof(buf), "%s", why[c] ? why[c] : "unavailable here");
		else
			continue;
		if (!(out->cnt_reason[c] = strdup(buf)))
			rc = -ENOMEM;
	}
	lp_counters_report_free(&r);
	return rc ? rc : 1;
}

/* counter_events.id -> RC_ kind + 1, for the events that were counted. */
static int cnt_event_map(sqlite3 *db, int use_pf, struct lp_map *m)
{
	sqlite3_stmt *st;
	int rc = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, name FROM counter_events WHERE available", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		for (size_t k = 0; name && k < RC_NEVENTS && !rc; k++)
			if (!strcmp(name, rc_events[k].name) &&
			    (use_pf || strcmp(name, "page-faults")))
				rc = lp_map_put(m, (uint64_t)sqlite3_column_int64(st, 0),
						(uint64_t)rc_events[k].kind + 1);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Deltas of the loaded ranges (one scan of range_counters in key order). */
static int bd_counters_load(struct bd *b, struct lp_breakdown *out, char *err, size_t errlen)
{
	int use_pf = 0, rc = cnt_columns(b->db, out, &use_pf, err, errlen);
	if (rc <= 0)
		return rc;
	out->has_counters = 1;
	if (!lp_db_has_table(b->db, "range_counters") || !b->rs.n)
		return 0;
	struct lp_map evk = {0};
	sqlite3_stmt *st = NULL;
	b->cv = calloc(b->rs.n * RC_N, sizeof(*b->cv));
	b->cmask = calloc(b->rs.n, sizeof(*b->cmask));
	rc = !b->cv || !b->cmask ? -ENOMEM : cnt_event_map(b->db, use_pf, &evk);
	if (!rc && sqlite3_prepare_v2(
		       b->db, "SELECT range_id, event_id, delta, scaled FROM range_counters", -1,
		       &st, NULL) != SQLITE_OK)
		rc = -EIO;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		uint64_t kind;
		int32_t i = rset_index(&b->rs, sqlite3_column_int64(st, 0));
		if (i < 0 || !lp_map_get(&evk, (uint64_t)sqlite3_column_int64(st, 1), &kind))
			continue;
		b->cv[(size_t)i * RC_N + kind - 1] += sqlite3_column_int64(st, 2);
		b->cmask[i] |= (uint16_t)(1u << (kind - 1));
		b->cmask[i] |= sqlite3_column_int(st, 3) ? RC_SCALED : 0;
	}
	sqlite3_finalize(st);
	lp_map_free(&evk);
	if (rc == -EIO)
		snprintf(err, errlen, "database error reading range_counters: %s",
			 sqlite3_errmsg(b->db));
	return rc;
}

/* Sums over the counted ranges of one row (a stage, the requests). */
struct cacc {
	double sum[RC_N];
	uint32_t has;
	int64_t ranges, requests, wall;
	int scaled;
	size_t seen; /* request + 1 that was last counted */
};

static void cacc_add(struct cacc *a, const struct bd *b, size_t r, int32_t i)
{
	uint16_t m = b->cmask[i];
	if (!(m & ~RC_SCALED))
		return;
	for (int k = 0; k < RC_N; k++)
		a->sum[k] += (double)b->cv[(size_t)i * RC_N + (size_t)k];
	a->has |= m & ~RC_SCALED;
	a->scaled |= !!(m & RC_SCALED);
	a->ranges++;
	a->wall += b->rs.r[i].end - b->rs.r[i].start;
	a->requests += a->seen != r + 1;
	a->seen = r + 1;
}

static double cacc_per(const struct cacc *a, int k, double div)
{
	return (a->has & (1u << k)) && div > 0 ? a->sum[k] / div : NAN;
}

static void cacc_finish(const struct cacc *a, struct lp_bd_cnt *c, const char *why)
{
	c->ranges = a->ranges;
	c->requests = a->requests;
	c->wall_ns = a->wall;
	c->scaled = a->scaled;
	c->why = a->ranges ? NULL : why;
	c->v[LP_BD_CNT_CS] = cacc_per(a, RC_CS, (double)a->requests);
	c->v[LP_BD_CNT_MIG] = cacc_per(a, RC_MIG, (double)a->requests);
	c->v[LP_BD_CNT_FAULTS] = cacc_per(a, RC_FAULTS, (double)a->requests);
	/* task-clock is read just after each boundary's timestamp: a range
	 * that runs throughout can read a little over its wall time */
	c->v[LP_BD_CNT_ONCPU] = cacc_per(a, RC_TASK, (double)a->wall);
	if (c->v[LP_BD_CNT_ONCPU] > 1) /* false for NAN, which stays */
		c->v[LP_BD_CNT_ONCPU] = 1;
	c->v[LP_BD_CNT_IPC] = a->has & (1u << RC_CYC) ? cacc_per(a, RC_INS, a->sum[RC_CYC]) : NAN;
}

/* Per-stage (slot) and request counters, over this breakdown's instances. */
static int bd_counters_stages(const struct bd *b, struct lp_breakdown *out,
			      const size_t *pos_of_slot)
{
	size_t ns = b->nslot + 1;
	struct cacc *acc = calloc(ns, sizeof(*acc)), req = {0};
	if (!acc)
		return -ENOMEM;
	for (size_t r = 0; r < b->nreq && b->cv; r++) {
		cacc_add(&req, b, r, b->req[r]);
		for (size_t j = b->off[r]; j < b->off[r + 1]; j++) {
			int32_t i = b->sidx[j];
			cacc_add(&acc[b->slot_of_key[b->rs.r[i].key]], b, r, i);
		}
	}
	for (size_t s = 0; s < ns; s++)
		cacc_finish(&acc[s], &out->stages[pos_of_slot[s]].cnt,
			    s == b->nslot ? "not a range: counters are read at range boundaries"
					  : "no counter deltas for these ranges (ranges that end "
					    "on another thread are not counted)");
	cacc_finish(&req, &out->req_cnt,
		    "no counter deltas for the request ranges (ranges that end on another "
		    "thread are not counted)");
	free(acc);
	return 0;
}

/* The tail stage's counters, tail against median: was its growth spent
 * running, or descheduled (on-CPU share falling, context switches rising)? */
static void tail_counters(const struct bd *b, struct lp_bd_tail *t)
{
	size_t slot = (size_t)t->stage;
	struct cacc g[2];
	if (!b->cv || slot == b->nslot)
		return;
	memset(g, 0, sizeof(g));
	for (size_t r = 0; r < b->nreq; r++) {
		if (!b->tag[r])
			continue;
		for (size_t j = b->off[r]; j < b->off[r + 1]; j++)
			if ((size_t)b->slot_of_key[b->rs.r[b->sidx[j]].key] == slot)
				cacc_add(&g[b->tag[r] == 2 ? 0 : 1], b, r, b->sidx[j]);
	}
	if (!(g[0].has & g[1].has & (1u << RC_TASK)) || !g[0].wall || !g[1].wall)
		return;
	t->has_cnt = 1;
	t->oncpu_tail = fmin(g[0].sum[RC_TASK] / (double)g[0].wall, 1.0);
	t->oncpu_mid = fmin(g[1].sum[RC_TASK] / (double)g[1].wall, 1.0);
	/* task-clock deltas come from samples at range boundaries, up to 10%
	 * misplaced: a fully on-CPU stage can read a little over its wall
	 * time. Off-CPU time is never negative. */
	t->offcpu_tail_ns =
	    fmax(0, ((double)g[0].wall - g[0].sum[RC_TASK]) / (double)g[0].requests);
	t->offcpu_mid_ns = fmax(0, ((double)g[1].wall - g[1].sum[RC_TASK]) / (double)g[1].requests);
	t->cs_tail = cacc_per(&g[0], RC_CS, (double)g[0].requests);
	t->cs_mid = cacc_per(&g[1], RC_CS, (double)g[1].requests);
	/* a 5-point drop: below that, timer and fault noise */
	t->descheduled = t->cat == b->cats.n && t->oncpu_tail < t->oncpu_mid - 0.05 &&
			 t->offcpu_tail_ns > t->offcpu_mid_ns;
}

/* The growing rest (slot p) as on-CPU or preempted time, by the stage's
 * on-CPU share in the tail and around the median; unsplit without it. */
static void tail_rest(struct lp_bd_tail *t, int p)
{
	if (!t->has_cnt) {
		t->cat = p + LP_BD_UNSPLIT;
		return;
	}
	double on_t = fmin(t->oncpu_tail * t->stage_tail_ns, t->cat_tail_ns);
	double on_m = fmin(t->oncpu_mid * t->stage_mid_ns, t->cat_mid_ns);
	double pre_t = t->cat_tail_ns - on_t, pre_m = t->cat_mid_ns - on_m;
	int pre = pre_t - pre_m > on_t - on_m;
	t->cat = p + (pre ? LP_BD_PREEMPTED : LP_BD_ONCPU);
	t->cat_tail_ns = pre ? pre_t : on_t;
	t->cat_mid_ns = pre ? pre_m : on_m;
}

/* Tail (>= p99) against the middle (p40..p60): the stage that grows most,
 * the category that grows most inside it, and what it waited on. */
static int bd_tail(struct bd *b, int64_t p40, int64_t p60, int64_t p99, struct lp_bd_tail *t)
{
	size_t ns = b->nslot + 1;
	int nc = b->cats.n + 1;
	memset(t, 0, sizeof(*t));
	t->stage = t->cat = -1;
	t->p40_ns = p40;
	t->p60_ns = p60;
	t->p99_ns = p99;
	for (size_t r = 0; r < b->nreq; r++) {
		b->tag[r] = b->dur[r] >= p99 ? 2 : (b->dur[r] >= p40 && b->dur[r] <= p60);
		t->n_tail += b->tag[r] == 2;
		t->n_mid += b->tag[r] == 1;
	}
	t->valid = b->nreq >= 20 && t->n_tail && t->n_mid;
	if (!t->valid)
		return 0;
	double *sum = calloc(2 * ns, sizeof(double));
	int64_t *acc = calloc(ns, sizeof(int64_t));
	if (!sum || !acc) {
		free(sum);
		free(acc);
		return -ENOMEM;
	}
	for (size_t r = 0; r < b->nreq; r++) {
		if (!b->tag[r])
			continue;
		memset(acc, 0, ns * sizeof(*acc));
		req_stage_times(b, r, acc);
		for (size_t s = 0; s < ns; s++)
			sum[(b->tag[r] == 2 ? 0 : ns) + s] += (double)acc[s];
	}
	double bestg = 0;
	for (size_t s = 0; s < ns; s++) {
		double tm = sum[s] / (double)t->n_tail, mm = sum[ns + s] / (double)t->n_mid;
		if (tm - mm > bestg) {
			bestg = tm - mm;
			t->stage = (int)s;
			t->stage_tail_ns = tm;
			t->stage_mid_ns = mm;
		}
	}
	free(sum);
	free(acc);
	if (t->stage < 0)
		return 0;
	double cs[2][LP_BD_MAXCAT] = {{0}};
	for (size_t r = 0; r < b->nreq; r++) {
		if (!b->tag[r])
			continue;
		int64_t cat[LP_BD_MAXCAT] = {0};
		req_slot_cats(b, r, (size_t)t->stage, cat);
		for (int k = 0; k < nc; k++)
			cs[b->tag[r] == 2 ? 0 : 1][k] += (double)cat[k];
	}
	bestg = -1;
	for (int k = 0; k < nc; k++) {
		double g = cs[0][k] / (double)t->n_tail - cs[1][k] / (double)t->n_mid;
		if (g > bestg) {
			bestg = g;
			t->cat = k;
			t->cat_tail_ns = cs[0][k] / (double)t->n_tail;
			t->cat_mid_ns = cs[1][k] / (double)t->n_mid;
		}
	}
	tail_counters(b, t);
	if (t->cat == b->cats.n)
		tail_rest(t, b->cats.n);
	if (t->cat < b->cats.n && lp_bd_categories[t->cat].describe && b->cats.raw[t->cat].n)
		return tail_key(b, (size_t)t->stage, t->cat, t);
	return 0;
}

struct slotord {
	size_t slot;
	double pos;
};

static int slotord_cmp(const void *pa, const void *pb)
{
	const struct slotord *a = pa, *b = pb;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

/* One pass over requests: per-slot value arrays, instance counts, category
 * totals, mean position in the request (the display order). */
static int bd_stages(struct bd *b, struct lp_breakdown *out, size_t *pos_of_slot)
{
	size_t ns = b->nslot + 1;
	int nc = b->cats.n + 1;
	const struct rset *rs = &b->rs;
	int rc = -ENOMEM;
	int64_t **vals = calloc(ns, sizeof(*vals));
	size_t *vn = calloc(ns, sizeof(size_t)), *vcap = calloc(ns, sizeof(size_t));
	int64_t *acc = calloc(ns, sizeof(int64_t)), *inst = calloc(ns, sizeof(int64_t));
	int64_t *catsum = calloc(ns * (size_t)nc, sizeof(int64_t));
	size_t *seen = calloc(ns, sizeof(size_t));
	double *offsum = calloc(ns, sizeof(double));
	struct slotord *ord = calloc(ns, sizeof(*ord));
	if (!vals || !vn || !vcap || !acc || !inst || !catsum || !seen || !offsum || !ord)
		goto out;
	for (size_t r = 0; r < b->nreq; r++) {
		int32_t q = b->req[r];
		int64_t rc_[LP_BD_MAXCAT] = {0}, sc[LP_BD_MAXCAT] = {0};
		out->stages_overlap |= req_stage_times(b, r, acc);
		cats_split(&b->cats, rs->r[q].thread, rs->r[q].start, rs->r[q].end, rc_);
		uint32_t maybe = cats_present(&b->cats, rc_);
		for (size_t j = b->off[r]; j < b->off[r + 1]; j++) {
			int32_t i = b->sidx[j];
			size_t slot = (size_t)b->slot_of_key[rs->r[i].key];
			int64_t s, e, tmp[LP_BD_MAXCAT] = {0};
			clip(rs, q, i, &s, &e);
			cats_split_some(&b->cats, rs->r[i].thread, s, e, tmp,
					rs->r[i].thread == rs->r[q].thread ? maybe : ~0u);
			for (int k = 0; k < nc; k++) {
				catsum[slot * (size_t)nc + (size_t)k] += tmp[k];
				sc[k] += tmp[k];
			}
			inst[slot]++;
			offsum[slot] += (double)(s - rs->r[q].start);
			seen[slot] = r + 1;
		}
		for (int k = 0; k < nc; k++) {
			out->req_cat_ns[k] += rc_[k];
			catsum[b->nslot * (size_t)nc + (size_t)k] +=
			    rc_[k] > sc[k] ? rc_[k] - sc[k] : 0;
		}
		seen[b->nslot] = r + 1;
		inst[b->nslot]++;
		for (size_t j = b->off[r]; j <= b->off[r + 1]; j++) {
			size_t slot = j < b->off[r + 1]
					  ? (size_t)b->slot_of_key[rs->r[b->sidx[j]].key]
					  : b->nslot;
			if (seen[slot] != r + 1)
				continue;
			seen[slot] = 0;
			int64_t *v = grow(vals[slot], &vcap[slot], vn[slot] + 1, sizeof(int64_t));
			if (!v)
				goto out;
			vals[slot] = v;
			v[vn[slot]++] = acc[slot];
			acc[slot] = 0;
		}
	}
	int64_t reqtot = 0;
	for (size_t r = 0; r < b->nreq; r++)
		reqtot += b->dur[r];
	for (size_t s = 0; s < ns; s++) {
		ord[s].slot = s;
		ord[s].pos = s == b->nslot ? INFINITY : offsum[s] / (double)(inst[s] ? inst[s] : 1);
	}
	qsort(ord, ns, sizeof(*ord), slotord_cmp);
	out->stages = calloc(ns, sizeof(*out->stages));
	if (!out->stages)
		goto out;
	out->nstages = ns;
	for (size_t p = 0; p < ns; p++) {
		size_t s = ord[p].slot;
		struct lp_bd_stage *st = &out->stages[p];
		pos_of_slot[s] = p;
		st->unattributed = s == b->nslot;
		if (st->unattributed) {
			st->domain = strdup("");
			st->name = strdup(LP_BD_UNATTRIBUTED);
		} else {
			const struct rkey *k = &rs->keys[b->key_of_slot[s]];
			st->domain = strdup(k->domain);
			st->name = strdup(k->name);
		}
		if (!st->domain || !st->name)
			goto out;
		st->instances = inst[s];
		stat_of(vals[s], vn[s], &st->st);
		st->share = reqtot ? (double)st->st.total / (double)reqtot : 0;
		memcpy(st->cat_ns, &catsum[s * (size_t)nc], (size_t)nc * sizeof(int64_t));
	}
	rc = 0;
out:
	for (size_t s = 0; vals && s < ns; s++)
		free(vals[s]);
	free(vals);
	free(vn);
	free(vcap);
	free(acc);
	free(inst);
	free(catsum);
	free(seen);
	free(offsum);
	free(ord);
	return rc;
}

static int bd_slowest(struct bd *b, struct lp_breakdown *out, const size_t *pos_of_slot)
{
	const struct rset *rs = &b->rs;
	size_t top[LP_BD_NSLOW], n = 0, ns = b->nslot + 1;
	for (size_t r = 0; r < b->nreq; r++) {
		if (n == LP_BD_NSLOW && b->dur[r] <= b->dur[top[n - 1]])
			continue;
		size_t i = n < LP_BD_NSLOW ? n++ : n - 1;
		for (; i > 0 && b->dur[top[i - 1]] < b->dur[r]; i--)
			top[i] = top[i - 1];
		top[i] = r;
	}
	int64_t *acc = calloc(ns, sizeof(int64_t));
	if (!acc)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct lp_bd_slow *s = &out->slow[i];
		int32_t q = b->req[top[i]];
		s->range_id = rs->id[q];
		s->thread_id = rs->r[q].thread;
		s->start_ns = rs->r[q].start;
		s->rel_ns = rs->r[q].start - out->run_start_ns;
		s->dur_ns = b->dur[top[i]];
		s->stage_ns = calloc(ns, sizeof(int64_t));
		if (!s->stage_ns) {
			free(acc);
			return -ENOMEM;
		}
		out->nslow = i + 1;
		memset(acc, 0, ns * sizeof(*acc));
		req_stage_times(b, top[i], acc);
		for (size_t k = 0; k < ns; k++)
			s->stage_ns[pos_of_slot[k]] = acc[k];
	}
	free(acc);
	/* tids: one small query per listed request */
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(b->db, "SELECT tid FROM threads WHERE id = ?", -1, &st, NULL) ==
	    SQLITE_OK) {
		for (size_t i = 0; i < out->nslow; i++) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, out->slow[i].thread_id);
			out->slow[i].tid =
			    sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		}
		sqlite3_finalize(st);
	}
	return 0;
}

/* Whole run per thread: lock wait, cond wait, the rest. */
static int bd_threads(sqlite3 *db, const struct cats *c, struct lp_breakdown *out, char *err,
		      size_t errlen)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int s;
	if (sqlite3_prepare_v2(db,
			       "SELECT t.id, t.tid, t.name, coalesce(t.start_ns, p.start_ns), "
			       "coalesce(t.end_ns, p.end_ns, ?1) FROM threads t "
			       "JOIN processes p ON p.id = t.process_id ORDER BY t.id",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database error reading threads: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, out->run_end_ns);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct lp_bd_thread *t = grow(out->threads, &cap, out->nthreads + 1, sizeof(*t));
		if (!t) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		out->threads = t;
		t = &t[out->nthreads++];
		memset(t, 0, sizeof(*t));
		t->thread_id = sqlite3_column_int64(st, 0);
		t->tid = sqlite3_column_int64(st, 1);
		const char *name = (const char *)sqlite3_column_text(st, 2);
		t->name = strdup(name ? name : "");
		int64_t a = sqlite3_column_int64(st, 3), z = sqlite3_column_int64(st, 4);
		if (!t->name) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		t->total_ns = z > a ? z - a : 0;
		if (z > a)
			cats_split(c, t->thread_id, a, z, t->cat_ns);
		out->run_thread_ns += t->total_ns;
		for (int k = 0; k <= c->n; k++)
			out->run_cat_ns[k] += t->cat_ns[k];
	}
	sqlite3_finalize(st);
	if (s != SQLITE_DONE) {
		snprintf(err, errlen, "database error reading threads: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

/* ---------------------------------------------------------------- the rest */

/* Splits the rest (slot p) of one row: on-CPU = the row's task-clock
 * estimate, at most the rest (task-clock also runs inside waits: a spinning
 * lock, a syscall's own work); preempted = the remainder. NAN: no counters. */
static void split_rest(int64_t *cat, int p, double oncpu_ns)
{
	int64_t rest = cat[p];
	cat[p + LP_BD_UNSPLIT] = isnan(oncpu_ns) ? rest : 0;
	cat[p + LP_BD_ONCPU] =
	    isnan(oncpu_ns) ? 0 : (int64_t)llround(fmin(fmax(oncpu_ns, 0), (double)rest));
	cat[p + LP_BD_PREEMPTED] = isnan(oncpu_ns) ? 0 : rest - cat[p + LP_BD_ONCPU];
}

/* Task-clock of a row: its on-CPU share times its time, NAN when unknown. */
static double cnt_oncpu_ns(const struct lp_breakdown *out, const struct lp_bd_cnt *c, int64_t time)
{
	double share = c->v[LP_BD_CNT_ONCPU];
	return out->has_counters && c->ranges && !isnan(share) ? share * (double)time : NAN;
}

/* Stages and the request row. (unattributed) has no range of its own, so
 * no task-clock: its rest stays unsplit (the request's minus its stages'
 * task-clock is noise next to so short a time). */
static void bd_split_stages(struct lp_breakdown *out, int p)
{
	for (size_t i = 0; i < out->nstages; i++) {
		struct lp_bd_stage *st = &out->stages[i];
		split_rest(st->cat_ns, p,
			   st->unattributed ? NAN : cnt_oncpu_ns(out, &st->cnt, st->st.total));
	}
	split_rest(out->req_cat_ns, p, cnt_oncpu_ns(out, &out->req_cnt, out->req.total));
}

struct thr_task {
	struct lp_map task; /* threads.id -> task-clock ns */
};

static int thr_task_row(sqlite3_stmt *st, void *ctx)
{
	struct thr_task *tt = ctx;
	return lp_map_put(&tt->task, (uint64_t)sqlite3_column_int64(st, 0),
			  (uint64_t)sqlite3_column_int64(st, 1))
		   ? -ENOMEM
		   : 0;
}

/* Whole threads: their task-clock totals (thread_counters). */
static int bd_split_threads(sqlite3 *db, struct lp_breakdown *out, int p, char *err, size_t errlen)
{
	struct thr_task tt = {0};
	int rc = 0;
	if (lp_db_has_table(db, "thread_counters"))
		rc =
		    lp_db_each(db,
			       "SELECT tc.thread_id, tc.value FROM thread_counters tc JOIN "
			       "counter_events e ON e.id = tc.event_id WHERE e.name = 'task-clock' "
			       "AND e.available",
			       NULL, 0, thr_task_row, &tt, err, errlen);
	memset(out->run_cat_ns + p, 0, LP_BD_NREST * sizeof(int64_t));
	for (size_t i = 0; i < out->nthreads && !rc; i++) {
		struct lp_bd_thread *t = &out->threads[i];
		uint64_t task;
		split_rest(t->cat_ns, p,
			   lp_map_get(&tt.task, (uint64_t)t->thread_id, &task) ? (double)task
									       : NAN);
		for (int k = p; k < p + LP_BD_NREST; k++)
			out->run_cat_ns[k] += t->cat_ns[k];
	}
	lp_map_free(&tt.task);
	return rc;
}

static int bd_roots(const struct rset *rs, const uint8_t *isreq, const int64_t *rootcnt,
		    struct lp_breakdown *out)
{
	for (size_t k = 0; k < rs->nkeys; k++)
		out->nroots += rootcnt[k] && !isreq[k];
	out->roots = calloc(out->nroots + 1, sizeof(*out->roots));
	if (!out->roots)
		return -ENOMEM;
	size_t n = 0;
	for (size_t k = 0; k < rs->nkeys; k++)
		if (rootcnt[k] && !isreq[k]) {
			out->roots[n] = (struct lp_bd_root){strdup(rs->keys[k].domain),
							    strdup(rs->keys[k].name), rootcnt[k]};
			if (!out->roots[n].domain || !out->roots[n++].name)
				return -ENOMEM;
		}
	return 0;
}

static int bd_ranges(struct bd *b, const struct lp_bd_opts *opts, struct lp_breakdown *out,
		     char *err, size_t errlen)
{
	struct rset *rs = &b->rs;
	int rc = rset_load(b->db, rs, opts->request ? -1 : b->stage_depth, err, errlen);
	if (rc || !rs->n)
		return rc;
	uint8_t *isreq = calloc(rs->nkeys, 1);
	int64_t *rootcnt = calloc(rs->nkeys, sizeof(int64_t));
	if (!isreq || !rootcnt) {
		rc = -ENOMEM;
		goto out;
	}
	rc = pick_request(rs, opts->request, isreq, rootcnt);
	if (rc <= 0) {
		if (!rc && opts->request)
			snprintf(err, errlen,
				 "no NVTX range is named '%s' (%zu range names recorded; "
				 "'latprof report FILE --ranges' lists them)",
				 opts->request, rs->nkeys);
		rc = rc ? rc : -ENOENT;
		goto out;
	}
	out->has_ranges = 1;
	for (size_t k = 0; k < rs->nkeys; k++)
		if (isreq[k]) {
			/* several domains may hold the name: show the first */
			out->req_domain = strdup(rs->keys[k].domain);
			out->req_name = strdup(rs->keys[k].name);
			break;
		}
	rc = (!out->req_domain || !out->req_name) ? -ENOMEM : 0;
	if (!rc && !opts->request)
		rc = bd_roots(rs, isreq, rootcnt, out);
	if (!rc)
		rc = bd_index(b, isreq);
	out->req_open_skipped = b->open_skipped;
	size_t *pos = NULL;
	if (!rc && !(pos = calloc(b->nslot + 1, sizeof(*pos))))
		rc = -ENOMEM;
	if (!rc)
		rc = bd_stages(b, out, pos);
	if (!rc)
		rc = bd_counters_load(b, out, err, errlen);
	if (!rc)
		rc = bd_counters_stages(b, out, pos);
	if (!rc) {
		int64_t *d = malloc((b->nreq + 1) * sizeof(*d));
		if (!d) {
			rc = -ENOMEM;
		} else {
			memcpy(d, b->dur, b->nreq * sizeof(*d));
			stat_of(d, b->nreq, &out->req);
			int64_t p40 = lp_pctl(d, b->nreq, 40), p60 = lp_pctl(d, b->nreq, 60);
			free(d);
			rc = bd_tail(b, p40, p60, out->req.p99, &out->tail);
			if (out->tail.stage >= 0)
				out->tail.stage = (int)pos[out->tail.stage];
		}
	}
	if (!rc)
		rc = bd_slowest(b, out, pos);
	if (!rc)
		bd_split_stages(out, b->cats.n);
	free(pos);
out:
	free(isreq);
	free(rootcnt);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory computing the breakdown");
	return rc;
}

int lp_breakdown_compute(sqlite3 *db, const struct lp_bd_opts *opts, struct lp_breakdown *out,
			 char *err, size_t errlen)
{
	struct bd b = {.db = db};
	int rc;

	memset(out, 0, sizeof(*out));
	b.stage_depth = opts->stage_depth > 0 ? opts->stage_depth : 1;
	out->stage_depth = b.stage_depth;
	out->req_explicit = opts->request != NULL;
	out->ncat = (int)lp_bd_ncategories + LP_BD_NREST;
	for (size_t k = 0; k < lp_bd_ncategories; k++) {
		out->cat_name[k] = lp_bd_categories[k].name;
		out->cat_label[k] = lp_bd_categories[k].label;
	}
	out->cat_name[lp_bd_ncategories + LP_BD_ONCPU] = "on_cpu";
	out->cat_label[lp_bd_ncategories + LP_BD_ONCPU] = "on-CPU";
	out->cat_name[lp_bd_ncategories + LP_BD_PREEMPTED] = "preempted";
	out->cat_label[lp_bd_ncategories + LP_BD_PREEMPTED] = "preempted";
	out->cat_name[lp_bd_ncategories + LP_BD_UNSPLIT] = "cpu_or_preempted";
	out->cat_label[lp_bd_ncategories + LP_BD_UNSPLIT] = "cpu or preempted (not counted)";
	out->run_start_ns = lp_db_int(db, "SELECT min(start_ns) FROM processes", 0);
	out->run_end_ns = lp_db_int(db, "SELECT max(end_ns) FROM processes", out->run_start_ns);
	rc = cats_load(db, &b.cats, err, errlen);
	if (!rc)
		rc = bd_threads(db, &b.cats, out, err, errlen);
	if (!rc)
		rc = bd_split_threads(db, out, b.cats.n, err, errlen);
	if (!rc && lp_db_has_table(db, "ranges"))
		rc = bd_ranges(&b, opts, out, err, errlen);
	if (!rc && !out->has_ranges && opts->request) {
		snprintf(err, errlen, "--request %s: this run recorded no NVTX ranges",
			 opts->request);
		rc = -ENOENT;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory computing the breakdown");
	bd_free(&b);
	if (rc)
		lp_breakdown_free(out);
	return rc;
}

void lp_breakdown_free(struct lp_breakdown *b)
{
	free(b->req_domain);
	free(b->req_name);
	for (size_t i = 0; i < b->nstages; i++) {
		free(b->stages[i].domain);
		free(b->stages[i].name);
	}
	free(b->stages);
	for (size_t i = 0; i < b->nroots; i++) {
		free(b->roots[i].domain);
		free(b->roots[i].name);
	}
	free(b->roots);
	free(b->tail.key_name);
	for (int k = 0; k < LP_BD_NCNT; k++)
		free(b->cnt_reason[k]);
	for (size_t i = 0; i < b->nslow; i++)
		free(b->slow[i].stage_ns);
	for (size_t i = 0; i < b->nthreads; i++)
		free(b->threads[i].name);
	free(b->threads);
	memset(b, 0, sizeof(*b));
}

/* ---------------------------------------------------------------- --ranges */

static int rstat_cmp(const void *pa, const void *pb)
{
	const struct lp_range_stat *a = pa, *b = pb;
	if (a->st.total != b->st.total)
		return a->st.total < b->st.total ? 1 : -1;
	return strcmp(a->name, b->name);
}

int lp_range_stats_compute(sqlite3 *db, struct lp_range_stats *out, char *err, size_t errlen)
{
	struct rset rs;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!lp_db_has_table(db, "ranges"))
		return 0;
	rc = rset_load(db, &rs, -1, err, errlen);
	if (rc || !rs.n) {
		rset_free(&rs);
		return rc;
	}
	out->has_ranges = 1;
	/* group durations by key with a counting sort: one array, no per-key malloc */
	size_t *off = calloc(rs.nkeys + 1, sizeof(*off));
	int64_t *d = malloc(rs.n * sizeof(*d));
	out->v = calloc(rs.nkeys, sizeof(*out->v));
	if (!off || !d || !out->v) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < rs.n; i++)
		off[rs.r[i].key + 1]++;
	for (size_t k = 0; k < rs.nkeys; k++)
		off[k + 1] += off[k];
	for (size_t i = 0; i < rs.n; i++)
		d[off[rs.r[i].key]++] = rs.r[i].end - rs.r[i].start;
	out->n = rs.nkeys;
	for (size_t k = 0; k < rs.nkeys; k++) {
		size_t lo = k ? off[k - 1] : 0;
		struct lp_range_stat *s = &out->v[k];
		s->domain = strdup(rs.keys[k].domain);
		s->name = strdup(rs.keys[k].name);
		if (!s->domain || !s->name) {
			rc = -ENOMEM;
			goto out;
		}
		stat_of(d + lo, off[k] - lo, &s->st);
	}
	qsort(out->v, out->n, sizeof(*out->v), rstat_cmp);
out:
	free(off);
	free(d);
	rset_free(&rs);
	if (rc) {
		snprintf(err, errlen, "out of memory computing range statistics");
		lp_range_stats_free(out);
	}
	return rc;
}

void lp_range_stats_free(struct lp_range_stats *s)
{
	for (size_t i = 0; s->v && i < s->n; i++) {
		free(s->v[i].domain);
		free(s->v[i].name);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int lp_breakdown_cat_has_time(const struct lp_breakdown *b, int k)
{
	int p = b->ncat - LP_BD_NREST;
	if (k == p + (b->has_counters ? LP_BD_ONCPU : LP_BD_UNSPLIT) || b->req_cat_ns[k] ||
	    b->run_cat_ns[k])
		return 1;
	for (size_t i = 0; i < b->nstages; i++)
		if (b->stages[i].cat_ns[k])
			return 1;
	return 0;
}
