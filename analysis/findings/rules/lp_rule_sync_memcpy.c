/* SPDX-License-Identifier: MIT */
/*
 * Rule "sync-memcpy": Synchronous copies on the request path.
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

/* Host blocked in synchronous copies; host-to-device copies <= 64 KB are
 * left out as nsys does (they are staged and return at once). */
static int rule_sync_memcpy(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int rc;
	struct lp_findings_acc a;
	rc = lp_findings_acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, coalesce(n.value, 'cudaMemcpy') || "
	    "' ' || m.copy_kind || ' ' || m.src_kind || '->' || m.dst_kind FROM memcpys "
	    "m " LP_API_OF("m") "WHERE m.async = 0 AND NOT (m.copy_kind = 'HtoD' AND m.bytes <= "
				"65536) AND ?1 IS NOT NULL ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	int64_t bytes =
	    lp_findings_q1(c, "SELECT coalesce(sum(bytes), 0) FROM memcpys WHERE async = 0 AND "
			      "NOT (copy_kind = 'HtoD' AND bytes <= 65536)");
	double share = lp_findings_share(a.ns, c->has_req ? c->req_ns : c->thread_ns);
	int found = 0;
	if (lp_findings_judge(c, share) && a.n > 0) {
		struct lp_finding *f = lp_findings_new(c, r, share);
		if (!f) {
			lp_findings_acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		lp_findings_num(f, "copies", "synchronous copies", "count", (double)a.n);
		lp_findings_num(f, "blocked_ns", "host blocked in them", "ns", (double)a.ns);
		lp_findings_num(f, "share", lp_findings_where(c), "share", share);
		lp_findings_num(f, "bytes", "bytes (whole run)", "bytes", (double)bytes);
		if (c->has_req)
			lp_findings_num(f, "per_request", "per request", "per_request",
					(double)a.n / (double)c->nreq);
		lp_findings_acc_sites(f, &a, "copies");
		f->summary = lp_findings_fmt("the host sat %.1f%% %s blocked in %" PRId64
					     " synchronous cudaMemcpy calls",
					     100 * share, lp_findings_where(c), a.n);
		lp_findings_saving(f, a.ns, a.ns, "host time blocked in synchronous copies");
		lp_findings_example(c, f);
	}
	lp_findings_acc_free(&a);
	return found;
}

const struct lp_rule lp_rule_sync_memcpy = {
    .id = "sync-memcpy",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.01,
    .needs = LP_NEED_GPU,
    .title = "Synchronous copies on the request path",
    .measures =
	"host time blocked in synchronous cudaMemcpy (host-to-device copies <= 64 KB excluded, "
	"as nsys does) / request time",
    .fix = "Use cudaMemcpyAsync from pinned memory on a non-default stream and synchronize once, "
	   "when the result is needed.",
    .eval = rule_sync_memcpy,
};
