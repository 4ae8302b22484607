/* SPDX-License-Identifier: MIT */
/*
 * lp_diff_compute on sides built in memory (no database): every row's
 * estimates against a brute-force nearest-rank quantile and mean, the
 * verdicts of a scaled sample (x1.5 a regression, x0.5 an improvement, x1
 * unchanged), the minimum-sample boundary (19 requests: not enough data,
 * 20: tested), a stage on one side only, the per-request lock totals and
 * their order, and new/resolved findings as set differences.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_check.h"
#include "lp_diff.h"
#include "lp_rnd.h"

/* The smallest sample x with #(v <= x) >= q n: the nearest-rank quantile
 * defined by counting, not by an index formula. */
static double ref_quantile(const double *v, size_t n, double q)
{
	double best = NAN;
	for (size_t i = 0; i < n; i++) {
		size_t le = 0;
		for (size_t j = 0; j < n; j++)
			le += v[j] <= v[i];
		if ((double)le >= q * (double)n && (isnan(best) || v[i] < best))
			best = v[i];
	}
	if (isnan(best)) /* q n above n: the maximum */
		for (size_t i = 0; i < n; i++)
			best = isnan(best) || v[i] > best ? v[i] : best;
	return best;
}

static double ref_mean(const double *v, size_t n)
{
	long double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return (double)(s / (long double)n);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One run's series: ascending samples, run_v[0] the pooled array. */
static void series_set(struct lp_series *s, const char *name, const double *v, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->name = (char *)name;
	s->v = malloc((n ? n : 1) * sizeof(*s->v));
	memcpy(s->v, v, n * sizeof(*v));
	qsort(s->v, n, sizeof(*s->v), cmp_dbl);
	s->n = s->cap = n;
	s->run_v = malloc(sizeof(*s->run_v));
	s->run_n = malloc(sizeof(*s->run_n));
	s->run_v[0] = s->v;
	s->run_n[0] = n;
}

static void series_drop(struct lp_series *s)
{
	free(s->v);
	free(s->run_v);
	free(s->run_n);
}

/* n request latencies around 1 ms, spread by the seeded generator, times k. */
static void draw(double *v, size_t n, double k, unsigned long long seed)
{
	lp_rnd_state = seed;
	for (size_t i = 0; i < n; i++)
		v[i] = k * (1e6 + (double)(rnd() % 200000));
}

static const struct lp_diff_row *row_of(const struct lp_diff *d, const char *scope,
					const char *metric)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].scope, scope) && !strcmp(d->rows[i].metric_name, metric))
			return &d->rows[i];
	return NULL;
}

static struct lp_diff_opts opts_default(void)
{
	return (struct lp_diff_opts){.threshold = 0.05, .alpha = 0.05, .noise = -1};
}

#define NREQ 400

/* Request x1.5, stage "decode" x0.5, stage "infer" unchanged, stage "late"
 * on the new side only. */
