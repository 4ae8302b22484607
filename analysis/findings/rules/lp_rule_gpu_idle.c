/* SPDX-License-Identifier: MIT */
/*
 * Rule "gpu-idle": The GPU idles inside requests.
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

/* GPU busy (any op of the process) inside requests that launched work. */
static int rule_gpu_idle(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int rc;
	struct lp_ivset busy;
	rc = lp_ivset_from_sql(c->db, "SELECT process_id, start_ns, end_ns FROM gpu_ops", NULL, 0,
			       &busy, c->err, c->errlen);
	/* API time per request: what launch overhead costs the GPU. */
	struct lp_findings_acc a;
	if (rc == 0)
		rc = lp_findings_acc_run(
		    c,
		    "SELECT a.thread_id, a.start_ns, a.end_ns, 'api' FROM cuda_api a WHERE "
		    "a.domain = ?1",
		    &a);
	if (rc) {
		lp_ivset_free(&busy);
		return rc;
	}
	int64_t idle = 0, gpu_req_ns = 0, api_ns = 0, nreq = 0;
	int64_t *api = c->stake; /* per request API time, reused below */
	int64_t *permille = malloc((c->nreq ? c->nreq : 1) * sizeof(*permille));
	if (!permille) {
		lp_ivset_free(&busy);
		lp_findings_acc_free(&a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->nreq; i++) {
		if (api[i] <= 0)
			continue;
		const struct req *q = &c->req[i];
		int64_t d = q->end - q->start,
			id = d - lp_ivset_overlap(&busy, q->proc, q->start, q->end);
		nreq++;
		gpu_req_ns += d;
		idle += id;
		api_ns += lp_findings_min64(api[i], id);
		api[i] = id; /* the example: the request with the most idle GPU */
		permille[nreq - 1] = d > 0 ? id * 1000000 / d : 0;
	}
	lp_ivset_free(&busy);
	lp_findings_acc_free(&a);
	/* The value is the median request's idle share: a few requests the
	 * host was preempted in must not make a busy GPU look idle. */
	double med_share = nreq ? (double)lp_pctl(permille, (size_t)nreq, 50) / 1e6 : 0;
	free(permille);
	double share = lp_findings_share(idle, gpu_req_ns);
	if (!lp_findings_judge(c, med_share) || !nreq)
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, med_share);
	if (!f)
		return -ENOMEM;
	int64_t med = lp_findings_q1(
	    c, "WITH d AS (SELECT min(start_ns) - api_end_ns AS v FROM gpu_launches "
	       "GROUP BY process_id, correlation_id) SELECT v FROM d ORDER BY 1 LIMIT 1 "
	       "OFFSET (SELECT count(*) / 2 FROM d)");
	lp_findings_num(f, "idle_ns", "GPU idle inside requests", "ns", (double)idle);
	lp_findings_num(f, "share", "of those requests' time", "share", share);
	lp_findings_num(f, "median_share", "in the median request", "share", med_share);
	lp_findings_num(f, "requests", "requests with GPU work", "count", (double)nreq);
	lp_findings_num(f, "launch_api_ns", "host time in CUDA API while idle", "ns",
			(double)api_ns);
	lp_findings_num(f, "launch_delay_p50_ns", "launch delay p50", "ns", (double)med);
	/* Launches that are CUDA graphs already: capturing a graph is not what
	 * is left to do, and the finding says so. */
	int64_t graphs =
	    lp_findings_q1(c, "SELECT count(DISTINCT process_id || ':' || correlation_id) "
			      "FROM kernels WHERE graph_id <> 0");
	int64_t launches = lp_findings_q1(c, "SELECT count(DISTINCT process_id || ':' || "
					     "correlation_id) FROM gpu_launches");
	if (graphs > 0)
		lp_findings_num(f, "graph_launches", "launches that are CUDA graphs", "count",
				(double)graphs);
	f->summary =
	    graphs > 0
		? lp_findings_fmt("the GPU idled %.1f%% of the median request that used it (%.1f%% "
				  "overall): the host, not the GPU, sets the pace; %lld of %lld "
				  "launches are CUDA graphs already: larger graphs or batched "
				  "requests are what is left",
				  100 * med_share, 100 * share, (long long)graphs,
				  (long long)launches)
		: lp_findings_fmt("the GPU idled %.1f%% of the median request that used it (%.1f%% "
				  "overall): the host, not the GPU, sets the pace",
				  100 * med_share, 100 * share);
	lp_findings_saving(f, api_ns, idle, "GPU idle time inside requests");
	lp_findings_example(c, f);
	return 1;
}

const struct lp_rule lp_rule_gpu_idle = {
    .id = "gpu-idle",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.5,
    .needs = LP_NEED_GPU | LP_NEED_REQUESTS,
    .title = "The GPU idles inside requests",
    .measures = "GPU idle share of the median request that launched GPU work",
    .fix = "Batch requests so each launch does more work, capture the launch sequence in a CUDA "
	   "graph, and move CPU pre/post-processing off the launching thread.",
    .eval = rule_gpu_idle,
};
