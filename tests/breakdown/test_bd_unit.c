/* SPDX-License-Identifier: MIT */
/* Unit tests: interval sets (union, precedence, overlap queries) and
 * nearest-rank selection, each against a brute-force reference on random
 * input, plus hand-checked cases. */
#include "lp_breakdown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

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
		CHECK(lp_ivset_build(&a, NULL, &sa) == 0, "build a");
		CHECK(lp_ivset_build(&b, &sa, &sb) == 0, "build b minus a");
		CHECK(lp_ivset_union(&sa, &sb, &u) == 0, "union");
		int64_t tot_a = 0, tot_b = 0, tot_u = 0;
		for (int t = 0; t < NTHR; t++)
			for (int x = 0; x < SPAN; x++) {
				tot_a += ca[t][x];
				tot_b += cb[t][x] && !ca[t][x];
				tot_u += ca[t][x] || cb[t][x];
			}
		CHECK(lp_ivset_total(&sa) == tot_a, "total a %lld != %lld",
		      (long long)lp_ivset_total(&sa), (long long)tot_a);
		CHECK(lp_ivset_total(&sb) == tot_b, "b minus a %lld != %lld",
		      (long long)lp_ivset_total(&sb), (long long)tot_b);
		CHECK(lp_ivset_total(&u) == tot_u, "union %lld != %lld",
		      (long long)lp_ivset_total(&u), (long long)tot_u);
		for (int q = 0; q < 200; q++) {
			int t = rand() % NTHR;
			int64_t s = rand() % SPAN, e = s + rand() % (SPAN - s + 1);
			int64_t want = ref_overlap(ca, t, s, e);
			int64_t got = lp_ivset_overlap(&sa, t, s, e);
			CHECK(got == want, "overlap t%d [%lld,%lld) %lld != %lld", t, (long long)s,
			      (long long)e, (long long)got, (long long)want);
		}
		/* disjoint after subtraction: a's and b's overlaps add up to the union's */
		for (int q = 0; q < 50; q++) {
			int t = rand() % NTHR;
			int64_t s = rand() % SPAN, e = s + rand() % (SPAN - s + 1);
			CHECK(lp_ivset_overlap(&sa, t, s, e) + lp_ivset_overlap(&sb, t, s, e) ==
				  lp_ivset_overlap(&u, t, s, e),
			      "precedence split does not add up");
		}
		lp_ivset_free(&sa);
		lp_ivset_free(&sb);
		lp_ivset_free(&u);
		lp_ivec_free(&a);
		lp_ivec_free(&b);
	}
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
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)(rand() % (round < 100 ? 30 : 5000));
		int64_t *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));
		int dup = rand() % 3; /* many ties, sorted, random */
		for (size_t i = 0; i < n; i++)
			v[i] = dup == 0 ? rand() % 4 : dup == 1 ? (int64_t)i : rand();
		memcpy(w, v, n * sizeof(*v));
		qsort(w, n, sizeof(*w), cmp64);
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
			/* nearest rank: ceil(p n) - 1 clamped */
			size_t r = (size_t)((ps[k] * (double)n + 99.999999) / 100.0);
			r = r ? r - 1 : 0;
			if (r >= n)
				r = n - 1;
			int64_t got = lp_pctl(v, n, ps[k]);
			CHECK(got == w[r], "p%g of %zu: %lld != %lld", ps[k], n, (long long)got,
			      (long long)w[r]);
		}
		free(v);
		free(w);
	}
	int64_t hundred[100];
	for (int i = 0; i < 100; i++)
		hundred[i] = 100 - i; /* values 1..100 */
	CHECK(lp_pctl(hundred, 100, 50) == 50, "p50 of 1..100 is 50");
	CHECK(lp_pctl(hundred, 100, 99) == 99, "p99 of 1..100 is 99");
	CHECK(lp_pctl(hundred, 100, 99.5) == 100, "p99.5 of 1..100 is 100");
}

int main(void)
{
	srand(12345);
	test_sets();
	test_pctl();
	if (fails) {
		fprintf(stderr, "%d failures\n", fails);
		return 1;
	}
	printf("ok: interval sets and percentiles\n");
	return 0;
}
