/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_diff_html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lp_html_util.h"
#include "lp_out.h"
#include "lp_plot.h"

#define LP_DH_NCHARTS 2

struct dh_side_sum {
	size_t nreq;
	double p50, p99;
};

struct diff_html {
	const struct lp_diff *d;
	struct dh_side_sum sum[2]; /* base, new */
	int has_gnuplot;
	char *chart_err;
	struct lp_plot_result charts[LP_DH_NCHARTS];
	char *svg[LP_DH_NCHARTS];
};

/* ---- charts: base and new overlaid ---- */

struct dh_sides {
	const struct lp_side *s[2];
	const char **stages; /* base's stages, then those only the new side has */
	size_t nstages;
};

static const char *const lp_dh_side_name[2] = {"base", "new"};

static void dh_cdf_dat(FILE *f, const void *arg)
{
	const struct dh_sides *in = arg;
	for (int k = 0; k < 2; k++) {
		fprintf(f, "%s# %s: %zu requests; latency_ns fraction_of_requests_at_or_below\n",
			k ? "\n\n" : "", lp_dh_side_name[k], in->s[k]->req.n);
		lp_plot_cdf_rows(f, in->s[k]->req.v, in->s[k]->req.n);
	}
}

static void dh_cdf_gp(FILE *f, const void *arg, const char *name)
{
	const struct dh_sides *in = arg;
	const struct lp_series *b = &in->s[0]->req, *n = &in->s[1]->req;
	double mn = fmin(b->v[0], n->v[0]), mx = fmax(b->v[b->n - 1], n->v[n->n - 1]);
	lp_plot_cdf_axes(f, mn, mx, lp_metric_value(LP_M_P50, b->v, b->n));
	fprintf(f,
		"plot '%s.dat' index 0 using ($1/1e6):2 with steps lw 2 lc rgb '#4477aa' "
		"title 'base', \\\n     '' index 1 using ($1/1e6):2 with steps lw 2 "
		"lc rgb '#ee6677' title 'new'\n",
		name);
}

static void dh_stage_dat(FILE *f, const void *arg)
{
	const struct dh_sides *in = arg;
	static const enum lp_metric m[4] = {LP_M_P50, LP_M_P50, LP_M_P99, LP_M_P99};
	fputs("# per stage (rows, in the order of the script's xtics): per-request time (ns)\n"
	      "# base_p50 new_p50 base_p99 new_p99; NaN where a side lacks the stage\n",
	      f);
	for (size_t i = 0; i < in->nstages; i++) {
		for (int c = 0; c < 4; c++) {
			const struct lp_series *s = lp_side_stage(in->s[c & 1], in->stages[i]);
			double v = s && s->n ? lp_metric_value(m[c], s->v, s->n) : NAN;
			fputs(c ? " " : "", f);
			if (isnan(v))
				fputs("NaN", f);
			else
				fprintf(f, "%.0f", v);
		}
		fputc('\n', f);
	}
}

static void dh_stage_gp(FILE *f, const void *arg, const char *name)
{
	const struct dh_sides *in = arg;
	fputs("set style data histograms\nset style histogram clustered gap 1\n"
	      "set style fill solid 0.85 border -1\nset ylabel 'per-request stage time (ms)'\n"
	      "set yrange [0:*]\nset xtics (",
	      f);
	for (size_t i = 0; i < in->nstages; i++) {
		fputs(i ? ", " : "", f);
		lp_plot_gp_str(f, in->stages[i]);
		fprintf(f, " %zu", i);
	}
	fputs(") noenhanced\n", f);
	static const char *const col[4] = {"#4477aa", "#ee6677", "#99bbdd", "#f4aab4"};
	static const char *const ttl[4] = {"base p50", "new p50", "base p99", "new p99"};
	fputs("plot ", f);
	for (int c = 0; c < 4; c++)
		fprintf(f, "%s'%s.dat' using ($%d/1e6) lc rgb '%s' title '%s'",
			c ? ", \\\n     " : "", name, c + 1, col[c], ttl[c]);
	fputc('\n', f);
}

