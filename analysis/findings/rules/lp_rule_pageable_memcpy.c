/* SPDX-License-Identifier: MIT */
/*
 * Rule "pageable-memcpy": Async copies from pageable memory.
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

static int rule_pageable(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int rc;
	struct lp_findings_acc a;
	rc = lp_findings_acc_run(
	    c,
	    "SELECT a.thread_id, a.start_ns, a.end_ns, coalesce(n.value, 'memcpy') || ' ' "
	    "|| m.copy_kind || ' ' || m.src_kind || '->' || m.dst_kind FROM memcpys m " LP_API_OF(
		"m") "WHERE m.async = 1 AND (m.src_kind = 'pageable' OR m.dst_kind = "
		     "'pageable') AND ?1 IS NOT NULL ORDER BY 4",
	    &a);
	if (rc)
		return rc;
	double per = c->has_req ? (double)a.n / (double)c->nreq : (double)a.n;
	int found = 0;
	if (lp_findings_judge(c, (double)a.n) && a.n > 0) {
		struct lp_finding *f = lp_findings_new(c, r, (double)a.n);
		if (!f) {
			lp_findings_acc_free(&a);
			return -ENOMEM;
		}
		found = 1;
		lp_findings_num(f, "copies", "async copies with pageable memory", "count",
				(double)a.n);
		lp_findings_num(f, "per_request", "per request", "per_request", per);
		lp_findings_num(f, "blocked_ns", "host time in those calls", "ns", (double)a.ns);
		lp_findings_acc_sites(f, &a, "copies");
		f->summary =
		    lp_findings_fmt("%" PRId64 " cudaMemcpyAsync calls used pageable host memory: "
				    "they run synchronously, staged through a driver buffer",
				    a.n);
		lp_findings_saving(f, a.ns, a.ns, "host time in async copies of pageable memory");
		lp_findings_example(c, f);
	}
	lp_findings_acc_free(&a);
	return found;
}

const struct lp_rule lp_rule_pageable_memcpy = {
    .id = "pageable-memcpy",
    .unit = "count",
    .cmp = LP_CMP_GE,
    .threshold = 1.0,
    .needs = LP_NEED_GPU,
    .title = "Async copies from pageable memory",
    .measures =
	"cudaMemcpyAsync calls whose host side is pageable (they are silently synchronous and "
	"staged)",
    .fix = "Allocate the host buffers with cudaHostAlloc / cudaMallocHost, or pin existing ones "
	   "with cudaHostRegister, so the copies run asynchronously by DMA.",
    .eval = rule_pageable,
};
