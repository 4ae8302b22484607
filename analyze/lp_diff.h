/* SPDX-License-Identifier: MIT */
/*
 * Run comparison (latprof diff) and the per-request samples it and
 * latprof check share. A side is one or more databases whose requests are
 * pooled. Requests are the outermost NVTX ranges of one name (the most
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

/* Fewer requests than this on either side: "not enough data", no test. */
#define LP_DIFF_MIN_SAMPLES 8

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

const char *lp_metric_name(enum lp_metric m);
/* Parses "p50" etc.; returns the metric or -1. */
int lp_metric_parse(const char *s, size_t len);
/* Value of a metric over n ascending samples (p*, mean, max, min, count, total). */
double lp_metric_value(enum lp_metric m, const double *sorted, size_t n);

/* ---- samples ---- */

struct lp_series {
	char *name;
	double *v; /* ns, ascending once lp_series_sort() ran */
	size_t n, cap;
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
};

/*
 * Loads and pools n databases into side. request NULL picks the most
 * frequent outermost range name of paths[0]. Returns 0; -EINVAL with a
 * sentence in err on bad input (not a latprof database, other schema
 * version, no ranges, no range of that name); -errno otherwise.
 */
int lp_side_load(const char *const *paths, size_t n, const char *request, struct lp_side *side,
		 char *err, size_t errlen);
void lp_side_free(struct lp_side *side);
const struct lp_series *lp_side_stage(const struct lp_side *side, const char *name);

/* ---- diff ---- */

enum lp_verdict {
	LP_V_UNCHANGED,
	LP_V_REGRESSION,
	LP_V_IMPROVEMENT,
	LP_V_NOT_ENOUGH, /* fewer than LP_DIFF_MIN_SAMPLES requests on a side */
};
const char *lp_verdict_name(enum lp_verdict v);

struct lp_diff_opts {
	double threshold; /* relative change, 0.05 = 5% */
	double alpha;	  /* family-wise error rate */
	unsigned metrics; /* bit per enum lp_metric; 0 = p50, p99, mean */
	const char *request;
};

struct lp_diff_row {
	char *scope; /* "request" or the stage name */
	int is_request;
	enum lp_metric metric;
	size_t n_base, n_new;
	double base, new_, rel; /* rel = (new - base) / base; NAN when base is 0 */
	double p;		/* raw two-sided Mann-Whitney U p-value, NAN if untested */
	double p_adj;		/* Holm-adjusted over all tested rows */
	int exact;		/* exact U distribution used */
	enum lp_verdict verdict;
};

struct lp_diff_named {
	char *name;
	double base_ns, new_ns;		  /* totals, pooled */
	double base_per_req, new_per_req; /* total / requests of the side */
	long long base_count, new_count;
	double rel; /* of per-request values; NAN when base is 0 */
};

struct lp_diff {
	struct lp_diff_opts opts;
	char *req_name;
	size_t base_dbs, new_dbs;
	size_t n_base_req, n_new_req;
	size_t ntested; /* Holm family size */
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
};

int lp_diff_compute(const struct lp_side *base, const struct lp_side *new_,
		    const struct lp_diff_opts *opts, struct lp_diff *out, char *err, size_t errlen);
void lp_diff_free(struct lp_diff *d);

#endif
