/* SPDX-License-Identifier: MIT */
/*
 * The whole-thread split of a run without ranges in one streaming pass:
 * the wait tables read in start order (lock_waits is clustered by it, the
 * others have a start index), each interval folded into its thread's sums
 * as it comes. Memory is per thread and category, not per wait.
 *
 * Where categories overlap the earlier one owns the time (lp_breakdown.h),
 * so category k's time on a thread is |U_0..k| - |U_0..k-1|, with U_0..k
 * the union of categories 0..k. The measure of a union of intervals that
 * arrive in start order needs only the current merged interval: each
 * thread keeps one per prefix of the category list (and one for all of
 * them plus the waits' run-queue tails, whose excess is preempted time).
 * A run-queue tail starts inside its wait, later than the wait's start:
 * tails wait in a small heap until the scan reaches their start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_breakdown_work.h"
#include "lp_db.h"
#include "lp_map.h"
#include "lp_progress.h"
#include "lp_util.h"
#include "lp_waits.h"

/* One thread: its life [a, z) and, per prefix j of the categories (j = n:
 * all of them and the run-queue tails), the union so far: finished length
 * plus the merged interval [cs, ce) still growing. */
struct bt_thread {
	int64_t a, z;
	int64_t cs[LP_BREAKDOWN_MAXCAT + 1], ce[LP_BREAKDOWN_MAXCAT + 1];
	int64_t len[LP_BREAKDOWN_MAXCAT + 1];
};

struct bt_tail {
	int64_t s, e, th;
};

/* A source of intervals in start order: a statement over one wait table,
 * or the in-memory intervals of the other categories (CUDA's). */
struct bt_src {
	sqlite3_stmt *st;
	int table; /* index into bt_tables, or -1: the list */
	const struct lp_iv *v;
	size_t n, i;
	const int *v_cat; /* the list's categories, per interval */
	int live;
	int64_t th, s, e, end, runq; /* the current row; e excludes its run-queue tail */
	int cat;		     /* -1: in no category (its tail still counts) */
};

struct bt {
	int n;		   /* providers */
	struct lp_map idx; /* threads.id + 1 -> index + 1 */
	struct bt_thread *t;
	size_t nt;
	struct bt_tail *heap;
	size_t nheap, capheap;
	int disorder;  /* an interval came before its union's start: not in start order */
	int cat_of[8]; /* per table and class code: the category index, -1 none */
	int block_cat[6];
};

enum { BT_LOCK, BT_COND, BT_BLOCK, BT_NTABLES };

/* Rows: thread, start, end less the run-queue tail, end, run-queue time,
 * category code (a class for lock and cond waits, 0 the table's own; a
 * category name for blocking calls, NULL none). */
static const char *const bt_sql[BT_NTABLES] = {
    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), start_ns + dur_ns, "
    "coalesce(runq_ns, 0), CASE WHEN class IN (1, 2, 3) THEN class ELSE 0 END FROM lock_waits "
    "ORDER BY start_ns",
    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), start_ns + dur_ns, "
    "coalesce(runq_ns, 0), CASE WHEN class IN (1, 2, 3) THEN class ELSE 0 END FROM cond_waits "
    "ORDER BY start_ns",
    "SELECT thread_id, start_ns, start_ns + dur_ns - coalesce(runq_ns, 0), start_ns + dur_ns, "
    "coalesce(runq_ns, 0), CASE WHEN call IN " LP_JOIN_CALLS " THEN 'join_wait' WHEN call "
    "NOT IN " LP_JOIN_CALLS " THEN category END FROM blocking_calls ORDER BY start_ns",
};
static const char *const bt_table[BT_NTABLES] = {"lock_waits", "cond_waits", "blocking_calls"};
static const char *const bt_block_names[6] = {"sleep",	   "file_io",	  "socket_io",
					      "poll_wait", "other_block", "join_wait"};
/* The categories a wait table's classes go to: the table's own (code 0),
 * then the GIL's, idle and join classes (lp_waits.h). */
static const char *const bt_class_names[2][4] = {
    {"lock_wait", "gil_wait", "idle_wait", "join_wait"},
    {"cond_wait", "gil_wait", "idle_wait", "join_wait"},
};

static int cat_index(const char *name)
{
	for (size_t k = 0; k < lp_breakdown_ncategories; k++)
		if (!strcmp(lp_breakdown_categories[k].name, name))
			return (int)k;
	return -1;
}

/* True for the categories this pass reads from the wait tables itself. */
static int streamed(const char *name)
{
	for (int i = 0; i < 6; i++)
		if (!strcmp(bt_block_names[i], name))
			return 1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(bt_class_names[0][i], name) || !strcmp(bt_class_names[1][i], name))
			return 1;
	return 0;
}

