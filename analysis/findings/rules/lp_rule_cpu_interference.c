/* SPDX-License-Identifier: MIT */
/*
 * Rule "cpu-interference": Requests lose the CPU: context switches no recorded wait explains.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_util.h"
#include "lp_waits.h"

/* Lock and condition waits and blocking calls that began inside a request
 * range, on the thread that opened it: each switches the thread out once. Waits elsewhere
 * (background threads, start-up) explain none of the requests' switches. */
static int64_t req_waits(struct lp_findings_ctx *c)
{
#define LP_REQ_WAITS(table)                                                                        \
	"SELECT count(*) FROM ranges_named r JOIN " table " w ON w.thread_id = "                   \
	"r.start_thread_id AND w.start_ns >= r.start_ns AND w.start_ns < r.end_ns "                \
	"WHERE r.name = ?1 AND coalesce(r.domain, '') = ?2"
	static const char *const sql[] = {LP_REQ_WAITS("lock_waits"), LP_REQ_WAITS("cond_waits"),
					  LP_REQ_WAITS("blocking_calls")};
#undef LP_REQ_WAITS
	struct lp_db_arg a[2];
	int64_t n = 0;
	lp_findings_req_args(c, a);
	for (size_t i = 0; i < ARRAY_SIZE(sql); i++) {
		int64_t k;
		if (i == 2 && !lp_db_has_table(c->db, "blocking_calls"))
			break;
		int rc = lp_db_get_int(c->db, sql[i], a, 2, 0, &k, c->err, c->errlen);
		if (rc)
			return rc;
		n += k;
	}
	return n;
}

struct cpu_sums {
	double cs, mig, task, nr;
};

static int cpu_row(sqlite3_stmt *st, void *ctx)
{
	struct cpu_sums *x = ctx;
	const char *e = (const char *)sqlite3_column_text(st, 0);
	double v = sqlite3_column_double(st, 1);
	if (!e)
		return 0;
	if (!strcmp(e, "context-switches") || !strcmp(e, "cs"))
		x->cs = v, x->nr = sqlite3_column_double(st, 2);
	else if (!strcmp(e, "cpu-migrations") || !strcmp(e, "migrations"))
		x->mig = v;
	else if (!strcmp(e, "task-clock"))
		x->task = v;
	return 0;
}

/* Context switches and migrations per request from range_counters, and
 * the request time off the CPU that no recorded wait explains. */
static int rule_cpu(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	struct cpu_sums x = {NAN, NAN, NAN, 0};
	struct lp_db_arg a[2];
	lp_findings_req_args(c, a);
	int rc = lp_db_query(c->db,
			     "SELECT e.name, sum(rc.delta), count(*) FROM range_counters rc JOIN "
			     "counter_events e ON e.id = rc.event_id JOIN ranges_named r ON r.id = "
			     "rc.range_id WHERE r.name = ?1 AND coalesce(r.domain, '') = ?2 AND "
			     "e.available GROUP BY e.name",
			     a, 2, cpu_row, &x, c->err, c->errlen);
	if (rc)
		return rc;
	double cs = x.cs, mig = x.mig, task = x.task, nr = x.nr;
	if (isnan(cs) || nr <= 0)
		return lp_findings_skip(c,
					"context-switches was not counted for the request ranges");
	/* Blocking waits switch out voluntarily: one switch each is expected. */
	int64_t waits = 0, wait_ns = 0;
	static const char *const waits_cats[] = {"gil_wait",  "lock_wait", "cond_wait",
						 "sync_wait", "sleep",	   "file_io",
						 "socket_io", "poll_wait", "other_block"};
	for (size_t k = 0; k < sizeof(waits_cats) / sizeof(waits_cats[0]); k++) {
		int i = lp_findings_bd_cat(c->bd, waits_cats[k]);
		wait_ns += i >= 0 ? c->bd->req_cat_ns[i] : 0;
	}
	waits = req_waits(c);
	if (waits < 0)
		return (int)waits;
	double per_req = cs / nr, excess = (cs - (double)waits) / nr;
	if (excess < 0)
		excess = 0;
	double mig_per = isnan(mig) ? NAN : mig / nr;
	double value = excess + (isnan(mig_per) ? 0 : mig_per);
	if (!lp_findings_judge(c, value))
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, value);
	if (!f)
		return -ENOMEM;
	lp_findings_num(f, "context_switches_per_request", "context switches per request",
			"per_request", per_req);
	lp_findings_num(f, "unexplained_switches_per_request", "switches not from a recorded wait",
			"per_request", excess);
	if (!isnan(mig_per))
		lp_findings_num(f, "migrations_per_request", "CPU migrations per request",
				"per_request", mig_per);
	/* Off-CPU time no wait explains: request time - on-CPU - waits. */
	int64_t off = 0;
	if (!isnan(task)) {
		off = c->req_ns - (int64_t)task - wait_ns;
		if (off < 0)
			off = 0;
		lp_findings_num(f, "on_cpu_ns", "on-CPU (task-clock)", "ns", task);
		lp_findings_num(f, "off_cpu_unexplained_ns", "off-CPU, not waiting", "ns",
				(double)off);
	}
	char load[160];
	if (lp_findings_load_source(c, f, load, sizeof(load)) == 1)
		f->fix = "Run no more busy threads than the cores the app may use (size its thread "
			 "pools and connection counts to them): its own threads take the CPU from "
			 "its requests.";
	f->summary = lp_findings_fmt(
	    "requests were switched out %.1f times each (%.1f not explained by "
	    "lock or condition waits or blocking calls)%s%s",
	    per_req, excess, isnan(task) ? "; task-clock was not counted, so no time estimate" : "",
	    load);
	lp_findings_category(f, "preempted");
	lp_findings_saving(f, off, off, "request time off the CPU without a recorded wait");
	return 1;
}

const struct lp_rule lp_rule_cpu_interference = {
    .id = "cpu-interference",
    .unit = "count",
    .cmp = LP_CMP_GE,
    .threshold = 2.0,
    .needs = LP_NEED_REQUESTS | LP_NEED_RANGE_CPU,
    .title = "Requests lose the CPU",
    .measures =
	"context switches per request not explained by recorded lock/condition waits or blocking "
	"calls, plus CPU "
	"migrations per request (CPU counters)",
    .fix = "Pin serving threads to dedicated cores (taskset -c, cgroups cpusets), run no more busy "
	   "threads than cores, and keep background jobs off those cores.",
    .eval = rule_cpu,
    .symptom = 1,
};
