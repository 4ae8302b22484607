/* SPDX-License-Identifier: MIT */
/*
 * Run comparison (latprof diff) and the per-request samples it and
 * latprof check share. A side is one or more runs (one database each),
 * kept apart for the hierarchical bootstrap (lp_boot.h) and pooled for the
 * estimates. Requests are the outermost NVTX ranges of one name (the most
 * frequent in the first base database, or --request NAME); a stage's
 * per-request sample is the summed duration of its direct child ranges of
 * that name inside one request (requests without the stage do not count).
 * Writers (report/lp_report_diff.c) render struct lp_diff only.
 */
#ifndef LP_DIFF_H
#define LP_DIFF_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A mean needs this many requests on each side; a quantile this many
 * requests below and above it on each side (fewer than 10 above the p99:
 * "not enough data", never a verdict). */
#define LP_DIFF_MIN_SAMPLES 20
#define LP_DIFF_MIN_TAIL 10
/* Bootstrap resamples (at least; more when the Holm family is large) and
 * the fixed seed that makes every verdict reproducible. */
#define LP_DIFF_RESAMPLES 2000
#define LP_DIFF_SEED 0x6c61747072U
/* Noise floor with one run on a side: run-to-run change of a metric that
 * A/A runs of samples/infer_server and samples/py_nvtx.py reach (docs/ci.md). */
#define LP_DIFF_NOISE_DEFAULT 0.10
/* "No regression" needs every tested row's interval to end below this (or
 * below three times threshold plus noise floor, if higher): a wider one is
 * inconclusive, it cannot rule out a large regression. */
#define LP_DIFF_MAX_RESOLUTION 0.5

enum lp_metric {
	LP_M_P50,
	LP_M_P90,
	LP_M_P99,
	LP_M_P999,
	LP_M_MEAN,
	LP_M_MAX,
	LP_M_MIN,
	LP_M_COUNT,
	LP_M_TOTAL,
	LP_M_SHARE,
	LP_M_NMETRICS
};
/* A quantile asked by number (--metric p95): rows carry its q and name. */
#define LP_M_QUANTILE LP_M_NMETRICS

const char *lp_metric_name(enum lp_metric m);
/* Parses "p50" etc.; returns the metric or -1. */
int lp_metric_parse(const char *s, size_t len);
/* Value of a metric over n ascending samples (p*, mean, max, min, count, total). */
double lp_metric_value(enum lp_metric m, const double *sorted, size_t n);
/* The quantile a metric is (min 0, max 1, p99 0.99), -1 for the mean,
 * NAN for count/total/share. */
double lp_metric_q(enum lp_metric m);

/* ---- samples ---- */

struct lp_series {
	char *name;
	double *v; /* ns, all runs pooled, ascending once the side is loaded */
	size_t n, cap;
	/* run by run (one per database of the side), each ascending; with one
	 * run run_v[0] is v */
	double **run_v;
	size_t *run_n;
	double *run_buf;
};

struct lp_named_total {
	char *name;
	double total_ns;
	long long count;
};

/* Bottleneck findings plug in here: a provider lists the ids of the
 * findings present in db (an id may repeat, once per finding). NULL means
 * findings are reported as not available. */
typedef int (*lp_findings_fn)(sqlite3 *db, char ***ids, size_t *n, char *err, size_t errlen);
extern lp_findings_fn lp_findings_provider;

struct lp_side {
	size_t ndbs;
	char *req_name;
	struct lp_series req;	  /* per-request latency */
	struct lp_series *stages; /* by name */
	size_t nstages;
	struct lp_named_total *locks; /* wait per lock name, pooled */
	struct lp_named_total *cats;  /* request time per breakdown category, pooled */
	size_t ncats;
	size_t nlocks;
	int has_kernels;
	struct lp_named_total *kernels; /* GPU time per kernel name */
	size_t nkernels;
	int has_findings;
	char **findings;
	size_t nfindings;
	/* Per stage, from the breakdown (not with --no-findings): its time, its
	 * on-CPU part and its preempted part, pooled; count = requests with the
	 * stage. cpu_known: every database counted task-clock. */
	struct lp_named_total *st_wall, *st_oncpu, *st_pre;
	size_t nst_wall, nst_oncpu, nst_pre;
	int cpu_known, cpu_dbs;
};

/*
 * Loads and pools n databases into side. request NULL picks the most
 * frequent outermost range name of paths[0]. Returns 0; -EINVAL with a
 * sentence in err on bad input (not a latprof database, other schema
 * version, no ranges, no range of that name); -errno otherwise.
 */
int lp_side_load(const char *const *paths, size_t n, const char *request, struct lp_side *side,
		 char *err, size_t errlen);
/* As lp_side_load without the findings and the breakdown's categories
 * (the two costliest parts): requests, stages, locks and kernels only. */
int lp_side_load_requests(const char *const *paths, size_t n, const char *request,
			  struct lp_side *side, char *err, size_t errlen);
/* Both sides at once, every database on its own thread (up to the CPU
 * count): base from bpaths, new_ from npaths (nn 0: base only), the request
 * name picked on bpaths[0] for both. Same returns as lp_side_load. */
int lp_sides_load(const char *const *bpaths, size_t nb, const char *const *npaths, size_t nn,
		  const char *request, struct lp_side *base, struct lp_side *new_, char *err,
		  size_t errlen);
void lp_side_free(struct lp_side *side);
const struct lp_series *lp_side_stage(const struct lp_side *side, const char *name);

/* ---- diff ---- */

