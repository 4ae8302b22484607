/* SPDX-License-Identifier: MIT */
/*
 * The bottleneck rules, in the order `report --bottlenecks` lists them:
 * one line per rule. Each rule is one file, analyze/rules/lp_rule_NAME.c,
 * that defines `const struct lp_rule lp_rule_NAME` (lp_findings.h: id,
 * unit, cmp, threshold, needs, title, measures, fix, eval) and its eval
 * function (analyze/lp_findings_rule.h). Adding a rule: that file, its line
 * here, and its row in docs/rules.md.
 */
#include "lp_findings.h"
#include "lp_util.h"

#define LP_RULE_LIST(X)                                                                            \
	X(lock_contention)                                                                         \
	X(long_critical_section)                                                                   \
	X(gil_contention)                                                                          \
	X(spinning_pool)                                                                           \
	X(queue_wait)                                                                              \
	X(tail_outlier)                                                                            \
	X(cold_start)                                                                              \
	X(cpu_interference)                                                                        \
	X(blocking_io_in_request)                                                                  \
	X(sleep_in_request)                                                                        \
	X(cpu_starved)                                                                             \
	X(cpu_saturated)                                                                           \
	X(sync_memcpy)                                                                             \
	X(pageable_memcpy)                                                                         \
	X(excessive_sync)                                                                          \
	X(gpu_idle)                                                                                \
	X(small_kernels)                                                                           \
	X(no_overlap)                                                                              \
	X(alloc_in_path)

#define LP_RULE_DECLARE(name) extern const struct lp_rule lp_rule_##name;
#define LP_RULE_ENTRY(name) &lp_rule_##name,
LP_RULE_LIST(LP_RULE_DECLARE)
const struct lp_rule *const lp_rules[] = {LP_RULE_LIST(LP_RULE_ENTRY)};
const size_t lp_nrules = ARRAY_SIZE(lp_rules);
