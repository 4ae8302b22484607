/* SPDX-License-Identifier: MIT */
#include "lp_boot.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- generator */

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void lp_rng_seed(struct lp_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
}

uint64_t lp_rng_next(struct lp_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double lp_rng_uniform(struct lp_rng *r)
{
	return ((double)(lp_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double lp_rng_normal(struct lp_rng *r)
{
	/* Box-Muller; the second value is dropped to keep the state simple. */
	double u = lp_rng_uniform(r), v = lp_rng_uniform(r);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Marsaglia and Tsang (2000); shape < 1 through Gamma(shape + 1) U^(1/shape). */
double lp_rng_gamma(struct lp_rng *r, double shape)
{
	if (shape < 1)
		return lp_rng_gamma(r, shape + 1) * pow(lp_rng_uniform(r), 1 / shape);
	double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);
	for (;;) {
		double x = lp_rng_normal(r), v = 1 + c * x;
		if (v <= 0)
			continue;
		v = v * v * v;
		double u = lp_rng_uniform(r);
		if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v)))
			return d * v;
	}
}

double lp_rng_beta(struct lp_rng *r, double a, double b)
{
	double x = lp_rng_gamma(r, a), y = lp_rng_gamma(r, b);
	return x / (x + y);
}

/* ---------------------------------------------------------------- runs */

int lp_boot_runs_init(struct lp_boot_runs *s, const double *const *v, const size_t *n, size_t nruns)
{
	memset(s, 0, sizeof(*s));
	s->v = v;
	s->n = n;
	s->nruns = nruns;
	s->sum = calloc(nruns + 1, sizeof(double));
	s->sumsq = calloc(nruns + 1, sizeof(double));
	if (!s->sum || !s->sumsq) {
		lp_boot_runs_free(s);
		return -ENOMEM;
	}
	for (size_t r = 0; r < nruns; r++) {
		for (size_t i = 0; i < n[r]; i++) {
			s->sum[r] += v[r][i];
			s->sumsq[r] += v[r][i] * v[r][i];
		}
		s->total += n[r];
	}
	return 0;
}

void lp_boot_runs_free(struct lp_boot_runs *s)
{
	free(s->sum);
	free(s->sumsq);
	s->sum = s->sumsq = NULL;
}

/* First index in [lo, hi) whose value is >= x (strict: > x). */
static size_t bound(const double *v, size_t lo, size_t hi, double x, int strict)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strict ? v[mid] <= x : v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Selection in the weighted union of sorted runs: a pivot from the middle
 * of the widest remaining range splits every range by binary search; the
 * side that holds rank k stays. Each round halves the widest range, so
 * O(R log n) rounds of O(R log n). lo/hi are scratch of nruns each.
 */
static double kth(const struct lp_boot_runs *s, const unsigned *w, size_t k, size_t *lo, size_t *hi)
{
	size_t only = SIZE_MAX, base = 0;
	for (size_t i = 0; i < s->nruns; i++) {
		unsigned wi = w ? w[i] : 1;
		lo[i] = 0;
		hi[i] = wi ? s->n[i] : 0;
		if (hi[i])
			only = only == SIZE_MAX ? i : SIZE_MAX - 1;
	}
	assert(only != SIZE_MAX && k >= 1);
	if (only != SIZE_MAX - 1) /* one run: its values each repeated w times */
		return s->v[only][(k - 1) / (w ? w[only] : 1)];
	for (;;) {
		size_t best = SIZE_MAX, width = 0;
		for (size_t i = 0; i < s->nruns; i++)
			if (hi[i] - lo[i] > width) {
				width = hi[i] - lo[i];
				best = i;
			}
		assert(best != SIZE_MAX);
		double pivot = s->v[best][lo[best] + width / 2];
		size_t below = base, equal = 0;
		for (size_t i = 0; i < s->nruns; i++) {
			size_t wi = w ? w[i] : 1, a = bound(s->v[i], lo[i], hi[i], pivot, 0),
			       b = bound(s->v[i], a, hi[i], pivot, 1);
			below += wi * (a - lo[i]);
			equal += wi * (b - a);
		}
		if (k <= below) {
			for (size_t i = 0; i < s->nruns; i++)
				hi[i] = bound(s->v[i], lo[i], hi[i], pivot, 0);
		} else if (k <= below + equal) {
			return pivot;
		} else {
			for (size_t i = 0; i < s->nruns; i++)
				lo[i] = bound(s->v[i], lo[i], hi[i], pivot, 1);
			base = below + equal;
		}
	}
}

double lp_boot_kth(const struct lp_boot_runs *s, const unsigned *w, size_t k)
{
	size_t *sc = malloc(2 * (s->nruns + 1) * sizeof(*sc));
	if (!sc)
		return NAN;
	double v = kth(s, w, k, sc, sc + s->nruns + 1);
	free(sc);
	return v;
}

/* Nearest rank (1-based) of q among n: ceil(q n) in [1, n], as
 * lp_quantile_nearest. */
static size_t rank_of(size_t n, double q)
{
	double r = ceil(q * (double)n);
	return r < 1 ? 1 : r > (double)n ? n : (size_t)r;
}

void lp_boot_tails(size_t n, double q, size_t *below, size_t *above)
{
	size_t k = n ? rank_of(n, q) : 0;
	*below = k ? k - 1 : 0;
	*above = n - k;
}

double lp_boot_estimate(const struct lp_boot_runs *s, double q)
{
	if (!s->total)
		return NAN;
	if (q < 0) {
		double t = 0;
		for (size_t r = 0; r < s->nruns; r++)
			t += s->sum[r];
		return t / (double)s->total;
	}
	return lp_boot_kth(s, NULL, rank_of(s->total, q));
}

static double draw_one(const struct lp_boot_runs *s, double q, struct lp_rng *rng, unsigned *w,
		       size_t *lo, size_t *hi)
{
	size_t n = 0;
	double sum = 0, sumsq = 0;
	if (s->nruns >= 2) {
		memset(w, 0, s->nruns * sizeof(*w));
		for (size_t j = 0; j < s->nruns; j++)
			w[(size_t)(lp_rng_uniform(rng) * (double)s->nruns)]++;
	} else {
		w[0] = 1;
	}
	for (size_t r = 0; r < s->nruns; r++) {
		n += w[r] * s->n[r];
		sum += w[r] * s->sum[r];
		sumsq += w[r] * s->sumsq[r];
	}
	if (!n)
		return NAN;
	if (q < 0 && n <= LP_BOOT_EXACT_MEAN_N) {
		/* requests drawn one by one, within each drawn run */
		double t = 0;
		for (size_t r = 0; r < s->nruns; r++)
			for (unsigned c = 0; c < w[r]; c++)
				for (size_t i = 0; i < s->n[r]; i++)
					t += s->v[r]
						 [(size_t)(lp_rng_uniform(rng) * (double)s->n[r])];
		return t / (double)n;
	}
	if (q < 0) {
		double m = sum / (double)n, var = sumsq / (double)n - m * m;
		return m + sqrt(var > 0 ? var / (double)n : 0) * lp_rng_normal(rng);
	}
	size_t k = rank_of(n, q);
	double b = lp_rng_beta(rng, (double)k, (double)(n - k + 1));
	double j = ceil(b * (double)n);
	return kth(s, w, j < 1 ? 1 : j > (double)n ? n : (size_t)j, lo, hi);
}

int lp_boot_draw(const struct lp_boot_runs *s, double q, struct lp_rng *rng, double *out, size_t nb)
{
	unsigned *w = calloc(s->nruns + 1, sizeof(*w));
	size_t *sc = malloc(2 * (s->nruns + 1) * sizeof(*sc));
	if (!w || !sc) {
		free(w);
		free(sc);
		return -ENOMEM;
	}
	for (size_t b = 0; b < nb; b++)
		out[b] = draw_one(s, q, rng, w, sc, sc + s->nruns + 1);
	free(w);
	free(sc);
	return 0;
}
