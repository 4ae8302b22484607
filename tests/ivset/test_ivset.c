/* SPDX-License-Identifier: MIT */
/* Unit tests of analysis/lp_ivset.h: interval sets (union, precedence,
 * overlap queries) and nearest-rank selection against a brute-force
 * reference on random input; hand-checked edge cases (empty sets, one
 * element, touching and nested intervals); 10 M intervals. */
#include "lp_ivset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_check.h"
#include "lp_util.h"

/* The invariant lp_ivset_overlap relies on: per thread, sorted, disjoint
 * and not touching, every interval non-empty; prefix sums consistent. */
static int valid(const struct lp_ivset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->end[i] <= s->start[i] ||
		    s->cum[i + 1] - s->cum[i] != s->end[i] - s->start[i])
			return 0;
		if (i && (s->thread[i] < s->thread[i - 1] ||
			  (s->thread[i] == s->thread[i - 1] && s->start[i] <= s->end[i - 1])))
			return 0;
	}
	return 1;
}

#define SPAN 2000
#define NTHR 3

/* Bitmap reference: covered[t][x] for x in [0, SPAN). */
static void mark(unsigned char cov[NTHR][SPAN], const struct lp_ivec *v)
{
	for (size_t i = 0; i < v->n; i++)
		for (int64_t x = v->v[i].start; x < v->v[i].end; x++)
			cov[v->v[i].thread][x] = 1;
}

static int64_t ref_overlap(unsigned char cov[NTHR][SPAN], int t, int64_t s, int64_t e)
{
	int64_t n = 0;
	for (int64_t x = s; x < e; x++)
		n += cov[t][x];
	return n;
}

static void random_ivec(struct lp_ivec *v, int n, int maxlen)
{
	for (int i = 0; i < n; i++) {
		int64_t s = rand() % (SPAN - maxlen);
		lp_ivec_push(v, rand() % NTHR, s, s + rand() % maxlen, i);
	}
}

