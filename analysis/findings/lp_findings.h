/* SPDX-License-Identifier: MIT */
/*
 * Bottleneck findings (`latprof report --bottlenecks`): a table of rules,
 * each one function that measures one known problem in a recorded run and,
 * when it crosses the rule's threshold, returns a finding with numbers,
 * sites, an example request, a fix, and the request time a fix would save.
 *
 * The estimated saving of a finding is never more than the time it is
 * measured from (basis_ns: the lock wait inside requests, the blocked time
 * in cudaMemcpy, the tail requests' excess...), and the basis is never
 * more than the request time (or, without NVTX requests, the run's thread
 * time). The findings of a run are one account: findings that draw on the
 * same breakdown category share its time (causes before symptoms, largest
 * first: the first keeps it, the others keep only what is left and name it
 * in counted_in), the savings add up to at most the scope, and a finding
 * left under LP_FINDINGS_MIN_SHARE of the scope is not listed (its rule is quiet
 * with its value). Findings are sorted by saving. Rules whose inputs are
 * missing (no GPU data, no counters, no request ranges) are listed as not
 * evaluated, with the reason. Rendered by report/lp_report_findings.c.
 *
 * Adding a rule: one file in analyze/rules/ with its entry (struct lp_rule)
 * and eval function, and one line in analyze/lp_rules.c; docs/rules.md.
 */
#ifndef LP_FINDINGS_H
#define LP_FINDINGS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct lp_breakdown;
struct lp_rset;

enum lp_findings_sev { LP_SEV_LOW = 1, LP_SEV_MEDIUM, LP_SEV_HIGH };

/* Severity from the share of request (or run) time at stake. */
#define LP_SEV_HIGH_SHARE 0.20
#define LP_SEV_MEDIUM_SHARE 0.05

/* How a rule compares its measured value with its threshold. */
enum lp_findings_cmp { LP_CMP_GE, LP_CMP_LT };

/* What a rule needs recorded; the engine checks each before the rule runs
 * and lists the rule as not evaluated, with the reason, when one is
 * missing. */
enum lp_findings_need {
	LP_NEED_GPU = 1 << 0,	     /* CUDA activity was captured */
	LP_NEED_REQUESTS = 1 << 1,   /* NVTX request ranges */
	LP_NEED_TIME = 1 << 2,	     /* request time, or thread time without requests */
	LP_NEED_BLOCKING = 1 << 3,   /* the blocking_calls table */
	LP_NEED_RANGE_CPU = 1 << 4,  /* CPU counters on the request ranges */
	LP_NEED_THREAD_CPU = 1 << 5, /* task-clock per thread */
};

struct lp_finding;
struct lp_findings_ctx; /* the inputs every rule shares (analyze/lp_findings_rule.h) */

/*
 * A rule's registry entry: one per file in analyze/rules/, listed in
 * analyze/lp_rules.c. docs/rules.md has a row per entry with its id, unit,
 * comparison, threshold and needs (tests/findings/test_rules.c compares
 * them).
 */
struct lp_rule {
	const char *id, *title;
	const char *measures;	  /* what the value is, e.g. "lock wait / request time" */
	const char *unit;	  /* of value and threshold: "share", "count", "ratio" */
	enum lp_findings_cmp cmp; /* finding when value >= threshold, or < it */
	double threshold;	  /* default; --rule-threshold ID=VALUE overrides */
	unsigned needs;		  /* enum lp_findings_need */
	const char *fix;
	/* Measures, judges the value against the threshold (lp_findings_judge) and
	 * appends its findings (lp_findings_new); returns how many, 0 when quiet,
	 * -ENODATA with a missing input of its own noted (lp_findings_skip),
	 * -errno on errors. */
	int (*eval)(struct lp_findings_ctx *c, const struct lp_rule *r);
	/* The title of a finding over a run without requests (the whole
	 * run's thread time), when `title` speaks of requests; NULL: title. */
	const char *title_whole_run;
	/* Why the rule needs requests, after "no NVTX request ranges: ". */
	const char *why_requests;
	/* It measures an effect (time off the CPU, a long tail) whose cause
	 * another rule may name: in the account it draws on its category after
	 * the rules that name causes, and points to them. */
	int symptom;
};

extern const struct lp_rule *const lp_rules[];
extern const size_t lp_nrules;
const struct lp_rule *lp_rule_find(const char *id);
/* value against thr by r->cmp: >= thr, or < thr for LP_CMP_LT rules. */
int lp_rule_passes(const struct lp_rule *r, double value, double thr);
/* Findings whose saving is below this share of the scope are not listed:
 * their rule is quiet, with its value. */
#define LP_FINDINGS_MIN_SHARE 0.01

#define LP_FINDINGS_MAXNUM 8
#define LP_FINDINGS_MAXSITES 5

