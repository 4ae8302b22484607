/* SPDX-License-Identifier: MIT */
/*
 * Request/stage model over the ranges table. Data flow:
 *   ranges (one rowid-ordered scan, lp_rset.c) -> requests + stage
 *   instances in CSR order per request -> per-request stage times ->
 *   percentiles by selection, category time by prefix-sum interval sets
 *   (lp_ivset.c). The category providers are listed here; the CPU-counter
 *   columns are lp_breakdown_counters.c's.
 */
#include "lp_breakdown.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_breakdown_work.h"
#include "lp_cuda.h" /* CUDA category providers */
#include "lp_db.h"
#include "lp_map.h"
#include "lp_nvtx_db.h"
#include "lp_progress.h"
#include "lp_util.h"
#include "lp_waits.h"

/* ---------------------------------------------------------------- categories */

static int load_waits(sqlite3 *db, const char *table, const char *sql, struct lp_ivec *out,
		      char *err, size_t errlen)
{
	if (!lp_db_has_table(db, table))
		return -ENOENT;
	int rc = lp_ivec_from_sql(db, sql, NULL, 0, out, err, errlen);
	if (rc == -EIO)
		snprintf(err, errlen, "database error reading %s: %s", table, sqlite3_errmsg(db));
	return rc;
}

/* load_waits over several tables into one category; a missing table adds
 * nothing. */
static int load_waits_tables(sqlite3 *db, const char *const *table, const char *const *sql,
			     size_t n, struct lp_ivec *out, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		int rc = load_waits(db, table[i], sql[i], out, err, errlen);
		if (rc && rc != -ENOENT)
			return rc;
	}
	return 0;
}

/* Waits of class gil (lp_waits.h), on the GIL's mutex or its condition
 * variable: their own category, named as the findings and the lock table
 * name them, instead of lock wait or cond wait. */
static int load_gil_waits(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	static const char *const sql[] = {
	    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), lock_id "
	    "FROM lock_waits WHERE class = 1",
	    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), "
	    "coalesce(mutex_lock_id, 0) FROM cond_waits WHERE class = 1",
	};
	static const char *const table[] = {"lock_waits", "cond_waits"};
	return load_waits_tables(db, table, sql, ARRAY_SIZE(sql), out, err, errlen);
}

/* Waits of class idle (a worker waiting for work) on a lock or a
 * condition: named as the lock table's classes name them, not lock or
 * cond wait. Inside a request they are rare; outside, in thread time, they
 * are most of an idle pool's life. */
static int load_idle_waits(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	static const char *const sql[] = {
	    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), lock_id "
	    "FROM lock_waits WHERE class = 2",
	    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), 0 "
	    "FROM cond_waits WHERE class = 2",
	};
	static const char *const table[] = {"lock_waits", "cond_waits"};
	return load_waits_tables(db, table, sql, ARRAY_SIZE(sql), out, err, errlen);
}

/* Waits for another thread to end: class join on a lock or a condition,
 * and pthread_join recorded as a blocking call. Its own category, not lock,
 * cond or other wait: inside a request a join is a real wait for another
 * thread's work, and the tail and the findings name it "join wait". */
static int load_join_waits(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	static const char *const sql[] = {
	    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), lock_id "
	    "FROM lock_waits WHERE class = 3",
	    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), 0 "
	    "FROM cond_waits WHERE class = 3",
	    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), 0 "
	    "FROM blocking_calls WHERE call IN " LP_JOIN_CALLS,
	};
	static const char *const table[] = {"lock_waits", "cond_waits", "blocking_calls"};
	return load_waits_tables(db, table, sql, ARRAY_SIZE(sql), out, err, errlen);
}

/* Semaphores and Python locks are recorded as lock_waits too (kind 'sem'):
 * for this split a semaphore is a lock, so they stay in lock wait. The
 * GIL's, idle and join classes have their own categories. */
static int load_lock_waits(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return load_waits(db, "lock_waits",
			  "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), "
			  "lock_id FROM lock_waits WHERE class IS NULL OR class NOT IN (1, 2, 3)",
			  out, err, errlen);
}

struct lw_load {
	struct lp_ivec *waits, *runq;
};

static int lw_row(sqlite3_stmt *st, void *ctx)
{
	struct lw_load *l = ctx;
	int64_t th = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 4);
	int64_t runq = sqlite3_column_int64(st, 5);
	/* as load_lock_waits: the GIL's, idle and join classes are not lock wait */
	int own = sqlite3_column_type(st, 6) == SQLITE_NULL || sqlite3_column_int64(st, 6) < 1 ||
		  sqlite3_column_int64(st, 6) > 3;
	if (own && lp_ivec_push(l->waits, th, sqlite3_column_int64(st, 1),
				sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)))
		return -ENOMEM;
	return runq > 0 && lp_ivec_push(l->runq, th, end - runq, end, 0) ? -ENOMEM : 0;
}

/* load_lock_waits and load_runq's part of lock_waits in one pass: the
 * table is most of a recording's rows. */
static int load_lock_waits_runq(sqlite3 *db, struct lp_ivec *out, struct lp_ivec *runq, char *err,
				size_t errlen)
{
	struct lw_load l = {out, runq};
	if (!lp_db_has_table(db, "lock_waits"))
		return -ENOENT;
	lp_db_progress(db, "reading lock waits", "lock_waits");
	int rc =
	    lp_db_query(db,
			"SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), "
			"lock_id, start_ns + dur_ns, runq_ns, class FROM lock_waits",
			NULL, 0, lw_row, &l, err, errlen);
	lp_progress_end();
	if (rc == -EIO)
		snprintf(err, errlen, "database error reading lock_waits: %s", sqlite3_errmsg(db));
	return rc;
}

static int load_cond_waits(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return load_waits(db, "cond_waits",
			  "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), 0 "
			  "FROM cond_waits WHERE class IS NULL OR class NOT IN (1, 2, 3)",
			  out, err, errlen);
}

struct lock_name {
	char *buf;
	size_t len;
};

static int lock_name_row(sqlite3_stmt *st, void *ctx)
{
	struct lock_name *d = ctx;
	const char *name = (const char *)sqlite3_column_text(st, 0);
	if (name && *name)
		snprintf(d->buf, d->len, "%s", name);
	else
		snprintf(d->buf, d->len, "%s@0x%" PRIx64,
			 sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1)
						    : "lock",
			 (uint64_t)sqlite3_column_int64(st, 2));
	return 0;
}

/* "handler.py:42 serve_one": a Python call site (docs/python.md). */
static int py_site_row(sqlite3_stmt *st, void *ctx)
{
	struct lock_name *d = ctx;
	const char *file = (const char *)sqlite3_column_text(st, 0);
	const char *fn = (const char *)sqlite3_column_text(st, 2);
	const char *base = file && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	snprintf(d->buf, d->len, "%s:%d %s", base ? base : "?", sqlite3_column_int(st, 1),
		 fn ? fn : "?");
	return 0;
}

