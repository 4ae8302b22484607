/* SPDX-License-Identifier: MIT */
/*
 * lp_stats against reference values computed offline with scipy 1.17.1
 * (tests/diff/gen_stats_ref.py): scipy.stats.mannwhitneyu(x, y,
 * alternative='two-sided', method=M, use_continuity=True).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lp_boot.h"
#include "lp_stats.h"

#include <stdlib.h>

struct mwu_case {
	const char *name;
	size_t n1, n2;
	const double *x, *y;
	enum lp_mwu_method method;
	double u1, p;
};

static const struct mwu_case cases[] = {
    {"exact_small", 5, 6, (const double[]){1.2, 3.4, 5.6, 2.2, 8.1},
     (const double[]){4.5, 6.7, 9.0, 7.3, 10.1, 11.2}, LP_MWU_EXACT, 4.0, 0.05194805194805195},
    {"exact_disjoint", 3, 4, (const double[]){1.0, 2.0, 3.0}, (const double[]){4.0, 5.0, 6.0, 7.0},
     LP_MWU_EXACT, 0.0, 0.05714285714285714},
    {"exact_20x20", 20, 20,
     (const double[]){12.1062, 13.553,	4.8934,	 9.7241,  12.0274, 12.7043, 11.3076,
		      12.9942, 10.5799, 11.1025, 10.3575, 7.8523,  8.3067,  10.7592,
		      8.8396,  12.5431, 12.5848, 13.5976, 9.9479,  12.7674},
     (const double[]){9.1883,  9.3674,	11.1626, 11.5629, 7.802,   7.5386, 11.7102,
		      9.2756,  13.4167, 11.7891, 11.6144, 11.4169, 12.791, 10.6939,
		      13.1713, 9.9482,	10.55,	 9.639,	  12.1953, 11.0718},
     LP_MWU_EXACT, 221.0, 0.5831142281933014},
    {"exact_3x30", 3, 30, (const double[]){0.4915, 14.5258, 8.8045},
     (const double[]){2.8212, 0.2966, 2.3446, 8.3662,  6.547,  0.0541, 24.0375, 7.9096,
		      8.8219, 1.6994, 0.8381, 22.3932, 0.3967, 1.1702, 3.9453,	1.5331,
		      2.6937, 4.4043, 1.4842, 4.0921,  5.857,  2.5818, 6.5662,	11.6034,
		      2.277,  9.7281, 7.2218, 1.7605,  2.4998, 0.7717},
     LP_MWU_EXACT, 56.0, 0.530791788856305},
    {"exact_25x25", 25, 25,
     (const double[]){3.2016, 1.9922, 2.4812, 2.4167, 3.9764, 1.7355, 2.4008, 3.8757, 2.2311,
		      1.8742, 2.959,  2.4918, 3.4918, 2.0624, 2.8785, 3.3196, 3.7088, 1.9506,
		      4.1668, 2.0746, 1.7267, 2.0414, 2.8475, 2.4681, 3.1023},
     (const double[]){3.4857, 3.305,  2.7833, 5.177,  1.5453, 1.7855, 2.5804, 2.0615, 1.3955,
		      2.3667, 2.3994, 1.4411, 3.8869, 4.4359, 4.3505, 2.5792, 3.1402, 2.1463,
		      3.1961, 2.4541, 3.3972, 2.7104, 4.0965, 3.8497, 4.3566},
     LP_MWU_EXACT, 260.0, 0.3159459254811896},
    {"asym_ties_small", 7, 6, (const double[]){1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0},
     (const double[]){2.0, 3.0, 4.0, 4.0, 5.0, 5.0}, LP_MWU_ASYMPTOTIC, 8.5, 0.07826242947714618},
    {"asym_ties_large", 100, 120,
     (const double[]){42.0, 41.0, 52.0, 47.0, 52.0, 51.0, 51.0, 55.0, 53.0, 52.0, 46.0, 59.0, 51.0,
		      56.0, 52.0, 56.0, 51.0, 51.0, 51.0, 46.0, 47.0, 49.0, 49.0, 45.0, 62.0, 45.0,
		      48.0, 62.0, 47.0, 54.0, 53.0, 49.0, 43.0, 42.0, 50.0, 52.0, 39.0, 51.0, 47.0,
		      54.0, 51.0, 46.0, 48.0, 50.0, 57.0, 65.0, 52.0, 51.0, 54.0, 50.0, 54.0, 52.0,
		      50.0, 46.0, 51.0, 55.0, 51.0, 58.0, 55.0, 50.0, 59.0, 45.0, 56.0, 60.0, 49.0,
		      50.0, 55.0, 58.0, 53.0, 52.0, 55.0, 52.0, 45.0, 50.0, 51.0, 43.0, 53.0, 47.0,
		      54.0, 43.0, 46.0, 43.0, 57.0, 57.0, 58.0, 58.0, 55.0, 55.0, 42.0, 52.0, 48.0,
		      49.0, 44.0, 57.0, 51.0, 43.0, 53.0, 50.0, 45.0, 49.0},
     (const double[]){
	 47.0, 40.0, 44.0, 54.0, 53.0, 52.0, 45.0, 48.0, 51.0, 54.0, 47.0, 46.0, 57.0, 51.0, 49.0,
	 47.0, 48.0, 59.0, 56.0, 49.0, 45.0, 59.0, 59.0, 57.0, 55.0, 42.0, 45.0, 54.0, 50.0, 52.0,
	 48.0, 48.0, 54.0, 49.0, 51.0, 52.0, 52.0, 57.0, 58.0, 44.0, 50.0, 48.0, 55.0, 46.0, 55.0,
	 54.0, 54.0, 46.0, 50.0, 46.0, 53.0, 56.0, 43.0, 47.0, 50.0, 48.0, 58.0, 50.0, 52.0, 45.0,
	 59.0, 52.0, 55.0, 51.0, 40.0, 43.0, 45.0, 53.0, 48.0, 53.0, 52.0, 52.0, 56.0, 52.0, 43.0,
	 48.0, 59.0, 46.0, 58.0, 59.0, 48.0, 53.0, 44.0, 55.0, 47.0, 44.0, 49.0, 49.0, 48.0, 52.0,
	 50.0, 48.0, 56.0, 63.0, 51.0, 47.0, 46.0, 54.0, 50.0, 51.0, 41.0, 45.0, 45.0, 56.0, 50.0,
	 39.0, 53.0, 57.0, 58.0, 37.0, 52.0, 55.0, 54.0, 50.0, 42.0, 49.0, 49.0, 54.0, 54.0, 50.0},
     LP_MWU_ASYMPTOTIC, 6259.0, 0.5816800139867284},
    {"asym_noties_30x31", 30, 31,
     (const double[]){0.8471,	-1.05662, -0.68264, -0.03105, 0.57359, -0.32215, 1.23065, 0.41091,
		      -0.94915, 0.08559,  -0.8875,  -0.96256, -1.4274, 1.39757,	 0.90941, -1.60058,
		      1.11292,	0.96096,  -0.36335, 0.50719,  2.24496, 0.28623,	 0.4219,  1.12235,
		      -1.03466, -1.26592, -1.40941, -0.07717, 0.87276, -0.85875},
     (const double[]){-0.86919, 0.71724,  0.15059,  1.12971,  0.40184,	0.3511,	  0.45366, 0.5755,
		      -0.42226, -0.5817,  2.13186,  3.63396,  1.66547,	-1.08337, 0.57793, 1.73873,
		      -1.07053, 0.06391,  0.14298,  -0.36356, -0.28441, 1.56803,  0.10261, 0.32744,
		      2.27365,	-0.29395, -1.35958, 1.20502,  2.57097,	0.76786,  0.86346},
     LP_MWU_ASYMPTOTIC, 352.0, 0.10459954557197432},
    {"asym_forced_small", 4, 5, (const double[]){1.5, 2.5, 3.5, 4.5},
     (const double[]){2.75, 5.25, 6.25, 7.25, 8.25}, LP_MWU_ASYMPTOTIC, 2.0, 0.06619257972219345},
};

static int failures;

static void expect_near(const char *what, double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol)) {
		printf("FAIL %s: got %.12g, want %.12g\n", what, got, want);
		failures++;
	} else {
		printf("ok %s: %.12g\n", what, got);
	}
}

static void test_mwu(void)
{
	char what[128];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mwu_case *c = &cases[i];
		struct lp_mwu r;
		/* Automatic choice must agree with the method the reference used. */
		if (!strstr(c->name, "forced") &&
		    lp_mwu_test(c->x, c->n1, c->y, c->n2, 0, &r) == 0 && r.method != c->method) {
			printf("FAIL %s: auto picked method %d, reference used %d\n", c->name,
			       r.method, c->method);
			failures++;
		}
		if (lp_mwu_test(c->x, c->n1, c->y, c->n2, c->method, &r)) {
			printf("FAIL %s: lp_mwu_test failed\n", c->name);
			failures++;
			continue;
		}
		snprintf(what, sizeof(what), "%s U1", c->name);
		expect_near(what, r.u1, c->u1, 1e-9);
		snprintf(what, sizeof(what), "%s p", c->name);
		expect_near(what, r.p, c->p, 1e-6);
		/* Swapping the samples leaves a two-sided p unchanged. */
		lp_mwu_test(c->y, c->n2, c->x, c->n1, c->method, &r);
		snprintf(what, sizeof(what), "%s p swapped", c->name);
		expect_near(what, r.p, c->p, 1e-6);
	}
	/* All values tied: scipy returns 1.0. */
	static const double a[] = {3, 3, 3}, b[] = {3, 3, 3, 3};
	struct lp_mwu r;
	lp_mwu_test(a, 3, b, 4, 0, &r);
	expect_near("all tied p", r.p, 1.0, 1e-12);
	if (r.method != LP_MWU_ASYMPTOTIC) {
		printf("FAIL ties must use the asymptotic method\n");
		failures++;
	}
	if (lp_mwu_test(a, 0, b, 4, 0, &r) == 0) {
		printf("FAIL empty sample accepted\n");
		failures++;
	}
}

