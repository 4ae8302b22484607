/* SPDX-License-Identifier: MIT */
#include "lp_report_diff.h"
#include "lp_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* text broken at spaces into lines of at most width columns, the first
 * after first, the others after indent (text lines split at '\n' too). */
static void fwrap(FILE *f, const char *first, const char *indent, const char *text, int width)
{
	const char *pre = first;
	while (*text) {
		size_t room = (size_t)width - strlen(pre), n = strcspn(text, "\n");
		if (n > room) {
			size_t k = room;
			while (k > 0 && text[k] != ' ')
				k--;
			n = k ? k : room;
		}
		fprintf(f, "%s%.*s\n", pre, (int)n, text);
		text += n;
		text += *text == ' ' || *text == '\n';
		pre = indent;
	}
}

static const char *fmt_rel(double rel, char *buf, size_t len)
{
	if (isnan(rel))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", rel * 100);
	return buf;
}

static const char *fmt_p(double p, char *buf, size_t len)
{
	if (isnan(p))
		snprintf(buf, len, "-");
	else if (p < 1e-4)
		snprintf(buf, len, "%.1e", p);
	else
		snprintf(buf, len, "%.4f", p);
	return buf;
}

/* Recorded names are untrusted: controls and invalid UTF-8 become '?' in
 * text; in markdown, table and inline markup characters are escaped too. */
static void put_name(FILE *f, const char *s, int markdown)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "-");
	while (*p) {
		int n = lp_utf8_len(p);
		if (!n || *p < 0x20 || *p == 0x7f) {
			fputc('?', f);
			p++;
			continue;
		}
		if (markdown && n == 1 && strchr("|\\`*_[]<>#~&!", *p))
			fprintf(f, "&#%d;", *p);
		else
			fwrite(p, 1, (size_t)n, f);
		p += n;
	}
}

static void summary_line(FILE *f, const struct lp_diff *d)
{
	if (d->state == LP_DS_REGRESSION)
		fprintf(f, "%d regression%s", d->regressions, d->regressions == 1 ? "" : "s");
	else if (d->state == LP_DS_INCONCLUSIVE)
		fprintf(f, "inconclusive (%d row%s may be a regression the data cannot confirm)",
			d->inconclusives, d->inconclusives == 1 ? "" : "s");
	else if (!isnan(d->resolution))
		fprintf(f,
			"no regression larger than %+.1f%% (the resolution: the highest upper "
			"bound of the intervals)",
			100 * d->resolution);
	else
		fputs("no regression", f);
	if (d->improvements)
		fprintf(f, ", %d improvement%s", d->improvements, d->improvements == 1 ? "" : "s");
}

static void method_line(FILE *f, const struct lp_diff *d, const char *pre)
{
	fprintf(f,
		"%smethod: each row has its own %.0f%% interval of new/base (bootstrap, %zu "
		"resamples, fixed seed; hierarchical over runs, then requests, where both sides "
		"have 2+ runs); a regression needs the whole interval above +%.1f%% "
		"(threshold) and p <= %.3g after Holm across %zu comparisons; a quantile needs "
		"%d requests beyond it on each side, a mean %d requests\n",
		pre, 100 * (1 - d->opts.alpha), d->resamples, d->opts.threshold * 100,
		d->opts.alpha, d->ntested, LP_DIFF_MIN_TAIL, LP_DIFF_MIN_SAMPLES);
	if (d->single_run)
		fprintf(f,
			"%sone run on a side: run-to-run noise is unknown, so a noise floor of "
			"+-%.1f%% (--noise) widens those intervals; record 2+ runs per side "
			"(A1.db A2.db --vs B1.db B2.db) to measure it\n",
			pre, d->noise * 100);
}

static const char *fmt_ci(const struct lp_diff_row *r, char *buf, size_t len)
{
	if (isnan(r->lo))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "[%+.1f%%, %+.1f%%]", r->lo * 100, r->hi * 100);
	return buf;
}

static void text_named(FILE *f, const char *title, const struct lp_diff_named *v, size_t n)
{
	char b1[32], b2[32], b3[32];
	fprintf(f, "\n%s (per request; total wait/time pooled over each side):\n", title);
	if (!n) {
		fputs("  none recorded on either side\n", f);
		return;
	}
	fprintf(f, "  %-40s %12s %12s %9s %8s %8s\n", "name", "base", "new", "change", "n base",
		"n new");
	for (size_t i = 0; i < n && i < 10; i++) {
		fputs("  ", f);
		put_name(f, v[i].name, 0);
		int w = 40 - (int)strlen(v[i].name);
		fprintf(f, "%*s %12s %12s %9s %8lld %8lld\n", w > 0 ? w : 0, "",
			lp_fixed_ns(v[i].base_per_req, b1, sizeof(b1)),
			lp_fixed_ns(v[i].new_per_req, b2, sizeof(b2)),
			fmt_rel(v[i].rel, b3, sizeof(b3)), v[i].base_count, v[i].new_count);
	}
	if (n > 10)
		fprintf(f, "  ... %zu more\n", n - 10);
}