/* A lock no symbol names is named by its most frequent Python call site,
 * where its waits have Python frames. */
static const char *describe_lock(sqlite3 *db, int64_t id, char *buf, size_t len)
{
	struct lock_name d = {buf, len};
	struct lp_db_arg a = LP_DB_INT(id);
	char site[256];
	struct lock_name p = {site, sizeof(site)};
	if (lp_db_int_args(db, "SELECT name IS NULL FROM locks WHERE id = ?", &a, 1, 0) &&
	    lp_db_has_table(db, "py_waits") &&
	    lp_db_lookup(db,
			 "SELECT f.file, f.line, f.function FROM lock_waits w JOIN py_waits pw ON "
			 "pw.thread_id = w.thread_id AND pw.start_ns = w.start_ns JOIN py_stacks s "
			 "ON s.id = pw.py_stack_id JOIN py_frames f ON f.id = s.site_frame WHERE "
			 "w.lock_id = ? GROUP BY f.id ORDER BY count(*) DESC, f.id LIMIT 1",
			 &a, 1, py_site_row, &p)) {
		snprintf(buf, len, "Python lock at %s", site);
		return buf;
	}
	return lp_db_lookup(db, "SELECT name, kind, address FROM locks WHERE id = ?", &a, 1,
			    lock_name_row, &d)
		   ? buf
		   : NULL;
}

/* Blocking calls by their category column (docs/schema.md, blocking_calls);
 * the key is the call's stack, which names the call site in tail attribution. */
