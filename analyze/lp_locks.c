/* SPDX-License-Identifier: MIT */
/* Lock contention analysis (see lp_locks.h for what the numbers mean). */
#define _GNU_SOURCE
#include "lp_locks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_stats.h"

struct lp_q {
	sqlite3 *db;
	char *err;
	size_t errlen;
};

static sqlite3_stmt *lp_q_prepare(struct lp_q *q, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(q->err, q->errlen, "database error: %s", sqlite3_errmsg(q->db));
		return NULL;
	}
	return st;
}

/* Finish a statement stepped to the end: SQLITE_DONE is success. */
static int lp_q_done(struct lp_q *q, sqlite3_stmt *st, int rc)
{
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		snprintf(q->err, q->errlen, "database error: %s", sqlite3_errmsg(q->db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	return 0;
}

/* strdup of a text column; *oom set when a non-NULL value cannot be copied. */
static char *lp_col_str(sqlite3_stmt *st, int i, int *oom)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	if (!s)
		return NULL;
	char *d = strdup((const char *)s);
	if (!d)
		*oom = 1;
	return d;
}

/* ---- run totals ------------------------------------------------------- */

static int lp_thread_time(struct lp_q *q, struct lp_lock_report *r)
{
	sqlite3_stmt *st = lp_q_prepare(
		q, "SELECT count(*), COALESCE(SUM(CASE WHEN e > s THEN e - s END), 0) FROM "
		   "(SELECT COALESCE(t.start_ns, p.start_ns) AS s, COALESCE(t.end_ns, p.end_ns) AS e "
		   "FROM threads t JOIN processes p ON p.id = t.process_id)");
	if (!st)
		return -EIO;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		r->n_threads = sqlite3_column_int64(st, 0);
		r->thread_time_ns = sqlite3_column_int64(st, 1);
	}
	if (lp_q_done(q, st, rc))
		return -EIO;
	r->thread_time_basis = "threads";
	if (r->thread_time_ns > 0)
		return 0;
	st = lp_q_prepare(q, "SELECT COALESCE(SUM(end_ns - start_ns), 0) FROM processes "
			     "WHERE end_ns > start_ns");
	if (!st)
		return -EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		r->thread_time_ns = sqlite3_column_int64(st, 0);
	r->thread_time_basis = "processes";
	return lp_q_done(q, st, rc);
}

static int lp_wait_totals(struct lp_q *q, const char *table, long long *n, int64_t *ns)
{
	char sql[128];
	*n = 0;
	*ns = 0;
	if (!lp_db_has_table(q->db, table))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT count(*), COALESCE(SUM(dur_ns), 0) FROM %s", table);
	sqlite3_stmt *st = lp_q_prepare(q, sql);
	if (!st)
		return -EIO;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*n = sqlite3_column_int64(st, 0);
		*ns = sqlite3_column_int64(st, 1);
	}
	return lp_q_done(q, st, rc);
}

/* ---- one lock --------------------------------------------------------- */

