/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_html.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_breakdown.h"
#include "lp_cuda.h"
#include "lp_findings.h"
#include "lp_html_util.h"
#include "lp_locks.h"
#include "lp_out.h"
#include "lp_plot.h"
#include "lp_report_summary.h"
#include "lp_summary.h"
#include "lp_timeseries.h"
#include "lp_view.h"

/* The sections that are a view of their own come from that view's analyze
 * (report/lp_view_*.c), so the page and `report --VIEW` show the same
 * numbers; the breakdown and the findings share the ranges they load, and
 * the time series and timelines are the page's own. */
struct html_page {
	struct lp_run_summary *run;	    /* lp_view_processes */
	struct lp_lock_report *locks;	    /* lp_view_locks */
	struct lp_cuda_report *kern, *mcpy; /* lp_view_kernels, lp_view_memcpy */
	struct lp_findings fnd;
	struct lp_breakdown bd;
	struct lp_timeseries ts;
	struct lp_req_timeline tl[2];
	int has_gnuplot;
	char *chart_err; /* gnuplot failed: why */
	struct lp_plot_result charts[LP_PLOT_NCHARTS];
	char *svg[LP_PLOT_NCHARTS]; /* the chart's <svg>...</svg>, NULL when skipped */
};

/* ---- build ---- */

static void html_charts(struct html_page *pg)
{
	pg->has_gnuplot = lp_plot_gnuplot() != NULL;
	if (!pg->has_gnuplot)
		return;
	char dir[4096], err[1024];
	if (lp_html_tmpdir(dir, sizeof(dir))) {
		pg->chart_err = strdup("cannot create a temporary directory for the charts");
		return;
	}
	struct lp_plot_input in = {&pg->bd, &pg->ts};
	if (lp_plot_render(dir, &in, LP_PLOT_SVG, pg->charts, err, sizeof(err)) < 0) {
		pg->chart_err = strdup(err);
	} else {
		for (int i = 0; i < LP_PLOT_NCHARTS; i++)
			if (!pg->charts[i].skipped)
				pg->svg[i] = lp_html_svg_file(pg->charts[i].image);
	}
	lp_html_rmtree(dir);
}

void *lp_html_build(sqlite3 *db, const struct lp_html_opts *o, char *err, size_t errlen)
{
	struct html_page *pg = calloc(1, sizeof(*pg));
	if (!pg) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* The breakdown keeps the ranges it loaded: the rules and the time
	 * series read requests and stages from them instead of scanning the
	 * table again; at stage depth 1 the rules also take the page's
	 * breakdown as theirs (at 2 M ranges these scans and a second
	 * breakdown were 5 s of a 9 s page). */
	struct lp_rset ranges = {0};
	struct lp_breakdown_opts bo = {
	    .request = o->request, .stage_depth = o->stage_depth, .keep_ranges = &ranges};
	struct lp_findings_opts fo = {.request = o->request};
	struct lp_view_opts vo = {.top = o->top};
	int rc = !(pg->run = lp_view_processes.analyze(db, &vo, err, errlen)) ||
		 lp_breakdown_compute(db, &bo, &pg->bd, err, errlen);
	if (!rc && o->stage_depth <= 1) {
		fo.bd = &pg->bd;
		fo.ranges = &ranges;
	}
	rc = rc || lp_findings_analyze(db, &fo, &pg->fnd, err, errlen) ||
	     !(pg->locks = lp_view_locks.analyze(db, &vo, err, errlen)) ||
	     !(pg->kern = lp_view_kernels.analyze(db, &vo, err, errlen)) ||
	     !(pg->mcpy = lp_view_memcpy.analyze(db, &vo, err, errlen)) ||
	     lp_timeseries_compute(db, &pg->bd, &ranges, &pg->ts, err, errlen);
	lp_rset_free(&ranges);
	if (rc) {
		lp_html_free(pg);
		return NULL;
	}
	if (pg->ts.nreq && (lp_req_timeline_compute(db, &pg->ts, pg->ts.p50_ns, "median request",
						    &pg->tl[0], err, errlen) ||
			    lp_req_timeline_compute(db, &pg->ts, pg->ts.p99_ns, "p99 request",
						    &pg->tl[1], err, errlen))) {
		lp_html_free(pg);
		return NULL;
	}
	html_charts(pg);
	return pg;
}

