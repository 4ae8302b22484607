/* SPDX-License-Identifier: MIT */
/*
 * Rule "small-kernels": Many kernels shorter than their launch.
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

/* Kernels shorter than the API call that launched them. A CUDA graph's
 * kernel nodes share one cudaGraphLaunch: its cost is paid once for all of
 * them, so they are not counted (and graphs are the fix offered). */
static int rule_small_kernels(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int rc;
	struct lp_findings_acc a;
	rc = lp_findings_acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, coalesce(k2.value, '?') FROM "
	    "kernels k " LP_API_OF(
		"k") "LEFT JOIN strings k2 ON k2.id = k.name_id WHERE "
		     "k.end_ns - k.start_ns < a.end_ns - a.start_ns AND k.graph_id = 0 AND ?1 IS "
		     "NOT NULL ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	int64_t all = lp_findings_q1(c, "SELECT count(*) FROM kernels");
	double per = c->has_req ? (double)a.n / (double)c->nreq : (double)a.n;
	int found = 0;
	if (lp_findings_judge(c, per) && a.n > 0) {
		struct lp_finding *f = lp_findings_new(c, r, per);
		if (!f) {
			lp_findings_acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		lp_findings_num(f, "small_kernels", "kernels shorter than their launch", "count",
				(double)a.n);
		lp_findings_num(f, "per_request", "per request", "per_request", per);
		lp_findings_num(f, "all_kernels", "kernels (whole run)", "count", (double)all);
		lp_findings_num(f, "launch_ns", "host time launching them", "ns", (double)a.ns);
		lp_findings_acc_sites(f, &a, "kernels");
		f->summary = lp_findings_fmt(
		    "%.1f kernels per request ran shorter than the cudaLaunchKernel "
		    "call that issued them",
		    per);
		lp_findings_category(f, "cuda_api");
		lp_findings_saving(f, a.ns, a.ns, "host time launching short kernels");
		lp_findings_example(c, f);
	}
	lp_findings_acc_free(&a);
	return found;
}

const struct lp_rule lp_rule_small_kernels = {
    .id = "small-kernels",
    .unit = "count",
    .cmp = LP_CMP_GE,
    .threshold = 10.0,
    .needs = LP_NEED_GPU,
    .title = "Many kernels shorter than their launch",
    .measures =
	"kernels per request whose GPU time is shorter than the API call that launched them",
    .fix = "Fuse the small kernels (torch.compile, TensorRT, hand fusion) or replay them as a CUDA "
	   "graph, which launches the whole sequence with one call.",
    .eval = rule_small_kernels,
};
