/* SPDX-License-Identifier: MIT */
/*
 * Per-thread interval sets and nearest-rank percentiles: the arithmetic
 * under the breakdown, the CUDA summaries and the bottleneck rules.
 *
 * The workload: a report loads every wait, API call or GPU operation of a
 * run once (up to tens of millions of intervals, from one query each),
 * then asks "how much of [s, e) on thread t is covered" once per stage
 * instance (tens of millions of times). So a set is built once (sort and
 * merge, O(n log n)), stored as parallel arrays with prefix sums, and each
 * query is two binary searches with no allocation. Percentiles are
 * selections (O(n) expected), never full sorts.
 */
#ifndef LP_IVSET_H
#define LP_IVSET_H

#include <stddef.h>
#include <stdint.h>

#include "lp_db.h"

struct lp_iv {
	int64_t start, end; /* [start, end) CLOCK_MONOTONIC ns */
	int64_t key;	    /* provider-defined (lock id for lock waits), 0 if none */
	int64_t thread;	    /* threads.id (or any grouping id: process for GPU ops) */
};

/* A growable list of intervals in any order. */
struct lp_ivec {
	struct lp_iv *v;
	size_t n, cap;
};

/* Appends [start, end); empty and reversed intervals are dropped. */
int lp_ivec_push(struct lp_ivec *a, int64_t thread, int64_t start, int64_t end, int64_t key);
void lp_ivec_free(struct lp_ivec *a);

/*
 * A set of disjoint intervals per thread, sorted by (thread, start), with
 * prefix sums so that the covered time inside any [s, e) of one thread is
 * two binary searches: lp_ivset_overlap() is O(log n). Intervals that
 * touch ([1, 2) and [2, 3)) are merged like overlapping ones.
 */
struct lp_ivset {
	int64_t *thread, *start, *end;
	int64_t *cum; /* cum[i] = covered ns of intervals [0, i) (n + 1 entries) */
	size_t n;
};

/* Sort and merge (union) src per thread into out; src is reordered. When
 * minus is non-NULL its time is removed first (earlier categories win). */
int lp_ivset_build(struct lp_ivec *src, const struct lp_ivset *minus, struct lp_ivset *out);
/* Union of two sets (a sweep over both). */
int lp_ivset_union(const struct lp_ivset *a, const struct lp_ivset *b, struct lp_ivset *out);
int64_t lp_ivset_total(const struct lp_ivset *s);
void lp_ivset_free(struct lp_ivset *s);

/* First index whose interval is past x on thread t (keyed on end or start). */
static inline size_t lp_ivset_lower(const struct lp_ivset *s, int64_t t, int64_t x, int by_end)
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

/* Covered ns of [start, end) on thread. Inline: the breakdown asks it once
 * per stage instance and category (the hot loop of a report). */
static inline int64_t lp_ivset_overlap(const struct lp_ivset *s, int64_t thread, int64_t start,
				       int64_t end)
{
	if (!s->n || end <= start)
		return 0;
	size_t i = lp_ivset_lower(s, thread, start, 1);
	size_t j = lp_ivset_lower(s, thread, end, 0);
	if (j <= i || s->thread[i] != thread)
		return 0;
	int64_t sum = s->cum[j] - s->cum[i];
	if (start > s->start[i])
		sum -= start - s->start[i];
	if (s->end[j - 1] > end)
		sum -= s->end[j - 1] - end;
	return sum;
}

/*
 * Appends the rows of sql, (thread, start_ns, end_ns[, key]), to out; args
 * bind ?1..?n. The one way from a query to intervals: a read error is
 * -EIO with err filled, never a shorter list.
 */
int lp_ivec_from_sql(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		     struct lp_ivec *out, char *err, size_t errlen);
/* The same rows built into a set (lp_ivset_build without minus). */
int lp_ivset_from_sql(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		      struct lp_ivset *out, char *err, size_t errlen);

/* ---- nearest-rank percentiles ---- */

/* Nearest-rank percentile (p in 0..100) of v[0..n); reorders v (selection,
 * O(n) expected). Call with ascending p on the same array to reuse work. */
int64_t lp_pctl(int64_t *v, size_t n, double p);

/* The summary every latency table shows. */
struct lp_dist {
	int64_t n; /* samples */
	int64_t total, p50, p90, p99, max;
	double mean;
};

/* Fills d from v[0..n); reorders v (about 1.5 passes for the three). */
void lp_dist_of(int64_t *v, size_t n, struct lp_dist *d);

#endif