struct lp_findings_num {
	const char *key;   /* static JSON key, e.g. "waits" */
	const char *label; /* static text label */
	const char *unit;  /* "ns", "count", "share", "ratio", "bytes", "per_request" */
	double value;
};

struct lp_findings_site {
	char *what; /* call site, lock, kernel, API call or stage */
	int64_t count;
	int64_t ns;
};

struct lp_findings_example {
	int valid;
	int64_t range_id, tid;
	int64_t start_ns; /* CLOCK_MONOTONIC, as in the database */
	int64_t rel_ns;	  /* since the run started */
	int64_t dur_ns;
	int64_t at_stake_ns; /* of this request */
};

struct lp_finding {
	const struct lp_rule *rule;
	const char *title; /* static: the rule's title for this run's scope */
	enum lp_findings_sev severity;
	double value, threshold; /* in rule->unit */
	char *subject;		 /* what it is about (the lock's name), or NULL */
	char *summary;		 /* one sentence with the numbers */
	int64_t saving_ns;	 /* estimated; <= basis_ns */
	int64_t basis_ns;	 /* the time it is measured from */
	const char *basis;	 /* static: what basis_ns is */
	int64_t scope_ns;	 /* request time (or run thread time) */
	double share;		 /* saving_ns / scope_ns */
	struct lp_findings_num num[LP_FINDINGS_MAXNUM];
	size_t nnum;
	const char *site_kind; /* static: "call sites", "kernels", ... */
	struct lp_findings_site site[LP_FINDINGS_MAXSITES];
	size_t nsite;
	struct lp_findings_example ex;
	const char *fix;      /* static: the rule's, or advice for this run */
	const char *category; /* static: the breakdown category the saving is from */
	/* static: the rule id of the finding that holds this one's time (the
	 * shared cause), when part of its saving was counted there; or NULL */
	const char *counted_in;
};

/* Per rule: what happened to it in this run. */
/* LP_RULE_FOUND_KEPT: the engine's own, while it keeps the account. */
enum lp_findings_state { LP_RULE_FOUND = 1, LP_RULE_QUIET, LP_RULE_SKIPPED, LP_RULE_FOUND_KEPT };

struct lp_findings_rule_status {
	const struct lp_rule *rule;
	enum lp_findings_state state;
	double threshold; /* the one used */
	int has_value;
	double value; /* measured (quiet rules too), when has_value */
	char *why;    /* SKIPPED: the missing input */
	/* QUIET after the account: the finding it made is not listed, its
	 * time is counted in this rule's finding (static id), or NULL */
	const char *counted_in;
	int below_min;	   /* QUIET after the account: it crossed the threshold */
	int64_t saving_ns; /* when below_min: what it alone would save */
};

struct lp_findings {
	int has_requests;
	char *req_name; /* the request range, "" without */
	int64_t requests, request_ns;
	int64_t thread_ns; /* run thread time: the scope without requests */
	size_t n;	   /* sorted by saving_ns, descending */
	struct lp_finding *v;
	size_t nrules; /* = lp_nrules, table order */
	struct lp_findings_rule_status *rules;
};

struct lp_findings_override {
	const char *id;
	double value;
};

struct lp_findings_opts {
	const char *request; /* NAME or DOMAIN::NAME; NULL = breakdown's default */
	size_t nover;
	const struct lp_findings_override *over;
	/* Optional, borrowed: a breakdown the caller computed for the same
	 * request at stage depth 1 with keep_ranges, and those ranges. The
	 * rules then reuse them instead of computing them again. */
	const struct lp_breakdown *bd;
	const struct lp_rset *ranges;
};

/* Parses "ID=VALUE" (VALUE may end in % for share rules, "ms"/"us" are not
 * accepted: thresholds are shares, counts or ratios). 0 or -EINVAL with err. */
int lp_findings_parse_threshold(const char *arg, struct lp_findings_override *o, char *err,
				size_t errlen);

/* Runs every rule. Returns 0, -ENOENT with err when opts->request names no
 * range, -errno with err on database errors. out is zeroed first. */
int lp_findings_analyze(sqlite3 *db, const struct lp_findings_opts *opts, struct lp_findings *out,
			char *err, size_t errlen);
void lp_findings_free(struct lp_findings *f);

/*
 * For `latprof diff` and `check`: the ids of the findings in db with the
 * default thresholds, one per finding (an id repeats when a rule found two
 * locks, say). *ids and each string are malloc'd; the caller frees them.
 * The signature is lp_findings_fn of analysis/compare/lp_diff.h.
 */
int lp_findings_ids(sqlite3 *db, char ***ids, size_t *n, char *err, size_t errlen);
/* Findings of one rule in f. */
size_t lp_findings_count(const struct lp_findings *f, const char *id);

#endif
