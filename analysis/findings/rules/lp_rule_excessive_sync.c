/* SPDX-License-Identifier: MIT */
/*
 * Rule "excessive-sync": Too many host-device synchronizations.
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

static int rule_sync(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int rc;
	struct lp_findings_acc a;
	rc = lp_findings_acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, n.value FROM cuda_api a JOIN strings "
	    "n ON n.id = a.name_id WHERE a.domain = ?1 AND n.value LIKE '%Synchronize%' "
	    "ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	double per = (double)a.n / (double)c->nreq;
	double share = lp_findings_share(a.ns, c->req_ns);
	int found = 0;
	if (lp_findings_judge(c, per)) {
		struct lp_finding *f = lp_findings_new(c, r, per);
		if (!f) {
			lp_findings_acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		lp_findings_num(f, "syncs_per_request", "sync calls per request", "per_request",
				per);
		lp_findings_num(f, "blocked_ns", "host blocked in them", "ns", (double)a.ns);
		lp_findings_num(f, "share", "of request time", "share", share);
		lp_findings_acc_sites(f, &a, "API calls");
		f->summary = lp_findings_fmt(
		    "%.1f synchronization calls per request; the host sat %.1f%% of "
		    "request time blocked in them",
		    per, 100 * share);
		/* One sync per request is needed to hand the result back. */
		lp_findings_category(f, "sync_wait");
		lp_findings_saving(f, (int64_t)((double)a.ns * (1.0 - 1.0 / per)), a.ns,
				   "host time blocked in sync calls");
		lp_findings_example(c, f);
	}
	lp_findings_acc_free(&a);
	return found;
}

const struct lp_rule lp_rule_excessive_sync = {
    .id = "excessive-sync",
    .unit = "count",
    .cmp = LP_CMP_GE,
    .threshold = 3.0,
    .needs = LP_NEED_GPU | LP_NEED_REQUESTS,
    .title = "Too many host-device synchronizations",
    .measures = "cudaDeviceSynchronize / StreamSynchronize / EventSynchronize calls per request",
    .fix = "Synchronize once per request, when the host needs the result; order GPU work with "
	   "streams and events (cudaStreamWaitEvent) instead of blocking the host.",
    .eval = rule_sync,
    .why_requests = "syncs per request are undefined",
};
