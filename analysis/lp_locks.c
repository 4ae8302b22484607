/* SPDX-License-Identifier: MIT */
/* Lock contention analysis (see lp_locks.h for what the numbers mean). */
#define _GNU_SOURCE
#include "lp_locks.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_progress.h"
#include "lp_stats.h"
#include "lp_util.h"
#include "lp_waits.h"
#include "lp_waits_futex.h"

struct q {
	sqlite3 *db;
	char *err;
	size_t errlen;
	int folded; /* temp.lp_rw keys folded semaphores (rows_prepare) */
};

static sqlite3_stmt *q_prepare(struct q *q, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(q->err, q->errlen, "database error: %s", sqlite3_errmsg(q->db));
		return NULL;
	}
	return st;
}

/* Steps st to its end through the one read path, calling fn per row, and
 * finalizes it: 0, fn's error, or -EIO with q->err filled. */
static int q_run(struct q *q, sqlite3_stmt *st, lp_db_row_fn fn, void *ctx)
{
	int rc = lp_db_step_all(st, fn, ctx, q->err, q->errlen);
	sqlite3_finalize(st);
	return rc;
}

/* Row of a single-row aggregate: up to two integer columns into v[]. */
static int ints_row(sqlite3_stmt *st, void *ctx)
{
	int64_t *v = ctx;
	v[0] = sqlite3_column_int64(st, 0);
	if (sqlite3_column_count(st) > 1)
		v[1] = sqlite3_column_int64(st, 1);
	return LP_DB_STOP;
}

/* strdup of a text column; *oom set when a non-NULL value cannot be copied. */
static char *col_str(sqlite3_stmt *st, int i, int *oom)
{
	char *d = lp_db_col_strdup(st, i);
	if (!d && sqlite3_column_type(st, i) != SQLITE_NULL)
		*oom = 1;
	return d;
}

/* ---- run totals ------------------------------------------------------- */

static int thread_time(struct q *q, struct lp_lock_report *r)
{
	int64_t v[2] = {0, 0};
	sqlite3_stmt *st = q_prepare(
	    q, "SELECT count(*), COALESCE(SUM(CASE WHEN e > s THEN e - s END), 0) FROM "
	       "(SELECT COALESCE(t.start_ns, p.start_ns) AS s, COALESCE(t.end_ns, p.end_ns) AS e "
	       "FROM threads t JOIN processes p ON p.id = t.process_id)");
	if (!st || q_run(q, st, ints_row, v))
		return -EIO;
	r->n_threads = v[0];
	r->thread_time_ns = v[1];
	r->thread_time_basis = "threads";
	if (r->thread_time_ns > 0)
		return 0;
	st = q_prepare(q, "SELECT COALESCE(SUM(end_ns - start_ns), 0) FROM processes "
			  "WHERE end_ns > start_ns");
	v[0] = 0;
	if (!st || q_run(q, st, ints_row, v))
		return -EIO;
	r->thread_time_ns = v[0];
	r->thread_time_basis = "processes";
	return 0;
}

static int wait_totals(struct q *q, const char *table, long long *n, int64_t *ns)
{
	char sql[128];
	int64_t v[2] = {0, 0};
	*n = 0;
	*ns = 0;
	if (!lp_db_has_table(q->db, table))
		return 0;
	if (!strcmp(table, "lock_waits"))
		snprintf(sql, sizeof(sql),
			 "SELECT COALESCE(SUM(n), 0), COALESCE(SUM(ns), 0) FROM temp.lp_wagg "
			 "WHERE src = 0");
	else
		snprintf(sql, sizeof(sql), "SELECT count(*), COALESCE(SUM(dur_ns), 0) FROM %s",
			 table);
	sqlite3_stmt *st = q_prepare(q, sql);
	if (!st || q_run(q, st, ints_row, v))
		return -EIO;
	*n = v[0];
	*ns = v[1];
	return 0;
}

static int class_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_lock_report *r = ctx;
	int c = sqlite3_column_int(st, 0);
	if (c >= 0 && c < LP_WAIT_NCLASSES) {
		r->class_n[c] += sqlite3_column_int64(st, 1);
		r->class_ns[c] += sqlite3_column_int64(st, 2);
	}
	return 0;
}

/* Count and time of every recorded wait by class. Two classes live in
 * other tables, each wait a row as a lock wait is: join is a C program's
 * pthread_join (blocking_calls; the interposer times it there, at or above
 * the block threshold), sync the host blocked until the GPU caught up
 * (syncs: cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, and the same records of imported nsys and Kineto
 * captures). cudaStreamWaitEvent is a sync record too, but the GPU waits
 * there, not the host, so it is left out. Neither is a lock: none is
 * ranked. */