static void test_verdicts(void)
{
	static double rb[NREQ], rn[NREQ], db[NREQ], dn[NREQ], ib[NREQ], in[NREQ], ln[NREQ];
	draw(rb, NREQ, 1, 11);
	draw(rn, NREQ, 1.5, 11);
	draw(db, NREQ, 0.4, 12);
	draw(dn, NREQ, 0.2, 12);
	draw(ib, NREQ, 0.3, 13);
	draw(in, NREQ, 0.3, 13);
	draw(ln, NREQ, 0.1, 14);
	struct lp_series bst[2], nst[3];
	struct lp_side b = {.ndbs = 1, .req_name = "request", .stages = bst, .nstages = 2};
	struct lp_side n = {.ndbs = 1, .req_name = "request", .stages = nst, .nstages = 3};
	series_set(&b.req, "request", rb, NREQ);
	series_set(&n.req, "request", rn, NREQ);
	series_set(&bst[0], "decode", db, NREQ);
	series_set(&bst[1], "infer", ib, NREQ);
	series_set(&nst[0], "infer", in, NREQ);
	series_set(&nst[1], "decode", dn, NREQ);
	series_set(&nst[2], "late", ln, NREQ);

	struct lp_diff_opts o = opts_default();
	o.metrics = 1u << LP_M_P50 | 1u << LP_M_P99 | 1u << LP_M_MEAN;
	struct lp_diff d;
	char err[256] = "";
	int rc = lp_diff_compute(&b, &n, &o, &d, err, sizeof(err));
	CHECK(rc == 0, "lp_diff_compute: %d %s", rc, err);
	if (rc)
		return;
	CHECK(d.nrows == 4 * 3, "4 scopes (request, decode, infer, late) x 3 metrics: %zu rows",
	      d.nrows);
	CHECK(d.n_base_req == NREQ && d.n_new_req == NREQ, "requests %zu and %zu", d.n_base_req,
	      d.n_new_req);
	CHECK(d.noise == LP_DIFF_NOISE_DEFAULT, "one run a side: the default noise floor %g",
	      d.noise);

	/* Every estimate against the brute-force reference of its side. */
	const struct {
		const char *scope;
		const double *b, *n;
	} sc[] = {{"request", rb, rn}, {"decode", db, dn}, {"infer", ib, in}};
	const char *mn[] = {"p50", "p99", "mean"};
	const double mq[] = {0.50, 0.99, -1};
	int exact = 1;
	for (size_t s = 0; s < 3; s++)
		for (size_t m = 0; m < 3; m++) {
			const struct lp_diff_row *r = row_of(&d, sc[s].scope, mn[m]);
			double wb = mq[m] < 0 ? ref_mean(sc[s].b, NREQ)
					      : ref_quantile(sc[s].b, NREQ, mq[m]);
			double wn = mq[m] < 0 ? ref_mean(sc[s].n, NREQ)
					      : ref_quantile(sc[s].n, NREQ, mq[m]);
			int ok = r && fabs(r->base - wb) <= 1e-9 * wb &&
				 fabs(r->new_ - wn) <= 1e-9 * wn &&
				 fabs(r->rel - (wn / wb - 1)) <= 1e-12 && r->n_base == NREQ &&
				 r->n_new == NREQ && r->runs_base == 1 && r->runs_new == 1;
			CHECK_QUIET(ok, "%s %s: base %g new %g rel %g, want %g %g", sc[s].scope,
				    mn[m], r ? r->base : NAN, r ? r->new_ : NAN, r ? r->rel : NAN,
				    wb, wn);
			exact &= ok;
		}
	CHECK(exact, "9 rows' base, new and rel equal the brute-force quantiles and means");

	/* A sample scaled by k has every quantile and the mean scaled by k. */
	const char *tested_m[] = {"p50", "mean"};
	for (size_t m = 0; m < 2; m++) {
		const struct lp_diff_row *rq = row_of(&d, "request", tested_m[m]),
					 *de = row_of(&d, "decode", tested_m[m]),
					 *inf = row_of(&d, "infer", tested_m[m]);
		int ok = rq && fabs(rq->rel - 0.5) < 1e-9 && rq->verdict == LP_V_REGRESSION &&
			 rq->lo > o.threshold && rq->lo <= 0.5 && rq->hi >= 0.5 &&
			 rq->p_adj <= o.alpha;
		ok &= de && fabs(de->rel + 0.5) < 1e-9 && de->verdict == LP_V_IMPROVEMENT &&
		      de->hi < -o.threshold && de->lo <= -0.5 && de->hi >= -0.5;
		ok &= inf && inf->rel == 0 && inf->verdict == LP_V_UNCHANGED && inf->lo <= 0 &&
		      inf->hi >= 0 && inf->p_adj > o.alpha;
		CHECK(ok,
		      "%s: request x1.5 a regression (interval [%.3f, %.3f]), decode x0.5 an "
		      "improvement ([%.3f, %.3f]), infer x1 unchanged ([%.3f, %.3f])",
		      tested_m[m], rq ? rq->lo : NAN, rq ? rq->hi : NAN, de ? de->lo : NAN,
		      de ? de->hi : NAN, inf ? inf->lo : NAN, inf ? inf->hi : NAN);
	}
	/* The p99 of 400 requests has rank ceil(0.99 * 400) = 396: 4 above it,
	 * fewer than the LP_DIFF_MIN_TAIL a tail needs. */
	int p99 = 1;
	for (size_t s = 0; s < 3; s++) {
		const struct lp_diff_row *r = row_of(&d, sc[s].scope, "p99");
		p99 &= r && r->verdict == LP_V_NOT_ENOUGH && isnan(r->p) &&
		       !strcmp(r->why, "4 requests above it on the base side, need 10");
	}
	CHECK(p99, "p99 of 400 requests: not enough data, 4 requests above it (%s)",
	      row_of(&d, "request", "p99") ? row_of(&d, "request", "p99")->why : "no row");

	const struct lp_diff_row *late = row_of(&d, "late", "p50");
	CHECK(late && late->absent == 1 && late->verdict == LP_V_NOT_ENOUGH &&
		  !strcmp(late->why, "absent on the base side") && isnan(late->p) &&
		  late->n_base == 0 && late->n_new == NREQ,
	      "stage 'late', new side only: absent on the base side, untested (%s)",
	      late ? late->why : "no row");

	size_t tested = 0, reg = 0, imp = 0;
	for (size_t i = 0; i < d.nrows; i++) {
		tested += !isnan(d.rows[i].p);
		reg += d.rows[i].verdict == LP_V_REGRESSION;
		imp += d.rows[i].verdict == LP_V_IMPROVEMENT;
	}
	CHECK(tested == 6 && d.ntested == 6,
	      "6 rows tested (p50 and mean of 3 scopes), the Holm "
	      "family (%zu)",
	      d.ntested);
	CHECK(d.regressions == 2 && (size_t)d.regressions == reg && d.improvements == 2 &&
		  (size_t)d.improvements == imp,
	      "2 regressions, 2 improvements counted (%d, %d)", d.regressions, d.improvements);
	CHECK(d.resamples == LP_DIFF_RESAMPLES,
	      "a family of 6 at alpha 0.05 needs 480 resamples: the floor %d is used (%zu)",
	      LP_DIFF_RESAMPLES, d.resamples);

	/* The same inputs give the same intervals: the bootstrap's seed is fixed. */
	struct lp_diff d2;
	rc = lp_diff_compute(&b, &n, &o, &d2, err, sizeof(err));
	int same = rc == 0 && d2.nrows == d.nrows;
	for (size_t i = 0; same && i < d.nrows; i++)
		same = d.rows[i].verdict == d2.rows[i].verdict &&
		       (isnan(d.rows[i].lo) ? isnan(d2.rows[i].lo) : d.rows[i].lo == d2.rows[i].lo);
	CHECK(same, "a second computation gives the same verdicts and intervals");
	if (!rc)
		lp_diff_free(&d2);
	lp_diff_free(&d);
	series_drop(&b.req);
	series_drop(&n.req);
	for (int i = 0; i < 2; i++)
		series_drop(&bst[i]);
	for (int i = 0; i < 3; i++)
		series_drop(&nst[i]);
}

