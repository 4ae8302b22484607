/* SPDX-License-Identifier: MIT */
/*
 * The bottleneck rules' thresholds: each rule of lp_rules[] has the
 * comparison and threshold docs/rules.md states for it (the row's third
 * column, "≥ 0.05" or "< 0.05"), every rule of the docs is in the table,
 * and lp_rule_passes (through which every rule compares) fires at the
 * threshold itself, not just below it, and just above it (>= rules), or
 * just below and not at it (< rules). Reads docs/rules.md from the source
 * tree (LP_SRC_DIR).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_check.h"
#include "lp_findings.h"

struct doc_rule {
	char id[64];
	int lt; /* "<" rather than "≥" */
	double thr;
};

/* One rule row: "| id | value | ≥ 0.05... | saving |"; 1 when parsed. */
static int parse_row(const char *line, struct doc_rule *d)
{
	if (strncmp(line, "| ", 2))
		return 0;
	const char *p = line + 2, *bar = strstr(p, " |");
	if (!bar || (size_t)(bar - p) >= sizeof(d->id))
		return 0;
	memcpy(d->id, p, (size_t)(bar - p));
	d->id[bar - p] = 0;
	if (!lp_rule_find(d->id))
		return 0;
	const char *col = strstr(bar + 2, " | "); /* end of the value column */
	if (!col)
		return 0;
	col += 3;
	if (!strncmp(col, "≥ ", strlen("≥ ")))
		d->lt = 0, col += strlen("≥ ");
	else if (!strncmp(col, "< ", 2))
		d->lt = 1, col += 2;
	else
		return -1;
	char *end;
	d->thr = strtod(col, &end);
	return end == col ? -1 : 1;
}

int main(void)
{
	const char *path = LP_SRC_DIR "/docs/rules.md";
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "opened %s", path);
	if (!f)
		return lp_check_done();
	char line[4096];
	size_t ndoc = 0;
	int *seen = calloc(lp_nrules, sizeof(*seen));
	while (fgets(line, sizeof(line), f)) {
		struct doc_rule d = {0};
		int rc = parse_row(line, &d);
		CHECK_QUIET(rc >= 0,
			    "docs/rules.md row of %s states its threshold as '≥ N' or '< N'", d.id);
		if (rc <= 0)
			continue;
		const struct lp_rule *r = lp_rule_find(d.id);
		size_t i = (size_t)(r - lp_rules);
		if (seen[i]++)
			continue; /* the table of thresholds only; later mentions are prose */
		ndoc++;
		CHECK(d.lt == (r->cmp == LP_CMP_LT) && d.thr == r->threshold,
		      "%s: docs/rules.md says %s %g, the rule table %s %g", r->id,
		      d.lt ? "<" : ">=", d.thr, r->cmp == LP_CMP_LT ? "<" : ">=", r->threshold);
	}
	fclose(f);
	CHECK(ndoc == lp_nrules,
	      "docs/rules.md has a threshold row for each of the %zu rules (%zu)", lp_nrules, ndoc);
	for (size_t i = 0; i < lp_nrules; i++)
		CHECK(seen[i], "%s is in docs/rules.md's table", lp_rules[i].id);
	free(seen);

	/* At the boundary, by each rule's own comparison and threshold. */
	for (size_t i = 0; i < lp_nrules; i++) {
		const struct lp_rule *r = &lp_rules[i];
		double t = r->threshold, below = nextafter(t, -INFINITY),
		       above = nextafter(t, INFINITY);
		int ge = r->cmp == LP_CMP_GE;
		CHECK(r->threshold > 0, "%s: threshold %g > 0", r->id, t);
		CHECK(lp_rule_passes(r, t, t) == ge && lp_rule_passes(r, below, t) == !ge &&
			  lp_rule_passes(r, above, t) == ge,
		      "%s: %s %g fires at %.17g %s, at %.17g %s, at %.17g %s", r->id,
		      ge ? ">=" : "<", t, below, lp_rule_passes(r, below, t) ? "yes" : "no", t,
		      lp_rule_passes(r, t, t) ? "yes" : "no", above,
		      lp_rule_passes(r, above, t) ? "yes" : "no");
		/* An override moves the boundary with it. */
		double o = 2 * t;
		CHECK_QUIET(lp_rule_passes(r, o, o) == ge && lp_rule_passes(r, t, o) == !ge,
			    "%s: threshold override %g", r->id, o);
	}
	/* The two thresholds docs/rules.md explains in prose, by number. */
	const struct lp_rule *tail = lp_rule_find("tail-outlier"),
			     *cold = lp_rule_find("cold-start");
	CHECK(tail && lp_rule_passes(tail, 3.0, tail->threshold) &&
		  !lp_rule_passes(tail, 2.999, tail->threshold),
	      "tail-outlier: p99 = 3.0 x p50 fires, 2.999 x does not");
	CHECK(cold && lp_rule_passes(cold, 3.0, cold->threshold) &&
		  !lp_rule_passes(cold, 2.999, cold->threshold),
	      "cold-start: a first request 3.0 x p50 is cold, 2.999 x is not");
	return lp_check_done();
}