/* Requests (runs) per side: the request's, then each stage's that differ. */
static void text_counts(FILE *f, const struct lp_diff *d)
{
	const struct lp_diff_row *q = d->nrows ? &d->rows[0] : NULL;
	if (!q)
		return;
	fprintf(f, "requests (runs) base / new: %zu (%zu) / %zu (%zu)", q->n_base, q->runs_base,
		q->n_new, q->runs_new);
	for (size_t i = 1; i < d->nrows; i++) {
		const struct lp_diff_row *r = &d->rows[i];
		if (r->is_request || !strcmp(r->scope, d->rows[i - 1].scope) ||
		    (r->n_base == q->n_base && r->n_new == q->n_new &&
		     r->runs_base == q->runs_base && r->runs_new == q->runs_new))
			continue;
		fputs("; ", f);
		put_name(f, r->scope, 0);
		fprintf(f, " %zu (%zu) / %zu (%zu)", r->n_base, r->runs_base, r->n_new,
			r->runs_new);
	}
	fputc('\n', f);
}

/* Why inconclusive and what to do; noise that may be in any verdict. */
static void text_notes(FILE *f, const struct lp_diff *d, const char *pre, int width)
{
	char first[64];
	snprintf(first, sizeof(first), "%swhy inconclusive: ", pre);
	for (size_t i = 0; i < d->nreasons; i++)
		fwrap(f, first, "  ", d->reason[i], width);
	snprintf(first, sizeof(first), "%swarning, noise: ", pre);
	for (size_t i = 0; i < d->nwarn; i++)
		fwrap(f, first, "  ", d->warn[i], width);
}

static const char *fmt_share(double part, double all, char *buf, size_t len)
{
	if (isnan(part) || !(all > 0))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f ms", part / 1e6);
	return buf;
}

/* The on-CPU and preempted time per request of the request and each stage:
 * a stage slower by preemption keeps its on-CPU time. */
static void text_cpu(FILE *f, const struct lp_diff *d)
{
	char b[6][32];
	if (!d->ncpu) {
		fputs("\non-CPU per stage: not computed (--no-findings skips the breakdown)\n", f);
		return;
	}
	fprintf(f, "\non-CPU and preempted time per request%s:\n",
		d->cpu_known ? "" : " (task-clock not counted: on-CPU unknown)");
	fprintf(f, "  %-24s %12s %12s %9s %13s %13s\n", "scope", "on-CPU base", "on-CPU new",
		"change", "preempt base", "preempt new");
	for (size_t i = 0; i < d->ncpu; i++) {
		const struct lp_diff_cpu *c = &d->cpu[i];
		char scope[64];
		snprintf(scope, sizeof(scope), "%s%s", c->is_request ? "" : "  ", c->scope);
		fputs("  ", f);
		put_name(f, scope, 0);
		int w = 24 - (int)strlen(scope);
		fprintf(
		    f, "%*s %12s %12s %9s %13s %13s\n", w > 0 ? w : 0, "",
		    fmt_share(c->base_oncpu, c->base_wall, b[0], 32),
		    fmt_share(c->new_oncpu, c->new_wall, b[1], 32),
		    fmt_rel(c->base_oncpu > 0 ? c->new_oncpu / c->base_oncpu - 1 : NAN, b[2], 32),
		    fmt_share(c->base_pre, c->base_wall, b[3], 32),
		    fmt_share(c->new_pre, c->new_wall, b[4], 32));
	}
}

static void text_findings(FILE *f, const struct lp_diff *d)
{
	if (!d->has_findings) {
		fputs("\nfindings: not compared (--no-findings, or no bottleneck rules built into "
		      "this latprof)\n",
		      f);
		return;
	}
	fprintf(f, "\nfindings: %zu new, %zu resolved\n", d->n_new_findings,
		d->n_resolved_findings);
	for (size_t i = 0; i < d->n_new_findings; i++) {
		fputs("  new:      ", f);
		put_name(f, d->new_findings[i], 0);
		fputc('\n', f);
	}
	for (size_t i = 0; i < d->n_resolved_findings; i++) {
		fputs("  resolved: ", f);
		put_name(f, d->resolved_findings[i], 0);
		fputc('\n', f);
	}
}

