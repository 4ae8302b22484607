/* SPDX-License-Identifier: MIT */
/*
 * What a bottleneck rule (analyze/rules/lp_rule_*.c) sees of the engine
 * (analysis/findings/lp_findings.c): the inputs every rule shares, loaded once, and
 * the helpers that judge a value against the rule's threshold and build a
 * finding. A rule file defines its registry entry (struct lp_rule of
 * lp_findings.h) and its eval function; analyze/lp_rules.c lists it.
 *
 * The engine checks the entry's `needs` before eval is called, so a rule
 * runs only when its inputs exist. eval measures, then asks lp_findings_judge
 * whether the value crosses the threshold (the value becomes the rule's
 * quiet line when it does not), and builds findings with lp_findings_new.
 */
#ifndef LP_FINDINGS_RULE_H
#define LP_FINDINGS_RULE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_breakdown.h"
#include "lp_db.h"
#include "lp_findings.h"
#include "lp_ivset.h"
#include "lp_locks.h"
#include "lp_rset.h"

struct req {
	int64_t id, proc, thread, tid, start, end;
};

struct lp_findings_ctx {
	sqlite3 *db;
	char *err;
	size_t errlen;
	const struct lp_breakdown *bd; /* bd_own, or the caller's (opts->bd) */
	const struct lp_rset *rs;      /* the ranges bd loaded: rs_own or opts->ranges */
	struct lp_breakdown bd_own;
	struct lp_rset rs_own;
	struct lp_lock_report locks;
	int has_req;
	struct req *req; /* by (thread, start): requests on a thread never overlap */
	size_t nreq;
	int64_t req_ns, thread_ns, run_start;
	struct lp_ivset reqset, stageset;
	int64_t *stake; /* [nreq] per-request time at stake for the current rule */
	int gpu;
	char gpu_why[300];
	const char *api_domain; /* runtime when recorded, else driver */
	/* the current rule */
	const struct lp_rule *rule;
	double thr; /* its threshold: the default or the override */
	struct lp_findings *out;
	size_t cap;
	int has_value;
	double value;
	char *why;
};

static inline int64_t lp_findings_min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

char *lp_findings_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* -ENODATA with why: the rule is listed as not evaluated. */
int lp_findings_skip(struct lp_findings_ctx *c, const char *why);
/* Whether value crosses the current rule's threshold (its cmp). */
int lp_findings_passes(const struct lp_findings_ctx *c, double value);
/* The same, noting value as the rule's measured value (its quiet line). */
int lp_findings_judge(struct lp_findings_ctx *c, double value);
/* Notes value as the measured one; returns 0 (quiet). */
int lp_findings_quiet(struct lp_findings_ctx *c, double value);
int64_t lp_findings_q1(struct lp_findings_ctx *c, const char *sql);
double lp_findings_share(int64_t part, int64_t whole);
/* A new finding of rule r with its value; NULL on -ENOMEM. */
struct lp_finding *lp_findings_new(struct lp_findings_ctx *c, const struct lp_rule *r,
				   double value);
void lp_findings_num(struct lp_finding *f, const char *key, const char *label, const char *unit,
		     double v);
void lp_findings_site(struct lp_finding *f, const char *what, int64_t count, int64_t ns);
/* Saving, its basis and the severity; the saving is clamped to the basis
 * and the basis to the scope. */
void lp_findings_saving(struct lp_finding *f, int64_t saving, int64_t basis, const char *what);
/* The breakdown category (its cat_name: "lock_wait", "preempted", ...) the
 * saving is drawn from; findings that draw on one category share its time
 * in the engine's account (lp_findings.h). NULL: none in particular. */
void lp_findings_category(struct lp_finding *f, const char *category);

/* Requests: lookup and per-request attribution. */
size_t lp_findings_req_lower(const struct lp_findings_ctx *c, int64_t th, int64_t s);
int64_t lp_findings_attr(struct lp_findings_ctx *c, int64_t th, int64_t s, int64_t e);
void lp_findings_stake_reset(struct lp_findings_ctx *c);
void lp_findings_example(struct lp_findings_ctx *c, struct lp_finding *f);
void lp_findings_example_req(struct lp_findings_ctx *c, struct lp_finding *f, size_t i,
			     int64_t stake);