static int lp_lock_percentiles(struct lp_q *q, struct lp_lock_row *l)
{
	double *v = malloc((size_t)(l->count > 0 ? l->count : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	sqlite3_stmt *st =
		lp_q_prepare(q, "SELECT dur_ns FROM lock_waits WHERE lock_id = ? ORDER BY dur_ns");
	if (!st) {
		free(v);
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, l->id);
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < (size_t)l->count)
		v[n++] = (double)sqlite3_column_int64(st, 0);
	if (n) { /* ns fit a double exactly below 2^53 (104 days) */
		l->p50_ns = (int64_t)lp_quantile_nearest(v, n, 0.50);
		l->p99_ns = (int64_t)lp_quantile_nearest(v, n, 0.99);
	}
	free(v);
	return lp_q_done(q, st, rc);
}

static char *lp_site_where(const struct lp_lock_site *s)
{
	char *w = NULL;
	int n;
	if (s->function && s->file)
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

static void lp_site_free(struct lp_lock_site *s)
{
	free(s->where);
	free(s->function);
	free(s->file);
	free(s->module);
}

/* Every site of the lock by total wait; the most frequent one (by count)
 * names heap locks, so the cut to top N happens after it is known. */
static int lp_lock_sites(struct lp_q *q, struct lp_lock_row *l, int top, size_t *most_frequent)
{
	sqlite3_stmt *st = lp_q_prepare(
		q, "SELECT f.function, f.file, f.line, f.module, f.offset, count(*), SUM(w.dur_ns) "
		   "FROM lock_waits w LEFT JOIN stacks s ON s.id = w.stack_id "
		   "LEFT JOIN frames f ON f.id = s.top_frame WHERE w.lock_id = ? "
		   "GROUP BY s.top_frame ORDER BY 7 DESC, 6 DESC");
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, l->id);
	size_t cap = 0;
	int rc, oom = 0;
	*most_frequent = 0;
	while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (l->n_sites == cap) {
			cap = cap ? 2 * cap : 8;
			void *n = realloc(l->sites, cap * sizeof(*l->sites));
			if (!n) {
				oom = 1;
				break;
			}
			l->sites = n;
		}
		struct lp_lock_site *s = &l->sites[l->n_sites++];
		memset(s, 0, sizeof(*s));
		s->function = lp_col_str(st, 0, &oom);
		s->file = lp_col_str(st, 1, &oom);
		s->line = sqlite3_column_int(st, 2);
		s->module = lp_col_str(st, 3, &oom);
		s->offset = (uint64_t)sqlite3_column_int64(st, 4);
		s->count = sqlite3_column_int64(st, 5);
		s->wait_ns = sqlite3_column_int64(st, 6);
		s->where = lp_site_where(s);
		oom |= !s->where;
		if (s->count > l->sites[*most_frequent].count)
			*most_frequent = l->n_sites - 1;
	}
	if (oom) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	l->n_sites_total = l->n_sites;
	return lp_q_done(q, st, rc);
}

static void lp_lock_sites_cut(struct lp_lock_row *l, int top)
{
	while (l->n_sites > (size_t)top)
		lp_site_free(&l->sites[--l->n_sites]);
}

/* Waiters (owner = 0) or owners (owner = 1), by wait time. */
static int lp_lock_threads(struct lp_q *q, struct lp_lock_row *l, int top, int owner)
{
	static const char *const sql[2] = {
		"SELECT t.tid, t.name, count(*), SUM(w.dur_ns) FROM lock_waits w "
		"JOIN threads t ON t.id = w.thread_id WHERE w.lock_id = ?1 "
		"GROUP BY w.thread_id ORDER BY 4 DESC, 3 DESC LIMIT ?2",
		"SELECT w.owner_tid, (SELECT t.name FROM threads t JOIN locks k ON "
		"k.process_id = t.process_id WHERE k.id = ?1 AND t.tid = w.owner_tid "
		"ORDER BY t.start_ns DESC LIMIT 1), count(*), SUM(w.dur_ns) FROM lock_waits w "
		"WHERE w.lock_id = ?1 AND w.owner_tid IS NOT NULL "
		"GROUP BY w.owner_tid ORDER BY 4 DESC, 3 DESC LIMIT ?2",
	};
	struct lp_lock_thread **arr = owner ? &l->owners : &l->waiters;
	size_t *n = owner ? &l->n_owners : &l->n_waiters;
	*arr = calloc((size_t)top, sizeof(**arr));
	if (!*arr)
		return -ENOMEM;
	sqlite3_stmt *st = lp_q_prepare(q, sql[owner]);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, l->id);
	sqlite3_bind_int(st, 2, top);
	int rc, oom = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < (size_t)top) {
		struct lp_lock_thread *t = &(*arr)[(*n)++];
		t->tid = sqlite3_column_int(st, 0);
		t->name = lp_col_str(st, 1, &oom);
		t->count = sqlite3_column_int64(st, 2);
		t->wait_ns = sqlite3_column_int64(st, 3);
	}
	if (oom) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	return lp_q_done(q, st, rc);
}

static int lp_owner_unknown(struct lp_q *q, struct lp_lock_row *l)
{
	sqlite3_stmt *st = lp_q_prepare(
		q, "SELECT count(*) FROM lock_waits WHERE lock_id = ? AND owner_tid IS NULL");
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, l->id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		l->owner_unknown = sqlite3_column_int64(st, 0);
	return lp_q_done(q, st, rc);
}

static int lp_lock_name(struct lp_lock_row *l, size_t most_frequent)
{
	int n;
	if (l->symbol)
		n = asprintf(&l->name, "%s", l->symbol);
	else if (l->n_sites)
		n = asprintf(&l->name, "0x%" PRIx64 " (heap) at %s", l->address,
			     l->sites[most_frequent].where);
	else
		n = asprintf(&l->name, "0x%" PRIx64 " (heap)", l->address);
	return n < 0 ? -ENOMEM : 0;
}

