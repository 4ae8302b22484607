/* SPDX-License-Identifier: MIT */
#include "lp_stats.h"
#include "lp_util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* IEEE-754 bits made unsigned-ordered: negatives flipped, sign set on the rest. */
static uint64_t radix_key(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u >> 63 ? ~u : u | 1ull << 63;
}

static double radix_val(uint64_t u)
{
	double d;
	u = u >> 63 ? u & ~(1ull << 63) : ~u;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* 32 when every value is a whole number in [0, 2^32) (a count, a time in
 * ns under 4.29 s), 64 when in [0, 2^53), else 0. Whole numbers sort by
 * their integer: durations of up to 4 ms vary in 22 bits that way, in ~33
 * as doubles (exponent and mantissa both change), and below 2^32 the keys
 * take half the memory traffic. */
static int all_whole(const double *v, size_t n)
{
	double max = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] >= 0 && v[i] < 0x1p53) || signbit(v[i]) ||
		    (double)(uint64_t)v[i] != v[i])
			return 0;
		max = v[i] > max ? v[i] : max;
	}
	return max < 0x1p32 ? 32 : 64;
}

/*
 * LSD radix sort of n keys of type T in a (b: scratch of n) over only the
 * bits where they differ (diff: every key XOR the first, OR'ed), in as few
 * passes of at most 11 bits as cover them: 2-3 passes for durations in ns
 * (8-bit digits: 4-5 passes). Returns the array holding the sorted keys,
 * NULL without memory. A million durations sort in ~38 ms (64-bit keys of
 * doubles in 8-bit digits: ~60, qsort: ~150).
 */
#define RADIX_MAX_BITS 11
#define RADIX_DEFINE(name, T, CLZ, CTZ)                                                            \
	static T *name(T *a, T *b, size_t n, T diff)                                               \
	{                                                                                          \
		if (!diff) /* every key alike: sorted */                                           \
			return a;                                                                  \
		int lo = CTZ(diff), bits = (int)(8 * sizeof(T)) - CLZ(diff) - lo;                  \
		int passes = (bits + RADIX_MAX_BITS - 1) / RADIX_MAX_BITS,                         \
		    w = (bits + passes - 1) / passes;                                              \
		size_t nb = (size_t)1 << w, *cnt = calloc((size_t)passes * nb, sizeof(*cnt));      \
		if (!cnt)                                                                          \
			return NULL;                                                               \
		for (size_t i = 0; i < n; i++)                                                     \
			for (int p = 0; p < passes; p++)                                           \
				cnt[(size_t)p * nb + ((a[i] >> (lo + p * w)) & (nb - 1))]++;       \
		for (int p = 0; p < passes; p++) {                                                 \
			size_t off = 0, *c = cnt + (size_t)p * nb;                                 \
			for (size_t k = 0; k < nb; k++) {                                          \
				size_t t = c[k];                                                   \
				c[k] = off;                                                        \
				off += t;                                                          \
			}                                                                          \
			for (size_t i = 0; i < n; i++)                                             \
				b[c[(a[i] >> (lo + p * w)) & (nb - 1)]++] = a[i];                  \
			T *t = a;                                                                  \
			a = b;                                                                     \
			b = t;                                                                     \
		}                                                                                  \
		free(cnt);                                                                         \
		return a;                                                                          \
	}
RADIX_DEFINE(radix32, uint32_t, __builtin_clz, __builtin_ctz)
RADIX_DEFINE(radix64, uint64_t, __builtin_clzll, __builtin_ctzll)

static int radix_sort(double *v, size_t n)
{
	int whole = all_whole(v, n);
	if (whole == 32) {
		uint32_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b)), diff = 0, *s;
		lp_huge_advise(a, n * sizeof(*a));
		lp_huge_advise(b, n * sizeof(*b));
		for (size_t i = 0; a && b && i < n; i++) {
			a[i] = (uint32_t)v[i];
			diff |= a[i] ^ a[0];
		}
		if (a && b && (s = radix32(a, b, n, diff)))
			for (size_t i = 0; i < n; i++)
				v[i] = (double)s[i];
		else
			s = NULL;
		free(a);
		free(b);
		return s ? 0 : -ENOMEM;
	}
	uint64_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b)), diff = 0, *s;
	lp_huge_advise(a, n * sizeof(*a));
	lp_huge_advise(b, n * sizeof(*b));
	for (size_t i = 0; a && b && i < n; i++) {
		a[i] = whole ? (uint64_t)v[i] : radix_key(v[i]);
		diff |= a[i] ^ a[0];
	}
	if (a && b && (s = radix64(a, b, n, diff)))
		for (size_t i = 0; i < n; i++)
			v[i] = whole ? (double)s[i] : radix_val(s[i]);
	else
		s = NULL;
	free(a);
	free(b);
	return s ? 0 : -ENOMEM;
}