static const struct lp_plot_chart lp_dh_charts[LP_DH_NCHARTS] = {
    {"latency_cdf", "Request latency CDF, base and new", dh_cdf_dat, dh_cdf_gp},
    {"stage_bars", "Stage time at p50 and p99, base and new", dh_stage_dat, dh_stage_gp},
};

static const char *dh_skip(int i, const struct dh_sides *in)
{
	if (i == 0)
		return in->s[0]->req.n >= 2 && in->s[1]->req.n >= 2
			   ? NULL
			   : "fewer than 2 requests on a side";
	return in->nstages ? NULL : "no stages inside the requests";
}

static int dh_stage_list(struct dh_sides *in)
{
	size_t max = in->s[0]->nstages + in->s[1]->nstages;
	in->stages = calloc(max + 1, sizeof(*in->stages));
	if (!in->stages)
		return -1;
	for (size_t i = 0; i < in->s[0]->nstages; i++)
		in->stages[in->nstages++] = in->s[0]->stages[i].name;
	for (size_t i = 0; i < in->s[1]->nstages; i++)
		if (!lp_side_stage(in->s[0], in->s[1]->stages[i].name))
			in->stages[in->nstages++] = in->s[1]->stages[i].name;
	return 0;
}

static void dh_charts_draw(struct diff_html *pg, const struct dh_sides *in)
{
	char dir[4096], err[1024];
	for (int i = 0; i < LP_DH_NCHARTS; i++) {
		pg->charts[i].name = lp_dh_charts[i].name;
		pg->charts[i].title = lp_dh_charts[i].title;
		pg->charts[i].skipped = dh_skip(i, in);
	}
	pg->has_gnuplot = lp_plot_gnuplot() != NULL;
	if (!pg->has_gnuplot)
		return;
	if (lp_html_tmpdir(dir, sizeof(dir))) {
		pg->chart_err = strdup("cannot create a temporary directory for the charts");
		return;
	}
	for (int i = 0; i < LP_DH_NCHARTS && !pg->chart_err; i++) {
		struct lp_plot_result *c = &pg->charts[i];
		if (c->skipped)
			continue;
		if (lp_plot_render_chart(dir, &lp_dh_charts[i], in, LP_PLOT_SVG, c->image,
					 sizeof(c->image), err, sizeof(err)))
			pg->chart_err = strdup(err);
		else
			pg->svg[i] = lp_html_svg_file(c->image);
	}
	lp_html_rmtree(dir);
}