static void test_sets(void)
{
	int before = lp_check_failures;
	for (int round = 0; round < 50; round++) {
		static unsigned char ca[NTHR][SPAN], cb[NTHR][SPAN];
		struct lp_ivec a = {0}, b = {0};
		struct lp_ivset sa, sb, u;
		memset(ca, 0, sizeof(ca));
		memset(cb, 0, sizeof(cb));
		random_ivec(&a, 1 + rand() % 40, 80);
		random_ivec(&b, 1 + rand() % 40, 80);
		mark(ca, &a);
		mark(cb, &b);
		CHECK_QUIET(lp_ivset_build(&a, NULL, &sa) == 0, "build a");
		CHECK_QUIET(lp_ivset_build(&b, &sa, &sb) == 0, "build b minus a");
		CHECK_QUIET(lp_ivset_union(&sa, &sb, &u) == 0, "union");
		CHECK_QUIET(valid(&sa) && valid(&sb) && valid(&u), "sorted and disjoint");
		int64_t tot_a = 0, tot_b = 0, tot_u = 0;
		for (int t = 0; t < NTHR; t++)
			for (int x = 0; x < SPAN; x++) {
				tot_a += ca[t][x];
				tot_b += cb[t][x] && !ca[t][x];
				tot_u += ca[t][x] || cb[t][x];
			}
		CHECK_QUIET(lp_ivset_total(&sa) == tot_a, "total a %lld != %lld",
			    (long long)lp_ivset_total(&sa), (long long)tot_a);
		CHECK_QUIET(lp_ivset_total(&sb) == tot_b, "b minus a %lld != %lld",
			    (long long)lp_ivset_total(&sb), (long long)tot_b);
		CHECK_QUIET(lp_ivset_total(&u) == tot_u, "union %lld != %lld",
			    (long long)lp_ivset_total(&u), (long long)tot_u);
		for (int q = 0; q < 200; q++) {
			int t = rand() % NTHR;
			int64_t s = rand() % SPAN, e = s + rand() % (SPAN - s + 1);
			int64_t want = ref_overlap(ca, t, s, e);
			int64_t got = lp_ivset_overlap(&sa, t, s, e);
			CHECK_QUIET(got == want, "overlap t%d [%lld,%lld) %lld != %lld", t,
				    (long long)s, (long long)e, (long long)got, (long long)want);
		}
		/* disjoint after subtraction: a's and b's overlaps add up to the union's */
		for (int q = 0; q < 50; q++) {
			int t = rand() % NTHR;
			int64_t s = rand() % SPAN, e = s + rand() % (SPAN - s + 1);
			CHECK_QUIET(lp_ivset_overlap(&sa, t, s, e) +
					    lp_ivset_overlap(&sb, t, s, e) ==
					lp_ivset_overlap(&u, t, s, e),
				    "precedence split does not add up");
		}
		lp_ivset_free(&sa);
		lp_ivset_free(&sb);
		lp_ivset_free(&u);
		lp_ivec_free(&a);
		lp_ivec_free(&b);
	}
	CHECK(lp_check_failures == before,
	      "50 random rounds of build, minus, union and overlap match the bitmap");
	/* hand-checked: [10,20) [15,30) [40,50) on thread 1 */
	struct lp_ivec v = {0};
	struct lp_ivset s;
	lp_ivec_push(&v, 1, 40, 50, 0);
	lp_ivec_push(&v, 1, 10, 20, 0);
	lp_ivec_push(&v, 1, 15, 30, 0);
	lp_ivec_push(&v, 2, 0, 100, 0);
	lp_ivec_push(&v, 1, 60, 60, 0); /* empty: dropped */
	lp_ivset_build(&v, NULL, &s);
	CHECK(s.n == 3, "merged to 3 intervals, got %zu", s.n);
	CHECK(lp_ivset_overlap(&s, 1, 0, 100) == 30, "whole thread 1");
	CHECK(lp_ivset_overlap(&s, 1, 25, 45) == 10, "straddling both ends");
	CHECK(lp_ivset_overlap(&s, 1, 30, 40) == 0, "gap");
	CHECK(lp_ivset_overlap(&s, 3, 0, 100) == 0, "unknown thread");
	CHECK(lp_ivset_overlap(&s, 2, 99, 200) == 1, "thread 2 tail");
	lp_ivset_free(&s);
	lp_ivec_free(&v);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void test_pctl(void)
{
	static const double ps[] = {0, 1, 40, 50, 60, 90, 99, 100};
	int before = lp_check_failures;
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)(rand() % (round < 100 ? 30 : 5000));
		int64_t *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));
		int dup = rand() % 3; /* many ties, sorted, random */
		for (size_t i = 0; i < n; i++)
			v[i] = dup == 0 ? rand() % 4 : dup == 1 ? (int64_t)i : rand();
		memcpy(w, v, n * sizeof(*v));
		qsort(w, n, sizeof(*w), cmp64);
		for (size_t k = 0; k < ARRAY_SIZE(ps); k++) {
			/* nearest rank: ceil(p n) - 1 clamped */
			size_t r = (size_t)((ps[k] * (double)n + 99.999999) / 100.0);
			r = r ? r - 1 : 0;
			if (r >= n)
				r = n - 1;
			int64_t got = lp_pctl(v, n, ps[k]);
			CHECK_QUIET(got == w[r], "p%g of %zu: %lld != %lld", ps[k], n,
				    (long long)got, (long long)w[r]);
		}
		free(v);
		free(w);
	}
	CHECK(lp_check_failures == before, "300 random arrays: every percentile is the sorted one");
	int64_t hundred[100];
	for (int i = 0; i < 100; i++)
		hundred[i] = 100 - i; /* values 1..100 */
	CHECK(lp_pctl(hundred, 100, 50) == 50, "p50 of 1..100 is 50");
	CHECK(lp_pctl(hundred, 100, 99) == 99, "p99 of 1..100 is 99");
	CHECK(lp_pctl(hundred, 100, 99.5) == 100, "p99.5 of 1..100 is 100");
	CHECK(lp_pctl(hundred, 0, 50) == 0, "a percentile of nothing is 0");
	struct lp_dist d;
	lp_dist_of(hundred, 100, &d);
	CHECK(d.n == 100 && d.total == 5050 && d.max == 100 && d.p50 == 50 && d.p90 == 90 &&
		  d.p99 == 99 && d.mean == 50.5,
	      "distribution of 1..100: n 100, total 5050, p50 50, p90 90, p99 99, max 100");
	int64_t one = 7;
	lp_dist_of(&one, 1, &d);
	CHECK(d.n == 1 && d.p50 == 7 && d.p99 == 7 && d.max == 7, "one sample is every percentile");
	lp_dist_of(NULL, 0, &d);
	CHECK(d.n == 0 && d.total == 0 && d.p99 == 0, "no samples: all zero");
}