static int lp_lock_detail(struct lp_q *q, struct lp_lock_report *r, struct lp_lock_row *l)
{
	size_t most_frequent;
	int rc = lp_lock_percentiles(q, l);
	rc = rc ? rc : lp_lock_sites(q, l, r->top, &most_frequent);
	rc = rc ? rc : lp_lock_name(l, most_frequent);
	if (rc)
		return rc;
	lp_lock_sites_cut(l, r->top);
	rc = lp_owner_unknown(q, l);
	rc = rc ? rc : lp_lock_threads(q, l, r->top, 0);
	rc = rc ? rc : lp_lock_threads(q, l, r->top, 1);
	l->mean_ns = l->count ? (double)l->total_ns / (double)l->count : 0;
	l->share = r->thread_time_ns > 0 ? (double)l->total_ns / (double)r->thread_time_ns : 0;
	return rc;
}

/* ---- the report ------------------------------------------------------- */

static int lp_lock_rows(struct lp_q *q, struct lp_lock_report *r)
{
	sqlite3_stmt *st = lp_q_prepare(
		q, "SELECT l.id, l.address, l.kind, l.name, l.module, p.pid, p.exe, count(*), "
		   "SUM(w.dur_ns), MAX(w.dur_ns), SUM((w.flags & 1) != 0) "
		   "FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
		   "JOIN processes p ON p.id = l.process_id "
		   "GROUP BY w.lock_id ORDER BY 9 DESC, l.id LIMIT ?");
	if (!st)
		return -EIO;
	sqlite3_bind_int(st, 1, r->top);
	r->locks = calloc((size_t)r->top, sizeof(*r->locks));
	if (!r->locks) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	int rc, oom = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && r->n < (size_t)r->top) {
		struct lp_lock_row *l = &r->locks[r->n++];
		l->id = sqlite3_column_int64(st, 0);
		l->address = (uint64_t)sqlite3_column_int64(st, 1);
		l->kind = lp_col_str(st, 2, &oom);
		l->symbol = lp_col_str(st, 3, &oom);
		l->module = lp_col_str(st, 4, &oom);
		l->pid = sqlite3_column_int(st, 5);
		l->process = lp_col_str(st, 6, &oom);
		l->count = sqlite3_column_int64(st, 7);
		l->total_ns = sqlite3_column_int64(st, 8);
		l->max_ns = sqlite3_column_int64(st, 9);
		l->timeouts = sqlite3_column_int64(st, 10);
	}
	if (oom) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	return lp_q_done(q, st, rc);
}

int lp_locks_analyze(sqlite3 *db, int top, struct lp_lock_report *r, char *err, size_t errlen)
{
	struct lp_q q = {db, err, errlen};
	memset(r, 0, sizeof(*r));
	r->top = top > 0 ? top : 10;
	int rc = lp_thread_time(&q, r);
	rc = rc ? rc : lp_wait_totals(&q, "lock_waits", &r->lock_waits, &r->lock_wait_ns);
	rc = rc ? rc : lp_wait_totals(&q, "cond_waits", &r->cond_waits, &r->cond_wait_ns);
	if (!rc && lp_db_has_table(db, "lock_waits")) {
		sqlite3_stmt *st = lp_q_prepare(&q, "SELECT count(DISTINCT lock_id) FROM lock_waits");
		int s = st ? sqlite3_step(st) : SQLITE_ERROR;
		if (s == SQLITE_ROW)
			r->n_locks = sqlite3_column_int64(st, 0);
		rc = st ? lp_q_done(&q, st, s) : -EIO;
		rc = rc ? rc : lp_lock_rows(&q, r);
	}
	for (size_t i = 0; rc == 0 && i < r->n; i++)
		rc = lp_lock_detail(&q, r, &r->locks[i]);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory while analyzing locks");
	return rc;
}

static void lp_threads_free(struct lp_lock_thread *t, size_t n)
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
		for (size_t j = 0; j < l->n_sites; j++)
			lp_site_free(&l->sites[j]);
		free(l->sites);
		lp_threads_free(l->waiters, l->n_waiters);
		lp_threads_free(l->owners, l->n_owners);
	}
	free(r->locks);
	memset(r, 0, sizeof(*r));
}