/* The mean needs LP_DIFF_MIN_SAMPLES requests on each side. */
static void test_min_samples(void)
{
	static double v[LP_DIFF_MIN_SAMPLES];
	draw(v, LP_DIFF_MIN_SAMPLES, 1, 21);
	for (size_t n = LP_DIFF_MIN_SAMPLES - 1; n <= LP_DIFF_MIN_SAMPLES; n++) {
		struct lp_side b = {.ndbs = 1, .req_name = "request"},
			       nw = {.ndbs = 1, .req_name = "request"};
		series_set(&b.req, "request", v, n);
		series_set(&nw.req, "request", v, LP_DIFF_MIN_SAMPLES);
		struct lp_diff_opts o = opts_default();
		o.metrics = 1u << LP_M_MEAN;
		struct lp_diff d;
		char err[256] = "", want[96];
		int rc = lp_diff_compute(&b, &nw, &o, &d, err, sizeof(err));
		snprintf(want, sizeof(want), "%zu requests on the base side, need %d", n,
			 LP_DIFF_MIN_SAMPLES);
		if (n < LP_DIFF_MIN_SAMPLES)
			CHECK(rc == 0 && d.nrows == 1 && d.rows[0].verdict == LP_V_NOT_ENOUGH &&
				  !strcmp(d.rows[0].why, want) && d.ntested == 0,
			      "mean, %zu base requests: not enough data ('%s')", n,
			      rc ? err : d.rows[0].why);
		else
			CHECK(rc == 0 && d.nrows == 1 && d.rows[0].verdict == LP_V_UNCHANGED &&
				  !d.rows[0].why[0] && d.ntested == 1 && d.rows[0].rel == 0,
			      "mean, %zu base requests: tested, unchanged (rel %g)", n,
			      rc ? NAN : d.rows[0].rel);
		if (!rc)
			lp_diff_free(&d);
		series_drop(&b.req);
		series_drop(&nw.req);
	}
}

/* A change the interval puts wholly between 0 and the threshold (+2.5%
 * on every request, no noise floor) is no regression within the
 * resolution: unchanged, exit state OK. It once read as "maybe slower: the
 * interval reaches both sides of the threshold", inconclusive, because
 * only its low end was looked at. The mirror image, -2.5%, likewise. */