void lp_diff_write_text(FILE *f, const struct lp_diff *d)
{
	char b[6][32];
	fputs("latprof diff: request '", f);
	put_name(f, d->req_name, 0);
	fprintf(f, "': base %zu request%s from %zu database%s, new %zu from %zu\n", d->n_base_req,
		d->n_base_req == 1 ? "" : "s", d->base_dbs, d->base_dbs == 1 ? "" : "s",
		d->n_new_req, d->new_dbs);
	int width = lp_txt_width(f);
	char *m = NULL;
	size_t mlen = 0;
	FILE *mf = open_memstream(&m, &mlen);
	if (mf) {
		method_line(mf, d, "");
		fclose(mf);
		fwrap(f, "", "  ", m, width);
	}
	free(m);
	fprintf(f, "\n%-16s %-6s %10s %10s %8s %17s %7s  %s\n", "scope", "metric", "base", "new",
		"change", "interval", "p(Holm)", "verdict");
	for (size_t i = 0; i < d->nrows; i++) {
		const struct lp_diff_row *r = &d->rows[i];
		char scope[64];
		snprintf(scope, sizeof(scope), "%s%s", r->is_request ? "" : "  ", r->scope);
		put_name(f, scope, 0);
		int w = 16 - (int)strlen(scope);
		fprintf(f, "%*s %-6s %10s %10s %8s %17s %7s  %s\n", w > 0 ? w : 0, "",
			r->metric_name, lp_fixed_ns(r->base, b[0], 32),
			lp_fixed_ns(r->new_, b[1], 32), fmt_rel(r->rel, b[2], 32),
			fmt_ci(r, b[3], 32), fmt_p(r->p_adj, b[4], 32),
			r->absent				   ? r->why
			: r->verdict == LP_V_REGRESSION		   ? "REGRESSION"
			: r->verdict == LP_V_INCONCLUSIVE && r->up ? "INCONCLUSIVE"
								   : lp_verdict_name(r->verdict));
		if ((r->verdict == LP_V_NOT_ENOUGH || r->verdict == LP_V_INCONCLUSIVE) &&
		    !r->absent)
			fwrap(f, "    why: ", "         ", r->why, width);
	}
	text_counts(f, d);
	text_cpu(f, d);
	text_named(f, "time by category", d->cats, d->ncats);
	text_named(f, "lock contention", d->locks, d->nlocks);
	if (d->has_kernels)
		text_named(f, "GPU kernels", d->kernels, d->nkernels);
	else
		fputs("\nGPU kernels: no kernels table on both sides, skipped\n", f);
	text_findings(f, d);
	fputc('\n', f);
	text_notes(f, d, "", width);
	fputs("result: ", f);
	summary_line(f, d);
	fprintf(f, " (exit %d)\n", lp_diff_exit_status(d));
}

static void md_named(FILE *f, const char *title, const struct lp_diff_named *v, size_t n)
{
	char b1[32], b2[32], b3[32];
	fprintf(f, "\n<details><summary>%s (%zu)</summary>\n\n", title, n);
	if (n) {
		fputs("| name | base / request | new / request | change |\n|---|---:|---:|---:|\n",
		      f);
		for (size_t i = 0; i < n && i < 20; i++) {
			fputs("| ", f);
			put_name(f, v[i].name, 1);
			fprintf(f, " | %s | %s | %s |\n", lp_fixed_ns(v[i].base_per_req, b1, 32),
				lp_fixed_ns(v[i].new_per_req, b2, 32), fmt_rel(v[i].rel, b3, 32));
		}
	} else {
		fputs("None recorded on either side.\n", f);
	}
	fputs("\n</details>\n", f);
}