/* Empty sets, one element, touching and nested intervals. */
static void test_edges(void)
{
	struct lp_ivec v = {0};
	struct lp_ivset e, s, u;
	CHECK(lp_ivset_build(&v, NULL, &e) == 0 && e.n == 0, "an empty list builds an empty set");
	CHECK(lp_ivset_total(&e) == 0 && lp_ivset_overlap(&e, 1, 0, 100) == 0,
	      "an empty set covers nothing");
	lp_ivec_push(&v, 1, 5, 5, 0);
	lp_ivec_push(&v, 1, 9, 3, 0);
	CHECK(v.n == 0, "empty and reversed intervals are dropped");
	lp_ivec_push(&v, 4, 10, 20, 0);
	CHECK(lp_ivset_build(&v, NULL, &s) == 0 && s.n == 1 && lp_ivset_total(&s) == 10,
	      "one element: one interval of 10");
	CHECK(lp_ivset_overlap(&s, 4, 10, 20) == 10 && lp_ivset_overlap(&s, 4, 0, 11) == 1 &&
		  lp_ivset_overlap(&s, 4, 19, 30) == 1 && lp_ivset_overlap(&s, 4, 20, 30) == 0 &&
		  lp_ivset_overlap(&s, 4, 15, 15) == 0,
	      "one element: inside, both edges, past the end, empty query");
	CHECK(lp_ivset_union(&e, &s, &u) == 0 && u.n == 1 && lp_ivset_total(&u) == 10,
	      "union with an empty set is the set");
	lp_ivset_free(&u);
	struct lp_ivset m;
	CHECK(lp_ivset_build(&v, &e, &m) == 0 && m.n == 1, "minus an empty set changes nothing");
	lp_ivset_free(&m);
	lp_ivset_free(&s);
	lp_ivec_free(&v);
	/* touching: [0,10) [10,20) [20,25) merge; nested: [40,100) holds [50,60) */
	lp_ivec_push(&v, 1, 10, 20, 0);
	lp_ivec_push(&v, 1, 0, 10, 0);
	lp_ivec_push(&v, 1, 20, 25, 0);
	lp_ivec_push(&v, 1, 50, 60, 0);
	lp_ivec_push(&v, 1, 40, 100, 0);
	lp_ivec_push(&v, 2, 0, 10, 0); /* another thread touches nothing */
	lp_ivset_build(&v, NULL, &s);
	CHECK(s.n == 3 && valid(&s), "touching intervals merge, nested ones vanish: 3 left (%zu)",
	      s.n);
	CHECK(lp_ivset_overlap(&s, 1, 0, 200) == 85, "thread 1 covers 25 + 60");
	CHECK(lp_ivset_overlap(&s, 1, 5, 45) == 25, "a query across the merged edge and a gap");
	/* minus: [0,100) on thread 1 less the set above leaves [25,40) */
	struct lp_ivec w = {0};
	lp_ivec_push(&w, 1, 0, 100, 0);
	lp_ivset_build(&w, &s, &m);
	CHECK(m.n == 1 && m.start[0] == 25 && m.end[0] == 40, "minus leaves the gap [25,40)");
	lp_ivset_free(&m);
	lp_ivec_free(&w);
	lp_ivset_free(&s);
	lp_ivset_free(&e);
	lp_ivec_free(&v);
}

/* 10 M intervals on 4 threads, each with a nested one and a touching
 * neighbour: the scale of a long recording. Every answer is computed from
 * the pattern: per k, [10k, 10k+6) holds [10k+1, 10k+3) and touches
 * [10k+6, 10k+8), so the set is [10k, 10k+8) per k. */
