/* SPDX-License-Identifier: MIT */
/*
 * Bootstrap of one metric (a quantile or the mean) of a side made of runs,
 * for the confidence intervals of latprof diff and latprof check.
 *
 * A side is R runs, each a sorted array of per-request samples. One
 * resample is hierarchical when R >= 2: R runs drawn with replacement,
 * then requests drawn with replacement from the drawn runs. The second
 * stage needs no per-request draws (1 M requests x 2000 resamples would
 * not fit the 2 s budget):
 *  - quantile: the k-th smallest of N requests drawn with replacement is
 *    the sample's value at rank ceil(N B), B ~ Beta(k, N - k + 1), since
 *    P(Bin(N, j/N) >= k) = I_{j/N}(k, N - k + 1); exact, O(R log^2 n);
 *  - mean: requests drawn one by one up to LP_BOOT_EXACT_MEAN_N of them
 *    (a single outlier must show as the skew it gives), beyond that the
 *    normal limit with the drawn runs' variance / N.
 * Pure functions over double arrays and a seeded generator: the same
 * inputs give the same interval on every machine.
 */
#ifndef LP_BOOT_H
#define LP_BOOT_H

#include <stddef.h>
#include <stdint.h>

#define LP_BOOT_EXACT_MEAN_N 20000

/* xoshiro256** */
struct lp_rng {
	uint64_t s[4];
};
void lp_rng_seed(struct lp_rng *r, uint64_t seed);
uint64_t lp_rng_next(struct lp_rng *r);
double lp_rng_uniform(struct lp_rng *r); /* in (0, 1) */
double lp_rng_normal(struct lp_rng *r);
double lp_rng_gamma(struct lp_rng *r, double shape);
double lp_rng_beta(struct lp_rng *r, double a, double b);

/* A side: nruns sorted arrays. sum/sumsq per run are filled by
 * lp_boot_runs_init (for the mean). */
struct lp_boot_runs {
	const double *const *v;
	const size_t *n;
	size_t nruns;
	size_t total;
	double *sum, *sumsq; /* [nruns] */
};

int lp_boot_runs_init(struct lp_boot_runs *s, const double *const *v, const size_t *n,
		      size_t nruns);
void lp_boot_runs_free(struct lp_boot_runs *s);

/* k-th smallest (1-based) of the union of runs, run i counted w[i] times
 * (w NULL: once each). The union must hold at least k values. */
double lp_boot_kth(const struct lp_boot_runs *s, const unsigned *w, size_t k);

/* Nearest-rank quantile (q in [0, 1]) or the mean (q < 0) of all runs
 * pooled: the point estimate. NAN when the side is empty. */
double lp_boot_estimate(const struct lp_boot_runs *s, double q);

/* Requests below and above the nearest-rank quantile q of the pooled side:
 * the "enough data" test of a quantile. */
void lp_boot_tails(size_t n, double q, size_t *below, size_t *above);

/* out[0..nb): nb resampled values of the metric (q < 0: mean); NAN for a
 * resample whose drawn runs hold no sample. Resamples runs when nruns >= 2.
 * Returns 0 or -ENOMEM. */
int lp_boot_draw(const struct lp_boot_runs *s, double q, struct lp_rng *rng, double *out,
		 size_t nb);

#endif
