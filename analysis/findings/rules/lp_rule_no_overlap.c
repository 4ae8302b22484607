/* SPDX-License-Identifier: MIT */
/*
 * Rule "no-overlap": Copies and kernels never overlap.
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

static int ivset_q(struct lp_findings_ctx *c, const char *sql, struct lp_ivset *out)
{
	return lp_ivset_from_sql(c->db, sql, NULL, 0, out, c->err, c->errlen);
}

/* Copies and kernels on the same device that never run at the same time. */
static int rule_overlap(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int rc;
	struct lp_ivset cp = {0}, kn = {0};
	/* key: process and device, so two GPUs never look overlapped */
	rc = ivset_q(c, "SELECT process_id * 1024 + device, start_ns, end_ns FROM memcpys", &cp);
	if (rc == 0)
		rc = ivset_q(c, "SELECT process_id * 1024 + device, start_ns, end_ns FROM kernels",
			     &kn);
	if (rc) {
		lp_ivset_free(&cp);
		lp_ivset_free(&kn);
		return rc;
	}
	int64_t copy = lp_ivset_total(&cp), kern = lp_ivset_total(&kn), both = 0;
	for (size_t i = 0; i < cp.n; i++)
		both += lp_ivset_overlap(&kn, cp.thread[i], cp.start[i], cp.end[i]);
	lp_ivset_free(&cp);
	lp_ivset_free(&kn);
	int64_t req = lp_findings_q1(c, "SELECT count(DISTINCT correlation_id) FROM memcpys");
	/* A pipeline: copies and kernels both matter, repeatedly. */
	if (!copy || !kern || req < 2 || lp_findings_share(copy, copy + kern) < 0.05)
		return lp_findings_skip(
		    c, "no pipelined GPU work: copies or kernels missing or negligible");
	int64_t possible = lp_findings_min64(copy, kern);
	double v = lp_findings_share(both, possible);
	if (!lp_findings_judge(c, v))
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, v);
	if (!f)
		return -ENOMEM;
	lp_findings_num(f, "copy_ns", "GPU copy time", "ns", (double)copy);
	lp_findings_num(f, "kernel_ns", "GPU kernel time", "ns", (double)kern);
	lp_findings_num(f, "overlap_ns", "copies overlapping kernels", "ns", (double)both);
	lp_findings_num(f, "overlap", "of the shorter of the two", "share", v);
	f->summary =
	    lp_findings_fmt("copies and kernels overlapped %.1f%% of the time they could: %.3f ms "
			    "of copies ran while no kernel did",
			    100 * v, (double)(copy - both) / 1e6);
	lp_findings_saving(f, possible - both, copy, "GPU copy time");
	return 1;
}

const struct lp_rule lp_rule_no_overlap = {
    .id = "no-overlap",
    .unit = "share",
    .cmp = LP_CMP_LT,
    .threshold = 0.05,
    .needs = LP_NEED_GPU,
    .title = "Copies and kernels never overlap",
    .measures =
	"GPU time where copies and kernels run together / the shorter of copy and kernel time",
    .fix = "Double-buffer: copy batch n+1 on one stream while batch n computes on another, with "
	   "pinned buffers and events between the streams.",
    .eval = rule_overlap,
};