void lp_findings_req_args(const struct lp_findings_ctx *c, struct lp_db_arg a[2]);
int64_t *lp_findings_req_durs(const struct lp_findings_ctx *c);
int lp_findings_bd_cat(const struct lp_breakdown *b, const char *name);
const struct lp_lock_row *lp_findings_lock_row(const struct lp_findings_ctx *c, int64_t id);
int lp_findings_prep(struct lp_findings_ctx *c, const char *sql, sqlite3_stmt **st);
const char *lp_findings_where(const struct lp_findings_ctx *c);
/* Threads on a CPU half their life or more; *cores: all threads'
 * task-clock over the run (NAN without it). */
int64_t lp_findings_busy_threads(const struct lp_breakdown *b, double *cores);
/* Runnable threads of the run on average (on a CPU or waiting for one,
 * over the run's wall time) and the cores it may use (run.cpus_threads,
 * else run.cpus_allowed, else host.cpus_online; 0 unknown). NAN without
 * per-thread CPU figures. */
double lp_findings_runnable(struct lp_findings_ctx *c, int64_t *cpus);
/* Whose load kept the threads off the CPU: the app's own when its runnable
 * threads outnumber its cores (1), other processes' when they do not (0),
 * -1 unknown. Adds the evidence to f and, for other processes' load, the
 * advice for it (f->fix) and a clause for the summary (into why). */
int lp_findings_load_source(struct lp_findings_ctx *c, struct lp_finding *f, char *why, size_t len);

/* A grouped accumulation of (thread, start, end, label) rows inside
 * requests: total, count, top labels. */
struct lp_findings_acc {
	int64_t ns, n, all_n;
	struct lp_findings_site top[LP_FINDINGS_MAXSITES];
	char cur[512];
	int64_t cur_n, cur_ns;
};

/* A row callback's context: the rule's inputs and its accumulation. */
struct lp_findings_acc_load {
	struct lp_findings_ctx *c;
	struct lp_findings_acc *a;
};

void lp_findings_acc_flush(struct lp_findings_acc *a);
void lp_findings_acc_label(struct lp_findings_acc *a, const char *w);
/* Rows: thread, start, end, label (ordered by label); ?1 = the API domain. */
int lp_findings_acc_run(struct lp_findings_ctx *c, const char *sql, struct lp_findings_acc *a);
void lp_findings_acc_free(struct lp_findings_acc *a);
void lp_findings_acc_sites(struct lp_finding *f, const struct lp_findings_acc *a, const char *kind);

/* Blocking calls of some categories inside requests against request time
 * (blocking-io-in-request, sleep-in-request): sql from LP_BLOCK_ROWS. */
int lp_findings_block_rule(struct lp_findings_ctx *c, const struct lp_rule *r, const char *sql,
			   const char *what, const char *basis, const char *category);

/* Blocking calls of some categories, labelled by call, descriptor kind and
 * the function that made the call (stacks.top_frame). */
#define LP_BLOCK_ROWS(where)                                                                       \
	"SELECT b.thread_id, b.start_ns, b.start_ns + b.dur_ns, b.call || coalesce(' on ' || "     \
	"b.fd_kind, '') || coalesce(' in ' || f.function, '') || coalesce(' ' || f.file || ':' "   \
	"|| f.line, '') FROM blocking_calls b LEFT JOIN stacks s ON s.id = b.stack_id LEFT JOIN "  \
	"frames f ON f.id = s.top_frame WHERE " where " AND ?1 IS ?1 ORDER BY 4"

/* The API call that issued a GPU operation: the runtime one when both. */
#define LP_API_OF(tbl)                                                                             \
	"JOIN cuda_api a ON a.id = (SELECT x.id FROM cuda_api x WHERE x.process_id = " tbl         \
	".process_id AND x.correlation_id = " tbl ".correlation_id ORDER BY x.domain = "           \
	"'runtime' DESC, x.id LIMIT 1) LEFT JOIN strings n ON n.id = a.name_id "

#endif