/* Adds [s, e) of thread t to the unions of prefixes c..n. */
static void bt_add(struct bt *b, int64_t th, int64_t s, int64_t e, int c)
{
	uint64_t i;
	if (!lp_map_get(&b->idx, (uint64_t)th + 1, &i))
		return; /* a thread the threads table does not hold: never asked for */
	struct bt_thread *t = &b->t[i - 1];
	s = s > t->a ? s : t->a;
	e = e < t->z ? e : t->z;
	if (e <= s)
		return;
	for (int j = c; j <= b->n; j++) {
		if (s < t->cs[j]) {
			b->disorder = 1;
			return;
		}
		if (s <= t->ce[j]) {
			t->ce[j] = e > t->ce[j] ? e : t->ce[j];
		} else {
			t->len[j] += t->ce[j] - t->cs[j];
			t->cs[j] = s;
			t->ce[j] = e;
		}
	}
}

static int bt_heap_push(struct bt *b, int64_t th, int64_t s, int64_t e)
{
	if (LP_GROW(b->heap, b->nheap, b->capheap))
		return -ENOMEM;
	size_t i = b->nheap++;
	for (; i && b->heap[(i - 1) / 2].s > s; i = (i - 1) / 2)
		b->heap[i] = b->heap[(i - 1) / 2];
	b->heap[i] = (struct bt_tail){s, e, th};
	return 0;
}

static struct bt_tail bt_heap_pop(struct bt *b)
{
	struct bt_tail top = b->heap[0], last = b->heap[--b->nheap];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= b->nheap)
			break;
		if (c + 1 < b->nheap && b->heap[c + 1].s < b->heap[c].s)
			c++;
		if (b->heap[c].s >= last.s)
			break;
		b->heap[i] = b->heap[c];
		i = c;
	}
	if (b->nheap)
		b->heap[i] = last;
	return top;
}

/* Run-queue tails that start by x join the unions (prefix n). */
static void bt_heap_drain(struct bt *b, int64_t x)
{
	while (b->nheap && b->heap[0].s <= x) {
		struct bt_tail q = bt_heap_pop(b);
		bt_add(b, q.th, q.s, q.e, b->n);
	}
}

/* Reads the source's next row; 0 at the end too (live cleared), -EIO. */
static int bt_next(struct bt *b, struct bt_src *src)
{
	if (!src->st) {
		src->live = src->i < src->n;
		if (src->live) {
			const struct lp_iv *v = &src->v[src->i];
			src->th = v->thread;
			src->s = v->start;
			src->e = src->end = v->end;
			src->runq = 0;
			src->cat = src->v_cat[src->i++];
		}
		return 0;
	}
	int s = lp_db_step_next(src->st);
	src->live = s > 0;
	if (!src->live)
		return s;
	src->th = sqlite3_column_int64(src->st, 0);
	src->s = sqlite3_column_int64(src->st, 1);
	src->e = sqlite3_column_int64(src->st, 2);
	src->end = sqlite3_column_int64(src->st, 3);
	src->runq = sqlite3_column_int64(src->st, 4);
	if (src->table == BT_BLOCK) {
		const char *name = (const char *)sqlite3_column_text(src->st, 5);
		src->cat = -1;
		for (int i = 0; name && i < 6; i++)
			if (!strcmp(name, bt_block_names[i]))
				src->cat = b->block_cat[i];
	} else {
		src->cat = b->cat_of[src->table * 4 + sqlite3_column_int(src->st, 5)];
	}
	return 0;
}

static int iv_start_cmp(const void *pa, const void *pb)
{
	const struct lp_iv *a = pa, *b = pb;
	return (a->start > b->start) - (a->start < b->start);
}

/* The other categories' intervals (CUDA's), loaded by their providers as
 * lp_breakdown.c loads them, in start order; *cat gets each one's index. */
static int bt_load_rest(sqlite3 *db, struct lp_ivec *all, int **cat, char *err, size_t errlen)
{
	for (size_t k = 0; k < lp_breakdown_ncategories; k++) {
		if (streamed(lp_breakdown_categories[k].name))
			continue;
		struct lp_ivec one = {0};
		int rc = lp_breakdown_categories[k].load(db, &one, err, errlen);
		for (size_t i = 0; !rc && i < one.n; i++) {
			struct lp_iv *v = &one.v[i];
			/* the key carries the category through the sort */
			rc = lp_ivec_push(all, v->thread, v->start, v->end, (int64_t)k);
		}
		lp_ivec_free(&one);
		if (rc && rc != -ENOENT)
			return rc;
	}
	if (all->n) /* qsort's array may not be NULL, even empty */
		qsort(all->v, all->n, sizeof(*all->v), iv_start_cmp);
	*cat = malloc((all->n + 1) * sizeof(**cat));
	if (!*cat)
		return -ENOMEM;
	for (size_t i = 0; i < all->n; i++)
		(*cat)[i] = (int)all->v[i].key;
	return 0;
}

/* The pass: sources merged by start, each row's interval into its
 * category's prefixes, its run-queue tail into the heap. */
