/* SPDX-License-Identifier: MIT */
/* Text, JSON and CSV for `latprof report --bottlenecks`. */
#include "lp_report_findings.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "lp_out.h"
#include "lp_view.h"

static const char *const lp_sev_name[] = {"", "low", "medium", "high"};

/* Integers as such, others to 6 digits; "" when never measured (JSON: null). */
static const char *num_str(double v, char *buf, size_t len)
{
	if (!isfinite(v))
		buf[0] = '\0';
	else if (v == floor(v) && fabs(v) < 9e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.6g", v);
	return buf;
}

static const char *cmp_name(enum lp_findings_cmp c)
{
	return c == LP_CMP_GE ? ">=" : "<";
}

static const char *report_findings_val(double v, const char *unit, char *buf, size_t len)
{
	if (!strcmp(unit, "ns"))
		return lp_evidence_ns(v, buf, len);
	if (!strcmp(unit, "share"))
		snprintf(buf, len, "%.1f%%", 100 * v);
	else if (!strcmp(unit, "bytes"))
		snprintf(buf, len, "%.0f B", v);
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.2f", v);
	return buf;
}

/* A rule's value beside its threshold (tstr, already formatted): with more
 * digits where the usual ones would print the two alike (4.98% is not the
 * 5.0% threshold; it would read as if the rule should have fired). */
static const char *report_findings_val_by(double v, double thr, const char *unit, const char *tstr,
					  char *buf, size_t len)
{
	report_findings_val(v, unit, buf, len);
	if (v == thr || strcmp(buf, tstr) || !strcmp(unit, "ns") || !strcmp(unit, "bytes"))
		return buf;
	int share = !strcmp(unit, "share");
	double k = share ? 100 : 1;
	char t[64];
	for (int d = 2; d <= 8; d++) {
		snprintf(buf, len, share ? "%.*f%%" : "%.*f", d, k * v);
		snprintf(t, sizeof(t), share ? "%.*f%%" : "%.*f", d, k * thr);
		if (strcmp(buf, t))
			break;
	}
	return buf;
}

static const char *report_findings_scope(const struct lp_findings *r)
{
	return r->has_requests ? "request time" : "thread time";
}

static void text_one(FILE *f, const struct lp_findings *r, size_t i, int brief)
{
	const struct lp_finding *x = &r->v[i];
	char a[64], b[64], c[64];
	fprintf(f, "%zu. [%s] %s: %s%s%s\n", i + 1, lp_sev_name[x->severity], x->rule->id, x->title,
		x->subject ? " -- " : "", x->subject ? x->subject : "");
	fprintf(f, "   %s\n", x->summary ? x->summary : "");
	fprintf(f, "   estimated saving %s (%.1f%% of %s), out of %s of %s\n",
		lp_evidence_ns((double)x->saving_ns, a, sizeof(a)), 100 * x->share,
		report_findings_scope(r), lp_evidence_ns((double)x->basis_ns, b, sizeof(b)),
		x->basis);
	if (x->counted_in)
		fprintf(f,
			"   the rest of that time is counted in %s (the same time, named once)\n",
			x->counted_in);
	if (x->ex.valid)
		fprintf(f,
			"   example: request range %" PRId64 " on tid %" PRId64
			" at +%.6f s, %s, %s at stake\n",
			x->ex.range_id, x->ex.tid, (double)x->ex.rel_ns / 1e9,
			lp_evidence_ns((double)x->ex.dur_ns, a, sizeof(a)),
			lp_evidence_ns((double)x->ex.at_stake_ns, c, sizeof(c)));
	if (brief) {
		fprintf(f, "   fix: %s\n", x->fix ? x->fix : x->rule->fix);
		return;
	}
	report_findings_val(x->threshold, x->rule->unit, b, sizeof(b));
	fprintf(f, "   measured: %s = %s (threshold %s %s)\n", x->rule->measures,
		report_findings_val_by(x->value, x->threshold, x->rule->unit, b, a, sizeof(a)),
		cmp_name(x->rule->cmp), b);
	fputs("   evidence:\n", f);
	for (size_t k = 0; k < x->nnum; k++)
		fprintf(f, "     %-38s %s\n", x->num[k].label,
			report_findings_val(x->num[k].value, x->num[k].unit, a, sizeof(a)));
	if (x->nsite) {
		fprintf(f, "   %s:\n", x->site_kind ? x->site_kind : "sites");
		for (size_t k = 0; k < x->nsite; k++)
			fprintf(f, "     %-48s %8" PRId64 "x  %s\n", x->site[k].what,
				x->site[k].count,
				lp_evidence_ns((double)x->site[k].ns, a, sizeof(a)));
	}
	if (x->ex.valid)
		fprintf(f,
			"   example request: starts at %" PRId64
			" ns (CLOCK_MONOTONIC), ends at %" PRId64 " ns\n",
			x->ex.start_ns, x->ex.start_ns + x->ex.dur_ns);
	fprintf(f, "   fix: %s\n\n", x->fix ? x->fix : x->rule->fix);
}

void lp_findings_write_brief(FILE *f, const struct lp_findings *r, size_t max)
{
	if (!r->n) {
		fputs("Bottlenecks: no rule fired (latprof report --bottlenecks for details)\n", f);
		return;
	}
	fprintf(f, "Top findings (%zu in all; latprof report --bottlenecks for the evidence):\n",
		r->n);
	for (size_t i = 0; i < r->n && i < max; i++)
		text_one(f, r, i, 1);
}

static int no_nvtx(const struct lp_findings_rule_status *s)
{
	static const char k[] = "no NVTX request ranges";
	return s->why && !strncmp(s->why, k, sizeof(k) - 1);
}

void lp_findings_write_text(FILE *f, const struct lp_findings *r)
{
	char a[64];
	fprintf(f, "Bottlenecks: %zu finding%s", r->n, r->n == 1 ? "" : "s");
	if (r->has_requests)
		fprintf(f, " over %" PRId64 " requests '%s' (%s of request time)\n", r->requests,
			r->req_name, lp_evidence_ns((double)r->request_ns, a, sizeof(a)));
	else
		fprintf(f, " over the whole run (no NVTX requests; %s of thread time)\n",
			lp_evidence_ns((double)r->thread_ns, a, sizeof(a)));
	fputc('\n', f);
	for (size_t i = 0; i < r->n; i++)
		text_one(f, r, i, 0);
	int head = 0;
	for (size_t i = 0; i < r->nrules; i++) {
		const struct lp_findings_rule_status *s = &r->rules[i];
		if (s->state != LP_RULE_QUIET)
			continue;
		if (!head++)
			fputs("quiet (below threshold):\n", f);
		char v[64] = "-", t[64];
		report_findings_val(s->threshold, s->rule->unit, t, sizeof(t));
		if (s->has_value)
			report_findings_val_by(s->value, s->threshold, s->rule->unit, t, v,
					       sizeof(v));
		fprintf(f, "  %-18s %s (threshold %s %s)", s->rule->id, v, cmp_name(s->rule->cmp),
			t);
		if (s->counted_in)
			fprintf(f, "; its time is counted in %s", s->counted_in);
		else if (s->below_min)
			fprintf(f, "; it would save %s, under %.0f%% of the %s time",
				lp_evidence_ns((double)s->saving_ns, a, sizeof(a)),
				100 * LP_FINDINGS_MIN_SHARE,
				r->has_requests ? "request" : "thread");
		fputc('\n', f);
	}
	head = 0;
	int nvtx = 0;
	for (size_t i = 0; i < r->nrules; i++) {
		const struct lp_findings_rule_status *s = &r->rules[i];
		if (s->state != LP_RULE_SKIPPED)
			continue;
		if (!head++)
			fputs("not evaluated:\n", f);
		if (no_nvtx(s)) {
			nvtx++;
			continue;
		}
		fprintf(f, "  %-18s %s\n", s->rule->id, s->why ? s->why : "");
	}
	/* the rules that need requests, once, with how to mark them */
	for (size_t i = 0, k = 0; nvtx && i < r->nrules; i++)
		if (r->rules[i].state == LP_RULE_SKIPPED && no_nvtx(&r->rules[i]))
			fprintf(f, "%s%s", k++ ? ", " : "  ", r->rules[i].rule->id);
	if (nvtx)
		fputs(": no NVTX request ranges (mark requests: C nvtxRangePushA/nvtxRangePop, C++ "
		      "nvtx3::scoped_range, Python nvtx.annotate; README, Getting started)\n",
		      f);
}

static void jnum(FILE *f, double v)
{
	char b[64];
	fputs(isfinite(v) ? num_str(v, b, sizeof(b)) : "null", f);
}

static void jstr_or_null(FILE *f, const char *s)
{
	if (s)
		lp_json_str(f, s);
	else
		fputs("null", f);
}

static void json_finding(FILE *f, const struct lp_finding *x)
{
	fputs("{\"id\": ", f);
	lp_json_str(f, x->rule->id);
	fputs(", \"title\": ", f);
	lp_json_str(f, x->title);
	fprintf(f, ", \"severity\": \"%s\", \"subject\": ", lp_sev_name[x->severity]);
	if (x->subject)
		lp_json_str(f, x->subject);
	else
		fputs("null", f);
	fputs(", \"summary\": ", f);
	lp_json_str(f, x->summary ? x->summary : "");
	fputs(", \"measures\": ", f);
	lp_json_str(f, x->rule->measures);
	fprintf(f, ", \"unit\": \"%s\", \"comparison\": \"%s\", \"value\": ", x->rule->unit,
		cmp_name(x->rule->cmp));
	jnum(f, x->value);
	fputs(", \"threshold\": ", f);
	jnum(f, x->threshold);
	fprintf(f, ", \"saving_ns\": %" PRId64 ", \"basis_ns\": %" PRId64 ", \"basis\": ",
		x->saving_ns, x->basis_ns);
	lp_json_str(f, x->basis);
	fprintf(f, ", \"scope_ns\": %" PRId64 ", \"share\": ", x->scope_ns);
	jnum(f, x->share);
	fputs(",\n     \"evidence\": [", f);
	for (size_t k = 0; k < x->nnum; k++) {
		fputs(k ? ", {\"key\": " : "{\"key\": ", f);
		lp_json_str(f, x->num[k].key);
		fputs(", \"label\": ", f);
		lp_json_str(f, x->num[k].label);
		fprintf(f, ", \"unit\": \"%s\", \"value\": ", x->num[k].unit);
		jnum(f, x->num[k].value);
		fputc('}', f);
	}
	fputs("],\n     \"sites\": {\"kind\": ", f);
	if (x->site_kind)
		lp_json_str(f, x->site_kind);
	else
		fputs("null", f);
	fputs(", \"items\": [", f);
	for (size_t k = 0; k < x->nsite; k++) {
		fputs(k ? ", {\"what\": " : "{\"what\": ", f);
		lp_json_str(f, x->site[k].what);
		fprintf(f, ", \"count\": %" PRId64 ", \"ns\": %" PRId64 "}", x->site[k].count,
			x->site[k].ns);
	}
	fputs("]},\n     \"example\": ", f);
	if (x->ex.valid)
		fprintf(f,
			"{\"range_id\": %" PRId64 ", \"tid\": %" PRId64 ", \"start_ns\": %" PRId64
			", \"end_ns\": %" PRId64 ", \"rel_ns\": %" PRId64 ", \"dur_ns\": %" PRId64
			", \"at_stake_ns\": %" PRId64 "}",
			x->ex.range_id, x->ex.tid, x->ex.start_ns, x->ex.start_ns + x->ex.dur_ns,
			x->ex.rel_ns, x->ex.dur_ns, x->ex.at_stake_ns);
	else
		fputs("null", f);
	fputs(",\n     \"fix\": ", f);
	lp_json_str(f, x->fix ? x->fix : x->rule->fix);
	fputs(", \"category\": ", f);
	jstr_or_null(f, x->category);
	fputs(", \"counted_in\": ", f);
	jstr_or_null(f, x->counted_in);
	fputc('}', f);
}

void lp_findings_write_json(FILE *f, const struct lp_findings *r)
{
	lp_view_json_open(f, "findings", 1);
	fputs("\"requests\": ", f);
	if (r->has_requests) {
		fputs("{\"name\": ", f);
		lp_json_str(f, r->req_name);
		fprintf(f, ", \"count\": %" PRId64 ", \"total_ns\": %" PRId64 "}", r->requests,
			r->request_ns);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\n  \"scope\": \"%s\",\n  \"scope_ns\": %" PRId64 ",\n  \"findings\": [",
		r->has_requests ? "requests" : "threads",
		r->has_requests ? r->request_ns : r->thread_ns);
	for (size_t i = 0; i < r->n; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_finding(f, &r->v[i]);
	}
	fputs(r->n ? "\n  ],\n  \"rules\": [" : "],\n  \"rules\": [", f);
	static const char *const st[] = {"", "found", "quiet", "not_evaluated"};
	for (size_t i = 0; i < r->nrules; i++) {
		const struct lp_findings_rule_status *s = &r->rules[i];
		fputs(i ? ",\n    {\"id\": " : "\n    {\"id\": ", f);
		lp_json_str(f, s->rule->id);
		fprintf(f, ", \"state\": \"%s\", \"unit\": \"%s\", \"threshold\": ", st[s->state],
			s->rule->unit);
		jnum(f, s->threshold);
		fputs(", \"value\": ", f);
		if (s->has_value)
			jnum(f, s->value);
		else
			fputs("null", f);
		fputs(", \"why\": ", f);
		if (s->why)
			lp_json_str(f, s->why);
		else
			fputs("null", f);
		fputs(", \"counted_in\": ", f);
		jstr_or_null(f, s->counted_in);
		fputs(", \"unlisted_saving_ns\": ", f);
		if (s->below_min)
			fprintf(f, "%" PRId64, s->saving_ns);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("\n  ]\n}\n", f);
}

/* ---- CSV: one row per finding, then one per rule that did not fire ---- */

static void cnum(FILE *f, double v)
{
	char b[64];
	fputs(num_str(v, b, sizeof(b)), f);
}

/* "waits=412; wait_ns=51234567; share=0.31": the numbers of the JSON
 * evidence array, by key, in one field. */
static void csv_evidence(FILE *f, const struct lp_finding *x)
{
	char buf[1024], v[64];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < x->nnum && n < sizeof(buf); k++) {
		const char *sep = k ? "; " : "";
		int w = snprintf(buf + n, sizeof(buf) - n, "%s%s=%s", sep, x->num[k].key,
				 num_str(x->num[k].value, v, sizeof(v)));
		if (w < 0)
			break;
		n += (size_t)w;
	}
	lp_csv_str(f, buf);
}

static void csv_finding(FILE *f, size_t rank, const struct lp_finding *x)
{
	fprintf(f, "%zu,found,", rank);
	lp_csv_str(f, x->rule->id);
	fprintf(f, ",%s,", lp_sev_name[x->severity]);
	lp_csv_str(f, x->title);
	fputc(',', f);
	lp_csv_str(f, x->subject);
	fputc(',', f);
	lp_csv_str(f, x->summary);
	fputc(',', f);
	cnum(f, x->value);
	fputc(',', f);
	cnum(f, x->threshold);
	fprintf(f, ",%s,%s,%" PRId64 ",%" PRId64 ",", cmp_name(x->rule->cmp), x->rule->unit,
		x->saving_ns, x->basis_ns);
	lp_csv_str(f, x->basis);
	fprintf(f, ",%" PRId64 ",%.6f,", x->scope_ns, x->share);
	csv_evidence(f, x);
	fputc(',', f);
	lp_csv_str(f, x->nsite ? x->site_kind : NULL);
	fputc(',', f);
	lp_csv_str(f, x->nsite ? x->site[0].what : NULL);
	if (x->nsite)
		fprintf(f, ",%" PRId64 ",%" PRId64 ",", x->site[0].count, x->site[0].ns);
	else
		fputs(",,,", f);
	const struct lp_findings_example *e = &x->ex;
	if (e->valid)
		fprintf(f,
			"%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",",
			e->range_id, e->tid, e->start_ns, e->start_ns + e->dur_ns, e->dur_ns,
			e->at_stake_ns);
	else
		fputs(",,,,,,", f);
	lp_csv_str(f, x->fix ? x->fix : x->rule->fix);
	fputs(",\r\n", f); /* why: only for rules not evaluated */
}

/* A quiet or not-evaluated rule: what it measured (or why it could not),
 * so the CSV carries the JSON's "rules" too; finding columns stay empty. */
static void csv_rule(FILE *f, const struct lp_findings_rule_status *s)
{
	fprintf(f, ",%s,", s->state == LP_RULE_QUIET ? "quiet" : "not_evaluated");
	lp_csv_str(f, s->rule->id);
	fputs(",,", f);
	lp_csv_str(f, s->rule->title);
	fputs(",,,", f);
	if (s->has_value)
		cnum(f, s->value);
	fputc(',', f);
	cnum(f, s->threshold);
	fprintf(f, ",%s,%s,,,,,,,,,,,,,,,,,", cmp_name(s->rule->cmp), s->rule->unit);
	lp_csv_str(f, s->rule->fix);
	fputc(',', f);
	lp_csv_str(f, s->why);
	fputs("\r\n", f);
}

void lp_findings_write_csv(FILE *f, const struct lp_findings *r)
{
	fputs("rank,state,id,severity,title,subject,summary,value,threshold,comparison,unit,"
	      "saving_ns,basis_ns,basis,scope_ns,share,evidence,site_kind,top_site,"
	      "top_site_count,top_site_ns,example_range_id,example_tid,example_start_ns,"
	      "example_end_ns,example_dur_ns,example_at_stake_ns,fix,why\r\n",
	      f);
	for (size_t i = 0; i < r->n; i++)
		csv_finding(f, i + 1, &r->v[i]);
	for (size_t i = 0; i < r->nrules; i++)
		if (r->rules[i].state == LP_RULE_QUIET || r->rules[i].state == LP_RULE_SKIPPED)
			csv_rule(f, &r->rules[i]);
}
