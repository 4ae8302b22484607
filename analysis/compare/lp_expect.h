/* SPDX-License-Identifier: MIT */
/*
 * Expectations for latprof check: `metric(selector) op value[unit]`.
 *
 *   metric    p50 p90 p99 p999 mean max min count total share
 *   selector  request | stage:NAME | range:NAME | lock:NAME | finding:ID |
 *             a time category: lock-wait cond-wait cpu (sync-wait,
 *             gpu-kernel... once the CUDA source adds them)
 *   op        < <= > >= == !=
 *   value     number with unit ns us ms s (time metrics; required), % or a
 *             plain fraction (share), none (count)
 *
 * Samples: request = per-request latency; stage = per-request time in the
 * stage (as in latprof diff); range = every range of that name; lock = every
 * contended wait on locks of that name. share = the selector's total time
 * over all request time. Percentiles are nearest-rank (report --breakdown's).
 */
#ifndef LP_EXPECT_H
#define LP_EXPECT_H

#include <sqlite3.h>
#include <stddef.h>

#include "lp_diff.h"

enum lp_sel_kind {
	LP_SEL_REQUEST,
	LP_SEL_STAGE,
	LP_SEL_RANGE,
	LP_SEL_LOCK,
	LP_SEL_FINDING,
	LP_SEL_CATEGORY
};
enum lp_cmp_op { LP_OP_LT, LP_OP_LE, LP_OP_GT, LP_OP_GE, LP_OP_EQ, LP_OP_NE };

struct lp_expect {
	char *text; /* as written */
	enum lp_metric metric;
	enum lp_sel_kind sel;
	char *arg; /* stage/range/lock/finding/category name; NULL for request */
	enum lp_cmp_op op;
	double value; /* ns for time, fraction for share, plain for count */
	char unit[4]; /* as written, for display */
};

/* Parses text. On error returns -EINVAL (malformed), or -EDOM for a well
 * formed expectation that can never hold a meaning: a negative, hex or
 * non-integer count limit, a share above 100%, an unknown finding id or
 * category; *pos = byte offset of the fault and one sentence in err. */
int lp_expect_parse(const char *text, struct lp_expect *e, size_t *pos, char *err, size_t errlen);
void lp_expect_free(struct lp_expect *e);

/* INCONCLUSIVE: the measured value meets the limit but its interval's far
 * end does not, or a quantile has too few samples beyond it for an
 * interval (--strict makes that a FAIL). */
enum lp_expect_status { LP_EXP_PASS, LP_EXP_FAIL, LP_EXP_ERROR, LP_EXP_INCONCLUSIVE };

struct lp_expect_result {
	enum lp_expect_status status;
	double measured;
	double lo, hi; /* 95% interval of a quantile or mean (bootstrap over requests), NAN: none */
	size_t samples;
	int strict_fail; /* the far end missed it: 1 the bound, 2 no interval (too few samples) */
	char why[256];	 /* for LP_EXP_ERROR: why there is no measurement */
};

/* Evaluation context over one database. */
struct lp_expect_ctx {
	sqlite3 *db;
	const char *path;
	struct lp_side side; /* requests and stages */
	/* The category split, computed on the first category expectation:
	 * others never need the breakdown's pass over the waits. */
	const char *request; /* as given to lp_expect_ctx_open, which keeps the pointer */
	int bd_pending;	     /* the run has ranges and the split is not loaded yet */
	int has_bd;
	int ncat;
	char cat_name[16][32];
	double cat_ns[16];
	double req_total_ns;
	int strict; /* a bound checks the interval's far end too (check --strict) */
};

/* request NULL: most frequent outermost range. Returns 0 or -EINVAL with
 * err (not a latprof database, schema version, no ranges). */
int lp_expect_ctx_open(const char *path, const char *request, struct lp_expect_ctx *c, char *err,
		       size_t errlen);
void lp_expect_ctx_close(struct lp_expect_ctx *c);
/* Before any evaluation: a stage or range name the database does not hold
 * (where it can tell: a stage of the run's requests, a range of the run;
 * a lock that was never contended is not in the database, so lock names
 * are not checked). 0, or -ENOENT/-EIO with one sentence in err. */
int lp_expect_check(const struct lp_expect_ctx *c, const struct lp_expect *e, char *err,
		    size_t errlen);
void lp_expect_eval(struct lp_expect_ctx *c, const struct lp_expect *e, struct lp_expect_result *r);
const char *lp_cmp_op_name(enum lp_cmp_op op);

#endif
