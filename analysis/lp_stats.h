/* SPDX-License-Identifier: MIT */
/*
 * Statistics for run comparison: two-sided Mann-Whitney U test, Holm-
 * Bonferroni adjustment, quantiles. Pure functions over double arrays, no
 * SQLite, so unit tests check them against reference values directly.
 */
#ifndef LP_STATS_H
#define LP_STATS_H

#include <stddef.h>

/* Exact U distribution is used when the pooled samples hold no ties and
 * n1 + n2 <= LP_MWU_EXACT_MAX_N (counts stay below 2^53: C(50,25) ~ 1.3e14). */
#define LP_MWU_EXACT_MAX_N 50

enum lp_mwu_method {
	LP_MWU_EXACT = 1,      /* permutation distribution of U, no ties */
	LP_MWU_ASYMPTOTIC = 2, /* normal approximation, tie + continuity corrected */
};

struct lp_mwu {
	double u1; /* U statistic of sample x: pairs (x_i > y_j) + 0.5 ties */
	double p;  /* two-sided p-value in [0, 1] */
	double z;  /* normal score (asymptotic only, 0 for exact) */
	enum lp_mwu_method method;
};

/*
 * Two-sided Mann-Whitney U test of x (n1) against y (n2). Matches
 * scipy.stats.mannwhitneyu(x, y, alternative='two-sided') with
 * method='exact' when there are no ties and n1 + n2 <= LP_MWU_EXACT_MAX_N,
 * otherwise method='asymptotic', use_continuity=True (0.5 continuity
 * correction, tie-corrected variance). force_method 0 picks as above.
 * Returns 0, -EINVAL for an empty sample, -ENOMEM.
 */
int lp_mwu_test(const double *x, size_t n1, const double *y, size_t n2, int force_method,
		struct lp_mwu *out);

/* P(U >= u) under H0 for sample sizes n1, n2 (no ties); < 0 on -ENOMEM. */
double lp_mwu_exact_sf(size_t n1, size_t n2, double u);

/*
 * Holm-Bonferroni step-down adjustment of m p-values, in place order kept:
 * adj[i] = max over j <= rank(i) of min(1, (m - j) * p_(j)), 0-based j on
 * ascending p. Same as statsmodels multipletests(method='holm'). Reject
 * H0_i at family-wise level alpha iff adj[i] <= alpha. Returns 0 or -ENOMEM.
 */
int lp_holm(const double *p, size_t m, double *adj);

/*
 * Quantile q in [0, 1] of n ascending values by linear interpolation
 * between closest ranks (h = (n - 1) q), numpy.percentile's default
 * ('linear'). n == 0 returns NAN.
 */
double lp_quantile_sorted(const double *sorted, size_t n, double q);

/*
 * Nearest-rank quantile: sorted[ceil(q n) - 1] clamped to [0, n - 1], the
 * definition report --breakdown uses (lp_pctl in lp_breakdown.c) and
 * numpy.percentile(method='inverted_cdf'). diff and check use this one so
 * their numbers equal the breakdown's. n == 0 returns NAN.
 */
double lp_quantile_nearest(const double *sorted, size_t n, double q);

/* Sorts v ascending in place (a radix sort above 1024 values, qsort below
 * or without memory for it). */
void lp_sort_doubles(double *v, size_t n);
double lp_mean(const double *v, size_t n);

#endif
