/* SPDX-License-Identifier: MIT */
/*
 * The bottleneck rules' registry against docs/rules.md: each rule of
 * lp_rules[] has the unit, comparison, threshold and needs its row states
 * (| id | unit | value | "≥ 0.05" or "< 0.05" | needs | saving |), every rule
 * of the docs is in the registry and each is one file, analysis/findings/rules/
 * lp_rule_NAME.c, listed once in analysis/findings/lp_rules.c,
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
	char id[64], unit[16];
	int lt; /* "<" rather than "≥" */
	double thr;
	unsigned needs;
};

/* The needs column's words, as enum lp_findings_need. */
static const struct {
	const char *word;
	unsigned bit;
} need_words[] = {{"GPU", LP_NEED_GPU},
		  {"requests", LP_NEED_REQUESTS},
		  {"time", LP_NEED_TIME},
		  {"blocking calls", LP_NEED_BLOCKING},
		  {"range CPU", LP_NEED_RANGE_CPU},
		  {"thread CPU", LP_NEED_THREAD_CPU}};

/* Cell i (0 = id) of a table row "| a | b | ... |" into buf. */
static int cell(const char *line, int i, char *buf, size_t len)
{
	const char *p = line + 2;
	for (int k = 0; k < i; k++) {
		p = strstr(p, " | ");
		if (!p)
			return -1;
		p += 3;
	}
	const char *e = strstr(p, " |");
	if (!e || (size_t)(e - p) >= len)
		return -1;
	memcpy(buf, p, (size_t)(e - p));
	buf[e - p] = 0;
	return 0;
}

static int parse_needs(const char *col, unsigned *out)
{
	*out = 0;
	if (!strcmp(col, "—"))
		return 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", col);
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		while (*w == ' ')
			w++;
		size_t k = 0;
		while (k < sizeof(need_words) / sizeof(need_words[0]) &&
		       strcmp(w, need_words[k].word))
			k++;
		if (k == sizeof(need_words) / sizeof(need_words[0]))
			return -1;
		*out |= need_words[k].bit;
	}
	return 0;
}

/* One rule row: "| id | unit | value | ≥ 0.05... | needs | saving |"; 1 when
 * parsed, 0 for other lines, -1 for a rule's row that does not parse. */
static int parse_row(const char *line, struct doc_rule *d)
{
	char thr[512], needs[256];
	if (strncmp(line, "| ", 2) || cell(line, 0, d->id, sizeof(d->id)) || !lp_rule_find(d->id))
		return 0;
	if (cell(line, 1, d->unit, sizeof(d->unit)) || cell(line, 3, thr, sizeof(thr)) ||
	    cell(line, 4, needs, sizeof(needs)) || parse_needs(needs, &d->needs))
		return -1;
	const char *col = thr;
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

/* The file of rule r, analysis/findings/rules/lp_rule_NAME.c (NAME: the id with '_'
 * for '-'), defines lp_rule_NAME with r's id; analysis/findings/lp_rules.c lists
 * X(NAME) once. */
static void check_file(const struct lp_rule *r, const char *list)
{
	char name[64], path[512], want[160], line[1024];
	snprintf(name, sizeof(name), "%s", r->id);
	for (char *p = name; *p; p++)
		*p = *p == '-' ? '_' : *p;
	snprintf(path, sizeof(path), "%s/analysis/findings/rules/lp_rule_%s.c", LP_SRC_DIR, name);
	FILE *f = fopen(path, "r");
	int defines = 0, id = 0;
	snprintf(want, sizeof(want), "const struct lp_rule lp_rule_%s = {", name);
	char idline[96];
	snprintf(idline, sizeof(idline), ".id = \"%s\",", r->id);
	while (f && fgets(line, sizeof(line), f)) {
		defines += strstr(line, want) != NULL;
		id += strstr(line, idline) != NULL;
	}
	if (f)
		fclose(f);
	CHECK(f && defines == 1 && id == 1,
	      "%s: one file, analysis/findings/rules/lp_rule_%s.c, defines it", r->id, name);
	char x[80];
	snprintf(x, sizeof(x), "X(%s)", name);
	const char *a = strstr(list, x);
	CHECK(a && !strstr(a + 1, x), "%s: one line X(%s) in analysis/findings/lp_rules.c", r->id,
	      name);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
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
			    "docs/rules.md row of %s: | id | unit | value | '≥ N' or '< N' | needs "
			    "(%s) | saving |",
			    d.id,
			    "GPU, requests, time, blocking calls, range CPU, thread CPU or —");
		if (rc <= 0)
			continue;
		const struct lp_rule *r = lp_rule_find(d.id);
		size_t i = 0;
		while (lp_rules[i] != r)
			i++;
		if (seen[i]++)
			continue; /* the table of thresholds only; later mentions are prose */
		ndoc++;
		CHECK(d.lt == (r->cmp == LP_CMP_LT) && d.thr == r->threshold,
		      "%s: docs/rules.md says %s %g, the rule's entry %s %g", r->id,
		      d.lt ? "<" : ">=", d.thr, r->cmp == LP_CMP_LT ? "<" : ">=", r->threshold);
		CHECK(!strcmp(d.unit, r->unit), "%s: unit %s in docs/rules.md, %s in its entry",
		      r->id, d.unit, r->unit);
		CHECK(d.needs == r->needs, "%s: needs 0x%x in docs/rules.md, 0x%x in its entry",
		      r->id, d.needs, r->needs);
	}
	fclose(f);
	CHECK(ndoc == lp_nrules,
	      "docs/rules.md has a threshold row for each of the %zu rules (%zu)", lp_nrules, ndoc);
	for (size_t i = 0; i < lp_nrules; i++)
		CHECK(seen[i], "%s is in docs/rules.md's table", lp_rules[i]->id);
	free(seen);
	const char *list = slurp(LP_SRC_DIR "/analysis/findings/lp_rules.c");
	CHECK(list != NULL, "read analysis/findings/lp_rules.c");
	for (size_t i = 0; list && i < lp_nrules; i++) {
		const struct lp_rule *r = lp_rules[i];
		check_file(r, list);
		CHECK_QUIET(r->eval && r->title && r->measures && r->fix && r->unit,
			    "%s: eval, title, measures, fix and unit set", r->id);
		for (size_t k = 0; k < i; k++)
			CHECK_QUIET(strcmp(lp_rules[k]->id, r->id), "%s: one entry", r->id);
	}

	/* At the boundary, by each rule's own comparison and threshold. */
	for (size_t i = 0; i < lp_nrules; i++) {
		const struct lp_rule *r = lp_rules[i];
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
