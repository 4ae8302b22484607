/* SPDX-License-Identifier: MIT */
/*
 * Rule "cpu-saturated": CPU saturated: the app's own threads outnumber its cores.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_locks.h"
#include "lp_util.h"
#include "lp_waits.h"

/* Threads by the time they waited for a CPU, most first. */
static int sat_cmp(const void *pa, const void *pb, void *arg)
{
	const struct lp_breakdown *b = arg;
	int pre = lp_findings_bd_cat(b, "preempted");
	int64_t x = b->threads[*(const size_t *)pa].cat_ns[pre];
	int64_t y = b->threads[*(const size_t *)pb].cat_ns[pre];
	return (x < y) - (x > y);
}

/* A thread as a site: "tid 123 (name, pid 45)", its waits that waited for a
 * CPU, and its preempted time. */
static void sat_site(struct lp_findings_ctx *c, struct lp_finding *f,
		     const struct lp_breakdown_thread *t, int pre)
{
	struct lp_db_arg id = LP_DB_INT(t->thread_id);
	int64_t pid = lp_db_int_args(c->db,
				     "SELECT p.pid FROM threads t JOIN processes p ON p.id = "
				     "t.process_id WHERE t.id = ?",
				     &id, 1, 0);
	/* lock_waits' count from its grouped waits (temp.lp_wagg, lp_locks_group):
	 * a scan of every wait per listed thread otherwise */
	int grouped =
	    lp_locks_group(c->db, c->err, c->errlen) == 0 &&
	    lp_db_int(c->db, "SELECT count(*) FROM sqlite_temp_master WHERE name = 'lp_wagg'", 0);
	int64_t waits = lp_db_int_args(
	    c->db,
	    grouped
		? "SELECT (SELECT count(*) FROM blocking_calls WHERE thread_id = ?1 AND "
		  "runq_ns > 0) + (SELECT coalesce(SUM(rq), 0) FROM temp.lp_wagg WHERE src = 0 "
		  "AND thread_id = ?1) + (SELECT count(*) FROM cond_waits WHERE thread_id = ?1 "
		  "AND runq_ns > 0)"
		: "SELECT (SELECT count(*) FROM blocking_calls WHERE thread_id = ?1 AND runq_ns > "
		  "0) + (SELECT count(*) FROM lock_waits WHERE thread_id = ?1 AND runq_ns > 0) + "
		  "(SELECT count(*) FROM cond_waits WHERE thread_id = ?1 AND runq_ns > 0)",
	    &id, 1, 0);
	char *what =
	    lp_findings_fmt("tid %lld (%s, pid %lld): %.0f%% of its life", (long long)t->tid,
			    t->name && *t->name ? t->name : "?", (long long)pid,
			    100 * lp_findings_share(t->cat_ns[pre], t->total_ns));
	lp_findings_site(f, what, waits, t->cat_ns[pre]);
	free(what);
}

/*
 * The whole run, requests or not: every thread's time waiting for a CPU
 * (the breakdown's preempted: its waits' run-queue part, from schedstat,
 * and the time outside waits not on a CPU by task-clock) against its life.
 * Only where the recorded threads themselves outnumber the CPUs: runnable
 * threads on average (time on a CPU or waiting for one, over the run) more
 * than the cores the app was allowed. A run that waits as much beside
 * other tenants' load is cpu-interference's, not too many threads.
 */
static int rule_saturated(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	const struct lp_breakdown *b = c->bd;
	int on = lp_findings_bd_cat(b, "on_cpu"), pre = lp_findings_bd_cat(b, "preempted");
	int64_t life = 0, queued = 0, cpus;
	for (size_t i = 0; on >= 0 && pre >= 0 && i < b->nthreads; i++) {
		life += b->threads[i].total_ns;
		queued += b->threads[i].cat_ns[pre];
	}
	double nrun = lp_findings_runnable(c, &cpus);
	if (!life || isnan(nrun))
		return lp_findings_skip(c, "no thread time recorded");
	double share = lp_findings_share(queued, life);
	if (!lp_findings_judge(c, share) || (cpus > 0 && nrun <= (double)cpus))
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, share);
	if (!f)
		return -ENOMEM;
	lp_findings_num(f, "runnable_threads",
			"runnable threads on average (on or waiting for a CPU)", "count", nrun);
	if (cpus > 0)
		lp_findings_num(f, "cpus", "cores the app may use", "count", (double)cpus);
	lp_findings_num(f, "queued_ns", "thread time waiting for a CPU", "ns", (double)queued);
	lp_findings_num(f, "share", "of all threads' time", "share", share);
	double cores;
	lp_findings_busy_threads(b, &cores);
	if (!isnan(cores))
		lp_findings_num(f, "cores_used",
				"cores in use on average (all threads' task-clock / run)", "count",
				cores);
	size_t *ord = malloc(b->nthreads * sizeof(*ord));
	if (ord) {
		for (size_t i = 0; i < b->nthreads; i++)
			ord[i] = i;
		qsort_r(ord, b->nthreads, sizeof(*ord), sat_cmp, (void *)b);
		for (size_t i = 0; i < b->nthreads && i < LP_FINDINGS_MAXSITES; i++)
			if (b->threads[ord[i]].cat_ns[pre] > 0)
				sat_site(c, f, &b->threads[ord[i]], pre);
		free(ord);
	}
	f->site_kind = "threads waiting longest for a CPU (waits that did)";
	char on_m[32] = "";
	if (cpus > 0)
		snprintf(on_m, sizeof(on_m), " on %lld CPU%s", (long long)cpus,
			 cpus == 1 ? "" : "s");
	f->summary =
	    lp_findings_fmt("CPU saturated: %.1f runnable threads%s; threads waited %.1f%% of "
			    "their time for a CPU",
			    nrun, on_m, 100 * share);
	lp_findings_category(f, "preempted");
	lp_findings_saving(f, queued, queued, "thread time runnable but off the CPU");
	return 1;
}

const struct lp_rule lp_rule_cpu_saturated = {
    .id = "cpu-saturated",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.10,
    .needs = 0,
    .title = "CPU saturated",
    .measures =
	"all threads' time waiting for a CPU (preempted, as cpu-starved measures it) / all "
	"threads' "
	"time, with or without requests; a finding only when the recorded threads outnumber the "
	"cores (runnable threads on average > run.cpus_allowed)",
    .fix =
	"Run fewer busy threads than the cores the app may use (client and worker pools, "
	"connections, parallel builds), or give it more cores; the threads listed waited longest.",
    .eval = rule_saturated,
    .symptom = 1,
};