enum lp_verdict {
	LP_V_UNCHANGED,
	LP_V_REGRESSION,
	LP_V_IMPROVEMENT,
	LP_V_NOT_ENOUGH, /* too few requests (beyond the quantile) on a side */
	/* Neither confirmed nor ruled out: the estimate or the interval points
	 * to a change beyond the threshold that the test does not confirm, or
	 * the change is preemption, not the stage's own time (why says which). */
	LP_V_INCONCLUSIVE,
};
const char *lp_verdict_name(enum lp_verdict v);

struct lp_diff_opts {
	double threshold; /* relative change, 0.05 = 5% */
	double alpha;	  /* family-wise error rate; intervals are 1 - alpha */
	unsigned metrics; /* bit per enum lp_metric; 0 (and no quant) = p50, p99 */
	double quant[8];  /* quantiles asked by number (p95: 0.95) */
	size_t nquant;
	double noise; /* noise floor with one run on a side; < 0: the default */
	const char *request;
	int inconclusive_exit; /* exit status when inconclusive (LP_DIFF_EXIT_INCONCLUSIVE) */
};
/* latprof diff's exit status: 0 no regression, 1 regression, 2 bad input,
 * 3 inconclusive (--inconclusive-exit changes the last). */
#define LP_DIFF_EXIT_INCONCLUSIVE 3

/*
 * One comparison: a metric of the request or a stage. Its verdict comes
 * from its own interval, never from another row's test: the ratio new/base
 * is bootstrapped (lp_boot.h), the interval is its 1 - alpha percentile
 * interval (widened by the noise floor when a side has one run), and p is
 * the bootstrap probability that the ratio is within the threshold
 * (two-sided, doubled). Holm over the tested rows keeps the family-wise
 * error at alpha; a regression needs p_adj <= alpha, which puts the whole
 * interval above 1 + threshold.
 */
struct lp_diff_row {
	char *scope; /* "request" or the stage name */
	int is_request;
	enum lp_metric metric; /* LP_M_QUANTILE for a quantile asked by number */
	double q;	       /* quantile, -1 for the mean */
	char metric_name[16];
	size_t n_base, n_new;	    /* requests (with the stage) per side */
	size_t runs_base, runs_new; /* runs holding them */
	double base, new_, rel;	    /* estimates; rel = new / base - 1, NAN when base is 0 */
	double lo, hi;		    /* interval of new / base - 1 (rel's), NAN untested */
	double noise;		    /* noise floor in the interval (0: runs on both sides) */
	double p;		    /* this row's bootstrap p, NAN if untested */
	double p_adj;		    /* Holm-adjusted over all tested rows */
	const char *method;	    /* "bootstrap over requests" or "... runs, then requests" */
	enum lp_verdict verdict;
	char why[160]; /* not enough data: which side lacks what; inconclusive: why */
	int up;	       /* inconclusive toward a regression (1) or an improvement (0) */
	int absent;    /* the stage is on one side only: 1 not on the base side, 2 not on the new */
};

struct lp_diff_named {
	char *name;
	double base_ns, new_ns;		  /* totals, pooled */
	double base_per_req, new_per_req; /* total / requests of the side */
	long long base_count, new_count;
	double rel; /* of per-request values; NAN when base is 0 */
};

/* A scope's time per request (requests holding it), split by the
 * breakdown: what on-CPU time and preemption each side had. */
struct lp_diff_cpu {
	char *scope;
	int is_request;
	double base_wall, new_wall;
	double base_oncpu, new_oncpu; /* NAN where task-clock was not counted */
	double base_pre, new_pre;
};

/*
 * The answer of the whole comparison, the same for the exit status and
 * every writer: a regression (some row confirmed), inconclusive (some row
 * points to a regression the data cannot confirm, or the request itself
 * has too few requests for any metric), or no regression larger than the
 * stated resolution.
 */
enum lp_diff_state { LP_DS_OK, LP_DS_REGRESSION, LP_DS_INCONCLUSIVE };
const char *lp_diff_state_name(enum lp_diff_state s);
struct lp_diff;
/* The exit status of a computed diff: what every writer states too. */
int lp_diff_exit_status(const struct lp_diff *d);

#define LP_DIFF_NOTES 6
struct lp_diff {
	struct lp_diff_opts opts;
	char *req_name;
	size_t base_dbs, new_dbs;
	size_t n_base_req, n_new_req;
	size_t ntested;	  /* Holm family size */
	size_t resamples; /* per side and row */
	double noise;	  /* floor in force where a side has one run */
	int single_run;	  /* some row has one run on a side: run-to-run noise unknown */
	struct lp_diff_row *rows;
	size_t nrows;
	int regressions, improvements;
	struct lp_diff_named *locks; /* by |change|, descending */
	struct lp_diff_named *cats;  /* request time per category (on_cpu, sleep, ...) */
	size_t ncats;
	size_t nlocks;
	int has_kernels; /* both sides have a kernels table */
	struct lp_diff_named *kernels;
	size_t nkernels;
	int has_findings; /* a findings provider ran on both sides */
	char **new_findings, **resolved_findings;
	size_t n_new_findings, n_resolved_findings;
	struct lp_diff_cpu *cpu; /* the request first, then the stages */
	size_t ncpu;
	int cpu_known; /* both sides counted task-clock in every run */
	enum lp_diff_state state;
	int inconclusives; /* rows inconclusive toward a regression */
	/* No regression above this (the largest upper bound of the interval
	 * over rows that are not regressions), NAN when no row was tested. */
	double resolution;
	char reason[LP_DIFF_NOTES][200]; /* why inconclusive, and what to do */
	size_t nreasons;
	char warn[LP_DIFF_NOTES][200]; /* noise: preemption or run-to-run spread */
	size_t nwarn;
};

int lp_diff_compute(const struct lp_side *base, const struct lp_side *new_,
		    const struct lp_diff_opts *opts, struct lp_diff *out, char *err, size_t errlen);
void lp_diff_free(struct lp_diff *d);

#endif