void lp_diff_write_markdown(FILE *f, const struct lp_diff *d)
{
	char b[6][32];
	int bold = d->state != LP_DS_OK;
	fprintf(f, "### latprof diff: %s", bold ? "**" : "");
	summary_line(f, d);
	fprintf(f, "%s\n\n", bold ? "**" : "");
	text_notes(f, d, "- ", 400);
	fputs("\nRequest `", f);
	put_name(f, d->req_name, 1);
	fprintf(f, "`: base %zu requests (%zu db), new %zu requests (%zu db).\n", d->n_base_req,
		d->base_dbs, d->n_new_req, d->new_dbs);
	method_line(f, d, "\n");
	fprintf(
	    f,
	    "\n| scope | metric | base | new | change | %.0f%% interval | p (Holm) | method | "
	    "n base / new (runs) | verdict |\n|---|---|---:|---:|---:|---:|---:|---|---:|---|\n",
	    100 * (1 - d->opts.alpha));
	for (size_t i = 0; i < d->nrows; i++) {
		const struct lp_diff_row *r = &d->rows[i];
		fputs(r->is_request ? "| **" : "| ", f);
		put_name(f, r->scope, 1);
		fprintf(f, "%s | %s | %s | %s | %s | %s | %s | %s | %zu / %zu (%zu / %zu) | %s%s%s",
			r->is_request ? "**" : "", r->metric_name, lp_fixed_ns(r->base, b[0], 32),
			lp_fixed_ns(r->new_, b[1], 32), fmt_rel(r->rel, b[2], 32),
			fmt_ci(r, b[3], 32), fmt_p(r->p_adj, b[4], 32), r->method ? r->method : "-",
			r->n_base, r->n_new, r->runs_base, r->runs_new,
			r->verdict == LP_V_REGRESSION ? "**" : "",
			r->absent ? r->why : lp_verdict_name(r->verdict),
			r->verdict == LP_V_REGRESSION ? "**" : "");
		if ((r->verdict == LP_V_NOT_ENOUGH || r->verdict == LP_V_INCONCLUSIVE) &&
		    !r->absent)
			fprintf(f, " (%s)", r->why);
		fputs(" |\n", f);
	}
	md_named(f, "Time by category", d->cats, d->ncats);
	md_named(f, "Lock contention", d->locks, d->nlocks);
	if (d->has_kernels)
		md_named(f, "GPU kernels", d->kernels, d->nkernels);
	if (d->has_findings) {
		fprintf(f, "\nFindings: %zu new, %zu resolved.\n", d->n_new_findings,
			d->n_resolved_findings);
		for (size_t i = 0; i < d->n_new_findings; i++) {
			fputs("- new: ", f);
			put_name(f, d->new_findings[i], 1);
			fputc('\n', f);
		}
		for (size_t i = 0; i < d->n_resolved_findings; i++) {
			fputs("- resolved: ", f);
			put_name(f, d->resolved_findings[i], 1);
			fputc('\n', f);
		}
	}
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.17g", v);
}

static void json_named(FILE *f, const char *key, const struct lp_diff_named *v, size_t n)
{
	fprintf(f, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		lp_json_str(f, v[i].name);
		fputs(",\"base_total_ns\":", f);
		json_num(f, v[i].base_ns);
		fputs(",\"new_total_ns\":", f);
		json_num(f, v[i].new_ns);
		fputs(",\"base_per_request_ns\":", f);
		json_num(f, v[i].base_per_req);
		fputs(",\"new_per_request_ns\":", f);
		json_num(f, v[i].new_per_req);
		fprintf(f,
			",\"base_count\":%lld,\"new_count\":%lld,\"rel_change\":", v[i].base_count,
			v[i].new_count);
		json_num(f, v[i].rel);
		fputc('}', f);
	}
	fputc(']', f);
}

static void json_ids(FILE *f, char **v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		lp_json_str(f, v[i]);
	}
	fputc(']', f);
}

static void json_notes(FILE *f, const char *key, const char (*v)[200], size_t n)
{
	fprintf(f, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		lp_json_str(f, v[i]);
	}
	fputc(']', f);
}

/* The state the exit status follows, its reasons, and the on-CPU and
 * preempted time per request of each scope. */
static void json_answer(FILE *f, const struct lp_diff *d)
{
	fprintf(f, ",\"state\":\"%s\",\"exit_status\":%d,\"inconclusive_rows\":%d,\"resolution\":",
		lp_diff_state_name(d->state), lp_diff_exit_status(d), d->inconclusives);
	json_num(f, d->resolution);
	json_notes(f, "reasons", d->reason, d->nreasons);
	json_notes(f, "warnings", d->warn, d->nwarn);
	if (!d->ncpu) {
		fputs(",\"cpu\":null", f);
		return;
	}
	fprintf(f, ",\"cpu_counted\":%s,\"cpu\":[", d->cpu_known ? "true" : "false");
	for (size_t i = 0; i < d->ncpu; i++) {
		const struct lp_diff_cpu *c = &d->cpu[i];
		fputs(i ? ",{\"scope\":" : "{\"scope\":", f);
		lp_json_str(f, c->scope);
		fprintf(f, ",\"kind\":\"%s\",\"base_ns\":", c->is_request ? "request" : "stage");
		json_num(f, c->base_wall);
		fputs(",\"new_ns\":", f);
		json_num(f, c->new_wall);
		fputs(",\"base_on_cpu_ns\":", f);
		json_num(f, c->base_oncpu);
		fputs(",\"new_on_cpu_ns\":", f);
		json_num(f, c->new_oncpu);
		fputs(",\"base_preempted_ns\":", f);
		json_num(f, c->base_pre);
		fputs(",\"new_preempted_ns\":", f);
		json_num(f, c->new_pre);
		fputc('}', f);
	}
	fputc(']', f);
}