static int class_totals(struct q *q, struct lp_lock_report *r)
{
	static const char *const table[4] = {"lock_waits", "cond_waits", "blocking_calls", "syncs"};
	static const char *const sql[4] = {
	    "SELECT class, SUM(n), SUM(ns) FROM temp.lp_wagg WHERE src = 0 GROUP BY 1",
	    "SELECT class, count(*), SUM(dur_ns) FROM cond_waits GROUP BY 1",
	    "SELECT 3, count(*), SUM(dur_ns) FROM blocking_calls WHERE call = 'pthread_join'",
	    "SELECT 5, count(*), SUM(dur_ns) FROM syncs WHERE type != 'stream_wait_event'",
	};
	_Static_assert(LP_WAIT_JOIN == 3 && LP_WAIT_SYNC == 5, "the numbers in sql[] above");
	for (int t = 0; t < 4; t++) {
		if (!lp_db_has_table(q->db, table[t]))
			continue;
		int rc = lp_db_each(q->db, sql[t], NULL, 0, class_row, r, q->err, q->errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the one scan of every lock wait ------------------------------------
 * lp_wagg: lock_waits (src 0) and the GIL's condition waits (src 1, counted
 * on its mutex) grouped by everything a lock view ranks or lists. Its rows
 * number the distinct (lock, stack, thread, owner, class) tuples, not the
 * waits, so every per-lock query below reads it instead of the waits, and
 * a second analysis on the same connection (findings, then the view) finds
 * it made; the rules read it too (rq: waits that waited for a CPU; pos,
 * pos_ns: waits longer than 0 and their time). lp_rwa is its ranked part
 * (LP_RANKED_WAITS). lock_waits is
 * grouped here in one pass through a hash table (SQLite's GROUP BY would
 * sort every wait first); rows go in as GROUP BY would give them, in key
 * order with NULL first, so later queries see the same row order. */
static const char lp_wagg_sql[] =
    "CREATE TEMP TABLE lp_wagg (src INTEGER, lock_id INTEGER, stack_id INTEGER, thread_id "
    "INTEGER, owner_tid INTEGER, class INTEGER, n INTEGER, ns INTEGER, mx INTEGER, tmo "
    "INTEGER, rq INTEGER, pos INTEGER, pos_ns INTEGER);"
    "CREATE TEMP VIEW lp_rwa AS SELECT lock_id, stack_id, thread_id, owner_tid, "
    "class, n, ns, mx, tmo FROM temp.lp_wagg WHERE src = 1 OR class IN (0, 1);";

static const char lp_wagg_cond_sql[] =
    "INSERT INTO temp.lp_wagg SELECT 1, mutex_lock_id, stack_id, thread_id, NULL, class, "
    "count(*), SUM(dur_ns), MAX(dur_ns), SUM((flags & 1) != 0), SUM(runq_ns > 0), "
    "SUM(dur_ns > 0), SUM(max(dur_ns, 0)) FROM "
    "cond_waits WHERE class = 1 AND mutex_lock_id IS NOT NULL GROUP BY mutex_lock_id, "
    "stack_id, thread_id, class";

struct wagg {
	int64_t key[4]; /* lock, stack, thread, owner */
	int cls;
	unsigned nulls; /* bit 1: stack NULL, bit 3: owner NULL */
	int64_t n, ns, mx, tmo, rq, pos, pos_ns;
};

struct wagg_tab {
	struct wagg *v;
	size_t n, cap;
	uint32_t *slot; /* index + 1, 0 empty */
	size_t nslot;	/* power of two */
};

static uint64_t wagg_hash(const struct wagg *w)
{
	uint64_t h = (uint64_t)w->cls * 0x9e3779b97f4a7c15ull ^ w->nulls;
	for (int i = 0; i < 4; i++) {
		h ^= (uint64_t)w->key[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdull;
	}
	return h ^ (h >> 29);
}

static int wagg_same(const struct wagg *a, const struct wagg *b)
{
	return a->cls == b->cls && a->nulls == b->nulls && !memcmp(a->key, b->key, sizeof(a->key));
}

static int wagg_rehash(struct wagg_tab *t)
{
	size_t ns = t->nslot ? 2 * t->nslot : 1024;
	uint32_t *s = calloc(ns, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t h = wagg_hash(&t->v[i]) & (ns - 1);
		while (s[h])
			h = (h + 1) & (ns - 1);
		s[h] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->nslot = ns;
	return 0;
}

static int wagg_row(sqlite3_stmt *st, void *ctx)
{
	struct wagg_tab *t = ctx;
	struct wagg k = {{sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			  sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)},
			 sqlite3_column_int(st, 4),
			 (sqlite3_column_type(st, 1) == SQLITE_NULL ? 2u : 0u) |
			     (sqlite3_column_type(st, 3) == SQLITE_NULL ? 8u : 0u),
			 0,
			 0,
			 0,
			 0,
			 0,
			 0,
			 0};
	if ((t->n + 1) * 2 > t->nslot && (t->n >= UINT32_MAX - 1 || wagg_rehash(t)))
		return -ENOMEM;
	size_t h = wagg_hash(&k) & (t->nslot - 1);
	while (t->slot[h] && !wagg_same(&t->v[t->slot[h] - 1], &k))
		h = (h + 1) & (t->nslot - 1);
	if (!t->slot[h]) {
		if (LP_GROW(t->v, t->n, t->cap))
			return -ENOMEM;
		t->v[t->n] = k;
		t->slot[h] = (uint32_t)++t->n;
	}
	struct wagg *w = &t->v[t->slot[h] - 1];
	int64_t dur = sqlite3_column_int64(st, 5);
	w->n++;
	w->ns += dur;
	w->mx = w->n == 1 || dur > w->mx ? dur : w->mx;
	w->tmo += (sqlite3_column_int64(st, 6) & 1) != 0;
	w->rq += sqlite3_column_int64(st, 7) > 0;
	w->pos += dur > 0;
	w->pos_ns += dur > 0 ? dur : 0;
	return 0;
}

/* SQLite's order of the grouped rows: by key, NULL before any number. */
static int wagg_cmp(const void *pa, const void *pb)
{
	const struct wagg *a = pa, *b = pb;
	for (int i = 0; i < 5; i++) {
		int an = i < 4 && (a->nulls >> i & 1), bn = i < 4 && (b->nulls >> i & 1);
		int64_t x = i < 4 ? a->key[i] : a->cls, y = i < 4 ? b->key[i] : b->cls;
		if (an != bn)
			return an ? -1 : 1;
		if (!an && x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static int wagg_store(struct q *q, struct wagg_tab *t)
{
	sqlite3_stmt *st = q_prepare(q, "INSERT INTO temp.lp_wagg VALUES "
					"(0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	if (!st)
		return -EIO;
	int rc = 0;
	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct wagg *w = &t->v[i];
		for (int c = 0; c < 4; c++)
			if (w->nulls >> c & 1)
				sqlite3_bind_null(st, c + 1);
			else
				sqlite3_bind_int64(st, c + 1, w->key[c]);
		int64_t val[8] = {w->cls, w->n, w->ns, w->mx, w->tmo, w->rq, w->pos, w->pos_ns};
		for (int c = 0; c < 8; c++)
			sqlite3_bind_int64(st, c + 5, val[c]);
		rc = lp_db_step_all(st, NULL, NULL, q->err, q->errlen);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int wagg_prepare(struct q *q)
{
	int64_t made[2] = {0, 0};
	sqlite3_stmt *st;
	if (!lp_db_has_table(q->db, "lock_waits")) /* the queries on it fail instead */
		return 0;
	if (!(st = q_prepare(q, "SELECT count(*) FROM sqlite_temp_master WHERE name = "
				"'lp_wagg'")) ||
	    q_run(q, st, ints_row, made))
		return -EIO;
	if (made[0])
		return 0;
	struct wagg_tab t = {0};
	lp_db_progress(q->db, "grouping lock waits", "lock_waits");
	int rc = lp_db_each(q->db,
			    "SELECT lock_id, stack_id, thread_id, owner_tid, class, dur_ns, flags, "
			    "runq_ns FROM lock_waits",
			    NULL, 0, wagg_row, &t, q->err, q->errlen);
	lp_progress_end();
	free(t.slot);
	if (!rc && t.n > 1)
		qsort(t.v, t.n, sizeof(*t.v), wagg_cmp);
	if (!rc && (lp_db_exec(q->db, "BEGIN", q->err, q->errlen) ||
		    lp_db_exec(q->db, lp_wagg_sql, q->err, q->errlen)))
		rc = -EIO;
	rc = rc ? rc : wagg_store(q, &t);
	if (!rc && lp_db_has_table(q->db, "cond_waits") &&
	    lp_db_exec(q->db, lp_wagg_cond_sql, q->err, q->errlen))
		rc = -EIO;
	if (!rc && lp_db_exec(q->db, "COMMIT", q->err, q->errlen))
		rc = -EIO;
	if (rc)
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	free(t.v);
	if (rc == -ENOMEM)
		snprintf(q->err, q->errlen, "out of memory grouping lock waits");
	return rc;
}

int lp_locks_group(sqlite3 *db, char *err, size_t errlen)
{
	struct q q = {db, err, errlen, 0};
	return wagg_prepare(&q);
}

/* ---- per-lock detail, batched -------------------------------------------
 * lock_waits has no index on lock_id (it would cost ~15 bytes per wait), so
 * each query below scans the table once for all listed locks, grouped by
 * lock: five scans in all, whatever --top is. */

struct batch {
	struct q *q;
	struct lp_lock_report *r;
	int python;    /* the database has Python frames and they are wanted */
	char *in;      /* "(3,1,7)": the listed lock ids, integers only */
	size_t *order; /* row indexes sorted by lock id, for row_of */
};

static struct batch *lp_batch_ctx;

static int cmp_row_id(const void *a, const void *b)
{
	int64_t x = lp_batch_ctx->r->locks[*(const size_t *)a].id;
	int64_t y = lp_batch_ctx->r->locks[*(const size_t *)b].id;
	return x < y ? -1 : x > y;
}

static struct lp_lock_row *row_of(struct batch *b, int64_t id)
{
	size_t lo = 0, hi = b->r->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct lp_lock_row *l = &b->r->locks[b->order[mid]];
		if (l->id == id)
			return l;
		if (l->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int batch_init(struct batch *b)
{
	size_t n = b->r->n, len = 3 + 21 * n, o = 0;
	b->in = malloc(len);
	b->order = malloc(n * sizeof(*b->order));
	if (!b->in || !b->order)
		return -ENOMEM;
	b->in[o++] = '(';
	for (size_t i = 0; i < n; i++) {
		o += (size_t)snprintf(b->in + o, len - o, "%s%" PRId64, i ? "," : "",
				      b->r->locks[i].id);
		b->order[i] = i;
	}
	snprintf(b->in + o, len - o, ")");
	lp_batch_ctx = b;
	qsort(b->order, n, sizeof(*b->order), cmp_row_id);
	return 0;
}

/* Prepare tmpl with the IN list in (integers only) in place of its one "%s". */
static sqlite3_stmt *q_prepare_in(struct q *q, const char *tmpl, const char *in)
{
	char *sql = NULL;
	const char *at = strstr(tmpl, "%s");
	if (!at || asprintf(&sql, "%.*s%s%s", (int)(at - tmpl), tmpl, in, at + 2) < 0)
		return NULL;
	sqlite3_stmt *st = q_prepare(q, sql);
	free(sql);
	return st;
}

static sqlite3_stmt *batch_prepare(struct batch *b, const char *tmpl)
{
	return q_prepare_in(b->q, tmpl, b->in);
}

/*
 * Exact nearest-rank p50 and p99 of each listed lock in two passes over its
 * waits, in memory bounded by the locks, not the waits: a histogram of the
 * durations (exact below 256 ns, then 128 buckets per power of two), then
 * only the durations in the two buckets that hold the ranks.
 */
#define PCTL_SUB 128
#define PCTL_NB (257 + 55 * PCTL_SUB)

static size_t pctl_bucket(int64_t v)
{
	if (v <= 0)
		return 0;
	if (v < 256)
		return 1 + (size_t)v;
	int e = 63 - __builtin_clzll((uint64_t)v); /* 8..62 */
	return 257 + (size_t)(e - 8) * PCTL_SUB + (size_t)((v >> (e - 7)) & (PCTL_SUB - 1));
}

struct pctl_lock {
	uint64_t *hist;		   /* [PCTL_NB], the first pass */
	size_t seen;		   /* rows taken in this pass: at most the lock's count */
	size_t bucket[2], rank[2]; /* p50, p99: the bucket, the rank inside it */
	int64_t *v[2];		   /* the second pass: the durations in those buckets */
	size_t nv[2];
};

struct pctl_load {
	struct batch *b;
	struct pctl_lock *l;
	int pass;
};

static int pctl_row(sqlite3_stmt *st, void *ctx)
{
	struct pctl_load *x = ctx;
	struct lp_lock_row *row = row_of(x->b, sqlite3_column_int64(st, 0));
	struct pctl_lock *l = row ? &x->l[row - x->b->r->locks] : NULL;
	if (!l || !l->hist || l->seen >= (size_t)row->count)
		return 0;
	int64_t v = sqlite3_column_int64(st, 1);
	size_t k = pctl_bucket(v);
	l->seen++;
	if (!x->pass) {
		l->hist[k]++;
		return 0;
	}
	for (int j = 0; j < 2; j++)
		if (l->v[j] && k == l->bucket[j] && l->nv[j] < l->hist[k])
			l->v[j][l->nv[j]++] = v;
	return 0;
}

/* After the first pass: where each rank lies (lp_quantile_nearest's rank),
 * and room for its bucket. */
static int pctl_ranks(struct pctl_lock *l)
{
	static const double q[2] = {0.50, 0.99};
	size_t n = l->seen;
	for (int j = 0; j < 2 && n; j++) {
		double r = ceil(q[j] * (double)n) - 1;
		size_t rank = r < 0 ? 0 : r > (double)n - 1 ? n - 1 : (size_t)r, k = 0;
		while (rank >= l->hist[k])
			rank -= l->hist[k++];
		l->bucket[j] = k;
		l->rank[j] = rank;
		if (!(l->v[j] = malloc(l->hist[k] * sizeof(int64_t))))
			return -ENOMEM;
	}
	l->seen = 0;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int pctl_pass(struct batch *b, const char *in, struct pctl_load *x)
{
	sqlite3_stmt *st =
	    q_prepare_in(b->q, "SELECT lock_id, dur_ns FROM temp.lp_rw WHERE lock_id IN %s", in);
	if (!st)
		return -EIO;
	lp_db_progress(b->q->db, "lock wait percentiles", "lock_waits");
	int rc = q_run(b->q, st, pctl_row, x);
	lp_progress_end();
	return rc;
}

static int pctl_scan(struct batch *b, const char *done, const char *in, struct pctl_lock *l)
{
	struct lp_lock_report *r = b->r;
	struct pctl_load x = {b, l, 0};
	for (size_t i = 0; i < r->n; i++)
		if (!done[i] && !(l[i].hist = calloc(PCTL_NB, sizeof(*l[i].hist))))
			return -ENOMEM;
	int rc = pctl_pass(b, in, &x);
	for (size_t i = 0; !rc && i < r->n; i++)
		rc = done[i] ? 0 : pctl_ranks(&l[i]);
	x.pass = 1;
	if (!rc)
		rc = pctl_pass(b, in, &x);
	sqlite3_stmt *st = NULL;
	if (!rc &&
	    !(st = q_prepare(b->q, "INSERT OR REPLACE INTO temp.lp_pctl VALUES (?, ?, ?, ?)")))
		return -EIO;
	for (size_t i = 0; rc == 0 && i < r->n; i++) {
		if (done[i])
			continue;
		for (int j = 0; j < 2 && l[i].v[j] && l[i].rank[j] < l[i].nv[j]; j++) {
			qsort(l[i].v[j], l[i].nv[j], sizeof(int64_t), cmp_i64);
			*(j ? &r->locks[i].p99_ns : &r->locks[i].p50_ns) = l[i].v[j][l[i].rank[j]];
		}
		int64_t val[4] = {b->q->folded, r->locks[i].id, r->locks[i].p50_ns,
				  r->locks[i].p99_ns};
		for (int c = 0; c < 4; c++)
			sqlite3_bind_int64(st, c + 1, val[c]);
		rc = lp_db_step_all(st, NULL, NULL, b->q->err, b->q->errlen);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* p50 and p99 of the listed locks a previous analysis on this connection
 * computed (findings rank 50 locks, then the view shows its top N): a
 * second pass over every wait would give the same numbers. */
static const char lp_pctl_sql[] =
    "CREATE TEMP TABLE IF NOT EXISTS lp_pctl (folded INTEGER, lock_id INTEGER, p50 INTEGER, "
    "p99 INTEGER, PRIMARY KEY (folded, lock_id));";

struct pctl_cached {
	struct batch *b;
	char *done;
};

static int pctl_cached_row(sqlite3_stmt *st, void *ctx)
{
	struct pctl_cached *c = ctx;
	struct lp_lock_row *row = row_of(c->b, sqlite3_column_int64(st, 0));
	if (row) {
		row->p50_ns = sqlite3_column_int64(st, 1);
		row->p99_ns = sqlite3_column_int64(st, 2);
		c->done[row - c->b->r->locks] = 1;
	}
	return 0;
}

/* "(id,id...)" of the listed locks not done; NULL when out of memory. */
static char *pctl_pending(const struct lp_lock_report *r, const char *done, size_t *npend)
{
	size_t len = 3 + 21 * r->n, o = 0;
	char *in = malloc(len);
	*npend = 0;
	if (!in)
		return NULL;
	in[o++] = '(';
	for (size_t i = 0; i < r->n; i++)
		if (!done[i])
			o += (size_t)snprintf(in + o, len - o, "%s%" PRId64, (*npend)++ ? "," : "",
					      r->locks[i].id);
	snprintf(in + o, len - o, ")");
	return in;
}

static int batch_percentiles(struct batch *b)
{
	struct lp_lock_report *r = b->r;
	struct pctl_lock *l = calloc(r->n + 1, sizeof(*l));
	size_t npend = 0;
	char *done = calloc(r->n, 1), *in = NULL;
	sqlite3_stmt *st = NULL;
	int rc = l && done ? 0 : -ENOMEM;
	if (!rc && lp_db_exec(b->q->db, lp_pctl_sql, b->q->err, b->q->errlen))
		rc = -EIO;
	if (!rc && !(st = batch_prepare(b, "SELECT lock_id, p50, p99 FROM temp.lp_pctl WHERE "
					   "folded = ? AND lock_id IN %s")))
		rc = -EIO;
	struct pctl_cached c = {b, done};
	if (!rc) {
		sqlite3_bind_int(st, 1, b->q->folded);
		rc = q_run(b->q, st, pctl_cached_row, &c);
	}
	if (!rc && !(in = pctl_pending(r, done, &npend)))
		rc = -ENOMEM;
	if (!rc && npend)
		rc = pctl_scan(b, done, in, l);
	for (size_t i = 0; l && i < r->n; i++) {
		free(l[i].hist);
		free(l[i].v[0]);
		free(l[i].v[1]);
	}
	free(l);
	free(done);
	free(in);
	return rc;
}

static char *site_where(const struct lp_lock_site *s)
{
	char *w = NULL;
	int n;
	if (s->python) { /* handler.py:42 serve_one */
		const char *base =
		    s->file && strrchr(s->file, '/') ? strrchr(s->file, '/') + 1 : s->file;
		n = asprintf(&w, "%s:%d %s", base ? base : "?", s->line,
			     s->function ? s->function : "?");
	} else if (s->function && s->file)
		n = asprintf(&w, "%s %s:%d", s->function, s->file, s->line);
	else if (s->function && s->module)
		n = asprintf(&w, "%s (%s+0x%" PRIx64 ")", s->function, s->module, s->offset);
	else if (s->function)
		n = asprintf(&w, "%s", s->function);
	else if (s->module)
		n = asprintf(&w, "%s+0x%" PRIx64, s->module, s->offset);
	else
		n = asprintf(&w, "(no stack)");
	return n < 0 ? NULL : w;
}

static void site_free(struct lp_lock_site *s)
{
	free(s->chain);
	free(s->source);
	free(s->py_chain);
	free(s->where);
	free(s->function);
	free(s->file);
	free(s->module);
}

static struct lp_lock_site *site_push(struct lp_lock_row *l)
{
	if ((l->n_sites & (l->n_sites - 1)) == 0) { /* 0, 1, 2, 4...: grow */
		void *n = realloc(l->sites, (l->n_sites ? 2 * l->n_sites : 1) * sizeof(*l->sites));
		if (!n)
			return NULL;
		l->sites = n;
	}
	struct lp_lock_site *s = &l->sites[l->n_sites++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* Lock wrappers (pigz's possess(), PostgreSQL's PGSemaphoreLock and
 * LWLockAcquire): a frame that is the innermost frame of waits on two or
 * more distinct locks is lock-agnostic code, so the site is the frame above
 * it; once more when that frame is itself shared by two or more locks.
 * lp_site_depth maps each stack of a ranked wait to its site's depth. The
 * whole stack stays in the database; only the name shown moves. */
#define LP_SITE_NOT_START                                                                          \
	"UPDATE temp.lp_site_depth SET depth = depth - 1 WHERE depth > 0 AND EXISTS (SELECT 1 "    \
	"FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id WHERE sf.stack_id = "            \
	"lp_site_depth.stack_id AND sf.depth = lp_site_depth.depth AND f.function IN "             \
	"('start_thread', '__clone3', '__clone', 'clone', 'clone3', 'thread_start'));"

static const char lp_site_depth_sql[] =
    /* lp_ws: each (lock, stack) pair of the ranked waits, with the range of
     * thread ids and the highest class: the one scan and sort of all waits;
     * the site depth here and lp_fold_sql read only this. */
    "DROP TABLE IF EXISTS temp.lp_ws;"
    "CREATE TEMP TABLE lp_ws AS SELECT lock_id, stack_id, min(thread_id) AS t0, "
    "max(thread_id) AS t1, max(class) AS cls FROM temp.lp_rwa GROUP BY lock_id, stack_id;"
    "DROP TABLE IF EXISTS temp.lp_site_depth;"
    "CREATE TEMP TABLE lp_site_depth AS WITH ws AS (SELECT lock_id, stack_id "
    "FROM temp.lp_ws WHERE stack_id IS NOT NULL), "
    "w0 AS (SELECT sf.frame_id FROM ws JOIN stack_frames sf ON sf.stack_id = ws.stack_id "
    "AND sf.depth = 0 GROUP BY sf.frame_id HAVING count(DISTINCT ws.lock_id) >= 2), "
    "s1 AS (SELECT ws.lock_id, ws.stack_id, f1.frame_id FROM ws JOIN stack_frames f0 ON "
    "f0.stack_id = ws.stack_id AND f0.depth = 0 AND f0.frame_id IN (SELECT frame_id FROM w0) "
    "JOIN stack_frames f1 ON f1.stack_id = ws.stack_id AND f1.depth = 1), "
    "w1 AS (SELECT frame_id FROM s1 GROUP BY frame_id HAVING count(DISTINCT lock_id) >= 2) "
    "SELECT ws.stack_id AS stack_id, max(CASE WHEN s1.stack_id IS NULL THEN 0 WHEN "
    "s1.frame_id IN (SELECT frame_id FROM w1) AND EXISTS (SELECT 1 FROM stack_frames x WHERE "
    "x.stack_id = ws.stack_id AND x.depth = 2) THEN 2 ELSE 1 END) AS depth FROM ws "
    "LEFT JOIN s1 ON s1.stack_id = ws.stack_id GROUP BY ws.stack_id;"
    /* A futex wait's innermost frame called syscall(SYS_futex) itself: the
     * lock's own wait function, even unnamed (a stripped server's latch)
     * and even when only one lock was waited on through it. */
    "UPDATE temp.lp_site_depth SET depth = 1 WHERE depth = 0 AND EXISTS (SELECT 1 FROM "
    "stack_frames x WHERE x.stack_id = lp_site_depth.stack_id AND x.depth = 1) AND stack_id "
    "IN (SELECT w.stack_id FROM temp.lp_ws w JOIN locks l ON l.id = w.lock_id AND l.kind = "
    "'futex');"
    /* A futex wait's stack starts in the runtime's lock code (Rust std's
     * lock_contended, the syscall wrapper): its site is the first frame
     * above it, as for a lock wrapper (lp_waits_futex.h). */
    "UPDATE temp.lp_site_depth SET depth = coalesce((SELECT min(sf.depth) FROM stack_frames sf "
    "JOIN frames f ON f.id = sf.frame_id WHERE sf.stack_id = lp_site_depth.stack_id AND "
    "sf.depth > lp_site_depth.depth AND NOT coalesce(" LP_FUTEX_RUNTIME_FN ", 0)), depth) "
    "WHERE EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id WHERE "
    "sf.stack_id = lp_site_depth.stack_id AND sf.depth = lp_site_depth.depth "
    "AND " LP_FUTEX_RUNTIME_FN ");"
    /* Above a wrapper called from one line of a thread's function, the
     * frame chosen can be libc's thread start (start_thread, __clone3):
     * the app's frame below it names the site. */
    LP_SITE_NOT_START LP_SITE_NOT_START;

/* Per-thread semaphores (PostgreSQL's PGSemaphore: each backend sleeps on
 * its own, others post it) are no lock: the lock is whatever the wrapper
 * above them takes (an LWLock), and one row per semaphore says "owner
 * unknown" N times over. A semaphore waited on by one thread only is
 * per-thread; its waits at a site (the frame lp_site_depth chose) that
 * waits on other per-thread semaphores share become one row per site,
 * keyed -frame_id. lp_rw is the ranked waits with that key as lock_id
 * (real_lock keeps the lock's id); every per-row query reads it. */
static const char lp_fold_sql[] =
    "DROP TABLE IF EXISTS temp.lp_fold;"
    "CREATE TEMP TABLE lp_fold AS WITH priv AS (SELECT w.lock_id FROM temp.lp_ws w JOIN "
    "locks l ON l.id = w.lock_id AND l.kind = 'sem' GROUP BY w.lock_id "
    "HAVING min(w.t0) = max(w.t1) AND max(w.cls) = 0), "
    "ps AS (SELECT w.lock_id, w.stack_id, sf.frame_id FROM temp.lp_ws w JOIN priv "
    "ON priv.lock_id = w.lock_id JOIN temp.lp_site_depth sd ON sd.stack_id = w.stack_id "
    "JOIN stack_frames sf ON sf.stack_id = w.stack_id AND sf.depth = sd.depth) "
    "SELECT lock_id, stack_id, -frame_id AS key FROM ps WHERE frame_id IN (SELECT frame_id "
    "FROM ps GROUP BY frame_id HAVING count(DISTINCT lock_id) >= 2);"
    "CREATE INDEX temp.lp_fold_at ON lp_fold(lock_id, stack_id);";

static const char lp_rw_fold_sql[] =
    "DROP VIEW IF EXISTS temp.lp_rw;"
    "CREATE TEMP VIEW lp_rw AS SELECT coalesce(f.key, r.lock_id) AS lock_id, r.dur_ns, "
    "r.thread_id, r.start_ns, r.stack_id, r.class "
    "FROM " LP_RANKED_WAITS " r LEFT JOIN temp.lp_fold f ON f.lock_id = r.lock_id AND "
    "f.stack_id = r.stack_id;"
    "DROP VIEW IF EXISTS temp.lp_ra;"
    "CREATE TEMP VIEW lp_ra AS SELECT coalesce(f.key, r.lock_id) AS lock_id, r.lock_id AS "
    "real_lock, r.thread_id, r.owner_tid, r.stack_id, r.class, r.n, r.ns, r.mx, r.tmo "
    "FROM temp.lp_rwa r LEFT JOIN temp.lp_fold f ON f.lock_id = r.lock_id AND "
    "f.stack_id = r.stack_id;";

/* Nothing to fold (or findings, which rank locks by lock_id): no join.
 * lp_rw: the ranked waits themselves (only percentiles need each one);
 * lp_ra: their aggregate (lp_rwa), with the key and the real lock. */
static const char lp_rw_plain_sql[] =
    "DROP VIEW IF EXISTS temp.lp_rw;"
    "CREATE TEMP VIEW lp_rw AS SELECT lock_id, dur_ns, thread_id, start_ns, stack_id, class "
    "FROM " LP_RANKED_WAITS ";"
    "DROP VIEW IF EXISTS temp.lp_ra;"
    "CREATE TEMP VIEW lp_ra AS SELECT lock_id, lock_id AS real_lock, thread_id, owner_tid, "
    "stack_id, class, n, ns, mx, tmo FROM temp.lp_rwa;";

/* Sets up lp_site_depth, lp_fold and lp_rw for the queries below. */
static int rows_prepare(struct q *q, int fold)
{
	int64_t v[2] = {0, 0};
	if (lp_db_exec(q->db, lp_site_depth_sql, q->err, q->errlen))
		return -EIO;
	if (fold) {
		sqlite3_stmt *st;
		if (lp_db_exec(q->db, lp_fold_sql, q->err, q->errlen) ||
		    !(st = q_prepare(q, "SELECT count(*) FROM temp.lp_fold")) ||
		    q_run(q, st, ints_row, v))
			return -EIO;
	}
	q->folded = v[0] > 0;
	return lp_db_exec(q->db, v[0] ? lp_rw_fold_sql : lp_rw_plain_sql, q->err, q->errlen) ? -EIO
											     : 0;
}

/* "fn" or "module+0xoff" of one frame, for the chain. */
static int chain_row(sqlite3_stmt *st, void *ctx)
{
	char **chain = ctx, *n = NULL;
	const char *fn = (const char *)sqlite3_column_text(st, 0);
	const char *mod = (const char *)sqlite3_column_text(st, 1);
	const char *base = mod && strrchr(mod, '/') ? strrchr(mod, '/') + 1 : mod;
	int rc;
	if (fn)
		rc = asprintf(&n, "%s%s%s", *chain ? *chain : "", *chain ? " <- " : "", fn);
	else
		rc = asprintf(&n, "%s%s%s+0x%llx", *chain ? *chain : "", *chain ? " <- " : "",
			      base ? base : "?", (unsigned long long)sqlite3_column_int64(st, 2));
	if (rc < 0)
		return -ENOMEM;
	free(*chain);
	*chain = n;
	return 0;
}

/* Three frames from one stack through the site: the site and the two above
 * it, or, above a wrapper, the wrapper's frame first (LWLockAcquire <-
 * XLogFlush <- ...: which lock function, called from where). */
static int site_chain(struct q *q, struct lp_lock_site *s, int64_t stack, int64_t depth)
{
	int64_t args[2] = {stack, depth > 0 ? depth - 1 : 0};
	return lp_db_each(
	    q->db,
	    "SELECT f.function, f.module, f.offset FROM stack_frames sf JOIN frames f "
	    "ON f.id = sf.frame_id WHERE sf.stack_id = ?1 AND sf.depth >= ?2 AND "
	    "sf.depth < ?2 + 3 ORDER BY sf.depth",
	    args, 2, chain_row, &s->chain, q->err, q->errlen);
}

static int site_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_lock_row *l = row_of(ctx, sqlite3_column_int64(st, 0));
	struct lp_lock_site *s = l ? site_push(l) : NULL;
	int oom = 0;
	if (!s)
		return l ? -ENOMEM : 0;
	s->function = col_str(st, 1, &oom);
	s->file = col_str(st, 2, &oom);
	s->line = sqlite3_column_int(st, 3);
	s->module = col_str(st, 4, &oom);
	s->offset = (uint64_t)sqlite3_column_int64(st, 5);
	s->count = sqlite3_column_int64(st, 6);
	s->wait_ns = sqlite3_column_int64(st, 7);
	s->stack = sqlite3_column_type(st, 8) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 8);
	s->depth = sqlite3_column_int(st, 9);
	if (sqlite3_column_count(st) > 10) {
		s->python = sqlite3_column_int(st, 10);
		s->source = col_str(st, 11, &oom);
		s->py_stack = sqlite3_column_int64(st, 12);
	}
	s->where = site_where(s);
	return oom || !s->where ? -ENOMEM : 0;
}

/* "fn" of one Python frame, for the Python chain. */
static int py_chain_row(sqlite3_stmt *st, void *ctx)
{
	char **chain = ctx, *n = NULL;
	const char *fn = (const char *)sqlite3_column_text(st, 0);
	if (asprintf(&n, "%s%s%s", *chain ? *chain : "", *chain ? " <- " : "", fn ? fn : "?") < 0)
		return -ENOMEM;
	free(*chain);
	*chain = n;
	return 0;
}

/* The Python site and the two frames outside it, from one of its stacks. */
static int site_py_chain(struct q *q, struct lp_lock_site *s)
{
	int64_t args[1] = {s->py_stack};
	return lp_db_each(
	    q->db,
	    "SELECT f.function FROM py_stack_frames sf JOIN py_frames f ON f.id = "
	    "sf.frame_id WHERE sf.stack_id = ?1 AND sf.depth >= (SELECT x.depth FROM "
	    "py_stack_frames x JOIN py_stacks p ON p.id = x.stack_id WHERE "
	    "x.stack_id = ?1 AND x.frame_id = p.site_frame) ORDER BY sf.depth LIMIT 3",
	    args, 1, py_chain_row, &s->py_chain, q->err, q->errlen);
}

/* Every site of every listed lock (the innermost frame of each wait's
 * stack, or the frame above a lock wrapper), by wait. The most frequent
 * site names heap locks, so sites are cut to top N only after lock_name. */
static int batch_sites(struct batch *b)
{
	/* without Python frames, the waits grouped by lock and stack (lp_ra) */
	static const char native[] =
	    "SELECT w.lock_id, f.function, f.file, f.line, f.module, f.offset, SUM(w.n), "
	    "SUM(w.ns), min(w.stack_id), coalesce(sd.depth, 0) FROM temp.lp_ra "
	    "w LEFT JOIN temp.lp_site_depth sd ON sd.stack_id = w.stack_id "
	    "LEFT JOIN stack_frames sf ON sf.stack_id = w.stack_id AND sf.depth = "
	    "coalesce(sd.depth, 0) LEFT JOIN frames f ON f.id = sf.frame_id "
	    "WHERE w.lock_id IN %s GROUP BY w.lock_id, sf.frame_id ORDER BY w.lock_id, 8 DESC, "
	    "7 DESC";
	/* a wait with Python frames has its Python site (py_stacks.site_frame) */
	static const char python[] =
	    "SELECT w.lock_id, coalesce(pf.function, f.function), coalesce(pf.file, f.file), "
	    "coalesce(pf.line, f.line), CASE WHEN pf.id IS NULL THEN f.module END, "
	    "CASE WHEN pf.id IS NULL THEN f.offset END, count(*), SUM(w.dur_ns), min(w.stack_id), "
	    "coalesce(sd.depth, 0), pf.id IS NOT NULL, pf.source, min(pw.py_stack_id) "
	    "FROM temp.lp_rw w LEFT JOIN temp.lp_site_depth sd ON sd.stack_id = w.stack_id "
	    "LEFT JOIN stack_frames sf ON sf.stack_id = w.stack_id AND sf.depth = "
	    "coalesce(sd.depth, 0) LEFT JOIN frames f ON f.id = sf.frame_id "
	    "LEFT JOIN py_waits pw ON pw.thread_id = w.thread_id AND pw.start_ns = w.start_ns "
	    "LEFT JOIN py_stacks ps ON ps.id = pw.py_stack_id "
	    "LEFT JOIN py_frames pf ON pf.id = ps.site_frame "
	    "WHERE w.lock_id IN %s GROUP BY w.lock_id, CASE WHEN pf.id IS NULL THEN sf.frame_id "
	    "ELSE -pf.id END ORDER BY w.lock_id, 8 DESC, 7 DESC";
	sqlite3_stmt *st = batch_prepare(b, b->python ? python : native);
	if (!st)
		return -EIO;
	int rc = q_run(b->q, st, site_row, b);
	if (rc)
		return rc;
	for (size_t i = 0; i < b->r->n; i++)
		b->r->locks[i].n_sites_total = b->r->locks[i].n_sites;
	for (size_t i = 0; rc == 0 && i < b->r->n; i++)
		for (size_t k = 0; rc == 0 && k < b->r->locks[i].n_sites; k++) {
			struct lp_lock_site *s = &b->r->locks[i].sites[k];
			if (s->stack && k < (size_t)b->r->top)
				rc = site_chain(b->q, s, s->stack, s->depth);
			if (rc == 0 && s->python && s->py_stack && k < (size_t)b->r->top)
				rc = site_py_chain(b->q, s);
		}
	return rc;
}

static int py_holder_row(sqlite3_stmt *st, void *ctx)
{
	struct batch *b = ctx;
	struct lp_lock_row *l = row_of(b, sqlite3_column_int64(st, 0));
	if (!l)
		return 0;
	l->py_holder_waits += sqlite3_column_int64(st, 3);
	if (l->n_py_holders == (size_t)b->r->top)
		return 0;
	if (!l->py_holders && !(l->py_holders = calloc((size_t)b->r->top, sizeof(*l->py_holders))))
		return -ENOMEM;
	struct lp_py_holder *h = &l->py_holders[l->n_py_holders++];
	int oom = 0;
	h->function = col_str(st, 1, &oom);
	h->file = col_str(st, 2, &oom);
	h->count = sqlite3_column_int64(st, 3);
	h->wait_ns = sqlite3_column_int64(st, 4);
	return oom ? -ENOMEM : 0;
}

/* GIL rows: the Python functions the GIL's holders ran, by wait time. */
static int batch_py_holders(struct batch *b)
{
	sqlite3_stmt *st = batch_prepare(
	    b, "SELECT w.lock_id, f.function, f.file, count(*), SUM(w.dur_ns) FROM temp.lp_rw w "
	       "JOIN py_waits pw ON pw.thread_id = w.thread_id AND pw.start_ns = w.start_ns "
	       "JOIN py_frames f ON f.id = pw.holder_frame_id WHERE w.lock_id IN %s AND "
	       "w.class = 1 GROUP BY 1, 2, 3 ORDER BY 1, 5 DESC, 4 DESC, 2");
	return st ? q_run(b->q, st, py_holder_row, b) : -EIO;
}

struct thread_load {
	struct batch *b;
	int owner;
};

static int thread_row(sqlite3_stmt *st, void *ctx)
{
	struct thread_load *x = ctx;
	int owner = x->owner, oom = 0;
	size_t top = (size_t)x->b->r->top;
	struct lp_lock_row *l = row_of(x->b, sqlite3_column_int64(st, 0));
	if (!l)
		return 0;
	if (owner && sqlite3_column_type(st, 1) == SQLITE_NULL) {
		l->owner_unknown = sqlite3_column_int64(st, 3);
		return 0;
	}
	size_t *n = owner ? &l->n_owners : &l->n_waiters;
	if (*n == top)
		return 0;
	struct lp_lock_thread *t = &(owner ? l->owners : l->waiters)[(*n)++];
	t->tid = sqlite3_column_int(st, 1);
	t->name = col_str(st, 2, &oom);
	t->count = sqlite3_column_int64(st, 3);
	t->wait_ns = sqlite3_column_int64(st, 4);
	return oom ? -ENOMEM : 0;
}

/* Waiters (owner = 0) or owners (owner = 1) of every listed lock, by wait;
 * each lock keeps its first top N. Waits without an owner count apart. */
static int batch_threads(struct batch *b, int owner)
{
	static const char *const sql[2] = {
	    "SELECT w.lock_id, t.tid, t.name, SUM(w.n), SUM(w.ns) FROM temp.lp_ra w "
	    "JOIN threads t ON t.id = w.thread_id WHERE w.lock_id IN %s "
	    "GROUP BY w.lock_id, w.thread_id ORDER BY w.lock_id, 5 DESC, 4 DESC",
	    "SELECT w.lock_id, w.owner_tid, (SELECT t.name FROM threads t JOIN locks k ON "
	    "k.process_id = t.process_id WHERE k.id = w.real_lock AND t.tid = w.owner_tid "
	    "ORDER BY t.start_ns DESC LIMIT 1), SUM(w.n), SUM(w.ns) FROM temp.lp_ra w "
	    "WHERE w.lock_id IN %s GROUP BY w.lock_id, w.owner_tid "
	    "ORDER BY w.lock_id, 5 DESC, 4 DESC",
	};
	size_t top = (size_t)b->r->top;
	for (size_t i = 0; i < b->r->n; i++) {
		struct lp_lock_row *l = &b->r->locks[i];
		if (!(*(owner ? &l->owners : &l->waiters) = calloc(top, sizeof(*l->owners))))
			return -ENOMEM;
	}
	sqlite3_stmt *st = batch_prepare(b, sql[owner]);
	if (!st)
		return -EIO;
	struct thread_load l = {b, owner};
	return q_run(b->q, st, thread_row, &l);
}

struct holder_ctx {
	struct batch *b;
	int oom;
};

static int holder_row(sqlite3_stmt *st, void *ctx)
{
	struct holder_ctx *h = ctx;
	struct lp_lock_row *l = row_of(h->b, sqlite3_column_int64(st, 0));
	if (!l || l->holder_stage) /* rows come most frequent first per lock */
		return 0;
	l->holder_stage = lp_db_col_strdup(st, 1);
	if (!l->holder_stage)
		return -ENOMEM;
	l->holder_stage_waits = sqlite3_column_int64(st, 2);
	return 0;
}

/* The stage each listed lock's holders were in, most often. */
static int batch_holders(struct batch *b)
{
	char *sql = NULL;
	int64_t any[2] = {0, 0};
	sqlite3_stmt *st;
	/* without ranges no wait has an owner range: no scan of the waits */
	if (!lp_db_has_table(b->q->db, "ranges"))
		return 0;
	if (!(st = q_prepare(b->q, "SELECT EXISTS (SELECT 1 FROM ranges)")) ||
	    q_run(b->q, st, ints_row, any))
		return -EIO;
	if (!any[0])
		return 0;
	if (asprintf(
		&sql,
		"SELECT w.lock_id, n.value, count(*) FROM lock_waits w JOIN ranges r ON r.id = "
		"w.owner_range_id JOIN strings n ON n.id = r.name_id WHERE w.lock_id IN %s "
		"GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2",
		b->in) < 0)
		return -ENOMEM;
	struct holder_ctx h = {b, 0};
	int rc = lp_db_each(b->q->db, sql, NULL, 0, holder_row, &h, b->q->err, b->q->errlen);
	free(sql);
	return rc;
}

/* ---- hold times --------------------------------------------------------- */

/* The part of a hold h inside a request on the holder's thread. */
/* The request range a hold began in: the latest request range that began
 * on the holder's thread at or before the hold (requests on one thread do
 * not overlap), its end tested after the LIMIT, so a hold between requests
 * costs one step back, not a walk over every earlier range. The unary +
 * keeps SQLite on ranges_start (backward from the hold) instead of
 * ranges_name, which lists every request of the run for each hold. */
#define LP_HELD_IN_REQ                                                                             \
	"coalesce((SELECT CASE WHEN q.end_ns > h.start_ns THEN min(h.start_ns + h.dur_ns, "        \
	"q.end_ns) - h.start_ns ELSE 0 END FROM ranges q WHERE +q.start_thread_id = h.thread_id "  \
	"AND q.depth = 0 AND +q.name_id = (SELECT nid FROM rq) AND q.start_ns <= h.start_ns "      \
	"ORDER BY q.start_ns DESC LIMIT 1), 0)"
/* The request: the most frequent top-level range name, found once (inside
 * the correlated subquery SQLite would group every range again per hold). */
#define LP_HELD_REQ_CTE                                                                            \
	"WITH rq(nid) AS MATERIALIZED (SELECT name_id FROM ranges WHERE depth = 0 GROUP BY "       \
	"name_id ORDER BY count(*) DESC, name_id LIMIT 1) "

struct hold_load {
	struct batch *b;
	double **v;
	size_t *n;
};

static int hold_row(sqlite3_stmt *st, void *ctx)
{
	struct hold_load *h = ctx;
	struct lp_lock_row *l = row_of(h->b, sqlite3_column_int64(st, 0));
	if (!l)
		return 0;
	size_t i = (size_t)(l - h->b->r->locks);
	double *nv = realloc(h->v[i], (h->n[i] + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	h->v[i] = nv;
	int64_t d = sqlite3_column_int64(st, 1);
	nv[h->n[i]++] = (double)d;
	l->holds++;
	l->hold_total_ns += d;
	l->held_in_req_ns += sqlite3_column_int64(st, 2);
	if (d > l->hold_max_ns)
		l->hold_max_ns = d;
	return 0;
}

static int hold_site_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_lock_row *l = row_of(ctx, sqlite3_column_int64(st, 0));
	if (!l || l->hold_site) /* most hold time first per lock */
		return 0;
	l->hold_site = lp_db_col_strdup(st, 1);
	l->hold_stage = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL : lp_db_col_strdup(st, 2);
	return l->hold_site ? 0 : -ENOMEM;
}

/* Each listed lock's recorded holds: their figures, then the site and
 * stage that held it longest. */
static int batch_holds(struct batch *b)
{
	if (!lp_db_has_table(b->q->db, "lock_holds"))
		return 0;
	struct lp_lock_report *r = b->r;
	struct hold_load h = {b, calloc(r->n, sizeof(double *)), calloc(r->n, sizeof(size_t))};
	int rc = h.v && h.n ? 0 : -ENOMEM;
	sqlite3_stmt *st =
	    rc ? NULL
	       : batch_prepare(b, LP_HELD_REQ_CTE "SELECT h.lock_id, h.dur_ns, " LP_HELD_IN_REQ
						  " FROM lock_holds h WHERE h.lock_id IN %s");
	if (!rc)
		rc = st ? q_run(b->q, st, hold_row, &h) : -EIO;
	for (size_t i = 0; rc == 0 && i < r->n; i++)
		if (h.n[i]) {
			lp_sort_doubles(h.v[i], h.n[i]);
			r->locks[i].hold_p50_ns =
			    (int64_t)lp_quantile_nearest(h.v[i], h.n[i], 0.50);
			r->locks[i].hold_p99_ns =
			    (int64_t)lp_quantile_nearest(h.v[i], h.n[i], 0.99);
		}
	for (size_t i = 0; h.v && i < r->n; i++)
		free(h.v[i]);
	free(h.v);
	free(h.n);
	if (rc)
		return rc;
	st = batch_prepare(b,
			   "SELECT h.lock_id, coalesce(f.function, '?') || coalesce(' (' || "
			   "f.file || ':' || f.line || ')', ''), n.value, sum(h.dur_ns) FROM "
			   "lock_holds h LEFT JOIN stacks s ON s.id = h.stack_id LEFT JOIN frames "
			   "f ON f.id = s.top_frame LEFT JOIN ranges g ON g.id = h.range_id LEFT "
			   "JOIN strings n ON n.id = g.name_id WHERE h.lock_id IN %s GROUP BY 1, "
			   "2, 3 ORDER BY 1, 4 DESC, 2");
	return st ? q_run(b->q, st, hold_site_row, b) : -EIO;
}

static int lock_name(struct lp_lock_row *l)
{
	size_t best = 0; /* the most frequent site, by count */
	for (size_t i = 1; i < l->n_sites; i++)
		if (l->sites[i].count > l->sites[best].count)
			best = i;
	int n;
	if (l->wclass == LP_WAIT_GIL)
		n = asprintf(&l->name, "GIL (%s)", l->symbol ? l->symbol : "CPython");
	else if (l->symbol)
		n = asprintf(&l->name, "%s", l->symbol);
	else if (l->n_sites && l->sites[best].python && !l->folded)
		n = asprintf(&l->name, "Python lock at %s", l->sites[best].where);
	else if (l->folded && l->n_sites)
		n = asprintf(&l->name, "%lld per-thread semaphores at %s", l->folded,
			     l->sites[best].where);
	else if (l->n_sites)
		n = asprintf(&l->name, "0x%" PRIx64 " (heap) at %s", l->address,
			     l->sites[best].where);
	else
		n = asprintf(&l->name, "0x%" PRIx64 " (heap)", l->address);
	return n < 0 ? -ENOMEM : 0;
}

static int locks_detail(struct q *q, struct lp_lock_report *r, int flags)
{
	/* a run without Python frames keeps the native query: no join */
	int python = !(flags & LP_LOCKS_NATIVE) && lp_db_has_table(q->db, "py_waits") &&
		     lp_db_int(q->db, "SELECT EXISTS (SELECT 1 FROM py_waits)", 0);
	struct batch b = {q, r, python, NULL, NULL};
	int rc = r->n ? batch_init(&b) : 0;
	if (r->n) {
		rc = rc ? rc : batch_percentiles(&b);
		rc = rc ? rc : batch_sites(&b);
		rc = rc ? rc : batch_threads(&b, 0);
		rc = rc ? rc : batch_threads(&b, 1);
		rc = rc ? rc : batch_holders(&b);
		rc = rc ? rc : batch_holds(&b);
		rc = rc || !b.python ? rc : batch_py_holders(&b);
	}
	for (size_t i = 0; rc == 0 && i < r->n; i++) {
		struct lp_lock_row *l = &r->locks[i];
		rc = lock_name(l);
		while (l->n_sites > (size_t)r->top)
			site_free(&l->sites[--l->n_sites]);
		l->mean_ns = l->count ? (double)l->total_ns / (double)l->count : 0;
		l->share =
		    r->thread_time_ns > 0 ? (double)l->total_ns / (double)r->thread_time_ns : 0;
	}
	free(b.in);
	free(b.order);
	lp_batch_ctx = NULL;
	return rc;
}

/* ---- the report ------------------------------------------------------- */

static int lock_row_fill(sqlite3_stmt *st, void *ctx)
{
	struct lp_lock_report *r = ctx;
	int oom = 0;
	if (r->n == (size_t)r->top)
		return LP_DB_STOP;
	struct lp_lock_row *l = &r->locks[r->n++];
	l->id = sqlite3_column_int64(st, 0);
	l->address = (uint64_t)sqlite3_column_int64(st, 1);
	l->kind = col_str(st, 2, &oom);
	l->symbol = col_str(st, 3, &oom);
	l->module = col_str(st, 4, &oom);
	l->pid = sqlite3_column_int(st, 5);
	l->process = col_str(st, 6, &oom);
	l->count = sqlite3_column_int64(st, 7);
	l->total_ns = sqlite3_column_int64(st, 8);
	l->max_ns = sqlite3_column_int64(st, 9);
	l->timeouts = sqlite3_column_int64(st, 10);
	l->wclass = sqlite3_column_int(st, 11);
	l->folded = sqlite3_column_int64(st, 12);
	l->n_processes = sqlite3_column_int64(st, 13);
	return oom ? -ENOMEM : 0;
}

/* One row per lock, or per site of folded per-thread semaphores (lp_fold:
 * no locks row; the waiters' process, pid 0 when several). */
static int lock_rows(struct q *q, struct lp_lock_report *r)
{
	sqlite3_stmt *st = q_prepare(
	    q, "SELECT w.lock_id, coalesce(l.address, 0), coalesce(l.kind, 'sem'), l.name, "
	       "l.module, CASE WHEN count(DISTINCT p.id) = 1 THEN max(p.pid) ELSE 0 END, "
	       "max(p.exe), SUM(w.n), SUM(w.ns), MAX(w.mx), SUM(w.tmo), "
	       "MAX(w.class), CASE WHEN l.id IS NULL THEN count(DISTINCT w.real_lock) ELSE 0 END, "
	       "count(DISTINCT p.id) FROM temp.lp_ra w LEFT JOIN locks l ON l.id = w.lock_id "
	       "JOIN processes p ON p.id = coalesce(l.process_id, (SELECT t.process_id FROM "
	       "threads t WHERE t.id = w.thread_id)) GROUP BY w.lock_id ORDER BY 9 DESC, "
	       "w.lock_id LIMIT ?");
	if (!st)
		return -EIO;
	sqlite3_bind_int(st, 1, r->top);
	r->locks = calloc((size_t)r->top, sizeof(*r->locks));
	if (!r->locks) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	return q_run(q, st, lock_row_fill, r);
}

int lp_locks_analyze(sqlite3 *db, int top, struct lp_lock_report *r, char *err, size_t errlen)
{
	return lp_locks_analyze_flags(db, top, 0, r, err, errlen);
}

int lp_locks_analyze_flags(sqlite3 *db, int top, int flags, struct lp_lock_report *r, char *err,
			   size_t errlen)
{
	struct q q = {db, err, errlen, 0};
	memset(r, 0, sizeof(*r));
	r->top = top > 0 ? top : 10;
	int rc = thread_time(&q, r);
	rc = rc ? rc : wagg_prepare(&q);
	rc = rc ? rc : wait_totals(&q, "lock_waits", &r->lock_waits, &r->lock_wait_ns);
	rc = rc ? rc : wait_totals(&q, "cond_waits", &r->cond_waits, &r->cond_wait_ns);
	rc = rc ? rc : class_totals(&q, r);
	if (!rc && lp_db_has_table(db, "lock_waits")) {
		int64_t v[2] = {0, 0};
		sqlite3_stmt *st = q_prepare(&q, "SELECT count(DISTINCT lock_id) FROM temp.lp_rwa");
		rc = st ? q_run(&q, st, ints_row, v) : -EIO;
		r->n_locks = v[0];
		rc = rc ? rc : rows_prepare(&q, !(flags & LP_LOCKS_NOFOLD));
		rc = rc ? rc : lock_rows(&q, r);
	}
	rc = rc ? rc : locks_detail(&q, r, flags);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory while analyzing locks");
	return rc;
}

static void threads_free(struct lp_lock_thread *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].name);
	free(t);
}

void lp_lock_report_free(struct lp_lock_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct lp_lock_row *l = &r->locks[i];
		free(l->name);
		free(l->symbol);
		free(l->module);
		free(l->kind);
		free(l->process);
		free(l->holder_stage);
		free(l->hold_site);
		free(l->hold_stage);
		for (size_t j = 0; j < l->n_py_holders; j++) {
			free(l->py_holders[j].function);
			free(l->py_holders[j].file);
		}
		free(l->py_holders);
		for (size_t j = 0; j < l->n_sites; j++)
			site_free(&l->sites[j]);
		free(l->sites);
		threads_free(l->waiters, l->n_waiters);
		threads_free(l->owners, l->n_owners);
	}
	free(r->locks);
	memset(r, 0, sizeof(*r));
}