static void test_holm(void)
{
	static const double p[] = {0.01, 0.04, 0.03, 0.005, 0.5, 0.04};
	static const double want[] = {0.05, 0.12, 0.12, 0.03, 0.5, 0.12};
	double adj[6];
	char what[64];
	lp_holm(p, 6, adj);
	for (int i = 0; i < 6; i++) {
		snprintf(what, sizeof(what), "holm[%d]", i);
		expect_near(what, adj[i], want[i], 1e-12);
	}
}

static void test_quantile(void)
{
	/* numpy.percentile([5, 1, 3, 2, 4, 10], q) for q = 0, 50, 90, 99, 99.9, 100. */
	double v[] = {5.0, 1.0, 3.0, 2.0, 4.0, 10.0};
	static const double q[] = {0, 0.5, 0.9, 0.99, 0.999, 1};
	static const double want[] = {1.0, 3.5, 7.5, 9.75, 9.975000000000005, 10.0};
	char what[64];
	lp_sort_doubles(v, 6);
	for (int i = 0; i < 6; i++) {
		snprintf(what, sizeof(what), "quantile %g", q[i]);
		expect_near(what, lp_quantile_sorted(v, 6, q[i]), want[i], 1e-9);
	}
	/* numpy.percentile(v, q, method='inverted_cdf'): nearest rank. */
	static const double want_nr[] = {1.0, 3.0, 10.0, 10.0, 10.0, 10.0};
	for (int i = 0; i < 6; i++) {
		snprintf(what, sizeof(what), "nearest-rank quantile %g", q[i]);
		expect_near(what, lp_quantile_nearest(v, 6, q[i]), want_nr[i], 0);
	}
	double h[100];
	for (int i = 0; i < 100; i++)
		h[i] = i + 1;
	expect_near("nearest-rank p50 of 1..100", lp_quantile_nearest(h, 100, 0.5), 50, 0);
	expect_near("nearest-rank p99 of 1..100", lp_quantile_nearest(h, 100, 0.99), 99, 0);
	expect_near("nearest-rank p99.9 of 1..100", lp_quantile_nearest(h, 100, 0.999), 100, 0);
	expect_near("mean", lp_mean(v, 6), 25.0 / 6, 1e-12);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Radix sort agrees with qsort on negatives, zeros, duplicates, 5000 values. */
static void test_sort(void)
{
	enum { N = 5000 };
	static double a[N], b[N];
	struct lp_rng r;
	lp_rng_seed(&r, 1);
	for (int i = 0; i < N; i++)
		a[i] = b[i] = i % 7 == 0 ? (double)(i % 3) : (lp_rng_uniform(&r) - 0.3) * 1e7;
	lp_sort_doubles(a, N);
	qsort(b, N, sizeof(double), cmp_d);
	expect_near("radix sort == qsort", memcmp(a, b, sizeof(a)) == 0, 1, 0);
}

/* The weighted union selection equals sorting the repeated concatenation. */
static void test_kth(void)
{
	struct lp_rng r;
	lp_rng_seed(&r, 2);
	for (int t = 0; t < 200; t++) {
		double v[3][40], all[3 * 40 * 3];
		size_t n[3], m = 0;
		unsigned w[3];
		const double *pv[3] = {v[0], v[1], v[2]};
		for (int k = 0; k < 3; k++) {
			n[k] = 1 + (size_t)(lp_rng_uniform(&r) * 39);
			w[k] = (unsigned)(lp_rng_uniform(&r) * 3);
			for (size_t i = 0; i < n[k]; i++)
				v[k][i] = (double)(int)(lp_rng_uniform(&r) * 30); /* ties */
			qsort(v[k], n[k], sizeof(double), cmp_d);
			for (unsigned c = 0; c < w[k]; c++)
				for (size_t i = 0; i < n[k]; i++)
					all[m++] = v[k][i];
		}
		if (!m)
			continue;
		qsort(all, m, sizeof(double), cmp_d);
		struct lp_boot_runs br;
		lp_boot_runs_init(&br, pv, n, 3);
		for (size_t k = 1; k <= m; k++)
			if (lp_boot_kth(&br, w, k) != all[k - 1]) {
				printf("FAIL kth: trial %d rank %zu\n", t, k);
				failures++;
				break;
			}
		lp_boot_runs_free(&br);
	}
}

/*
 * The Beta shortcut draws the k-th order statistic of a resample with the
 * distribution brute-force resampling gives: quantiles of 20000 draws of
 * each agree (p90 of 60 lognormal-ish values, and the median).
 */
static void test_beta_trick(void)
{
	enum { N = 60, B = 20000 };
	double v[N], *brute = malloc(B * sizeof(double)), *fast = malloc(B * sizeof(double)),
		     tmp[N];
	struct lp_rng r;
	lp_rng_seed(&r, 3);
	for (int i = 0; i < N; i++)
		v[i] = exp(lp_rng_normal(&r) * 0.5);
	qsort(v, N, sizeof(double), cmp_d);
	const double *pv[1] = {v};
	size_t n[1] = {N};
	struct lp_boot_runs br;
	lp_boot_runs_init(&br, pv, n, 1);
	static const double qs[] = {0.5, 0.9};
	for (int qi = 0; qi < 2; qi++) {
		for (int b = 0; b < B; b++) {
			for (int i = 0; i < N; i++)
				tmp[i] = v[(size_t)(lp_rng_uniform(&r) * N)];
			qsort(tmp, N, sizeof(double), cmp_d);
			brute[b] = lp_quantile_nearest(tmp, N, qs[qi]);
		}
		lp_boot_draw(&br, qs[qi], &r, fast, B);
		qsort(brute, B, sizeof(double), cmp_d);
		qsort(fast, B, sizeof(double), cmp_d);
		for (double c = 0.05; c < 1; c += 0.225) {
			char what[64];
			snprintf(what, sizeof(what), "q%.2f: draw quantile %.3f", qs[qi], c);
			double x = brute[(size_t)(c * B)], y = fast[(size_t)(c * B)];
			expect_near(what, y, x, 0.04 * x);
		}
	}
	/* the mean: resampled one by one; centre and spread as brute force */
	lp_boot_draw(&br, -1, &r, fast, B);
	double m = 0, s2 = 0, mu = lp_mean(v, N), var = 0;
	for (int b = 0; b < B; b++)
		m += fast[b] / B;
	for (int b = 0; b < B; b++)
		s2 += (fast[b] - m) * (fast[b] - m) / (B - 1);
	for (int i = 0; i < N; i++)
		var += (v[i] - mu) * (v[i] - mu) / N;
	expect_near("bootstrap mean centre", m, mu, 0.01 * mu);
	expect_near("bootstrap mean spread", sqrt(s2), sqrt(var / N), 0.05 * sqrt(var / N));
	lp_boot_runs_free(&br);
	free(brute);
	free(fast);
}

int main(void)
{
	test_sort();
	test_kth();
	test_beta_trick();
	test_mwu();
	test_holm();
	test_quantile();
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