void lp_html_free(void *page)
{
	struct html_page *pg = page;
	if (!pg)
		return;
	if (pg->run)
		lp_view_processes.free(pg->run);
	if (pg->locks)
		lp_view_locks.free(pg->locks);
	if (pg->kern)
		lp_view_kernels.free(pg->kern);
	if (pg->mcpy)
		lp_view_memcpy.free(pg->mcpy);
	lp_findings_free(&pg->fnd);
	lp_breakdown_free(&pg->bd);
	lp_timeseries_free(&pg->ts);
	lp_req_timeline_free(&pg->tl[0]);
	lp_req_timeline_free(&pg->tl[1]);
	for (int i = 0; i < LP_PLOT_NCHARTS; i++)
		free(pg->svg[i]);
	free(pg->chart_err);
	free(pg);
}

/* ---- write ---- */

/*
 * The page stays bounded whatever the run's size: every table
 * shows at most LP_HTML_ROWS rows and says how many it left out, the
 * charts draw a bounded sample (report/lp_plot.c), a request timeline at
 * most LP_HTML_TL_ITEMS bars. Every number in it is still computed from
 * all of the data; only what is drawn is cut.
 */
#define LP_HTML_ROWS 200
#define LP_HTML_TL_ITEMS 4000

static void w_more(FILE *f, size_t shown, size_t total, const char *what, const char *where)
{
	if (total > shown)
		fprintf(f,
			"<p class=\"note\">%zu more %s not shown (the page shows %d at most); %s "
			"lists them all.</p>\n",
			total - shown, what, LP_HTML_ROWS, where);
}

/* Which stages the tables show: all of them, or the LP_HTML_ROWS with the
 * largest share (kept in request order). NULL: all. */
static unsigned char *shown_stages(const struct lp_breakdown *b)
{
	return b->nstages > LP_HTML_ROWS ? lp_plot_top_stages(b, LP_HTML_ROWS) : NULL;
}

static void stage_name(FILE *f, const char *domain, const char *name)
{
	if (domain && *domain) {
		lp_html_str(f, domain);
		fputs("::", f);
	}
	lp_html_str(f, name);
}

static void w_findings(FILE *f, const struct lp_findings *fd)
{
	fputs("<section id=\"findings\"><h2>Findings</h2>\n", f);
	if (!fd->n)
		fputs("<p class=\"note\">No rule crossed its threshold in this run.</p>\n", f);
	for (size_t i = 0; i < fd->n; i++) {
		const struct lp_finding *x = &fd->v[i];
		fprintf(f, "<div class=\"fnd s%d\"><b>", (int)x->severity);
		lp_html_str(f, x->title);
		fputs("</b>", f);
		if (x->subject) {
			fputs(": ", f);
			lp_html_str(f, x->subject);
		}
		fputs("<br>", f);
		lp_html_str(f, x->summary);
		fputs("<br>Estimated saving: ", f);
		lp_html_dur(f, (double)x->saving_ns);
		fprintf(f, " (%.1f%% of %s)<br>Fix: ", 100 * x->share,
			fd->has_requests ? "request time" : "thread time");
		lp_html_str(f, x->fix ? x->fix : x->rule->fix);
		fputs("</div>\n", f);
	}
	size_t skipped = 0;
	for (size_t i = 0; i < fd->nrules; i++)
		skipped += fd->rules[i].state == LP_RULE_SKIPPED;
	if (skipped) {
		fputs("<p class=\"note\">Not evaluated: ", f);
		for (size_t i = 0, k = 0; i < fd->nrules; i++)
			if (fd->rules[i].state == LP_RULE_SKIPPED) {
				fputs(k++ ? "; " : "", f);
				lp_html_str(f, fd->rules[i].rule->id);
				fputs(" (", f);
				lp_html_str(f, fd->rules[i].why);
				fputs(")", f);
			}
		fputs(".</p>\n", f);
	}
	fputs("</section>\n", f);
}