static void test_within_resolution(void)
{
	static double vb[NREQ], vn[NREQ];
	for (int sign = 1; sign >= -1; sign -= 2) {
		draw(vb, NREQ, 1, 31);
		draw(vn, NREQ, 1 + sign * 0.025, 31);
		struct lp_side b = {.ndbs = 1, .req_name = "request"},
			       nw = {.ndbs = 1, .req_name = "request"};
		series_set(&b.req, "request", vb, NREQ);
		series_set(&nw.req, "request", vn, NREQ);
		struct lp_diff_opts o = opts_default();
		o.metrics = 1u << LP_M_P50;
		o.noise = 0;
		struct lp_diff d;
		char err[256] = "";
		int rc = lp_diff_compute(&b, &nw, &o, &d, err, sizeof(err));
		CHECK(rc == 0 && d.nrows == 1 && d.rows[0].verdict == LP_V_UNCHANGED &&
			  d.state == LP_DS_OK &&
			  (sign > 0 ? d.rows[0].lo > 0 && d.rows[0].hi < o.threshold
				    : d.rows[0].hi < 0 && d.rows[0].lo > -o.threshold),
		      "p50 %+.2f%% on every request, interval [%+.4f%%, %+.4f%%]: unchanged, "
		      "state ok (verdict %d, state %d, why '%s')",
		      sign * 2.5, rc ? NAN : 100 * d.rows[0].lo, rc ? NAN : 100 * d.rows[0].hi,
		      rc ? -1 : (int)d.rows[0].verdict, rc ? -1 : (int)d.state,
		      rc ? err : d.rows[0].why);
		if (!rc)
			lp_diff_free(&d);
		series_drop(&b.req);
		series_drop(&nw.req);
	}
}

/* Lock totals become per-request values (runs of different lengths
 * compare), the union of both sides' names, largest change first. */
static void test_named(void)
{
	static double rb[100], rn[200];
	draw(rb, 100, 1, 31);
	draw(rn, 200, 1, 32);
	struct lp_named_total bl[] = {{"mutex_a", 1000, 10}, {"mutex_b", 700, 7}},
			      nl[] = {{"mutex_a", 3000, 30}, {"mutex_c", 800, 8}};
	char *bf[] = {"lock-contention", "gpu-idle", "gpu-idle", "tail-latency"},
	     *nf[] = {"gpu-idle", "tail-latency", "tail-latency", "sync-memcpy", "sync-memcpy"};
	struct lp_side b = {.ndbs = 1,
			    .req_name = "request",
			    .locks = bl,
			    .nlocks = 2,
			    .has_findings = 1,
			    .findings = bf,
			    .nfindings = 4},
		       n = {.ndbs = 1,
			    .req_name = "request",
			    .locks = nl,
			    .nlocks = 2,
			    .has_findings = 1,
			    .findings = nf,
			    .nfindings = 5};
	series_set(&b.req, "request", rb, 100);
	series_set(&n.req, "request", rn, 200);
	struct lp_diff_opts o = opts_default();
	struct lp_diff d;
	char err[256] = "";
	int rc = lp_diff_compute(&b, &n, &o, &d, err, sizeof(err));
	CHECK(rc == 0, "lp_diff_compute: %d %s", rc, err);
	if (rc)
		return;
	/* Per request: a 10 -> 15 ns (+50%), b 7 -> 0 (-100%), c 0 -> 4 (no
	 * base); by |change|: b (7), a (5), c (4). */
	const struct {
		const char *name;
		double bpr, npr, rel;
		long long bc, nc;
	} want[] = {{"mutex_b", 7, 0, -1, 7, 0},
		    {"mutex_a", 10, 15, 0.5, 10, 30},
		    {"mutex_c", 0, 4, NAN, 0, 8}};
	int ok = d.nlocks == 3;
	for (size_t i = 0; ok && i < 3; i++) {
		const struct lp_diff_named *l = &d.locks[i];
		ok = !strcmp(l->name, want[i].name) && l->base_per_req == want[i].bpr &&
		     l->new_per_req == want[i].npr && l->base_count == want[i].bc &&
		     l->new_count == want[i].nc &&
		     (isnan(want[i].rel) ? isnan(l->rel) : l->rel == want[i].rel);
		CHECK_QUIET(ok, "lock %zu: %s %g -> %g (%g), want %s", i, l->name, l->base_per_req,
			    l->new_per_req, l->rel, want[i].name);
	}
	CHECK(ok, "locks per request, largest change first: mutex_b 7 -> 0, mutex_a 10 -> 15, "
		  "mutex_c 0 -> 4 (no base: rel NaN)");
	CHECK(d.has_findings && d.n_new_findings == 1 && !strcmp(d.new_findings[0], "sync-memcpy"),
	      "new findings: sync-memcpy once (%zu)", d.n_new_findings);
	CHECK(d.n_resolved_findings == 1 && !strcmp(d.resolved_findings[0], "lock-contention"),
	      "resolved findings: lock-contention (%zu)", d.n_resolved_findings);
	CHECK(!d.has_kernels && d.nkernels == 0, "no kernels on either side: no kernel rows");
	lp_diff_free(&d);
	series_drop(&b.req);
	series_drop(&n.req);
}

int main(void)
{
	test_verdicts();
	test_min_samples();
	test_within_resolution();
	test_named();
	return lp_check_done();
}