void lp_sort_doubles(double *v, size_t n)
{
	if (n > 1024 && radix_sort(v, n) == 0)
		return;
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

double lp_mean(const double *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : NAN;
}

double lp_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

double lp_quantile_nearest(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double r = ceil(q * (double)n) - 1;
	if (r < 0)
		r = 0;
	if (r > (double)n - 1)
		r = (double)n - 1;
	return sorted[(size_t)r];
}

/*
 * The number of orderings of n1 x's and n2 y's with U = u is the coefficient
 * of q^u in the Gaussian binomial [n1+n2 choose n1]_q = prod_{k=1..n1}
 * (1 - q^(n2+k)) / (1 - q^k). Each factor is applied in place; every
 * intermediate is an integer below C(n1+n2, n1), exact in a double.
 */
static double *mwu_counts(size_t n1, size_t n2)
{
	size_t deg = n1 * n2;
	double *c = calloc(deg + 1, sizeof(*c));
	if (!c)
		return NULL;
	c[0] = 1;
	for (size_t k = 1; k <= n1; k++) {
		size_t a = n2 + k;
		for (size_t u = deg; u >= a; u--)
			c[u] -= c[u - a];
		for (size_t u = k; u <= deg; u++)
			c[u] += c[u - k];
	}
	return c;
}

double lp_mwu_exact_sf(size_t n1, size_t n2, double u)
{
	double *c = mwu_counts(n1, n2);
	if (!c)
		return -1;
	size_t deg = n1 * n2;
	double tail = 0, total = 0;
	for (size_t v = 0; v <= deg; v++) {
		total += c[v];
		if ((double)v >= u)
			tail += c[v];
	}
	free(c);
	return tail / total;
}

struct ranked {
	double v;
	int from_x;
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

/* Midranks of the pooled sample: fills the rank sum of x and sum(t^3 - t). */
static int rank_pool(const double *x, size_t n1, const double *y, size_t n2, double *r1,
		     double *tie_term)
{
	size_t n = n1 + n2;
	struct ranked *p = malloc(n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n1; i++)
		p[i] = (struct ranked){x[i], 1};
	for (size_t i = 0; i < n2; i++)
		p[n1 + i] = (struct ranked){y[i], 0};
	qsort(p, n, sizeof(*p), cmp_ranked);
	*r1 = 0;
	*tie_term = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && p[j + 1].v == p[i].v)
			j++;
		double t = (double)(j - i + 1), mid = ((double)i + (double)j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			if (p[k].from_x)
				*r1 += mid;
		*tie_term += t * t * t - t;
		i = j + 1;
	}
	free(p);
	return 0;
}

int lp_mwu_test(const double *x, size_t n1, const double *y, size_t n2, int force_method,
		struct lp_mwu *out)
{
	double r1, tie_term;
	memset(out, 0, sizeof(*out));
	if (n1 == 0 || n2 == 0)
		return -EINVAL;
	int rc = rank_pool(x, n1, y, n2, &r1, &tie_term);
	if (rc)
		return rc;
	double fn1 = (double)n1, fn2 = (double)n2, n = fn1 + fn2;
	out->u1 = r1 - fn1 * (fn1 + 1) / 2;
	/* Two-sided: the upper tail of the larger of U1 and U2 = n1 n2 - U1, doubled. */
	double u = fmax(out->u1, fn1 * fn2 - out->u1);
	int method = force_method;
	if (!method)
		method = tie_term == 0 && n1 + n2 <= LP_MWU_EXACT_MAX_N ? LP_MWU_EXACT
									: LP_MWU_ASYMPTOTIC;
	out->method = method;
	double p;
	if (method == LP_MWU_EXACT) {
		p = lp_mwu_exact_sf(n1 < n2 ? n1 : n2, n1 < n2 ? n2 : n1, u);
		if (p < 0)
			return -ENOMEM;
	} else {
		double mu = fn1 * fn2 / 2;
		double s = sqrt(fn1 * fn2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
		double num = u - mu - 0.5;
		/* All values tied: s == 0, no evidence either way. */
		out->z = s > 0 ? num / s : -INFINITY;
		p = 0.5 * erfc(out->z / M_SQRT2);
	}
	p *= 2;
	out->p = p > 1 ? 1 : p < 0 ? 0 : p;
	return 0;
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;
	int c = cmp_double(&x->p, &y->p);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

int lp_holm(const double *p, size_t m, double *adj)
{
	struct pidx *s = malloc((m ? m : 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < m; i++)
		s[i] = (struct pidx){p[i], i};
	qsort(s, m, sizeof(*s), cmp_pidx);
	double run = 0;
	for (size_t j = 0; j < m; j++) {
		double a = (double)(m - j) * s[j].p;
		if (a > 1)
			a = 1;
		if (a > run)
			run = a;
		adj[s[j].i] = run;
	}
	free(s);
	return 0;
}