void lp_diff_write_json(FILE *f, const struct lp_diff *d)
{
	fputs("{\"schema\":\"latprof-diff/2\",\"request\":", f);
	lp_json_str(f, d->req_name);
	fprintf(f,
		",\"base\":{\"databases\":%zu,\"requests\":%zu},\"new\":{\"databases\":%zu,"
		"\"requests\":%zu},\"threshold\":",
		d->base_dbs, d->n_base_req, d->new_dbs, d->n_new_req);
	json_num(f, d->opts.threshold);
	fputs(",\"alpha\":", f);
	json_num(f, d->opts.alpha);
	fprintf(f,
		",\"level\":%.6g,\"test\":\"bootstrap-ratio-interval\",\"correction\":"
		"\"holm-bonferroni\",\"resamples\":%zu,\"seed\":%u,\"noise_floor\":",
		1 - d->opts.alpha, d->resamples, (unsigned)LP_DIFF_SEED);
	json_num(f, d->noise);
	fprintf(f,
		",\"run_noise_unknown\":%s,\"comparisons\":%zu,\"min_samples\":%d,"
		"\"min_tail\":%d,\"regressions\":%d,\"improvements\":%d,\"rows\":[",
		d->single_run ? "true" : "false", d->ntested, LP_DIFF_MIN_SAMPLES, LP_DIFF_MIN_TAIL,
		d->regressions, d->improvements);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct lp_diff_row *r = &d->rows[i];
		fputs(i ? ",{\"scope\":" : "{\"scope\":", f);
		lp_json_str(f, r->scope);
		fprintf(f, ",\"kind\":\"%s\",\"metric\":\"%s\",\"quantile\":",
			r->is_request ? "request" : "stage", r->metric_name);
		json_num(f, r->q < 0 ? NAN : r->q);
		fprintf(f,
			",\"n_base\":%zu,\"n_new\":%zu,\"runs_base\":%zu,\"runs_new\":%zu,"
			"\"base_ns\":",
			r->n_base, r->n_new, r->runs_base, r->runs_new);
		json_num(f, r->base);
		fputs(",\"new_ns\":", f);
		json_num(f, r->new_);
		fputs(",\"rel_change\":", f);
		json_num(f, r->rel);
		fputs(",\"ci_low\":", f);
		json_num(f, r->lo);
		fputs(",\"ci_high\":", f);
		json_num(f, r->hi);
		fputs(",\"noise_floor\":", f);
		json_num(f, isnan(r->lo) ? NAN : r->noise);
		fputs(",\"method\":", f);
		if (r->method)
			lp_json_str(f, r->method);
		else
			fputs("null", f);
		fputs(",\"p\":", f);
		json_num(f, r->p);
		fputs(",\"p_holm\":", f);
		json_num(f, r->p_adj);
		fprintf(f, ",\"verdict\":\"%s\",", lp_verdict_name(r->verdict));
		if (r->verdict == LP_V_INCONCLUSIVE)
			fprintf(f, "\"toward\":\"%s\",", r->up ? "regression" : "improvement");
		fputs("\"why\":", f);
		if (r->why[0])
			lp_json_str(f, r->why);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputc(']', f);
	json_answer(f, d);
	json_named(f, "locks", d->locks, d->nlocks);
	json_named(f, "categories", d->cats, d->ncats);
	if (d->has_kernels)
		json_named(f, "kernels", d->kernels, d->nkernels);
	else
		fputs(",\"kernels\":null", f);
	if (d->has_findings) {
		fputs(",\"findings\":{\"new\":", f);
		json_ids(f, d->new_findings, d->n_new_findings);
		fputs(",\"resolved\":", f);
		json_ids(f, d->resolved_findings, d->n_resolved_findings);
		fputc('}', f);
	} else {
		fputs(",\"findings\":null", f);
	}
	fputs("}\n", f);
}