static void w_summary(FILE *f, const struct lp_run_summary *r)
{
	fputs("<section id=\"summary\"><h2>Run summary</h2>\n<table>", f);
	fputs("<tr><th class=\"l\">command</th><td class=\"l cmd\">", f);
	lp_html_str(f, r->run_cmdline ? r->run_cmdline : "(unknown)");
	fputs("</td></tr><tr><th class=\"l\">duration</th>", f);
	lp_html_td_dur(f, (double)(r->end_ns - r->start_ns));
	fprintf(f,
		"</tr><tr><th class=\"l\">processes</th><td>%zu</td></tr>"
		"<tr><th class=\"l\">threads</th><td>%lld</td></tr>"
		"<tr><th class=\"l\">contended lock waits</th><td>%lld</td></tr>"
		"<tr><th class=\"l\">condition waits</th><td>%lld</td></tr>"
		"<tr><th class=\"l\">records dropped</th><td>%lld</td></tr>",
		r->n_procs, r->threads, r->lock_waits, r->cond_waits, r->dropped_records);
	fputs("<tr><th class=\"l\">GPU data</th>", f);
	lp_html_td_str(f, r->gpu_captured ? "captured" : r->gpu_status ? r->gpu_status : "none");
	fputs("</tr><tr><th class=\"l\">host</th>", f);
	lp_html_td_str(f, r->host);
	fputs("</tr></table>\n<table><tr><th>pid</th><th class=\"l\">command line</th>"
	      "<th class=\"l\">ended</th><th>threads</th></tr>\n",
	      f);
	/* The text report's rows: launchers folded, identical siblings once. */
	struct lp_summary_row *rows = calloc(r->n_procs + 1, sizeof(*rows));
	size_t launchers = 0, hidden = 0,
	       nrows = rows ? lp_summary_fold(r, rows, &launchers, &hidden) : 0;
	size_t nprocs = nrows < LP_HTML_ROWS ? nrows : LP_HTML_ROWS;
	for (size_t i = 0; i < nprocs; i++) {
		const struct lp_summary_proc *p = rows[i].p;
		fprintf(f, "<tr><td>%d</td><td class=\"l cmd\">", p->pid);
		if (rows[i].count > 1)
			fprintf(f, "%zu x ", rows[i].count);
		lp_html_str(f, rows[i].name ? rows[i].name : "(unknown)");
		if (rows[i].via[0]) {
			fputs(" (via ", f);
			lp_html_str(f, rows[i].via);
			fputc(')', f);
		}
		fputs("</td><td class=\"l\">", f);
		if (r->import_source) /* a foreign capture has no exit status */
			fputs("not recorded", f);
		else
			lp_html_str(f, p->exit_how ? p->exit_how : "unknown");
		if (r->import_source)
			;
		else if (p->exit_signal)
			fprintf(f, " (signal %d)", p->exit_signal);
		else if (p->has_status)
			fprintf(f, " (status %d)", p->exit_status);
		fprintf(f, "</td><td>%lld</td></tr>\n", p->threads);
	}
	free(rows);
	fputs("</table>\n", f);
	if (launchers || hidden)
		fprintf(f,
			"<p class=\"note\">%zu launcher image%s folded, %zu process%s without "
			"recorded events not shown: latprof report --processes lists all.</p>\n",
			launchers, launchers == 1 ? "" : "s", hidden, hidden == 1 ? "" : "es");
	w_more(f, nprocs, nrows, "processes", "latprof report --processes");
	fputs("</section>\n", f);
}

/* Like the text report: no all-zero category columns (CUDA ones in a
 * CPU-only run); w_breakdown names the ones left out. */
static void cat_head(FILE *f, const struct lp_breakdown *b)
{
	for (int c = 0; c < b->ncat; c++) {
		if (!lp_breakdown_cat_has_time(b, c))
			continue;
		fputs("<th>", f);
		lp_html_str(f, b->cat_label[c]);
		fputs("</th>", f);
	}
}

static void cat_cells(FILE *f, const struct lp_breakdown *b, const int64_t *cat, int64_t tot)
{
	for (int c = 0; c < b->ncat; c++)
		if (lp_breakdown_cat_has_time(b, c))
			fprintf(f, "<td>%.1f%%</td>",
				tot > 0 ? 100.0 * (double)cat[c] / (double)tot : 0.0);
}

static void stat_cells(FILE *f, const struct lp_dist *s)
{
	fprintf(f, "<td>%lld</td>", (long long)s->n);
	lp_html_td_dur(f, s->mean);
	lp_html_td_dur(f, (double)s->p50);
	lp_html_td_dur(f, (double)s->p90);
	lp_html_td_dur(f, (double)s->p99);
	lp_html_td_dur(f, (double)s->max);
}

static void hidden_cats(FILE *f, const struct lp_breakdown *b)
{
	int n = 0;
	for (int c = 0; c < b->ncat; c++) {
		if (lp_breakdown_cat_has_time(b, c))
			continue;
		fputs(n++ ? ", " : "<p class=\"note\">No time in: ", f);
		lp_html_str(f, b->cat_label[c]);
	}
	if (n)
		fputs(".</p>\n", f);
}