static int bt_scan(struct bt *b, struct bt_src *src, int nsrc)
{
	int rc = 0;
	for (int i = 0; i < nsrc && !rc; i++)
		rc = bt_next(b, &src[i]);
	while (!rc && !b->disorder) {
		struct bt_src *m = NULL;
		for (int i = 0; i < nsrc; i++)
			if (src[i].live && (!m || src[i].s < m->s))
				m = &src[i];
		if (!m)
			break;
		bt_heap_drain(b, m->s);
		if (m->cat >= 0)
			bt_add(b, m->th, m->s, m->e, m->cat);
		if (m->runq > 0)
			rc = bt_heap_push(b, m->th, m->end - m->runq, m->end);
		if (!rc)
			rc = bt_next(b, m);
	}
	if (!rc)
		bt_heap_drain(b, INT64_MAX);
	return rc;
}

/* Each thread's category times from its unions, as cats_split gives them. */
static void bt_finish(struct bt *b, struct lp_breakdown *out)
{
	int n = b->n;
	for (size_t i = 0; i < b->nt; i++) {
		struct bt_thread *t = &b->t[i];
		struct lp_breakdown_thread *o = &out->threads[i];
		if (t->z <= t->a)
			continue;
		for (int j = 0; j <= n; j++)
			t->len[j] += t->ce[j] - t->cs[j];
		for (int k = 0; k < n; k++)
			o->cat_ns[k] = t->len[k] - (k ? t->len[k - 1] : 0);
		o->cat_ns[n + LP_BREAKDOWN_PREEMPTED] = t->len[n] - t->len[n - 1];
		o->cat_ns[n] = o->total_ns - t->len[n] > 0 ? o->total_ns - t->len[n] : 0;
		for (int k = 0; k <= n + LP_BREAKDOWN_PREEMPTED; k++)
			out->run_cat_ns[k] += o->cat_ns[k];
	}
}

static int bt_threads_index(struct bt *b, const struct lp_breakdown *out, const int64_t *life)
{
	b->t = calloc(out->nthreads + 1, sizeof(*b->t));
	if (!b->t)
		return -ENOMEM;
	b->nt = out->nthreads;
	for (size_t i = 0; i < b->nt; i++) {
		struct bt_thread *t = &b->t[i];
		t->a = life[2 * i];
		t->z = life[2 * i + 1];
		for (int j = 0; j <= b->n; j++)
			t->cs[j] = t->ce[j] = t->a;
		if (lp_map_put(&b->idx, (uint64_t)out->threads[i].thread_id + 1, i + 1))
			return -ENOMEM;
	}
	return 0;
}

static void bt_cats(struct bt *b)
{
	for (int t = 0; t < 2; t++)
		for (int c = 0; c < 4; c++)
			b->cat_of[t * 4 + c] = cat_index(bt_class_names[t][c]);
	for (int i = 0; i < 6; i++)
		b->block_cat[i] = cat_index(bt_block_names[i]);
}

static void bt_progress(sqlite3 *db)
{
	uint64_t total = 0;
	if (!lp_progress_enabled())
		return;
	for (int i = 0; i < BT_NTABLES; i++)
		total += (uint64_t)lp_db_count(db, bt_table[i]);
	lp_progress_begin("reading waits", total, "rows");
}

int lp_breakdown_threads_stream(sqlite3 *db, struct lp_breakdown *out, const int64_t *life,
				char *err, size_t errlen)
{
	struct bt b = {.n = (int)lp_breakdown_ncategories};
	struct bt_src src[BT_NTABLES + 1] = {{0}};
	struct lp_ivec rest = {0};
	int *rest_cat = NULL, nsrc = 0;
	bt_cats(&b);
	int rc = bt_threads_index(&b, out, life);
	if (!rc)
		rc = bt_load_rest(db, &rest, &rest_cat, err, errlen);
	int scanned = !rc;
	for (int i = 0; i < BT_NTABLES && !rc; i++) {
		if (!lp_db_has_table(db, bt_table[i]))
			continue;
		src[nsrc].table = i;
		if (sqlite3_prepare_v2(db, bt_sql[i], -1, &src[nsrc++].st, NULL) != SQLITE_OK)
			rc = -EIO;
	}
	src[nsrc++] = (struct bt_src){.table = -1, .v = rest.v, .n = rest.n, .v_cat = rest_cat};
	if (!rc) {
		bt_progress(db);
		rc = bt_scan(&b, src, nsrc);
		lp_progress_end();
	}
	if (scanned && rc == -EIO)
		snprintf(err, errlen, "database error reading waits: %s", sqlite3_errmsg(db));
	else if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory reading waits");
	if (!rc && b.disorder)
		rc = -EAGAIN;
	if (!rc)
		bt_finish(&b, out);
	for (int i = 0; i < nsrc; i++)
		sqlite3_finalize(src[i].st);
	lp_ivec_free(&rest);
	free(rest_cat);
	free(b.t);
	free(b.heap);
	lp_map_free(&b.idx);
	return rc;
}
