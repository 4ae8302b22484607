/* SPDX-License-Identifier: MIT */
/*
 * Rule "tail-outlier": The p99 tail, and every part of the tail stage's growth.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_util.h"

/* ---- tail causes: every part of the tail stage's growth ---------------
 * The breakdown names the one category that grows most; a tail often has
 * several (a locked path: the holder's CPU and the others' lock wait). Each
 * category of the breakdown's tail stage that grows by >= 20% of the stage's
 * growth is a cause, with the breakdown's own numbers (lp_breakdown_tail
 * cat_growth_ns): the same categories, the same split of a wait's run-queue
 * part into preempted, so the first cause is the breakdown's tail category
 * with its amount. */

/* Appends ", cause +X ms [on lock]" for every cause, largest first; the
 * causes also become sites. Returns 0 or -ENODATA when none is listed. */
static int tail_causes(struct lp_findings_ctx *c, struct lp_finding *f, double grow, int64_t ntail,
		       char *why, size_t len, int n)
{
	const struct lp_breakdown *b = c->bd;
	const struct lp_breakdown_tail *t = &b->tail;
	int done[LP_BREAKDOWN_MAXCAT] = {0}, listed = 0;
	if (grow <= 0)
		return -ENODATA;
	for (;;) {
		int best = -1;
		for (int k = 0; k < b->ncat; k++)
			if (!done[k] && t->cat_growth_ns[k] >= 0.2 * grow &&
			    (best < 0 || t->cat_growth_ns[k] > t->cat_growth_ns[best]))
				best = k;
		if (best < 0)
			break;
		done[best] = 1;
		const char *key = best != t->cat ? t->cat_key_name[best]
				  : t->has_key	 ? t->key_name
						 : NULL;
		char *what = lp_findings_fmt("%s%s%s", b->cat_label[best], key ? " on " : "",
					     key ? key : "");
		if (n > 0 && (size_t)n < len)
			n += snprintf(why + n, len - (size_t)n, "%s%s +%.3f ms",
				      listed ? ", " : "; by cause: ", what ? what : "",
				      t->cat_growth_ns[best] / 1e6);
		lp_findings_site(f, what, ntail, (int64_t)(t->cat_growth_ns[best] * (double)ntail));
		free(what);
		listed++;
	}
	return listed ? 0 : -ENODATA;
}

static int rule_tail(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	const struct lp_breakdown *b = c->bd;
	if (!b->tail.valid || b->req.p50 <= 0)
		return lp_findings_skip(c, "too few requests for a p99 (the breakdown needs 20)");
	double ratio = (double)b->req.p99 / (double)b->req.p50;
	if (!lp_findings_judge(c, ratio))
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, ratio);
	if (!f)
		return -ENOMEM;
	/* Basis: the tail requests' time above the median. */
	int64_t tail_ns = 0, excess = 0, ntail = 0;
	lp_findings_stake_reset(c);
	for (size_t i = 0; i < c->nreq; i++) {
		int64_t d = c->req[i].end - c->req[i].start;
		if (d < b->req.p99)
			continue;
		ntail++;
		tail_ns += d;
		excess += d - b->req.p50;
		c->stake[i] = d - b->req.p50;
	}
	const struct lp_breakdown_tail *t = &b->tail;
	int64_t saving = excess;
	char why[600] = "";
	if (t->stage >= 0 && (size_t)t->stage < b->nstages) {
		const char *sn = b->stages[t->stage].name;
		f->subject = strdup(sn);
		double grow = t->stage_tail_ns - t->stage_mid_ns;
		saving = lp_findings_min64(excess, (int64_t)(grow * (double)ntail));
		int n = snprintf(why, sizeof(why), "; stage %s grows from %.3f ms to %.3f ms", sn,
				 t->stage_mid_ns / 1e6, t->stage_tail_ns / 1e6);
		f->site_kind = "stages";
		lp_findings_site(f, sn, ntail, (int64_t)(grow * (double)ntail));
		/* the breakdown's category first, as its tail section names it;
		 * then every cause of the growth, by wait class */
		if (t->cat >= 0 && t->cat < b->ncat && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n, ", mostly %s (+%.3f ms)",
				      b->cat_label[t->cat], (t->cat_tail_ns - t->cat_mid_ns) / 1e6);
		if (t->has_key && t->key_name && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n, " %s %s",
				      t->key_site ? "at" : "on", t->key_name);
		int causes = tail_causes(c, f, grow, ntail, why, sizeof(why), n);
		if (causes && causes != -ENODATA)
			return causes;
		if (causes == 0)
			f->site_kind = "the tail stage, then what grew in it";
		if (t->cat >= 0 && t->cat < b->ncat) {
			lp_findings_num(f, "stage_tail_ns", "stage mean in p99 requests", "ns",
					t->stage_tail_ns);
			lp_findings_num(f, "stage_median_ns", "stage mean in median requests", "ns",
					t->stage_mid_ns);
			lp_findings_num(f, "category_growth_ns", b->cat_label[t->cat], "ns",
					t->cat_tail_ns - t->cat_mid_ns);
		}
	}
	lp_findings_num(f, "p50_ns", "p50", "ns", (double)b->req.p50);
	lp_findings_num(f, "p99_ns", "p99", "ns", (double)b->req.p99);
	lp_findings_num(f, "ratio", "p99 / p50", "ratio", ratio);
	lp_findings_num(f, "tail_requests", "requests at or above p99", "count", (double)ntail);
	f->summary = lp_findings_fmt("p99 is %.1fx the median (%.3f ms vs %.3f ms)%s", ratio,
				     b->req.p99 / 1e6, b->req.p50 / 1e6, why);
	/* the category the breakdown's tail names: its time, in the account */
	if (t->stage >= 0 && (size_t)t->stage < b->nstages && t->cat >= 0 && t->cat < b->ncat)
		lp_findings_category(f, b->cat_name[t->cat]);
	lp_findings_saving(f, saving, excess, "tail requests' time above the median");
	(void)tail_ns;
	lp_findings_example(c, f);
	return 1;
}

const struct lp_rule lp_rule_tail_outlier = {
    .id = "tail-outlier",
    .unit = "ratio",
    .cmp = LP_CMP_GE,
    .threshold = 3.0,
    .needs = LP_NEED_REQUESTS,
    .title = "The p99 tail is far from the median",
    .measures = "p99 / p50 of request latency; the stage and category that grow in the tail",
    .fix = "Look at the stage and category named in the evidence: that is where the slow requests "
	   "spend their extra time; fix that, not the median path.",
    .eval = rule_tail,
    .symptom = 1,
};