void *lp_diff_html_build(const struct lp_side *base, const struct lp_side *new_,
			 const struct lp_diff *d, char *err, size_t errlen)
{
	struct diff_html *pg = calloc(1, sizeof(*pg));
	struct dh_sides in = {{base, new_}, NULL, 0};
	if (!pg || dh_stage_list(&in)) {
		free(pg);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pg->d = d;
	for (int k = 0; k < 2; k++) {
		const struct lp_series *r = &in.s[k]->req;
		pg->sum[k].nreq = r->n;
		pg->sum[k].p50 = lp_metric_value(LP_M_P50, r->v, r->n);
		pg->sum[k].p99 = lp_metric_value(LP_M_P99, r->v, r->n);
	}
	dh_charts_draw(pg, &in);
	free(in.stages);
	return pg;
}

void lp_diff_html_free(void *page)
{
	struct diff_html *pg = page;
	if (!pg)
		return;
	for (int i = 0; i < LP_DH_NCHARTS; i++)
		free(pg->svg[i]);
	free(pg->chart_err);
	free(pg);
}

/* ---- write ---- */

static const char lp_dh_css[] =
    ".verdict{padding:8px 14px;margin:12px 0;border-left:6px solid #228833;"
    "background:#eff8f1}.verdict.bad{border-color:#cc3344;background:#fdf0f1}"
    ".verdict b{font-size:16px}tr.regression td{background:#fbd9dc}"
    "tr.improvement td{background:#dff2e3}tr.notenough td{color:#777}"
    "td.side{background:#f6f8fb}tr.up td{background:#fdf0f1}";

static void dh_td_dur(FILE *f, double ns)
{
	if (isnan(ns))
		fputs("<td>-</td>", f);
	else
		lp_html_td_dur(f, ns);
}

static void dh_td_rel(FILE *f, double rel)
{
	if (isnan(rel))
		fputs("<td>-</td>", f);
	else
		fprintf(f, "<td>%+.1f%%</td>", 100 * rel);
}

static void dh_td_p(FILE *f, double p)
{
	if (isnan(p))
		fputs("<td>-</td>", f);
	else
		fprintf(f, p < 1e-4 ? "<td>%.1e</td>" : "<td>%.4f</td>", p);
}

static void w_verdict(FILE *f, const struct diff_html *pg)
{
	const struct lp_diff *d = pg->d;
	fprintf(f, "<section id=\"verdict\"><div class=\"verdict%s\"><b>",
		d->regressions ? " bad" : "");
	if (d->regressions)
		fprintf(f, "%d regression%s", d->regressions, d->regressions == 1 ? "" : "s");
	else
		fputs("No regression", f);
	if (d->improvements)
		fprintf(f, ", %d improvement%s", d->improvements, d->improvements == 1 ? "" : "s");
	fprintf(f,
		"</b><br>latprof diff exits with status <b>%d</b>: 1 on a regression, 0 "
		"otherwise, 2 on bad input.</div>\n",
		d->regressions ? 1 : 0);
	fprintf(f,
		"<p class=\"note\" id=\"method\">Each stage and metric has its own %.0f%% "
		"interval of the ratio new/base (bootstrap, %zu resamples, fixed seed; "
		"hierarchical over runs, then requests, where both sides have 2 or more runs). A "
		"regression needs the whole interval above +%.1f%% (threshold) and p &le; %.3g "
		"after Holm-Bonferroni across all %zu comparisons. A quantile needs %d requests "
		"beyond it on each side, a mean %d requests: else not enough data.</p>\n",
		100 * (1 - d->opts.alpha), d->resamples, 100 * d->opts.threshold, d->opts.alpha,
		d->ntested, LP_DIFF_MIN_TAIL, LP_DIFF_MIN_SAMPLES);
	if (d->single_run)
		fprintf(f,
			"<p class=\"note\" id=\"noise\">One run on a side: run-to-run noise is "
			"unknown, so a noise floor of &plusmn;%.1f%% (--noise) widens those "
			"intervals. Record two or more runs per side to measure it.</p>\n",
			100 * d->noise);
	fputs("<table id=\"sides\"><tr><th></th><th>databases</th><th>requests</th>"
	      "<th>request p50</th><th>request p99</th></tr>\n",
	      f);
	size_t dbs[2] = {d->base_dbs, d->new_dbs};
	for (int k = 0; k < 2; k++) {
		fprintf(f, "<tr><th class=\"l\">%s</th><td>%zu</td><td>%zu</td>",
			lp_dh_side_name[k], dbs[k], pg->sum[k].nreq);
		dh_td_dur(f, pg->sum[k].p50);
		dh_td_dur(f, pg->sum[k].p99);
		fputs("</tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

/* Row class, and the verdict in words with a marker so that it reads
 * without colour. */
static const char *const lp_dh_class[] = {
    [LP_V_UNCHANGED] = "unchanged",
    [LP_V_REGRESSION] = "regression",
    [LP_V_IMPROVEMENT] = "improvement",
    [LP_V_NOT_ENOUGH] = "notenough",
};
static const char *const lp_dh_verdict[] = {
    [LP_V_UNCHANGED] = "unchanged",
    [LP_V_REGRESSION] = "&#9650; REGRESSION",
    [LP_V_IMPROVEMENT] = "&#9660; improvement",
    [LP_V_NOT_ENOUGH] = "not enough data",
};

static void dh_td_ci(FILE *f, const struct lp_diff_row *r)
{
	if (isnan(r->lo))
		fputs("<td>-</td>", f);
	else
		fprintf(f, "<td>%+.1f%% &ndash; %+.1f%%</td>", 100 * r->lo, 100 * r->hi);
}

static void w_metric(FILE *f, const struct lp_diff *d, const char *m)
{
	fprintf(f, "<h3 id=\"metric-%s\">%s</h3>\n", m, m);
	fputs("<table><tr><th class=\"l\">stage</th><th>base</th><th>new</th><th>change</th>"
	      "<th>interval</th><th>p (Holm)</th><th class=\"l\">verdict</th><th class=\"l\">"
	      "method</th><th>requests base/new</th><th>runs base/new</th></tr>\n",
	      f);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct lp_diff_row *r = &d->rows[i];
		if (strcmp(r->metric_name, m) != 0)
			continue;
		fprintf(f, "<tr class=\"%s%s\"><td class=\"l\">", lp_dh_class[r->verdict],
			r->is_request ? " req" : "");
		lp_html_str(f, r->is_request ? "(request)" : r->scope);
		fputs("</td>", f);
		dh_td_dur(f, r->base);
		dh_td_dur(f, r->new_);
		dh_td_rel(f, r->rel);
		dh_td_ci(f, r);
		dh_td_p(f, r->p_adj);
		fprintf(f, "<td class=\"l\">%s", lp_dh_verdict[r->verdict]);
		if (r->verdict == LP_V_NOT_ENOUGH) {
			fputs(" (", f);
			lp_html_str(f, r->why);
			fputc(')', f);
		}
		fprintf(
		    f, "</td><td class=\"l\">%s</td><td>%zu / %zu</td><td>%zu / %zu</td></tr>\n",
		    r->method ? r->method : "-", r->n_base, r->n_new, r->runs_base, r->runs_new);
	}
	fputs("</table>\n", f);
}

static void w_stages(FILE *f, const struct lp_diff *d)
{
	fputs("<section id=\"stages\"><h2>Request and stages</h2>\n<p>Request: <b>", f);
	lp_html_str(f, d->req_name);
	fputs("</b>; a stage's sample is its summed time inside one request.</p>\n", f);
	/* one table per metric, in the order of the rows */
	for (size_t i = 0; i < d->nrows; i++) {
		size_t k = 0;
		while (k < i && strcmp(d->rows[k].metric_name, d->rows[i].metric_name) != 0)
			k++;
		if (k == i)
			w_metric(f, d, d->rows[i].metric_name);
	}
	fputs("</section>\n", f);
}

static void w_named(FILE *f, const struct lp_diff *d, const struct lp_diff_named *v, size_t n,
		    const char *what)
{
	if (!n) {
		fprintf(f, "<p class=\"note\">No %s recorded on either side.</p>\n", what);
		return;
	}
	fprintf(f,
		"<table><tr><th class=\"l\">%s</th><th>base / request</th><th>new / request"
		"</th><th>change</th><th>base count</th><th>new count</th><th>base total</th>"
		"<th>new total</th><th class=\"l\"></th></tr>\n",
		what);
	for (size_t i = 0; i < n; i++) {
		/* not tested for significance: only the size of the change */
		int up = !isnan(v[i].rel) && v[i].rel >= d->opts.threshold;
		fputs(up ? "<tr class=\"up\">" : "<tr>", f);
		lp_html_td_str(f, v[i].name);
		lp_html_td_dur(f, v[i].base_per_req);
		lp_html_td_dur(f, v[i].new_per_req);
		dh_td_rel(f, v[i].rel);
		fprintf(f, "<td>%lld</td><td>%lld</td>", v[i].base_count, v[i].new_count);
		lp_html_td_dur(f, v[i].base_ns);
		lp_html_td_dur(f, v[i].new_ns);
		fprintf(f, "<td class=\"l\">%s</td></tr>\n", up ? "&#9650; more" : "");
	}
	fputs("</table>\n", f);
}

static void w_locks(FILE *f, const struct lp_diff *d)
{
	fputs("<section id=\"locks\"><h2>Lock contention</h2>\n<p class=\"note\">Wait per request "
	      "and pooled totals; marked where the wait grew by the threshold or more (no "
	      "significance test).</p>\n",
	      f);
	w_named(f, d, d->locks, d->nlocks, "lock");
	fputs("</section>\n", f);
}

static void w_cats(FILE *f, const struct lp_diff *d)
{
	fputs("<section id=\"categories\"><h2>Time by category</h2>\n<p class=\"note\">Request "
	      "time per request in each breakdown category (waits, blocking calls, on-CPU, "
	      "preempted) and pooled totals; marked where it grew by the threshold or more (no "
	      "significance test).</p>\n",
	      f);
	w_named(f, d, d->cats, d->ncats, "category");
	fputs("</section>\n", f);
}

static void w_gpu(FILE *f, const struct lp_diff *d)
{
	fputs("<section id=\"gpu\"><h2>GPU kernels</h2>\n", f);
	if (d->has_kernels)
		w_named(f, d, d->kernels, d->nkernels, "kernel");
	else
		fputs("<p class=\"note\">No GPU data on both sides: kernels not compared.</p>\n",
		      f);
	fputs("</section>\n", f);
}

static void w_ids(FILE *f, const char *label, char **v, size_t n)
{
	fprintf(f, "<h3>%s (%zu)</h3>\n<ul>", label, n);
	for (size_t i = 0; i < n; i++) {
		fputs("<li>", f);
		lp_html_str(f, v[i]);
		fputs("</li>", f);
	}
	fputs("</ul>\n", f);
}

static void w_findings(FILE *f, const struct lp_diff *d)
{
	fputs("<section id=\"findings\"><h2>Findings</h2>\n", f);
	if (!d->has_findings) {
		fputs("<p class=\"note\">Not available: bottleneck rules are not built into this "
		      "latprof.</p></section>\n",
		      f);
		return;
	}
	w_ids(f, "New in the new run", d->new_findings, d->n_new_findings);
	w_ids(f, "Resolved", d->resolved_findings, d->n_resolved_findings);
	fputs("</section>\n", f);
}

void lp_diff_html_write(FILE *f, const void *page)
{
	const struct diff_html *pg = page;
	const struct lp_diff *d = pg->d;
	lp_html_head(f, "latprof diff", lp_dh_css);
	fputs("<header><h1>latprof diff</h1><p>Request <b>", f);
	lp_html_str(f, d->req_name);
	fprintf(f,
		"</b>: base %zu requests from %zu database%s, new %zu from %zu.</p>"
		"<nav><a href=\"#verdict\">verdict</a><a href=\"#stages\">stages</a>"
		"<a href=\"#charts\">charts</a><a href=\"#locks\">locks</a>"
		"<a href=\"#gpu\">GPU</a><a href=\"#findings\">findings</a></nav></header>\n",
		d->n_base_req, d->base_dbs, d->base_dbs == 1 ? "" : "s", d->n_new_req, d->new_dbs);
	w_verdict(f, pg);
	w_stages(f, d);
	lp_html_charts_section(f, "latprof diff BASE.db NEW.db --format html -o OUT.html",
			       pg->has_gnuplot, pg->chart_err, pg->charts, pg->svg, LP_DH_NCHARTS);
	w_cats(f, d);
	w_locks(f, d);
	w_gpu(f, d);
	w_findings(f, d);
	fputs("<footer><p class=\"note\">latprof diff</p></footer></body></html>\n", f);
}