#define LP_LOAD_BLOCK(fn, category)                                                                \
	static int fn(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)                  \
	{                                                                                          \
		return load_waits(                                                                 \
		    db, "blocking_calls",                                                          \
		    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), "       \
		    "coalesce(stack_id, 0) FROM blocking_calls WHERE category = '" category        \
		    "' AND call NOT IN " LP_JOIN_CALLS,                                            \
		    out, err, errlen);                                                             \
	}
LP_LOAD_BLOCK(load_sleep, "sleep")
LP_LOAD_BLOCK(load_file_io, "file_io")
LP_LOAD_BLOCK(load_socket_io, "socket_io")
LP_LOAD_BLOCK(load_poll_wait, "poll_wait")
LP_LOAD_BLOCK(load_other_block, "other_block")
#undef LP_LOAD_BLOCK

/*
 * Run queue: each wait's last runq_ns (the wake-up's wait for a CPU comes
 * after the sleep; a call preempted without sleeping was runnable
 * throughout its tail too). The category loaders above end each wait
 * before it, and the split counts it as preempted: measured, beside the
 * preempted time that task-clock leaves of the rest.
 */
static int load_runq(sqlite3 *db, struct lp_ivec *out, int with_locks, char *err, size_t errlen)
{
	static const char *const sql[] = {
	    "SELECT thread_id, start_ns + dur_ns - runq_ns, start_ns + dur_ns, 0 FROM lock_waits "
	    "WHERE runq_ns > 0",
	    "SELECT thread_id, start_ns + dur_ns - runq_ns, start_ns + dur_ns, 0 FROM cond_waits "
	    "WHERE runq_ns > 0",
	    "SELECT thread_id, start_ns + dur_ns - runq_ns, start_ns + dur_ns, 0 FROM "
	    "blocking_calls WHERE runq_ns > 0",
	};
	static const char *const table[] = {"lock_waits", "cond_waits", "blocking_calls"};
	for (size_t i = with_locks ? 0 : 1; i < ARRAY_SIZE(sql); i++) {
		int rc = load_waits(db, table[i], sql[i], out, err, errlen);
		if (rc && rc != -ENOENT)
			return rc;
	}
	return 0;
}

struct site_desc {
	char *buf;
	size_t len;
};

/* "call on kind in fn" from columns i, i + 1 and i + 2. */
static int site_row_at(sqlite3_stmt *st, int i, struct site_desc *d)
{
	const char *call = (const char *)sqlite3_column_text(st, i);
	const char *kind = (const char *)sqlite3_column_text(st, i + 1);
	const char *fn = (const char *)sqlite3_column_text(st, i + 2);
	snprintf(d->buf, d->len, "%s%s%s%s%s", call ? call : "?", kind ? " on " : "",
		 kind ? kind : "", fn ? " in " : "", fn ? fn : "");
	return 0;
}

static int site_row(sqlite3_stmt *st, void *ctx)
{
	return site_row_at(st, 0, ctx);
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
	if (lp_db_has_table(db, "py_waits")) /* "recv on socket in handler.py:42 serve_one" */
		lp_db_each(
		    db,
		    "SELECT b.call, b.fd_kind, (SELECT substr(f.file, length(rtrim(f.file, "
		    "replace(f.file, '/', ''))) + 1) || ':' || f.line || ' ' || f.function "
		    "FROM py_waits pw JOIN py_stacks s ON s.id = pw.py_stack_id JOIN "
		    "py_frames f ON f.id = s.site_frame WHERE pw.thread_id = b.thread_id AND "
		    "pw.start_ns = b.start_ns) AS py FROM blocking_calls b WHERE "
		    "b.stack_id = ?1 AND py IS NOT NULL LIMIT 1",
		    &arg, 1, site_row, &d, err, sizeof(err));
	if (buf[0])
		return buf;
	lp_db_each(db,
		   "SELECT b.call, b.fd_kind, f.function FROM blocking_calls b "
		   "LEFT JOIN stacks s ON s.id = b.stack_id LEFT JOIN frames f ON f.id = "
		   "s.top_frame WHERE b.stack_id = ?1 LIMIT 1", /* the first is enough */
		   &arg, 1, site_row, &d, err, sizeof(err));
	return buf[0] ? buf : NULL;
}

/* Order is precedence: a poll inside cudaStreamSynchronize is CUDA time. */
#define ROWS_LC (LP_BREAKDOWN_ROWS_LOCK | LP_BREAKDOWN_ROWS_COND)
const struct lp_breakdown_category lp_breakdown_categories[] = {
    {"gil_wait", "GIL wait", load_gil_waits, describe_lock, ROWS_LC},
    {"lock_wait", "lock wait", load_lock_waits, describe_lock, LP_BREAKDOWN_ROWS_LOCK},
    {"cond_wait", "cond wait", load_cond_waits, NULL, LP_BREAKDOWN_ROWS_COND},
    {"idle_wait", "idle wait", load_idle_waits, describe_lock, ROWS_LC},
    {"join_wait", "join wait", load_join_waits, NULL, ROWS_LC | LP_BREAKDOWN_ROWS_BLOCK},
    {"sync_wait", "sync wait", lp_cuda_load_sync_wait, NULL, LP_BREAKDOWN_ROWS_CUDA},
    {"cuda_api", "CUDA API", lp_cuda_load_api, NULL, LP_BREAKDOWN_ROWS_CUDA},
    {"gpu_kernel", "GPU kernel", lp_cuda_load_gpu_kernel, NULL, 0},
    {"gpu_memcpy", "GPU memcpy", lp_cuda_load_gpu_memcpy, NULL, 0},
    {"sleep", "sleep", load_sleep, describe_site, LP_BREAKDOWN_ROWS_BLOCK},
    {"file_io", "file I/O", load_file_io, describe_site, LP_BREAKDOWN_ROWS_BLOCK},
    {"socket_io", "socket I/O", load_socket_io, describe_site, LP_BREAKDOWN_ROWS_BLOCK},
    {"poll_wait", "poll wait", load_poll_wait, describe_site, LP_BREAKDOWN_ROWS_BLOCK},
    {"other_block", "other wait", load_other_block, describe_site, LP_BREAKDOWN_ROWS_BLOCK},
};
#undef ROWS_LC
const size_t lp_breakdown_ncategories = ARRAY_SIZE(lp_breakdown_categories);

static void cats_free(struct lp_breakdown_cats *c)
{
	for (int k = 0; k < c->n; k++) {
		lp_ivset_free(&c->set[k]);
		lp_ivec_free(&c->raw[k]);
	}
	lp_ivset_free(&c->runq);
}

static int cats_load(sqlite3 *db, struct lp_breakdown_cats *c, char *err, size_t errlen)
{
	struct lp_ivset claimed = {0};
	struct lp_ivec runq = {0};
	int rc = 0, lw_done = 0;
	memset(c, 0, sizeof(*c));
	c->n = (int)lp_breakdown_ncategories;
	for (int k = 0; k < c->n && !rc; k++) {
		const struct lp_breakdown_category *cat = &lp_breakdown_categories[k];
		if (cat->load == load_lock_waits) {
			rc = load_lock_waits_runq(db, &c->raw[k], &runq, err, errlen);
			lw_done = rc != -ENOENT;
		} else {
			rc = cat->load(db, &c->raw[k], err, errlen);
		}
		if (rc == -ENOENT)
			rc = 0;
		if (!rc)
			rc = lp_ivset_build(&c->raw[k], &claimed, &c->set[k]);
		if (!rc) {
			struct lp_ivset u;
			rc = lp_ivset_union(&claimed, &c->set[k], &u);
			lp_ivset_free(&claimed);
			claimed = u;
		}
		if (!cat->describe)
			lp_ivec_free(&c->raw[k]);
	}
	if (!rc)
		rc = load_runq(db, &runq, !lw_done, err, errlen);
	if (!rc)
		rc = lp_ivset_build(&runq, &claimed, &c->runq);
	lp_ivec_free(&runq);
	lp_ivset_free(&claimed);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory loading wait intervals");
	return rc;
}

/* Per-category time of [s, e) on thread t; slot n = cpu (the rest), slot
 * n + LP_BREAKDOWN_PREEMPTED = the waits' run-queue time. Categories whose bit is
 * clear in `maybe` (bit n: run queue) are known to be 0 there (the
 * enclosing request has none of them): most stages skip every lookup. */
static void cats_split_some(const struct lp_breakdown_cats *c, int64_t t, int64_t s, int64_t e,
			    int64_t *acc, uint32_t maybe)
{
	int64_t rest = e - s;
	for (int k = 0; k <= c->n; k++) {
		if (!(maybe & (1u << k)))
			continue;
		const struct lp_ivset *set = k < c->n ? &c->set[k] : &c->runq;
		int64_t o = lp_ivset_overlap(set, t, s, e);
		acc[k < c->n ? k : c->n + LP_BREAKDOWN_PREEMPTED] += o;
		rest -= o;
	}
	acc[c->n] += rest > 0 ? rest : 0;
}

static void cats_split(const struct lp_breakdown_cats *c, int64_t t, int64_t s, int64_t e,
		       int64_t *acc)
{
	cats_split_some(c, t, s, e, acc, ~0u);
}

/* Bits of the categories with time in acc (cpu excluded). */
static uint32_t cats_present(const struct lp_breakdown_cats *c, const int64_t *acc)
{
	uint32_t m = 0;
	for (int k = 0; k < c->n; k++)
		m |= acc[k] ? 1u << k : 0;
	return m | (acc[c->n + LP_BREAKDOWN_PREEMPTED] ? 1u << c->n : 0);
}

/* ---------------------------------------------------------------- requests */

static int key_matches(const struct lp_rkey *k, const char *req)
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

static const struct lp_rset *key_cmp_rs;

static int key_cmp(const void *a, const void *b)
{
	const struct lp_rkey *x = &key_cmp_rs->keys[*(const size_t *)a];
	const struct lp_rkey *y = &key_cmp_rs->keys[*(const size_t *)b];
	int c = strcmp(x->domain, y->domain);
	c = c ? c : strcmp(x->name, y->name);
	return c ? c
		 : (*(const size_t *)a > *(const size_t *)b) -
		       (*(const size_t *)a < *(const size_t *)b);
}

/* grp[k]: the first key (lowest index) with k's domain and name. */
static void key_groups(const struct lp_rset *rs, size_t *grp)
{
	size_t *idx = malloc((rs->nkeys + 1) * sizeof(*idx));
	for (size_t k = 0; k < rs->nkeys; k++)
		grp[k] = k;
	if (!idx) /* out of memory: each key alone, as before names were grouped */
		return;
	for (size_t k = 0; k < rs->nkeys; k++)
		idx[k] = k;
	key_cmp_rs = rs;
	qsort(idx, rs->nkeys, sizeof(*idx), key_cmp);
	for (size_t i = 1; i < rs->nkeys; i++) {
		const struct lp_rkey *x = &rs->keys[idx[i - 1]], *y = &rs->keys[idx[i]];
		if (!strcmp(x->domain, y->domain) && !strcmp(x->name, y->name))
			grp[idx[i]] = grp[idx[i - 1]];
	}
	free(idx);
}

/* Marks request keys in isreq[]; returns how many keys match. */
static int pick_request(const struct lp_rset *rs, const char *req, uint8_t *isreq, int64_t *rootcnt)
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
	size_t *grp = malloc((rs->nkeys + 1) * sizeof(*grp));
	if (!tot || !grp) {
		free(tot);
		free(grp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].parent < 0 && rs->r[i].depth == 0) {
			rootcnt[rs->r[i].key]++;
			tot[rs->r[i].key] += rs->r[i].end - rs->r[i].start;
		}
	/* One name may be several keys (an imported capture's processes each
	 * name it): the request is the name, counted over all of them, as
	 * --request NAME and the rules count it. */
	int64_t *gcnt = calloc(rs->nkeys, sizeof(*gcnt)), *gtot = calloc(rs->nkeys, sizeof(*gtot));
	if (!gcnt || !gtot) {
		free(tot);
		free(grp);
		free(gcnt);
		free(gtot);
		return -ENOMEM;
	}
	key_groups(rs, grp);
	for (size_t k = 0; k < rs->nkeys; k++) {
		gcnt[grp[k]] += rootcnt[k];
		gtot[grp[k]] += tot[k];
	}
	ptrdiff_t best = -1;
	for (size_t k = 0; k < rs->nkeys; k++) {
		size_t g = grp[k], b = best < 0 ? 0 : grp[best];
		if (rootcnt[k] &&
		    (best < 0 || gcnt[g] > gcnt[b] || (gcnt[g] == gcnt[b] && gtot[g] > gtot[b])))
			best = (ptrdiff_t)k;
	}
	for (size_t k = 0; best >= 0 && k < rs->nkeys; k++)
		if (grp[k] == grp[best]) {
			isreq[k] = 1;
			found++;
		}
	free(tot);
	free(grp);
	free(gcnt);
	free(gtot);
	return found;
}