static void test_scale(void)
{
	const int64_t per = 10 * 1000 * 1000 / 4 / 3; /* k per thread */
	struct lp_ivec v = {0};
	struct lp_ivset s;
	int rc = 0;
	for (int64_t k = per - 1; k >= 0 && !rc; k--) /* pushed out of order */
		for (int t = 0; t < 4 && !rc; t++)
			rc = lp_ivec_push(&v, t, 10 * k, 10 * k + 6, 0) ||
			     lp_ivec_push(&v, t, 10 * k + 1, 10 * k + 3, 0) ||
			     lp_ivec_push(&v, t, 10 * k + 6, 10 * k + 8, 0);
	CHECK(rc == 0 && v.n == (size_t)(per * 12), "%zu intervals pushed", v.n);
	CHECK(lp_ivset_build(&v, NULL, &s) == 0, "10 M intervals build");
	CHECK(s.n == (size_t)(per * 4) && valid(&s), "merged to %zu, sorted and disjoint", s.n);
	CHECK(lp_ivset_total(&s) == per * 4 * 8, "total %lld ns", (long long)lp_ivset_total(&s));
	int bad = 0;
	for (int q = 0; q < 100000; q++) {
		int t = rand() % 4;
		int64_t a =
		    (int64_t)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) % (uint64_t)(10 * per));
		int64_t b = a + rand() % 1000;
		int64_t want = 0;
		for (int64_t k = a / 10; 10 * k < b && k < per; k++) {
			int64_t lo = 10 * k > a ? 10 * k : a, hi = 10 * k + 8 < b ? 10 * k + 8 : b;
			want += hi > lo ? hi - lo : 0;
		}
		bad += lp_ivset_overlap(&s, t, a, b) != want;
	}
	CHECK(bad == 0, "100000 overlap queries on 10 M intervals match the pattern (%d wrong)",
	      bad);
	lp_ivset_free(&s);
	lp_ivec_free(&v);
}

/* The input the build's counting sort expects (each thread's intervals in
 * start order, the threads interleaved), with thread ids shifted to start
 * below zero, and spread wider than the count (the qsort fallback): every
 * arrangement builds the set the bitmap holds. */
static void test_thread_order(void)
{
	int before = lp_check_failures;
	static const int64_t scale[] = {1, 1, 1000003};
	static const int64_t shift[] = {0, -2, 5};
	for (int round = 0; round < 60; round++) {
		static unsigned char cov[NTHR][SPAN];
		memset(cov, 0, sizeof(cov));
		struct lp_ivec v = {0};
		int64_t next[NTHR] = {0};
		int n = 1 + rand() % 60, unsorted = round % 3 == 2;
		for (int i = 0; i < n; i++) {
			int t = rand() % NTHR;
			int64_t st = unsorted ? rand() % (SPAN - 40) : next[t] + rand() % 30;
			int64_t e = st + 1 + rand() % 30;
			if (e >= SPAN)
				continue;
			next[t] = st;
			lp_ivec_push(&v, t * scale[round % 3] + shift[round % 3], st, e, i);
			for (int64_t x = st; x < e; x++)
				cov[t][x] = 1;
		}
		struct lp_ivset set;
		CHECK_QUIET(lp_ivset_build(&v, NULL, &set) == 0 && valid(&set), "build");
		for (int t = 0; t < NTHR; t++) {
			int64_t id = t * scale[round % 3] + shift[round % 3];
			CHECK_QUIET(lp_ivset_overlap(&set, id, 0, SPAN) ==
					ref_overlap(cov, t, 0, SPAN),
				    "round %d thread %d: %lld != %lld", round, t,
				    (long long)lp_ivset_overlap(&set, id, 0, SPAN),
				    (long long)ref_overlap(cov, t, 0, SPAN));
			for (int q = 0; q < 20; q++) {
				int64_t a = rand() % SPAN, b = a + rand() % (SPAN - a + 1);
				CHECK_QUIET(lp_ivset_overlap(&set, id, a, b) ==
						ref_overlap(cov, t, a, b),
					    "round %d overlap", round);
			}
		}
		lp_ivset_free(&set);
		lp_ivec_free(&v);
	}
	CHECK(
	    lp_check_failures == before,
	    "60 rounds of per-thread sorted, shifted, spread and unsorted input match the bitmap");
}

int main(void)
{
	srand(12345);
	test_sets();
	test_thread_order();
	test_edges();
	test_pctl();
	test_scale();
	return lp_check_done();
}