static void w_breakdown(FILE *f, const struct lp_breakdown *b)
{
	fputs("<section id=\"breakdown\"><h2>Request breakdown</h2>\n", f);
	if (!b->has_ranges) {
		fputs("<p class=\"note\">The run recorded no NVTX ranges, so there are no requests "
		      "or stages; thread time of the whole run:</p>\n<table><tr><th class=\"l\">"
		      "thread</th><th>tid</th><th>time</th>",
		      f);
		cat_head(f, b);
		fputs("</tr>\n", f);
		size_t nth = b->nthreads < LP_HTML_ROWS ? b->nthreads : LP_HTML_ROWS;
		for (size_t i = 0; i < nth; i++) {
			const struct lp_breakdown_thread *t = &b->threads[i];
			fputs("<tr>", f);
			lp_html_td_str(f, t->name ? t->name : "(unnamed)");
			fprintf(f, "<td>%lld</td>", (long long)t->tid);
			lp_html_td_dur(f, (double)t->total_ns);
			cat_cells(f, b, t->cat_ns, t->total_ns);
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
		w_more(f, nth, b->nthreads, "threads", "latprof report FILE.db --breakdown");
		hidden_cats(f, b);
		fputs("</section>\n", f);
		return;
	}
	fputs("<p>Request: <b>", f);
	stage_name(f, b->req_domain, b->req_name);
	fputs("</b></p>\n<table><tr><th class=\"l\">stage</th><th>count</th><th>mean</th>"
	      "<th>p50</th><th>p90</th><th>p99</th><th>max</th><th>share</th>",
	      f);
	cat_head(f, b);
	fputs("</tr>\n<tr class=\"req\"><td class=\"l\">(request)</td>", f);
	stat_cells(f, &b->req);
	fputs("<td>100%</td>", f);
	cat_cells(f, b, b->req_cat_ns, b->req.total);
	fputs("</tr>\n", f);
	unsigned char *on = shown_stages(b);
	size_t shown = 0;
	for (size_t i = 0; i < b->nstages; i++) {
		const struct lp_breakdown_stage *s = &b->stages[i];
		if (on && !on[i])
			continue;
		shown++;
		fputs("<tr><td class=\"l\">", f);
		stage_name(f, s->domain, s->name);
		fputs("</td>", f);
		stat_cells(f, &s->st);
		fprintf(f, "<td>%.1f%%</td>", 100 * s->share);
		cat_cells(f, b, s->cat_ns, s->st.total);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	free(on);
	w_more(f, shown, b->nstages, "stages (the smallest shares)",
	       "latprof report FILE.db --breakdown");
	hidden_cats(f, b);
	if (b->stages_overlap)
		fputs("<p class=\"note\">Some stages overlap inside a request: shares may add up "
		      "to more than 100%.</p>\n",
		      f);
	fputs("</section>\n", f);
}

static void w_tail(FILE *f, const struct lp_breakdown *b)
{
	const struct lp_breakdown_tail *t = &b->tail;
	fputs("<section id=\"tail\"><h2>Tail attribution</h2>\n<p>", f);
	if (!b->has_ranges || !t->valid || t->stage < 0) {
		fputs("Not enough requests to compare the tail with the median.</p></section>\n",
		      f);
		return;
	}
	const struct lp_breakdown_stage *s = &b->stages[t->stage];
	fprintf(f, "Requests at or above p99 (%lld, &ge; ", (long long)t->n_tail);
	lp_html_dur(f, (double)t->p99_ns);
	fprintf(f, ") against those around the median (%lld): stage <b>", (long long)t->n_mid);
	stage_name(f, s->domain, s->name);
	fputs("</b> grows from ", f);
	lp_html_dur(f, t->stage_mid_ns);
	fputs(" to ", f);
	lp_html_dur(f, t->stage_tail_ns);
	if (t->cat >= 0 && t->cat < b->ncat) {
		fputs(", mostly <b>", f);
		lp_html_str(f, b->cat_label[t->cat]);
		fputs("</b> (", f);
		lp_html_dur(f, t->cat_mid_ns);
		fputs(" &rarr; ", f);
		lp_html_dur(f, t->cat_tail_ns);
		fputs(")", f);
	}
	if (t->has_key && t->key_name) {
		fputs(t->key_site ? ", at <b>" : ", waiting on <b>", f);
		lp_html_str(f, t->key_name);
		fputs("</b> (", f);
		lp_html_dur(f, t->key_mid_ns);
		fputs(" &rarr; ", f);
		lp_html_dur(f, t->key_tail_ns);
		fputs(")", f);
	}
	fputs(".</p></section>\n", f);
}

static void w_locks(FILE *f, const struct lp_lock_report *r)
{
	char buf[32];
	fputs("<section id=\"locks\"><h2>Locks</h2>\n<p class=\"note\">Waits by class:", f);
	for (int c = 0; c < LP_WAIT_NCLASSES; c++) {
		if (!r->class_n[c])
			continue;
		fprintf(f, " %s %lld, ", lp_wait_class_name(c), r->class_n[c]);
		lp_html_str(f, lp_txt_ns((double)r->class_ns[c], buf, sizeof(buf)));
		fputc(';', f);
	}
	fputs(" ranked below: contention and gil</p>\n", f);
	if (!r->n) {
		fputs("<p class=\"note\">No contended lock was recorded.</p></section>\n", f);
		return;
	}
	fputs("<table><tr><th class=\"l\">lock</th><th class=\"l\">kind</th><th>waits</th>"
	      "<th>total</th><th>mean</th><th>p50</th><th>p99</th><th>max</th>"
	      "<th>share</th><th class=\"l\">top call site</th></tr>\n",
	      f);
	size_t nlocks = r->n < LP_HTML_ROWS ? r->n : LP_HTML_ROWS;
	for (size_t i = 0; i < nlocks; i++) {
		const struct lp_lock_row *l = &r->locks[i];
		fputs("<tr>", f);
		lp_html_td_str(f, l->name);
		lp_html_td_str(f, l->wclass == LP_WAIT_GIL ? "gil" : l->kind);
		fprintf(f, "<td>%lld</td>", l->count);
		lp_html_td_dur(f, (double)l->total_ns);
		lp_html_td_dur(f, l->mean_ns);
		lp_html_td_dur(f, (double)l->p50_ns);
		lp_html_td_dur(f, (double)l->p99_ns);
		lp_html_td_dur(f, (double)l->max_ns);
		fprintf(f, "<td>%.1f%%</td>", 100 * l->share);
		lp_html_td_str(f, l->n_sites ? l->sites[0].where : "");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	w_more(f, nlocks, r->n, "locks", "latprof report FILE.db --locks --top N");
	fputs("</section>\n", f);
}

static void w_gpu(FILE *f, const struct lp_cuda_report *k, const struct lp_cuda_report *m)
{
	fputs("<section id=\"gpu\"><h2>Kernels and memcpy</h2>\n", f);
	if (!k->cap.captured) {
		fputs("<p class=\"note\">No GPU data in this run: ", f);
		lp_html_str(f, k->cap.status[0] ? k->cap.status : "CUDA tracing was off");
		fputs("</p></section>\n", f);
		return;
	}
	/* More than one device: one row per kernel and device (lp_cuda.h). */
	const char *dev_th = k->devices > 1 ? "<th>device</th>" : "";
	fprintf(f,
		"<h3>Kernels</h3><table><tr><th class=\"l\">kernel</th>%s<th>launches</th>"
		"<th>total</th><th>mean</th><th>median</th><th>max</th><th>share</th></tr>\n",
		dev_th);
	size_t nk = k->n < LP_HTML_ROWS ? k->n : LP_HTML_ROWS;
	for (size_t i = 0; i < nk; i++) {
		const struct lp_cuda_kern_row *r = &k->rows.kern[i];
		fputs("<tr>", f);
		lp_html_td_str(f, r->name);
		if (k->devices > 1)
			fprintf(f, "<td>%lld</td>", (long long)r->device);
		fprintf(f, "<td>%lld</td>", (long long)r->st.n);
		lp_html_td_dur(f, (double)r->st.total);
		lp_html_td_dur(f, r->st.mean);
		lp_html_td_dur(f, (double)r->st.med);
		lp_html_td_dur(f, (double)r->st.max);
		fprintf(f, "<td>%.1f%%</td></tr>\n", 100 * r->share);
	}
	fputs("</table>\n", f);
	w_more(f, nk, k->n, "kernels", "latprof report FILE.db --kernels");
	fprintf(f,
		"<h3>Memcpy</h3><table><tr><th class=\"l\">copy</th>%s<th>count</th>"
		"<th>bytes</th><th>total</th><th>mean</th><th>GB/s</th><th>share</th></tr>\n",
		m->devices > 1 ? "<th>device</th>" : "");
	size_t nm = m->n < LP_HTML_ROWS ? m->n : LP_HTML_ROWS;
	for (size_t i = 0; i < nm; i++) {
		const struct lp_cuda_memcpy_row *r = &m->rows.memcpy[i];
		fputs("<tr><td class=\"l\">", f);
		lp_html_str(f, r->copy_kind);
		fputs(" ", f);
		lp_html_str(f, r->src_kind);
		fputs(" &rarr; ", f);
		lp_html_str(f, r->dst_kind);
		fprintf(f, "%s</td>", r->async ? " (async)" : "");
		if (m->devices > 1)
			fprintf(f, "<td>%lld</td>", (long long)r->device);
		fprintf(f, "<td>%lld</td><td>%lld</td>", (long long)r->st.n, (long long)r->bytes);
		lp_html_td_dur(f, (double)r->st.total);
		lp_html_td_dur(f, r->st.mean);
		fprintf(f, "<td>%.2f</td><td>%.1f%%</td></tr>\n", r->gbps, 100 * r->share);
	}
	fputs("</table>\n", f);
	w_more(f, nm, m->n, "copy kinds", "latprof report FILE.db --memcpy");
	fputs("</section>\n", f);
}

/* A slowest request's largest wait: category, time, call site (the
 * Python line's text as its title). */
static void w_slow_wait(FILE *f, const struct lp_breakdown *b, const struct lp_breakdown_slow *r)
{
	if (r->wait_cat < 0) {
		fputs("<td>-</td>", f);
		return;
	}
	fputs("<td>", f);
	lp_html_str(f, b->cat_label[r->wait_cat]);
	fputc(' ', f);
	lp_html_dur(f, (double)r->wait_ns);
	fputs(" at <code", f);
	if (r->wait_source) {
		fputs(" title=\"", f);
		lp_html_str(f, r->wait_source);
		fputc('"', f);
	}
	fputc('>', f);
	lp_html_str(f, r->wait_site ? r->wait_site : "?");
	fputs("</code></td>", f);
}

static void w_slowest(FILE *f, const struct lp_breakdown *b)
{
	fputs("<section id=\"slowest\"><h2>Slowest requests</h2>\n", f);
	if (!b->has_ranges || !b->nslow) {
		fputs("<p class=\"note\">No requests (the run has no NVTX ranges).</p></section>\n",
		      f);
		return;
	}
	unsigned char *on = shown_stages(b);
	fputs("<table><tr><th>#</th><th>at</th><th>latency</th><th>tid</th>", f);
	for (size_t s = 0; s < b->nstages; s++) {
		if (on && !on[s])
			continue;
		fputs("<th>", f);
		stage_name(f, b->stages[s].domain, b->stages[s].name);
		fputs("</th>", f);
	}
	fputs("<th>largest wait</th></tr>\n", f);
	for (size_t i = 0; i < b->nslow; i++) {
		const struct lp_breakdown_slow *r = &b->slow[i];
		fprintf(f, "<tr><td>%zu</td>", i + 1);
		lp_html_td_dur(f, (double)r->rel_ns);
		lp_html_td_dur(f, (double)r->dur_ns);
		fprintf(f, "<td>%lld</td>", (long long)r->tid);
		for (size_t s = 0; s < b->nstages; s++)
			if (!on || on[s])
				lp_html_td_dur(f, r->stage_ns ? (double)r->stage_ns[s] : 0);
		w_slow_wait(f, b, r);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (on)
		fprintf(f, "<p class=\"note\">Columns: the %d stages with the largest share.</p>\n",
			LP_HTML_ROWS);
	free(on);
	fputs("</section>\n", f);
}

/* ---- request timelines (SVG) ---- */

#define TL_X0 180
#define TL_W 760
#define TL_ROW 16

static const char *const lp_tl_fill[] = {
    [LP_TL_RANGE] = "#6baed6", [LP_TL_LOCK] = "#ee6677", [LP_TL_COND] = "#ee9944",
    [LP_TL_API] = "#66bb66",   [LP_TL_GPU] = "#aa66cc",	 [LP_TL_SLEEP] = "#bbbbbb",
    [LP_TL_IO] = "#ccbb44",    [LP_TL_WAIT] = "#997755", [LP_TL_GIL] = "#cc3366",
    [LP_TL_RUNQ] = "#fc8d59",  [LP_TL_IDLE] = "#99bbdd", [LP_TL_JOIN] = "#7766aa",
};

static double tl_x(const struct lp_req_timeline *t, int64_t ns)
{
	double span = (double)(t->end_ns - t->start_ns);
	return TL_X0 + (span > 0 ? (double)(ns - t->start_ns) / span : 0) * TL_W;
}

/* Text that fits in w px (about 6.5 px a character), escaped, cut at a
 * character boundary. */
static void tl_label(FILE *f, const char *s, double w)
{
	size_t max = (size_t)(w / 6.5), n = 0, i = 0;
	char buf[256];
	while (s[i] && n < max && i < sizeof(buf) - 5) {
		int l = (unsigned char)s[i] < 0x80 ? 1 : lp_utf8_len((const unsigned char *)s + i);
		l = l ? l : 1;
		memcpy(buf + i, s + i, (size_t)l);
		i += (size_t)l;
		n++;
	}
	buf[i] = 0;
	lp_html_str(f, buf);
}

static void w_timeline(FILE *f, const struct lp_req_timeline *t, const struct lp_timeseries *ts)
{
	fprintf(f, "<h3>%s", t->label);
	if (!t->valid) {
		fputs("</h3><p class=\"note\">No request to show.</p>\n", f);
		return;
	}
	fputs(": ", f);
	lp_html_dur(f, (double)(t->end_ns - t->start_ns));
	fputs(" at ", f);
	lp_html_dur(f, (double)(t->start_ns - ts->start_ns));
	fputs("</h3>\n", f);
	int *rows = calloc(t->nlanes + 1, sizeof(int)), *y0 = calloc(t->nlanes + 1, sizeof(int));
	if (!rows || !y0) {
		free(rows);
		free(y0);
		return;
	}
	for (size_t i = 0; i < t->n; i++) {
		int r = t->items[i].kind == LP_TL_RANGE ? t->items[i].depth + 1 : 1;
		if (r > rows[t->items[i].lane])
			rows[t->items[i].lane] = r;
	}
	int y = 24;
	for (size_t l = 0; l < t->nlanes; l++) {
		y0[l] = y;
		y += (rows[l] ? rows[l] : 1) * TL_ROW + 10;
	}
	fprintf(
	    f, "<svg class=\"tl\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
	    TL_X0 + TL_W + 10, y + 4, TL_X0 + TL_W + 10, y + 4);
	for (int k = 0; k <= 4; k++) { /* time axis */
		double x = TL_X0 + TL_W * k / 4.0;
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"16\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
			"<text x=\"%.1f\" y=\"12\" text-anchor=\"%s\">",
			x, x, y, x, k == 4 ? "end" : "middle");
		lp_html_dur(f, (double)(t->end_ns - t->start_ns) * k / 4.0);
		fputs("</text>\n", f);
	}
	for (size_t l = 0; l < t->nlanes; l++) {
		fprintf(f, "<text x=\"4\" y=\"%d\">", y0[l] + 12);
		tl_label(f, t->lanes[l].name, TL_X0 - 8);
		fputs("</text>\n", f);
	}
	size_t nitems = t->n < LP_HTML_TL_ITEMS ? t->n : LP_HTML_TL_ITEMS;
	for (size_t i = 0; i < nitems; i++) {
		const struct lp_tl_item *it = &t->items[i];
		int row = it->kind == LP_TL_RANGE ? it->depth : rows[it->lane] - 1;
		double x = tl_x(t, it->start_ns), w = tl_x(t, it->end_ns) - x;
		w = w < 1 ? 1 : w;
		int yy = y0[it->lane] + row * TL_ROW;
		fprintf(f,
			"<g><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"%s>"
			"<title>",
			x, yy, w, TL_ROW - 2, lp_tl_fill[it->kind],
			it->kind == LP_TL_RANGE ? " stroke=\"#fff\""
						: " stroke=\"#222\" stroke-width=\"0.5\"");
		lp_html_str(f, it->kind == LP_TL_LOCK	? "lock wait: "
			       : it->kind == LP_TL_GIL	? "GIL wait: "
			       : it->kind == LP_TL_IDLE ? "idle wait: "
			       : it->kind == LP_TL_JOIN ? "join wait: "
							: "");
		lp_html_str(f, it->name);
		fputs(" ", f);
		lp_html_dur(f, (double)(it->end_ns - it->start_ns));
		fputs("</title></rect>", f);
		if (w > 30) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" clip-path=\"none\">", x + 3, yy + 11);
			tl_label(f, it->name, w - 6);
			fputs("</text>", f);
		}
		fputs("</g>\n", f);
	}
	fputs("</svg>\n", f);
	if (t->n > nitems)
		fprintf(f,
			"<p class=\"note\">The first %zu of this request's %zu bars are drawn "
			"(the page draws %d at most per request).</p>\n",
			nitems, t->n, LP_HTML_TL_ITEMS);
	free(rows);
	free(y0);
}

static void w_timelines(FILE *f, const struct html_page *pg)
{
	fputs("<section id=\"timeline\"><h2>Request timelines</h2>\n", f);
	if (!pg->ts.nreq) {
		fputs("<p class=\"note\">No requests (the run has no NVTX ranges).</p></section>\n",
		      f);
		return;
	}
	fputs("<p class=\"note\">Stages as bars on thread lanes (nesting downwards); "
	      "<span style=\"color:#cc3366\">&#9632;</span> GIL wait, "
	      "<span style=\"color:#ee6677\">&#9632;</span> lock wait, "
	      "<span style=\"color:#ee9944\">&#9632;</span> condition wait, "
	      "<span style=\"color:#99bbdd\">&#9632;</span> idle wait (a worker waiting for "
	      "work), "
	      "<span style=\"color:#7766aa\">&#9632;</span> join wait (waiting for a thread "
	      "to end), "
	      "<span style=\"color:#66bb66\">&#9632;</span> CUDA API, "
	      "<span style=\"color:#aa66cc\">&#9632;</span> GPU work, "
	      "<span style=\"color:#bbbbbb\">&#9632;</span> sleep, "
	      "<span style=\"color:#ccbb44\">&#9632;</span> file or socket I/O, "
	      "<span style=\"color:#997755\">&#9632;</span> poll or other blocking call, "
	      "<span style=\"color:#fc8d59\">&#9632;</span> preempted: the end of a wait spent "
	      "runnable, waiting for a CPU (its run-queue time). "
	      "Hover for names and durations.</p>\n",
	      f);
	w_timeline(f, &pg->tl[0], &pg->ts);
	w_timeline(f, &pg->tl[1], &pg->ts);
	fputs("</section>\n", f);
}

void lp_html_write(FILE *f, const void *page)
{
	const struct html_page *pg = page;
	lp_html_head(f, "latprof report", NULL);
	fputs("<header><h1>latprof report</h1><p class=\"cmd\">", f);
	lp_html_str(f, pg->run->run_cmdline ? pg->run->run_cmdline : "");
	fputs("</p><nav><a href=\"#findings\">findings</a><a href=\"#summary\">summary</a>"
	      "<a href=\"#breakdown\">breakdown</a><a href=\"#tail\">tail</a>"
	      "<a href=\"#charts\">charts</a><a href=\"#locks\">locks</a>"
	      "<a href=\"#gpu\">GPU</a><a href=\"#slowest\">slowest</a>"
	      "<a href=\"#timeline\">timelines</a></nav></header>\n",
	      f);
	w_findings(f, &pg->fnd);
	w_summary(f, pg->run);
	w_breakdown(f, &pg->bd);
	w_tail(f, &pg->bd);
	lp_html_charts_section(f, "latprof report FILE.db --html OUT.html", pg->has_gnuplot,
			       pg->chart_err, pg->charts, pg->svg, LP_PLOT_NCHARTS);
	w_locks(f, pg->locks);
	w_gpu(f, pg->kern, pg->mcpy);
	w_slowest(f, &pg->bd);
	w_timelines(f, pg);
	if (pg->ts.nreq && !lp_plot_lat_points(&pg->ts))
		fprintf(
		    f,
		    "<p class=\"note\">Request latency over time draws %zu requests as a "
		    "sample: per 1/1000 of the run its fastest and slowest request, and the 200 "
		    "slowest of the run; every number on this page is computed from all of "
		    "them.</p>\n",
		    pg->ts.nreq);
	fprintf(f,
		"<footer><p class=\"note\">The page is bounded whatever the run's size: tables "
		"show at most %d rows, charts a bounded sample, timelines at most %d bars; the "
		"text, JSON and CSV reports list everything.</p>\n",
		LP_HTML_ROWS, LP_HTML_TL_ITEMS);
	fputs("<p class=\"note\">latprof ", f);
	lp_html_str(f, pg->run->latprof_version);
	fputs("</p></footer></body></html>\n", f);
}
