/* SPDX-License-Identifier: MIT */
/*
 * Rule "cpu-starved": Requests wait for a CPU.
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

/* Requests runnable but not running: the breakdown's preempted share. */
static int rule_starved(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	const struct lp_breakdown *b = c->bd;
	int on = lp_findings_bd_cat(b, "on_cpu"), pre = lp_findings_bd_cat(b, "preempted");
	int64_t tot = 0;
	for (int k = 0; k < b->ncat; k++)
		tot += b->req_cat_ns[k];
	if (on < 0 || pre < 0 || !(b->req_cat_ns[on] + b->req_cat_ns[pre]))
		return lp_findings_skip(c,
					"task-clock was not counted in the requests (record with "
					"--counters default)");
	int64_t pre_ns = b->req_cat_ns[pre];
	double share = lp_findings_share(pre_ns, tot);
	if (!lp_findings_judge(c, share))
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, share);
	if (!f)
		return -ENOMEM;
	/* a lookup with a default: a read error is recorded for lp_db_fault */
	int64_t cpus = lp_db_int(c->db, "SELECT value FROM meta WHERE key = 'run.cpus_allowed'", 0);
	lp_findings_num(f, "preempted_ns", "runnable, waiting for a CPU", "ns", (double)pre_ns);
	lp_findings_num(f, "on_cpu_ns", "on-CPU (task-clock)", "ns", (double)b->req_cat_ns[on]);
	lp_findings_num(f, "share", "of request time", "share", share);
	if (cpus > 0)
		lp_findings_num(f, "cpus_allowed", "cores the process may use", "count",
				(double)cpus);
	double cores;
	int64_t busy = lp_findings_busy_threads(b, &cores);
	lp_findings_num(f, "busy_threads", "threads on a CPU half their life or more", "count",
			(double)busy);
	if (!isnan(cores))
		lp_findings_num(f, "cores_used",
				"cores in use on average (all threads' task-clock / run)", "count",
				cores);
	char use[96] = "";
	if (!isnan(cores))
		snprintf(use, sizeof(use), "; the process kept %.1f cores busy on average", cores);
	if (!isnan(cores) && cpus > 0)
		snprintf(use + strlen(use), sizeof(use) - strlen(use), " of %" PRId64 " allowed",
			 cpus);
	char load[160];
	if (lp_findings_load_source(c, f, load, sizeof(load)) == 1)
		f->fix = "Run no more busy threads than the cores the app may use (size its thread "
			 "pools to the affinity mask), or give it more cores: its own threads "
			 "outnumber them.";
	f->summary =
	    lp_findings_fmt("requests waited %.1f%% of their time for a CPU (runnable, not "
			    "running)%s%s",
			    100 * share, use, load);
	lp_findings_category(f, "preempted");
	lp_findings_saving(f, pre_ns, pre_ns, "request time runnable but off the CPU");
	return 1;
}

const struct lp_rule lp_rule_cpu_starved = {
    .id = "cpu-starved",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.10,
    .needs = LP_NEED_REQUESTS,
    .title = "Requests wait for a CPU",
    .measures =
	"preempted time (the recorded waits' run-queue part, from schedstat, plus request time not "
	"in a recorded wait minus task-clock) / request time",
    .fix = "Run no more busy threads than the cores the process may use (size thread pools to the "
	   "affinity mask), pin serving threads to cores of their own, and keep background work "
	   "off those cores.",
    .eval = rule_starved,
    .symptom = 1,
};