static void bd_free(struct lp_breakdown_work *b)
{
	lp_rset_free(&b->rs);
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

static int32_t ancestor(const struct lp_rset *rs, int32_t i, int levels)
{
	while (levels-- > 0 && i >= 0)
		i = rs->r[i].parent;
	return i;
}

static int cmp_start_idx(const struct lp_rset *rs, int32_t a, int32_t b)
{
	return rs->r[a].start > rs->r[b].start;
}

/* Requests, then stage instances grouped per request (counting sort). */
static int bd_index(struct lp_breakdown_work *b, const uint8_t *isreq)
{
	struct lp_rset *rs = &b->rs;
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
static void clip(const struct lp_rset *rs, int32_t q, int32_t i, int64_t *s, int64_t *e)
{
	*s = rs->r[i].start > rs->r[q].start ? rs->r[i].start : rs->r[q].start;
	*e = rs->r[i].end < rs->r[q].end ? rs->r[i].end : rs->r[q].end;
	if (*e < *s)
		*e = *s;
}

/* Time of request r in each slot (acc[nslot] = unattributed); returns 1 when
 * stages overlap. acc must be zeroed, nslot + 1 wide. */
static int req_stage_times(const struct lp_breakdown_work *b, size_t r, int64_t *acc)
{
	const struct lp_rset *rs = &b->rs;
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
static void req_slot_cats(const struct lp_breakdown_work *b, size_t r, size_t slot, int64_t *cat)
{
	const struct lp_rset *rs = &b->rs;
	int32_t q = b->req[r];
	int64_t all[LP_BREAKDOWN_MAXCAT] = {0}, st[LP_BREAKDOWN_MAXCAT] = {0};
	int nc = b->cats.n + 1 + LP_BREAKDOWN_PREEMPTED; /* through the run queue's slot */
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
		int64_t *k2 = lp_grow(ks->key, &c0, ks->n + 1, sizeof(int64_t));
		ks->key = k2 ? k2 : ks->key;
		double *s0 = lp_grow(ks->sum[0], &c1, ks->n + 1, sizeof(double));
		ks->sum[0] = s0 ? s0 : ks->sum[0];
		double *s1 = lp_grow(ks->sum[1], &c2, ks->n + 1, sizeof(double));
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
static int tail_key(struct lp_breakdown_work *b, size_t slot, int cat, struct lp_breakdown_tail *t)
{
	const struct lp_rset *rs = &b->rs;
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
		    lp_breakdown_categories[cat].describe(b->db, ks.key[best], buf, sizeof(buf));
		t->has_key = 1;
		t->key_site = lp_breakdown_categories[cat].describe == describe_site;
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

/* The tail stage's per-request means, tail (m[0]) and median (m[1]), over
 * the final categories: the providers, then the rest split by the stage's
 * on-CPU share in each group into on-CPU and preempted (with the waits'
 * run-queue parts), or left unsplit without task-clock beside the measured
 * run-queue time, as bd_row_split splits a stage row. */
static void tail_split(const struct lp_breakdown_tail *t, int p, double m[2][LP_BREAKDOWN_MAXCAT])
{
	for (int g = 0; g < 2; g++) {
		double rest = m[g][p], runq = m[g][p + LP_BREAKDOWN_PREEMPTED];
		double on = t->has_cnt ? fmin((g ? t->oncpu_mid * t->stage_mid_ns
						 : t->oncpu_tail * t->stage_tail_ns),
					      rest)
				       : 0;
		m[g][p + LP_BREAKDOWN_ONCPU] = on;
		m[g][p + LP_BREAKDOWN_PREEMPTED] = runq + (t->has_cnt ? rest - on : 0);
		m[g][p + LP_BREAKDOWN_UNSPLIT] = t->has_cnt ? 0 : rest;
	}
}

/* Tail (>= p99) against the middle (p40..p60): the stage that grows most,
 * the category that grows most inside it, and what it waited on. */
static int bd_tail(struct lp_breakdown_work *b, int64_t p40, int64_t p60, int64_t p99,
		   struct lp_breakdown_tail *t)
{
	size_t ns = b->nslot + 1;
	int nc = b->cats.n + 1 + LP_BREAKDOWN_PREEMPTED; /* through the run queue's slot */
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
	double cs[2][LP_BREAKDOWN_MAXCAT] = {{0}};
	for (size_t r = 0; r < b->nreq; r++) {
		if (!b->tag[r])
			continue;
		int64_t cat[LP_BREAKDOWN_MAXCAT] = {0};
		req_slot_cats(b, r, (size_t)t->stage, cat);
		for (int k = 0; k < nc; k++)
			cs[b->tag[r] == 2 ? 0 : 1][k] += (double)cat[k];
	}
	for (int k = 0; k < nc; k++) {
		cs[0][k] /= (double)t->n_tail;
		cs[1][k] /= (double)t->n_mid;
	}
	lp_breakdown_counters_tail(b, t);
	tail_split(t, b->cats.n, cs);
	bestg = -1;
	for (int k = 0; k < b->cats.n + LP_BREAKDOWN_NREST; k++) {
		double g = cs[0][k] - cs[1][k];
		t->cat_growth_ns[k] = g;
		if (g > bestg) {
			bestg = g;
			t->cat = k;
			t->cat_tail_ns = cs[0][k];
			t->cat_mid_ns = cs[1][k];
		}
	}
	/* descheduled: the growth is CPU or preempted time, yet the on-CPU
	 * share fell (lp_breakdown_counters_tail read the share) */
	t->descheduled &= t->cat == b->cats.n + LP_BREAKDOWN_ONCPU ||
			  t->cat == b->cats.n + LP_BREAKDOWN_PREEMPTED;
	int rc = 0;
	for (int k = 0; k < b->cats.n && !rc; k++) {
		if (!lp_breakdown_categories[k].describe || !b->cats.raw[k].n)
			continue;
		if (k == t->cat) {
			rc = tail_key(b, (size_t)t->stage, k, t);
		} else if (t->cat_growth_ns[k] >= 0.2 * (t->stage_tail_ns - t->stage_mid_ns)) {
			struct lp_breakdown_tail o = {.n_tail = t->n_tail, .n_mid = t->n_mid};
			rc = tail_key(b, (size_t)t->stage, k, &o);
			t->cat_key_name[k] = o.key_name;
		}
	}
	return rc;
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
static int bd_stages(struct lp_breakdown_work *b, struct lp_breakdown *out, size_t *pos_of_slot)
{
	size_t ns = b->nslot + 1;
	int nc = b->cats.n + 1 + LP_BREAKDOWN_PREEMPTED; /* through the run queue's slot */
	const struct lp_rset *rs = &b->rs;
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
		int64_t rc_[LP_BREAKDOWN_MAXCAT] = {0}, sc[LP_BREAKDOWN_MAXCAT] = {0};
		out->stages_overlap |= req_stage_times(b, r, acc);
		cats_split(&b->cats, rs->r[q].thread, rs->r[q].start, rs->r[q].end, rc_);
		uint32_t maybe = cats_present(&b->cats, rc_);
		for (size_t j = b->off[r]; j < b->off[r + 1]; j++) {
			int32_t i = b->sidx[j];
			size_t slot = (size_t)b->slot_of_key[rs->r[i].key];
			int64_t s, e, tmp[LP_BREAKDOWN_MAXCAT] = {0};
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
			int64_t *v =
			    lp_grow(vals[slot], &vcap[slot], vn[slot] + 1, sizeof(int64_t));
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
		struct lp_breakdown_stage *st = &out->stages[p];
		pos_of_slot[s] = p;
		st->unattributed = s == b->nslot;
		if (st->unattributed) {
			st->domain = strdup("");
			st->name = strdup(LP_BREAKDOWN_UNATTRIBUTED);
		} else {
			const struct lp_rkey *k = &rs->keys[b->key_of_slot[s]];
			st->domain = strdup(k->domain);
			st->name = strdup(k->name);
		}
		if (!st->domain || !st->name)
			goto out;
		st->instances = inst[s];
		lp_dist_of(vals[s], vn[s], &st->st);
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

/* ---------------------------------------------------------------- largest waits */

/* A stretch of one wait category's time on a thread: a piece of the
 * category's interval set, so the time the split gives that category. */
struct big_wait {
	int cat; /* -1: none yet */
	int64_t ns, thread, start;
};

/* The longest stretch of category k inside [s, e) of thread t, if it
 * beats w (the first found wins a tie). */
static void big_wait_span(const struct lp_ivset *set, int k, int64_t t, int64_t s, int64_t e,
			  struct big_wait *w)
{
	for (size_t i = lp_ivset_lower(set, t, s, 1);
	     i < set->n && set->thread[i] == t && set->start[i] < e; i++) {
		int64_t a = set->start[i] > s ? set->start[i] : s;
		int64_t z = set->end[i] < e ? set->end[i] : e;
		if (z - a > w->ns)
			*w = (struct big_wait){k, z - a, t, set->start[i]};
	}
}

/* Request r's largest wait over the spans the split counts for it: the
 * request on its thread, and its stages on other threads. Ties go to the
 * first found (that span order, then category order, then start). */
static struct big_wait big_wait_of(const struct lp_breakdown_work *b, size_t r)
{
	const struct lp_rset *rs = &b->rs;
	struct big_wait w = {.cat = -1};
	int32_t q = b->req[r];
	for (size_t j = b->off[r]; j <= b->off[r + 1]; j++) {
		int64_t t = rs->r[q].thread, s = rs->r[q].start, e = rs->r[q].end;
		if (j < b->off[r + 1]) {
			if (rs->r[b->sidx[j]].thread == t)
				continue; /* inside the request's own span */
			t = rs->r[b->sidx[j]].thread;
			clip(rs, q, b->sidx[j], &s, &e);
		}
		for (int k = 0; k < b->cats.n; k++)
			if (lp_breakdown_categories[k].rows)
				big_wait_span(&b->cats.set[k], k, t, s, e, &w);
	}
	return w;
}

/* Where the wait a stretch lies in began. A thread waits for one thing at
 * a time, so only a category after GPU execution (a blocking call while
 * the thread's kernel ran) or a CUDA call (around the waits inside it)
 * loses the start of a wait to an earlier category; the blocking calls'
 * intervals are kept (raw, for tail attribution) and say where it began,
 * and the CUDA calls' table is searched back from the stretch. */
static int64_t stretch_row_start(const struct lp_breakdown_cats *c, const struct big_wait *bw)
{
	const struct lp_ivec *raw = &c->raw[bw->cat];
	size_t lo = 0, hi = raw->n;
	while (lo < hi) { /* the first interval past (thread, start) */
		size_t mid = lo + (hi - lo) / 2;
		const struct lp_iv *v = &raw->v[mid];
		if (v->thread < bw->thread || (v->thread == bw->thread && v->start <= bw->start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && raw->v[lo - 1].thread == bw->thread && raw->v[lo - 1].end > bw->start)
		return raw->v[lo - 1].start;
	return bw->start;
}

/* The row a stretch lies in, by its thread and start (an index lookup in
 * each of the category's tables; for CUDA, the thread's latest runtime
 * call that began at or before the stretch: runtime calls do not nest). */
struct wait_row {
	int found;
	int64_t start, end, lock; /* lock: lock_waits.lock_id, the GIL's cond_waits.mutex_lock_id */
	char site[512];		  /* the native site, when not a lock's name */
};

static int wait_row_fill(sqlite3_stmt *st, void *ctx)
{
	struct wait_row *w = ctx;
	w->found = 1;
	w->start = sqlite3_column_int64(st, 0);
	w->end = w->start + sqlite3_column_int64(st, 1);
	w->lock = sqlite3_column_int64(st, 2);
	struct site_desc d = {w->site, sizeof(w->site)};
	if (sqlite3_column_count(st) == 6) /* a blocking call: "recv on socket in fn" */
		return site_row_at(st, 3, &d);
	const char *text = (const char *)sqlite3_column_text(st, 3);
	snprintf(w->site, sizeof(w->site), "%s", text ? text : "");
	return 0;
}

static void wait_row_of(sqlite3 *db, const struct lp_breakdown_cats *c, const struct big_wait *bw,
			struct wait_row *w)
{
	const struct lp_breakdown_category *cat = &lp_breakdown_categories[bw->cat];
	static const struct {
		unsigned rows;
		const char *table, *sql;
	} q[] = {
	    {LP_BREAKDOWN_ROWS_LOCK, "lock_waits",
	     "SELECT start_ns, dur_ns, lock_id, NULL FROM lock_waits WHERE start_ns = ?2 AND "
	     "thread_id = ?1 LIMIT 1"},
	    {LP_BREAKDOWN_ROWS_COND, "cond_waits",
	     "SELECT w.start_ns, w.dur_ns, CASE WHEN w.class = 1 THEN w.mutex_lock_id END, "
	     "coalesce(f.function || coalesce(' ' || f.file || ':' || f.line, ''), "
	     "printf('cond 0x%x', w.cond_addr)) FROM cond_waits w LEFT JOIN stacks s ON s.id = "
	     "w.stack_id LEFT JOIN frames f ON f.id = s.top_frame WHERE w.start_ns = ?2 AND "
	     "w.thread_id = ?1 LIMIT 1"},
	    {LP_BREAKDOWN_ROWS_BLOCK, "blocking_calls",
	     "SELECT b.start_ns, b.dur_ns, NULL, b.call, b.fd_kind, f.function FROM "
	     "blocking_calls b LEFT JOIN stacks s ON s.id = b.stack_id LEFT JOIN frames f ON "
	     "f.id = s.top_frame WHERE b.start_ns = ?2 AND b.thread_id = ?1 LIMIT 1"},
	    {LP_BREAKDOWN_ROWS_CUDA, "cuda_api",
	     "SELECT a.start_ns, a.end_ns - a.start_ns, NULL, s.value FROM cuda_api a LEFT "
	     "JOIN strings s ON s.id = a.name_id WHERE a.thread_id = ?1 AND a.start_ns <= ?2 "
	     "AND a.domain = 'runtime' ORDER BY a.start_ns DESC LIMIT 1"},
	};
	struct lp_db_arg a[2] = {LP_DB_INT(bw->thread), LP_DB_INT(stretch_row_start(c, bw))};
	for (size_t i = 0; i < ARRAY_SIZE(q) && !w->found; i++)
		if ((cat->rows & q[i].rows) && lp_db_has_table(db, q[i].table))
			lp_db_lookup(db, q[i].sql, a, 2, wait_row_fill, w);
}

struct py_site {
	struct lp_breakdown_slow *s;
	char *buf;
	size_t len;
};

/* "handler.py:42 serve_one" and the line's text: the lock view's form. */
static int wait_py_row(sqlite3_stmt *st, void *ctx)
{
	struct py_site *x = ctx;
	struct lock_name d = {x->buf, x->len};
	py_site_row(st, &d);
	x->s->wait_python = 1;
	x->s->wait_source = lp_db_col_strdup(st, 3);
	return 0;
}

/* The listed requests' lock names, each described once: a heap lock's
 * name from its Python sites reads all of its waits. */
struct lock_names {
	size_t n;
	int64_t id[LP_BREAKDOWN_NSLOW];
	char name[LP_BREAKDOWN_NSLOW][512];
};

static void lock_names_get(struct lock_names *ln, sqlite3 *db, int64_t id, char *buf, size_t len)
{
	for (size_t i = 0; i < ln->n; i++)
		if (ln->id[i] == id) {
			snprintf(buf, len, "%s", ln->name[i]);
			return;
		}
	if (!describe_lock(db, id, buf, len))
		buf[0] = 0;
	if (ln->n < LP_BREAKDOWN_NSLOW) {
		ln->id[ln->n] = id;
		snprintf(ln->name[ln->n++], sizeof(ln->name[0]), "%s", buf);
	}
}

/* A slowest request's largest wait: its row, and its call site from the
 * Python frames recorded at it (for a CUDA call, at a wait inside it),
 * else from the row. A few keyed lookups per listed request. */
static int slow_wait(sqlite3 *db, const struct lp_breakdown_cats *c, const struct big_wait *bw,
		     struct lock_names *ln, struct lp_breakdown_slow *s)
{
	struct wait_row w = {0};
	char buf[512] = "";
	struct py_site x = {s, buf, sizeof(buf)};
	s->wait_cat = bw->cat;
	s->wait_ns = bw->ns;
	s->wait_thread_id = bw->thread;
	wait_row_of(db, c, bw, &w);
	s->wait_start_ns = w.found ? w.start : bw->start;
	struct lp_db_arg a[3] = {
	    LP_DB_INT(bw->thread), LP_DB_INT(s->wait_start_ns),
	    LP_DB_INT(w.found && w.end > w.start ? w.end : bw->start + bw->ns)};
	if (lp_db_has_table(db, "py_waits"))
		lp_db_lookup(db,
			     "SELECT f.file, f.line, f.function, f.source FROM py_waits pw JOIN "
			     "py_stacks ps ON ps.id = pw.py_stack_id JOIN py_frames f ON f.id = "
			     "ps.site_frame WHERE pw.thread_id = ?1 AND pw.start_ns >= ?2 AND "
			     "pw.start_ns < ?3 ORDER BY pw.start_ns LIMIT 1",
			     a, 3, wait_py_row, &x);
	if (!buf[0] && w.found && w.lock)
		lock_names_get(ln, db, w.lock, buf, sizeof(buf));
	if (!buf[0] && w.found)
		snprintf(buf, sizeof(buf), "%s", w.site);
	if (buf[0] && !(s->wait_site = strdup(buf)))
		return -ENOMEM;
	return 0;
}

static int bd_slowest(struct lp_breakdown_work *b, struct lp_breakdown *out,
		      const size_t *pos_of_slot)
{
	const struct lp_rset *rs = &b->rs;
	size_t top[LP_BREAKDOWN_NSLOW], n = 0, ns = b->nslot + 1;
	for (size_t r = 0; r < b->nreq; r++) {
		if (n == LP_BREAKDOWN_NSLOW && b->dur[r] <= b->dur[top[n - 1]])
			continue;
		size_t i = n < LP_BREAKDOWN_NSLOW ? n++ : n - 1;
		for (; i > 0 && b->dur[top[i - 1]] < b->dur[r]; i--)
			top[i] = top[i - 1];
		top[i] = r;
	}
	int64_t *acc = calloc(ns, sizeof(int64_t));
	struct lock_names ln = {0};
	if (!acc)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct lp_breakdown_slow *s = &out->slow[i];
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
		struct big_wait w = big_wait_of(b, top[i]);
		s->wait_cat = -1;
		if (w.cat >= 0 && slow_wait(b->db, &b->cats, &w, &ln, s)) {
			free(acc);
			return -ENOMEM;
		}
	}
	free(acc);
	/* tids: one small query per listed request */
	for (size_t i = 0; i < out->nslow; i++) {
		struct lp_db_arg id = LP_DB_INT(out->slow[i].thread_id);
		out->slow[i].tid =
		    lp_db_int_args(b->db, "SELECT tid FROM threads WHERE id = ?", &id, 1, 0);
	}
	return 0;
}

struct threads_ctx {
	const struct lp_breakdown_cats *c; /* NULL: keep each thread's life in life[] */
	struct lp_breakdown *out;
	size_t cap;
	int64_t *life; /* [start, end) per thread, for lp_breakdown_threads_stream */
	size_t lcap;
};

static int thread_row(sqlite3_stmt *st, void *ctx)
{
	struct threads_ctx *x = ctx;
	struct lp_breakdown *out = x->out;
	const struct lp_breakdown_cats *c = x->c;
	if (LP_GROW(out->threads, out->nthreads, x->cap))
		return -ENOMEM;
	struct lp_breakdown_thread *t = &out->threads[out->nthreads++];
	memset(t, 0, sizeof(*t));
	t->cpu_ns = -1; /* until bd_split_threads finds its task-clock */
	t->thread_id = sqlite3_column_int64(st, 0);
	t->tid = sqlite3_column_int64(st, 1);
	const char *name = (const char *)sqlite3_column_text(st, 2);
	t->name = strdup(name ? name : "");
	int64_t a = sqlite3_column_int64(st, 3), z = sqlite3_column_int64(st, 4);
	if (!t->name)
		return -ENOMEM;
	t->total_ns = z > a ? z - a : 0;
	out->run_thread_ns += t->total_ns;
	if (!c) {
		if (LP_GROW(x->life, 2 * out->nthreads, x->lcap))
			return -ENOMEM;
		x->life[2 * out->nthreads - 2] = a;
		x->life[2 * out->nthreads - 1] = z;
		return 0;
	}
	if (z > a)
		cats_split(c, t->thread_id, a, z, t->cat_ns);
	for (int k = 0; k <= c->n + LP_BREAKDOWN_PREEMPTED; k++)
		out->run_cat_ns[k] += t->cat_ns[k];
	return 0;
}

/* Whole run per thread: lock wait, cond wait, the rest; from the loaded
 * sets, or (c NULL) from one streaming pass over the waits. */
static int bd_threads(sqlite3 *db, const struct lp_breakdown_cats *c, struct lp_breakdown *out,
		      char *err, size_t errlen)
{
	struct threads_ctx x = {c, out, 0, NULL, 0};
	struct lp_db_arg end = LP_DB_INT(out->run_end_ns);
	int rc = lp_db_query(db,
			     "SELECT t.id, t.tid, t.name, coalesce(t.start_ns, p.start_ns), "
			     "coalesce(t.end_ns, p.end_ns, ?1) FROM threads t "
			     "JOIN processes p ON p.id = t.process_id ORDER BY t.id",
			     &end, 1, thread_row, &x, err, errlen);
	if (rc == -EIO)
		snprintf(err, errlen, "database error reading threads: %s", sqlite3_errmsg(db));
	if (!rc && !c)
		rc = lp_breakdown_threads_stream(db, out, x.life, err, errlen);
	free(x.life);
	return rc;
}

static void threads_reset(struct lp_breakdown *out)
{
	for (size_t i = 0; i < out->nthreads; i++)
		free(out->threads[i].name);
	free(out->threads);
	out->threads = NULL;
	out->nthreads = 0;
	out->run_thread_ns = 0;
	memset(out->run_cat_ns, 0, sizeof(out->run_cat_ns));
}

/* The categories per thread. Without ranges nothing asks the sets of
 * waits anything else: one pass over the waits fills the threads and
 * nothing per wait is kept. With ranges (or rows out of start order) the
 * sets are loaded, for the stages' lookups too. */
static int bd_cats_threads(struct lp_breakdown_work *b, struct lp_breakdown *out, char *err,
			   size_t errlen)
{
	sqlite3 *db = b->db;
	int ranged = lp_db_has_table(db, "ranges") &&
		     lp_db_int(db, "SELECT EXISTS (SELECT 1 FROM ranges)", 0);
	int rc = ranged ? -EAGAIN : bd_threads(db, NULL, out, err, errlen);
	if (rc == -EAGAIN) {
		threads_reset(out);
		rc = cats_load(db, &b->cats, err, errlen);
		if (!rc)
			rc = bd_threads(db, &b->cats, out, err, errlen);
	}
	return rc;
}

/* ---------------------------------------------------------------- the rest */

/* Splits the rest (slot p) of one row: on-CPU = the row's task-clock
 * estimate, at most the rest (task-clock also runs inside waits: a spinning
 * lock, a syscall's own work); preempted = the remainder, plus the waits'
 * run-queue time already in its slot. NAN: no counters. */
static void split_rest(int64_t *cat, int p, double oncpu_ns)
{
	int64_t rest = cat[p], runq = cat[p + LP_BREAKDOWN_PREEMPTED];
	cat[p + LP_BREAKDOWN_UNSPLIT] = isnan(oncpu_ns) ? rest : 0;
	cat[p + LP_BREAKDOWN_ONCPU] =
	    isnan(oncpu_ns) ? 0 : (int64_t)llround(fmin(fmax(oncpu_ns, 0), (double)rest));
	cat[p + LP_BREAKDOWN_PREEMPTED] =
	    runq + (isnan(oncpu_ns) ? 0 : rest - cat[p + LP_BREAKDOWN_ONCPU]);
}

/* Task-clock of a row: its on-CPU share times its time, NAN when unknown. */
static double cnt_oncpu_ns(const struct lp_breakdown *out, const struct lp_breakdown_cnt *c,
			   int64_t time)
{
	double share = c->v[LP_BREAKDOWN_CNT_ONCPU];
	return out->has_counters && c->ranges && !isnan(share) ? share * (double)time : NAN;
}

/* Stages and the request row. (unattributed) has no range of its own, so
 * no task-clock: its rest stays unsplit (the request's minus its stages'
 * task-clock is noise next to so short a time). */
static void bd_split_stages(struct lp_breakdown *out, int p)
{
	for (size_t i = 0; i < out->nstages; i++) {
		struct lp_breakdown_stage *st = &out->stages[i];
		split_rest(st->cat_ns, p,
			   st->unattributed ? NAN : cnt_oncpu_ns(out, &st->cnt, st->st.total));
	}
	split_rest(out->req_cat_ns, p, cnt_oncpu_ns(out, &out->req_cnt, out->req.total));
}

void lp_breakdown_split_runq(int64_t rest, int64_t runq, int64_t task, int64_t delay, int64_t *on,
			     int64_t *out)
{
	int64_t o = delay - runq;
	o = o < 0 ? 0 : o > rest ? rest : o;
	*out = o;
	*on = task < 0 ? 0 : task > rest - o ? rest - o : task;
}

/* A whole thread's rest split by lp_breakdown_split_runq; what neither
 * on-CPU nor preempted covers goes to other_block (ob). */
static void split_rest_runq(int64_t *cat, int p, int ob, int64_t task, int64_t delay)
{
	int64_t rest = cat[p], runq = cat[p + LP_BREAKDOWN_PREEMPTED], on, out;
	lp_breakdown_split_runq(rest, runq, task, delay, &on, &out);
	cat[p + LP_BREAKDOWN_UNSPLIT] = 0;
	cat[p + LP_BREAKDOWN_ONCPU] = on;
	cat[p + LP_BREAKDOWN_PREEMPTED] = runq + out;
	cat[ob] += rest - out - on;
}

struct thr_task {
	struct lp_map task;  /* threads.id -> task-clock ns */
	struct lp_map delay; /* threads.id -> schedstat run_delay ns */
};

static int thr_task_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_map *m = ctx;
	return lp_map_put(m, (uint64_t)sqlite3_column_int64(st, 0),
			  (uint64_t)sqlite3_column_int64(st, 1))
		   ? -ENOMEM
		   : 0;
}

static int bd_other_block(void)
{
	for (size_t k = 0; k < lp_breakdown_ncategories; k++)
		if (!strcmp(lp_breakdown_categories[k].name, "other_block"))
			return (int)k;
	return -1;
}

int lp_breakdown_thread_delays(sqlite3 *db, struct lp_map *delay, char *err, size_t errlen)
{
	if (!lp_db_int(db,
		       "SELECT count(*) FROM pragma_table_info('threads') WHERE name = "
		       "'run_delay_ns'",
		       0))
		return 0;
	return lp_db_each(db, "SELECT id, run_delay_ns FROM threads WHERE run_delay_ns >= 0", NULL,
			  0, thr_task_row, delay, err, errlen);
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
			       NULL, 0, thr_task_row, &tt.task, err, errlen);
	if (!rc)
		rc = lp_breakdown_thread_delays(db, &tt.delay, err, errlen);
	int ob = bd_other_block();
	memset(out->run_cat_ns + p, 0, LP_BREAKDOWN_NREST * sizeof(int64_t));
	for (size_t i = 0; i < out->nthreads && !rc; i++) {
		struct lp_breakdown_thread *t = &out->threads[i];
		uint64_t task, delay;
		int known = lp_map_get(&tt.task, (uint64_t)t->thread_id, &task);
		t->cpu_ns = known ? (int64_t)task : -1;
		if (known && ob >= 0 && lp_map_get(&tt.delay, (uint64_t)t->thread_id, &delay)) {
			int64_t was = t->cat_ns[ob];
			split_rest_runq(t->cat_ns, p, ob, (int64_t)task, (int64_t)delay);
			out->run_cat_ns[ob] += t->cat_ns[ob] - was;
		} else {
			split_rest(t->cat_ns, p, known ? (double)task : NAN);
		}
		for (int k = p; k < p + LP_BREAKDOWN_NREST; k++)
			out->run_cat_ns[k] += t->cat_ns[k];
	}
	lp_map_free(&tt.task);
	lp_map_free(&tt.delay);
	return rc;
}

static int bd_roots(const struct lp_rset *rs, const uint8_t *isreq, const int64_t *rootcnt,
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
			out->roots[n] = (struct lp_breakdown_root){
			    strdup(rs->keys[k].domain), strdup(rs->keys[k].name), rootcnt[k]};
			if (!out->roots[n].domain || !out->roots[n++].name)
				return -ENOMEM;
		}
	return 0;
}

static int bd_ranges(struct lp_breakdown_work *b, const struct lp_breakdown_opts *opts,
		     struct lp_breakdown *out, char *err, size_t errlen)
{
	struct lp_rset *rs = &b->rs;
	int rc = lp_rset_load(b->db, rs, opts->request ? -1 : b->stage_depth, err, errlen);
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
		rc = lp_breakdown_counters_load(b, out, err, errlen);
	if (!rc)
		rc = lp_breakdown_counters_stages(b, out, pos);
	if (!rc) {
		int64_t *d = malloc((b->nreq + 1) * sizeof(*d));
		if (!d) {
			rc = -ENOMEM;
		} else {
			memcpy(d, b->dur, b->nreq * sizeof(*d));
			lp_dist_of(d, b->nreq, &out->req);
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

int lp_breakdown_compute(sqlite3 *db, const struct lp_breakdown_opts *opts,
			 struct lp_breakdown *out, char *err, size_t errlen)
{
	struct lp_breakdown_work b = {.db = db};
	int rc;

	memset(out, 0, sizeof(*out));
	b.stage_depth = opts->stage_depth > 0 ? opts->stage_depth : 1;
	out->stage_depth = b.stage_depth;
	out->req_explicit = opts->request != NULL;
	out->ncat = (int)lp_breakdown_ncategories + LP_BREAKDOWN_NREST;
	for (size_t k = 0; k < lp_breakdown_ncategories; k++) {
		out->cat_name[k] = lp_breakdown_categories[k].name;
		out->cat_label[k] = lp_breakdown_categories[k].label;
	}
	out->cat_name[lp_breakdown_ncategories + LP_BREAKDOWN_ONCPU] = "on_cpu";
	out->cat_label[lp_breakdown_ncategories + LP_BREAKDOWN_ONCPU] = "on-CPU";
	out->cat_name[lp_breakdown_ncategories + LP_BREAKDOWN_PREEMPTED] = "preempted";
	out->cat_label[lp_breakdown_ncategories + LP_BREAKDOWN_PREEMPTED] = "preempted";
	out->cat_name[lp_breakdown_ncategories + LP_BREAKDOWN_UNSPLIT] = "cpu_or_preempted";
	out->cat_label[lp_breakdown_ncategories + LP_BREAKDOWN_UNSPLIT] =
	    "cpu or preempted (not counted)";
	out->run_start_ns = lp_db_int(db, "SELECT min(start_ns) FROM processes", 0);
	out->run_end_ns = lp_db_int(db, "SELECT max(end_ns) FROM processes", out->run_start_ns);
	rc = bd_cats_threads(&b, out, err, errlen);
	if (!rc)
		rc = bd_split_threads(db, out, (int)lp_breakdown_ncategories, err, errlen);
	if (!rc && lp_db_has_table(db, "ranges"))
		rc = bd_ranges(&b, opts, out, err, errlen);
	if (!rc && !out->has_ranges && opts->request) {
		snprintf(err, errlen, "--request %s: this run recorded no NVTX ranges",
			 opts->request);
		rc = -ENOENT;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory computing the breakdown");
	if (opts->keep_ranges) {
		memset(opts->keep_ranges, 0, sizeof(*opts->keep_ranges));
		if (!rc) { /* moved: bd_free then frees an empty set */
			*opts->keep_ranges = b.rs;
			memset(&b.rs, 0, sizeof(b.rs));
		}
	}
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
	for (int k = 0; k < LP_BREAKDOWN_MAXCAT; k++)
		free(b->tail.cat_key_name[k]);
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++)
		free(b->cnt_reason[k]);
	for (size_t i = 0; i < b->nslow; i++) {
		free(b->slow[i].stage_ns);
		free(b->slow[i].wait_site);
		free(b->slow[i].wait_source);
	}
	for (size_t i = 0; i < b->nthreads; i++)
		free(b->threads[i].name);
	free(b->threads);
	memset(b, 0, sizeof(*b));
}

int lp_breakdown_cat_has_time(const struct lp_breakdown *b, int k)
{
	int p = b->ncat - LP_BREAKDOWN_NREST;
	if (k == p + (b->has_counters ? LP_BREAKDOWN_ONCPU : LP_BREAKDOWN_UNSPLIT) ||
	    b->req_cat_ns[k] || b->run_cat_ns[k])
		return 1;
	for (size_t i = 0; i < b->nstages; i++)
		if (b->stages[i].cat_ns[k])
			return 1;
	return 0;
}
