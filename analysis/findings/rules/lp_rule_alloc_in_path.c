/* SPDX-License-Identifier: MIT */
/*
 * Rule "alloc-in-path": GPU memory allocated inside requests.
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

static int rule_alloc(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int rc;
	struct lp_findings_acc a;
	rc = lp_findings_acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, n.value FROM cuda_api a JOIN strings "
	    "n ON n.id = a.name_id WHERE a.domain = ?1 AND n.value NOT LIKE '%Async%' AND "
	    "(n.value LIKE 'cudaMalloc%' OR n.value LIKE 'cudaFree%' OR n.value LIKE "
	    "'cudaHostAlloc%' OR n.value LIKE 'cuMemAlloc%' OR n.value LIKE 'cuMemFree%' "
	    "OR n.value LIKE 'cuMemHostAlloc%') ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	double per = (double)a.n / (double)c->nreq;
	int found = 0;
	if (lp_findings_judge(c, (double)a.n) && a.n > 0) {
		struct lp_finding *f = lp_findings_new(c, r, (double)a.n);
		if (!f) {
			lp_findings_acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		lp_findings_num(f, "calls", "allocation calls inside requests", "count",
				(double)a.n);
		lp_findings_num(f, "per_request", "per request", "per_request", per);
		lp_findings_num(f, "alloc_ns", "time in them", "ns", (double)a.ns);
		lp_findings_num(f, "outside", "allocation calls outside requests", "count",
				(double)(a.all_n - a.n));
		lp_findings_acc_sites(f, &a, "API calls");
		f->summary =
		    lp_findings_fmt("%.1f CUDA allocation calls per request (%.3f ms each on "
				    "average) on the request path",
				    per, (double)a.ns / (double)a.n / 1e6);
		lp_findings_category(f, "cuda_api");
		lp_findings_saving(f, a.ns, a.ns, "time in allocation calls inside requests");
		lp_findings_example(c, f);
	}
	lp_findings_acc_free(&a);
	return found;
}

const struct lp_rule lp_rule_alloc_in_path = {
    .id = "alloc-in-path",
    .unit = "count",
    .cmp = LP_CMP_GE,
    .threshold = 1.0,
    .needs = LP_NEED_GPU | LP_NEED_REQUESTS,
    .title = "GPU memory allocated inside requests",
    .measures = "cudaMalloc/cudaFree/cudaHostAlloc calls inside requests",
    .fix = "Allocate at start-up and reuse, or use a memory pool (cudaMallocAsync with a pool, "
	   "the framework's caching allocator).",
    .eval = rule_alloc,
    .why_requests = "start-up and serving cannot be told apart",
};
