/* SPDX-License-Identifier: MIT */
/*
 * Rule "cold-start": The first requests of a thread are much slower.
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

/* A thread that serves fewer requests than this has no steady state of its
 * own (a thread per request or connection): only its process's first
 * request can be cold there, as the lazy initialization is the process's. */
#define LP_COLD_MIN_REQ 4

struct proc_first {
	int64_t proc, start;
};

/* The earliest request start per process (a few processes: linear). */
static struct proc_first *proc_firsts(const struct lp_findings_ctx *c, size_t *n)
{
	struct proc_first *v = calloc(c->nreq ? c->nreq : 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < c->nreq; i++) {
		size_t k = 0;
		while (k < *n && v[k].proc != c->req[i].proc)
			k++;
		if (k == *n)
			v[(*n)++] = (struct proc_first){c->req[i].proc, c->req[i].start};
		else if (c->req[i].start < v[k].start)
			v[k].start = c->req[i].start;
	}
	return v;
}

static int proc_first_is(const struct proc_first *v, size_t n, const struct req *q)
{
	for (size_t k = 0; k < n; k++)
		if (v[k].proc == q->proc)
			return v[k].start == q->start;
	return 0;
}

/* Per thread, the leading requests slower than ratio x the median. */
static int rule_cold(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	if (c->nreq < 20)
		return lp_findings_skip(c,
					"fewer than 20 requests: no steady state to compare with");
	int64_t *d = lp_findings_req_durs(c);
	if (!d)
		return -ENOMEM;
	int64_t p50 = lp_pctl(d, c->nreq, 50);
	free(d);
	if (p50 <= 0)
		return lp_findings_skip(c, "zero median request time");
	lp_findings_stake_reset(c);
	size_t nproc;
	struct proc_first *pf = proc_firsts(c, &nproc);
	if (!pf)
		return -ENOMEM;
	int64_t cold = 0, cold_ns = 0, excess = 0, first_ns = 0, worst = 0, short_threads = 0;
	size_t first = c->nreq, limit = c->nreq / 4;
	for (size_t i = 0; i < c->nreq;) {
		size_t j = i, lead = 0, end = i;
		while (end < c->nreq && c->req[end].thread == c->req[i].thread)
			end++;
		int few = end - i < LP_COLD_MIN_REQ;
		short_threads += few;
		for (; j < end; j++) {
			int64_t dur = c->req[j].end - c->req[j].start;
			if (lead == j - i && lead < limit &&
			    (!few || proc_first_is(pf, nproc, &c->req[j])) &&
			    lp_findings_passes(c, (double)dur / (double)p50)) {
				lead++;
				cold++;
				cold_ns += dur;
				excess += dur - p50;
				c->stake[j] = dur - p50;
				if (dur > worst)
					worst = dur;
				if (first == c->nreq || c->req[j].start < first_ns)
					first = j, first_ns = c->req[j].start;
			}
		}
		i = j;
	}
	free(pf);
	/* The value: the first request of the run over the median. */
	size_t f0 = 0;
	for (size_t i = 1; i < c->nreq; i++)
		if (c->req[i].start < c->req[f0].start)
			f0 = i;
	double ratio = (double)(c->req[f0].end - c->req[f0].start) / (double)p50;
	if (!cold)
		return lp_findings_quiet(c, ratio);
	ratio = (double)worst / (double)p50;
	struct lp_finding *f = lp_findings_new(c, r, ratio);
	if (!f)
		return -ENOMEM;
	lp_findings_num(f, "cold_requests", "slow first requests", "count", (double)cold);
	lp_findings_num(f, "cold_ns", "their time", "ns", (double)cold_ns);
	lp_findings_num(f, "steady_p50_ns", "steady-state p50", "ns", (double)p50);
	lp_findings_num(f, "worst_ratio", "slowest first request / p50", "ratio", ratio);
	if (short_threads)
		lp_findings_num(
		    f, "short_threads",
		    "threads with too few requests to judge (only their process's first)", "count",
		    (double)short_threads);
	f->summary = lp_findings_fmt("the first %" PRId64
				     " request(s) of their threads took up to %.1fx the "
				     "median (%.3f ms vs %.3f ms)",
				     cold, ratio, worst / 1e6, p50 / 1e6);
	lp_findings_saving(f, excess, cold_ns, "the first requests' time");
	lp_findings_example_req(c, f, first, c->stake[first]);
	return 1;
}

const struct lp_rule lp_rule_cold_start = {
    .id = "cold-start",
    .unit = "ratio",
    .cmp = LP_CMP_GE,
    .threshold = 3.0,
    .needs = LP_NEED_REQUESTS,
    .title = "The first requests are much slower",
    .measures =
	"slowest leading request of a thread / median request (leading requests slower than the "
	"threshold count as cold)",
    .fix = "Warm up before serving: run a few dummy requests at start-up so lazy initialization, "
	   "JIT compilation, module loading and first-touch page faults happen before traffic.",
    .eval = rule_cold,
};
