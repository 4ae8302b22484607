/* SPDX-License-Identifier: MIT */
/* Per-request breakdown and range statistics: text, JSON, CSV. */
#include "lp_report_breakdown.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "lp_out.h"
#include "lp_report_locks.h" /* lp_txt_ns, lp_txt_pad */
#include "lp_view.h"

#define LP_BREAKDOWN_NAME_W 40

static void qual_name(char *buf, size_t len, const char *domain, const char *name)
{
	if (domain && *domain)
		snprintf(buf, len, "%s::%s", domain, name);
	else
		snprintf(buf, len, "%s", name);
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* ---- text ------------------------------------------------------------- */

/* Text shows a category column only where it holds time (on-CPU, or the
 * unsplit rest without counters, always): the
 * CUDA ones stay out of CPU-only runs. JSON and CSV keep every category. */
static int cat_shown(const struct lp_breakdown *b, int k)
{
	return lp_breakdown_cat_has_time(b, k);
}

static void text_hidden_cats(FILE *f, const struct lp_breakdown *b)
{
	int n = 0;
	for (int k = 0; k < b->ncat; k++)
		if (!cat_shown(b, k))
			fprintf(f, "%s%s", n++ ? ", " : "No time in: ", b->cat_label[k]);
	if (n)
		fputs(".\n", f);
}

static void text_ns_cell(FILE *f, double ns, int w)
{
	char b[32];
	lp_txt_pad(f, lp_txt_ns(ns, b, sizeof(b)), (size_t)w, 1);
}

/* mean, p50, p90, p99, max: the same columns for a stage and the request. */
static void text_stat_cells(FILE *f, const struct lp_dist *st)
{
	text_ns_cell(f, st->mean, 9);
	fputc(' ', f);
	text_ns_cell(f, (double)st->p50, 9);
	fputc(' ', f);
	text_ns_cell(f, (double)st->p90, 9);
	fputc(' ', f);
	text_ns_cell(f, (double)st->p99, 9);
	fputc(' ', f);
	text_ns_cell(f, (double)st->max, 9);
}

/* Counter columns in text: those whose events were recorded (an
 * unavailable one shows n/a in every row, with its reason below). */
static int cnt_shown(const struct lp_breakdown *b, int k)
{
	return b->has_counters && b->cnt_recorded[k];
}

static void text_cnt_header(FILE *f, const struct lp_breakdown *b)
{
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++)
		if (cnt_shown(b, k)) {
			fputs("  ", f);
			lp_txt_pad(f, b->cnt_label[k], 10, 1);
		}
}

static void text_cnt_cells(FILE *f, const struct lp_breakdown *b, const struct lp_breakdown_cnt *c)
{
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++) {
		if (!cnt_shown(b, k))
			continue;
		double v = c->v[k];
		if (isnan(v))
			fprintf(f, "  %10s", "n/a");
		else if (k == LP_BREAKDOWN_CNT_ONCPU)
			fprintf(f, "  %9.1f%%", 100.0 * v);
		else
			fprintf(f, "  %10.2f", v);
	}
}

static void text_cnt_notes(FILE *f, const struct lp_breakdown *b)
{
	if (!b->has_counters)
		return;
	fputs("Counters are per request, from the deltas of the ranges above; cpu/wall =\n"
	      "task-clock / the ranges' wall time (the rest: blocked, sleeping or preempted).\n",
	      f);
	int64_t partial = b->req_cnt.ranges < b->req.n;
	for (size_t i = 0; i < b->nstages; i++)
		partial +=
		    !b->stages[i].unattributed && b->stages[i].cnt.ranges < b->stages[i].instances;
	if (partial)
		fputs("note: some ranges have no counter deltas (ended on another thread, or not "
		      "sampled);\nthe counter columns cover the rest (JSON: counters.ranges).\n",
		      f);
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++)
		if (b->cnt_reason[k])
			fprintf(f, "%s %s: %s\n", cnt_shown(b, k) ? "n/a" : "No column",
				b->cnt_label[k], b->cnt_reason[k]);
	int scaled = b->req_cnt.scaled;
	for (size_t i = 0; i < b->nstages; i++)
		scaled |= b->stages[i].cnt.scaled;
	if (scaled)
		fputs("note: some counters were multiplexed; their deltas are scaled estimates.\n",
		      f);
}

static size_t stage_name_w(const struct lp_breakdown *b)
{
	size_t w = 15; /* "(whole request)" */
	for (size_t i = 0; i < b->nstages; i++) {
		char q[512], cell[1024];
		qual_name(q, sizeof(q), b->stages[i].domain, b->stages[i].name);
		size_t cw = lp_txt_cell(cell, sizeof(cell), q, LP_BREAKDOWN_NAME_W);
		w = cw > w ? cw : w;
	}
	return w;
}

enum { BD_STATS = 1, BD_CATS = 2, BD_CNTS = 4 };

/* One row of the stage table, with the column groups in parts. */
static void text_stage_row(FILE *f, const struct lp_breakdown *b, size_t nw, unsigned parts,
			   const char *name, int64_t count, const struct lp_dist *st, double share,
			   const int64_t *cat_ns, int64_t total, const struct lp_breakdown_cnt *cnt)
{
	lp_txt_pad(f, name, nw, 0);
	if (parts & BD_STATS) {
		fprintf(f, " %8" PRId64 " ", count);
		text_stat_cells(f, st);
		fprintf(f, " %6.1f%%", 100.0 * share);
	}
	for (int k = 0; (parts & BD_CATS) && k < b->ncat; k++)
		if (cat_shown(b, k))
			fprintf(f, "  %9.1f%%", pct(cat_ns[k], total));
	if (parts & BD_CNTS)
		text_cnt_cells(f, b, cnt);
	fputc('\n', f);
}

static void text_stage_table(FILE *f, const struct lp_breakdown *b, size_t nw, unsigned parts)
{
	lp_txt_pad(f, "stage", nw, 0);
	if (parts & BD_STATS)
		fprintf(f, " %8s %9s %9s %9s %9s %9s %7s", "count", "mean", "p50", "p90", "p99",
			"max", "share");
	for (int k = 0; (parts & BD_CATS) && k < b->ncat; k++) {
		if (!cat_shown(b, k))
			continue;
		fputs("  ", f);
		lp_txt_pad(f, b->cat_label[k], 10, 1);
	}
	if (parts & BD_CNTS)
		text_cnt_header(f, b);
	fputc('\n', f);
	double share = 0;
	for (size_t i = 0; i < b->nstages; i++) {
		const struct lp_breakdown_stage *s = &b->stages[i];
		char q[512];
		qual_name(q, sizeof(q), s->domain, s->name);
		text_stage_row(f, b, nw, parts, q, s->instances, &s->st, s->share, s->cat_ns,
			       s->st.total, &s->cnt);
		share += s->share;
	}
	int64_t rt = 0;
	for (int k = 0; k < b->ncat; k++)
		rt += b->req_cat_ns[k];
	text_stage_row(f, b, nw, parts, "(whole request)", b->req.n, &b->req, share, b->req_cat_ns,
		       rt, &b->req_cnt);
}

/* One table when it fits the terminal; else the statistics, the categories
 * and the counters each in a table of their own (the last two together when
 * they fit), the stage names repeated. */
static void text_stages(FILE *f, const struct lp_breakdown *b)
{
	size_t nw = stage_name_w(b), wstats = 9 + 5 * 10 + 8, wcats = 0, wcnts = 0;
	size_t width = (size_t)lp_txt_width(f);
	for (int k = 0; k < b->ncat; k++)
		wcats += cat_shown(b, k) ? 12 : 0;
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++)
		wcnts += cnt_shown(b, k) ? 12 : 0;
	if (nw + wstats + wcats + wcnts <= width) {
		text_stage_table(f, b, nw, BD_STATS | BD_CATS | BD_CNTS);
	} else if (nw + wstats + wcats <= width) {
		text_stage_table(f, b, nw, BD_STATS | BD_CATS);
		fputc('\n', f);
		text_stage_table(f, b, nw, BD_CNTS);
	} else {
		text_stage_table(f, b, nw, BD_STATS);
		fputc('\n', f);
		if (nw + wcats + wcnts <= width) {
			text_stage_table(f, b, nw, BD_CATS | BD_CNTS);
		} else {
			text_stage_table(f, b, nw, BD_CATS);
			if (wcnts) {
				fputc('\n', f);
				text_stage_table(f, b, nw, BD_CNTS);
			}
		}
	}
	fputs("Times are per request (a stage's instances in one request add up); count is\n"
	      "ranges; share is of all request time; the category columns split each stage's\n"
	      "own time: recorded waits and blocking calls first, then the rest as on-CPU\n"
	      "(task-clock) and preempted (runnable, waiting for a CPU); 'cpu or preempted'\n"
	      "where task-clock was not counted.\n",
	      f);
	text_hidden_cats(f, b);
	text_cnt_notes(f, b);
	if (b->stages_overlap)
		fputs("note: some stages overlap inside a request, so shares add up to more than "
		      "100%.\n",
		      f);
}

static void text_cs(FILE *f, double tail, double mid)
{
	if (!isnan(tail) && !isnan(mid))
		fprintf(f, ", %.1f context switches per request against %.1f", tail, mid);
}

/* Running or descheduled: what the on-CPU share says about cpu growth. */
static void text_tail_counters(FILE *f, const struct lp_breakdown_tail *t)
{
	char x[32], y[32];
	if (!t->has_cnt)
		return;
	if (t->descheduled) {
		fprintf(
		    f,
		    "  It was descheduled, not running: on a CPU %.0f%% of its time in the tail "
		    "against %.0f%% around the median; off-CPU %s -> %s per request (preempted "
		    "or waiting for a CPU",
		    100.0 * t->oncpu_tail, 100.0 * t->oncpu_mid,
		    lp_txt_ns(t->offcpu_mid_ns, x, sizeof(x)),
		    lp_txt_ns(t->offcpu_tail_ns, y, sizeof(y)));
		text_cs(f, t->cs_tail, t->cs_mid);
		fputs("; see findings cpu-starved and cpu-interference).\n", f);
		return;
	}
	fprintf(f, "  On a CPU %.0f%% of its time in the tail against %.0f%% around the median",
		100.0 * t->oncpu_tail, 100.0 * t->oncpu_mid);
	text_cs(f, t->cs_tail, t->cs_mid);
	fputs(".\n", f);
}

static void text_tail(FILE *f, const struct lp_breakdown *b)
{
	const struct lp_breakdown_tail *t = &b->tail;
	char x[32], y[32], z[32], q[512];
	fputs("\nTail: ", f);
	if (!t->valid) {
		fprintf(f,
			"too few requests to compare the tail with the median (%" PRId64
			", need 20).\n",
			b->req.n);
		return;
	}
	fprintf(
	    f, "%" PRId64 " request%s >= p99 (%s) against %" PRId64 " around the median (p40-p60, ",
	    t->n_tail, t->n_tail == 1 ? "" : "s", lp_txt_ns((double)t->p99_ns, x, sizeof(x)),
	    t->n_mid);
	fprintf(f, "%s to %s).\n", lp_txt_ns((double)t->p40_ns, y, sizeof(y)),
		lp_txt_ns((double)t->p60_ns, z, sizeof(z)));
	if (t->stage < 0) {
		fputs("  No stage takes longer in the tail than around the median.\n", f);
		return;
	}
	const struct lp_breakdown_stage *s = &b->stages[t->stage];
	qual_name(q, sizeof(q), s->domain, s->name);
	char cell[1024];
	lp_txt_cell(cell, sizeof(cell), q, 200);
	fprintf(f, "  Stage '%s' grows most: %s -> %s per request (+%s", cell,
		lp_txt_ns(t->stage_mid_ns, x, sizeof(x)), lp_txt_ns(t->stage_tail_ns, y, sizeof(y)),
		lp_txt_ns(t->stage_tail_ns - t->stage_mid_ns, z, sizeof(z)));
	if (t->stage_mid_ns > 0)
		fprintf(f, ", %.1fx", t->stage_tail_ns / t->stage_mid_ns);
	fputs(").\n", f);
	if (t->cat < 0)
		return;
	double grow = t->stage_tail_ns - t->stage_mid_ns;
	fprintf(f, "  Inside it, %s explains +%s (%s -> %s, %.0f%% of the growth).\n",
		b->cat_label[t->cat], lp_txt_ns(t->cat_tail_ns - t->cat_mid_ns, x, sizeof(x)),
		lp_txt_ns(t->cat_mid_ns, y, sizeof(y)), lp_txt_ns(t->cat_tail_ns, z, sizeof(z)),
		grow > 0 ? 100.0 * (t->cat_tail_ns - t->cat_mid_ns) / grow : 0);
	text_tail_counters(f, t);
	if (t->has_key) {
		lp_txt_cell(cell, sizeof(cell), t->key_name, 200);
		fprintf(
		    f, "  Top %s by added %s: '%s' (%s id %" PRId64 "): %s -> %s per request.\n",
		    t->key_site ? "call site" : "lock", t->key_site ? "time" : "wait", cell,
		    t->key_site ? "stack" : "lock", t->key, lp_txt_ns(t->key_mid_ns, x, sizeof(x)),
		    lp_txt_ns(t->key_tail_ns, y, sizeof(y)));
	}
}

/* Stage columns [from, to) of the slowest requests; the first part with the
 * requests' own columns, the others keyed by range id alone. */
static void text_slowest_part(FILE *f, const struct lp_breakdown *b, size_t from, size_t to)
{
	if (from == 0)
		fprintf(f, "%10s %8s %20s %10s %9s", "range id", "tid", "start ns", "+start",
			"latency");
	else
		fprintf(f, "%10s", "range id");
	for (size_t i = from; i < to; i++) {
		char q[512];
		qual_name(q, sizeof(q), b->stages[i].domain, b->stages[i].name);
		fputc(' ', f);
		lp_txt_pad(f, q, 14, 1);
	}
	fputc('\n', f);
	for (size_t i = 0; i < b->nslow; i++) {
		const struct lp_breakdown_slow *s = &b->slow[i];
		char x[32];
		if (from == 0) {
			fprintf(f, "%10" PRId64 " %8" PRId64 " %20" PRId64 " ", s->range_id, s->tid,
				s->start_ns);
			snprintf(x, sizeof(x), "%.3f s", (double)s->rel_ns / 1e9);
			lp_txt_pad(f, x, 10, 1);
			fputc(' ', f);
			text_ns_cell(f, (double)s->dur_ns, 9);
		} else {
			fprintf(f, "%10" PRId64, s->range_id);
		}
		for (size_t k = from; k < to; k++) {
			fputc(' ', f);
			text_ns_cell(f, (double)s->stage_ns[k], 14);
		}
		fputc('\n', f);
	}
}

/* Each slowest request's largest wait, the site cut to the terminal. */
static void text_slowest_waits(FILE *f, const struct lp_breakdown *b, size_t width)
{
	fputs("\nTheir largest waits (the longest stretch of one wait category in each request,\n"
	      "on its thread or a stage's, as the split counts it; the call site of the wait it\n"
	      "lies in, Python's where the wait has Python frames):\n",
	      f);
	fprintf(f, "%10s %-12s %9s  %s\n", "range id", "wait", "time", "call site");
	for (size_t i = 0; i < b->nslow; i++) {
		const struct lp_breakdown_slow *s = &b->slow[i];
		char site[1024], where[1400];
		fprintf(f, "%10" PRId64 " ", s->range_id);
		if (s->wait_cat < 0) {
			fputs("(none recorded)\n", f);
			continue;
		}
		lp_txt_pad(f, b->cat_label[s->wait_cat], 12, 0);
		fputc(' ', f);
		text_ns_cell(f, (double)s->wait_ns, 9);
		if (s->wait_source)
			snprintf(where, sizeof(where), "%s  \"%s\"", s->wait_site, s->wait_source);
		else
			snprintf(where, sizeof(where), "%s", s->wait_site ? s->wait_site : "?");
		lp_txt_cell(site, sizeof(site), where, width > 35 ? width - 35 : 1);
		fprintf(f, "  %s\n", site);
	}
}

/* As many stage columns as fit the terminal in each part (at least one). */
static void text_slowest(FILE *f, const struct lp_breakdown *b)
{
	if (!b->nslow)
		return;
	fprintf(f, "\nSlowest requests (ranges.id, thread, start in CLOCK_MONOTONIC ns and from "
		   "the run's start):\n");
	size_t width = (size_t)lp_txt_width(f), from = 0;
	do {
		size_t fixed = from ? 10 : 61, n = width > fixed ? (width - fixed) / 15 : 0;
		n = n ? n : 1;
		size_t to = from + n < b->nstages ? from + n : b->nstages;
		if (from)
			fputc('\n', f);
		text_slowest_part(f, b, from, to);
		from = to;
	} while (from < b->nstages);
	text_slowest_waits(f, b, width);
}

static void text_threads(FILE *f, const struct lp_breakdown *b)
{
	fprintf(f, "%-20s %8s %10s", "thread", "tid", "time");
	for (int k = 0; k < b->ncat; k++) {
		if (!cat_shown(b, k))
			continue;
		fputs("  ", f);
		lp_txt_pad(f, b->cat_label[k], 10, 1);
	}
	fputc('\n', f);
	for (size_t i = 0; i < b->nthreads + 1; i++) {
		const struct lp_breakdown_thread *t = i < b->nthreads ? &b->threads[i] : NULL;
		lp_txt_pad(f, t ? (t->name && *t->name ? t->name : "-") : "all threads", 20, 0);
		if (t)
			fprintf(f, " %8" PRId64 " ", t->tid);
		else
			fprintf(f, " %8s ", "");
		int64_t tot = t ? t->total_ns : b->run_thread_ns;
		const int64_t *cat = t ? t->cat_ns : b->run_cat_ns;
		text_ns_cell(f, (double)tot, 10);
		for (int k = 0; k < b->ncat; k++)
			if (cat_shown(b, k))
				fprintf(f, "  %9.1f%%", pct(cat[k], tot));
		fputc('\n', f);
	}
	text_hidden_cats(f, b);
}

void lp_breakdown_write_text(FILE *f, const struct lp_breakdown *b)
{
	if (!b->has_ranges) {
		fputs("No NVTX ranges in this run, so no requests or stages (mark them: C "
		      "nvtxRangePushA/nvtxRangePop, C++ nvtx3::scoped_range, Python nvtx.annotate; "
		      "README, Getting started); the whole run by category:\n",
		      f);
		text_threads(f, b);
		return;
	}
	char q[512], cell[1024];
	qual_name(q, sizeof(q), b->req_domain, b->req_name);
	lp_txt_cell(cell, sizeof(cell), q, 200);
	fprintf(f,
		"Requests: %" PRId64
		" instance%s of range '%s'%s; stages: ranges %d level%s below\n",
		b->req.n, b->req.n == 1 ? "" : "s", cell,
		b->req_explicit ? " (--request)" : " (most frequent outermost range)",
		b->stage_depth, b->stage_depth == 1 ? "" : "s");
	if (b->nroots) {
		fputs("Other outermost ranges (use --request NAME):", f);
		for (size_t i = 0; i < b->nroots && i < 8; i++) {
			qual_name(q, sizeof(q), b->roots[i].domain, b->roots[i].name);
			lp_txt_cell(cell, sizeof(cell), q, 60);
			fprintf(f, " %s (%" PRId64 ")%s", cell, b->roots[i].count,
				i + 1 < b->nroots && i < 7 ? "," : "");
		}
		fputs(b->nroots > 8 ? " ...\n" : "\n", f);
	}
	if (b->req_open_skipped)
		fprintf(
		    f, "Left out: %" PRId64 " request range%s still open when the process ended.\n",
		    b->req_open_skipped, b->req_open_skipped == 1 ? "" : "s");
	fputc('\n', f);
	text_stages(f, b);
	text_tail(f, b);
	text_slowest(f, b);
}

/* ---- JSON ------------------------------------------------------------- */

static void json_stat(FILE *f, const struct lp_dist *s)
{
	fprintf(f,
		"{\"n\": %" PRId64 ", \"total_ns\": %" PRId64
		", \"mean_ns\": %.1f, \"p50_ns\": %" PRId64 ", \"p90_ns\": %" PRId64
		", \"p99_ns\": %" PRId64 ", \"max_ns\": %" PRId64 "}",
		s->n, s->total, s->mean, s->p50, s->p90, s->p99, s->max);
}

static void json_cats(FILE *f, const struct lp_breakdown *b, const int64_t *cat)
{
	fputc('{', f);
	for (int k = 0; k < b->ncat; k++) {
		fprintf(f, "%s", k ? ", " : "");
		lp_json_str(f, b->cat_name[k]);
		fprintf(f, ": %" PRId64, cat[k]);
	}
	fputc('}', f);
}

static void json_num_or_null(FILE *f, double v)
{
	if (isnan(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

/* A row's counters: every null value has its reason in "reasons". */
static void json_cnt(FILE *f, const struct lp_breakdown *b, const struct lp_breakdown_cnt *c)
{
	fprintf(f,
		", \"counters\": {\"ranges\": %" PRId64 ", \"requests\": %" PRId64
		", \"wall_ns\": %" PRId64 ", \"scaled\": %s",
		c->ranges, c->requests, c->wall_ns, c->scaled ? "true" : "false");
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++) {
		fprintf(f, ", \"%s\": ", b->cnt_name[k]);
		json_num_or_null(f, c->v[k]);
	}
	fputs(", \"reasons\": {", f);
	int n = 0;
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++) {
		if (!isnan(c->v[k]))
			continue;
		fprintf(f, "%s\"%s\": ", n++ ? ", " : "", b->cnt_name[k]);
		lp_json_str(f, b->cnt_reason[k] ? b->cnt_reason[k]
			       : c->why		? c->why
						: "its events were not counted in these ranges");
	}
	fputs("}}", f);
}

static void json_cnt_columns(FILE *f, const struct lp_breakdown *b)
{
	if (!b->has_counters) {
		fputs("null", f);
		return;
	}
	fputc('[', f);
	for (int k = 0; k < LP_BREAKDOWN_NCNT; k++) {
		fprintf(f, "%s{\"name\": \"%s\", \"label\": ", k ? ", " : "", b->cnt_name[k]);
		lp_json_str(f, b->cnt_label[k]);
		fprintf(f, ", \"recorded\": %s, \"available\": %s, \"reason\": ",
			b->cnt_recorded[k] ? "true" : "false", b->cnt_reason[k] ? "false" : "true");
		lp_json_str(f, b->cnt_reason[k]); /* NULL prints null */
		fputc('}', f);
	}
	fputc(']', f);
}

static void json_tail_cnt(FILE *f, const struct lp_breakdown_tail *t)
{
	fputs(",\n    \"counters\": ", f);
	if (!t->has_cnt) {
		fputs("null", f);
		return;
	}
	fprintf(f,
		"{\"on_cpu_share_tail\": %.6g, \"on_cpu_share_median\": %.6g, "
		"\"off_cpu_tail_ns\": %.1f, \"off_cpu_median_ns\": %.1f, "
		"\"context_switches_tail\": ",
		t->oncpu_tail, t->oncpu_mid, t->offcpu_tail_ns, t->offcpu_mid_ns);
	json_num_or_null(f, t->cs_tail);
	fputs(", \"context_switches_median\": ", f);
	json_num_or_null(f, t->cs_mid);
	fprintf(f, ", \"descheduled\": %s}", t->descheduled ? "true" : "false");
}

static void json_tail(FILE *f, const struct lp_breakdown *b)
{
	const struct lp_breakdown_tail *t = &b->tail;
	if (!b->has_ranges || !t->valid) {
		fputs("null", f);
		return;
	}
	fprintf(f,
		"{\"tail_requests\": %" PRId64 ", \"median_requests\": %" PRId64
		", \"p40_ns\": %" PRId64 ", \"p60_ns\": %" PRId64 ", \"p99_ns\": %" PRId64
		",\n    \"stage\": ",
		t->n_tail, t->n_mid, t->p40_ns, t->p60_ns, t->p99_ns);
	if (t->stage < 0) {
		fputs("null, \"category\": null, \"counters\": null, \"lock\": null}", f);
		return;
	}
	const struct lp_breakdown_stage *s = &b->stages[t->stage];
	fprintf(f, "{\"index\": %d, \"domain\": ", t->stage);
	lp_json_str(f, s->domain);
	fputs(", \"name\": ", f);
	lp_json_str(f, s->name);
	fprintf(f,
		", \"tail_mean_ns\": %.1f, \"median_mean_ns\": %.1f, \"growth_ns\": %.1f, "
		"\"ratio\": ",
		t->stage_tail_ns, t->stage_mid_ns, t->stage_tail_ns - t->stage_mid_ns);
	if (t->stage_mid_ns > 0)
		fprintf(f, "%.3f}", t->stage_tail_ns / t->stage_mid_ns);
	else
		fputs("null}", f);
	fputs(",\n    \"category\": ", f);
	if (t->cat < 0) {
		fputs("null", f);
	} else {
		fputs("{\"name\": ", f);
		lp_json_str(f, b->cat_name[t->cat]);
		fprintf(f,
			", \"tail_mean_ns\": %.1f, \"median_mean_ns\": %.1f, \"growth_ns\": %.1f}",
			t->cat_tail_ns, t->cat_mid_ns, t->cat_tail_ns - t->cat_mid_ns);
	}
	json_tail_cnt(f, t);
	/* a lock (lock_wait) or a blocking call site (sleep, I/O, ...): one of the two */
	for (int site = 0; site < 2; site++) {
		fputs(site ? ",\n    \"site\": " : ",\n    \"lock\": ", f);
		if (!t->has_key || t->key_site != site) {
			fputs("null", f);
			continue;
		}
		fprintf(f, "{\"%s\": %" PRId64 ", \"name\": ", site ? "stack_id" : "id", t->key);
		lp_json_str(f, t->key_name);
		fprintf(f, ", \"tail_mean_ns\": %.1f, \"median_mean_ns\": %.1f}", t->key_tail_ns,
			t->key_mid_ns);
	}
	fputs("}", f);
}

static void json_threads(FILE *f, const struct lp_breakdown *b)
{
	fputs("[", f);
	for (size_t i = 0; i < b->nthreads; i++) {
		const struct lp_breakdown_thread *t = &b->threads[i];
		fprintf(f, "%s\n    {\"thread_id\": %" PRId64 ", \"tid\": %" PRId64 ", \"name\": ",
			i ? "," : "", t->thread_id, t->tid);
		lp_json_str(f, t->name);
		fprintf(f, ", \"time_ns\": %" PRId64, t->total_ns);
		if (t->cpu_ns >= 0)
			fprintf(f, ", \"cpu_ns\": %" PRId64, t->cpu_ns);
		else
			fputs(", \"cpu_ns\": null", f);
		fputs(", \"categories\": ", f);
		json_cats(f, b, t->cat_ns);
		fputc('}', f);
	}
	fputs(b->nthreads ? "\n  ]" : "]", f);
}

/* A slowest request's largest wait, or null. */
static void json_slow_wait(FILE *f, const struct lp_breakdown *b, const struct lp_breakdown_slow *s)
{
	if (s->wait_cat < 0) {
		fputs("null", f);
		return;
	}
	fputs("{\"category\": ", f);
	lp_json_str(f, b->cat_name[s->wait_cat]);
	fprintf(f,
		", \"wait_ns\": %" PRId64 ", \"thread_id\": %" PRId64 ", \"start_ns\": %" PRId64
		", \"site\": ",
		s->wait_ns, s->wait_thread_id, s->wait_start_ns);
	lp_json_str(f, s->wait_site);
	fprintf(f, ", \"python\": %s, \"source\": ", s->wait_python ? "true" : "false");
	lp_json_str(f, s->wait_source);
	fputc('}', f);
}

void lp_breakdown_write_json_members(FILE *f, const struct lp_breakdown *b)
{
	fprintf(f,
		"\"has_ranges\": %s,\n  \"run\": {\"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
		", \"thread_time_ns\": %" PRId64 ", \"categories\": ",
		b->has_ranges ? "true" : "false", b->run_start_ns, b->run_end_ns, b->run_thread_ns);
	json_cats(f, b, b->run_cat_ns);
	fputs("},\n  \"categories\": [", f);
	for (int k = 0; k < b->ncat; k++) {
		fprintf(f, "%s{\"name\": ", k ? ", " : "");
		lp_json_str(f, b->cat_name[k]);
		fputs(", \"label\": ", f);
		lp_json_str(f, b->cat_label[k]);
		fputc('}', f);
	}
	fputs("],\n  \"counter_columns\": ", f);
	json_cnt_columns(f, b);
	fputs(",\n  \"request\": ", f);
	if (!b->has_ranges) {
		fputs("null", f);
	} else {
		fputs("{\"domain\": ", f);
		lp_json_str(f, b->req_domain);
		fputs(", \"name\": ", f);
		lp_json_str(f, b->req_name);
		fprintf(
		    f,
		    ", \"explicit\": %s, \"stage_depth\": %d, \"open_at_exit_skipped\": %" PRId64
		    ", \"stats\": ",
		    b->req_explicit ? "true" : "false", b->stage_depth, b->req_open_skipped);
		json_stat(f, &b->req);
		fputs(", \"categories\": ", f);
		json_cats(f, b, b->req_cat_ns);
		if (b->has_counters)
			json_cnt(f, b, &b->req_cnt);
		fputc('}', f);
	}
	fputs(",\n  \"other_outermost\": [", f);
	for (size_t i = 0; i < b->nroots; i++) {
		fprintf(f, "%s{\"domain\": ", i ? ", " : "");
		lp_json_str(f, b->roots[i].domain);
		fputs(", \"name\": ", f);
		lp_json_str(f, b->roots[i].name);
		fprintf(f, ", \"count\": %" PRId64 "}", b->roots[i].count);
	}
	fprintf(f, "],\n  \"stages_overlap\": %s,\n  \"stages\": [",
		b->stages_overlap ? "true" : "false");
	for (size_t i = 0; i < b->nstages; i++) {
		const struct lp_breakdown_stage *s = &b->stages[i];
		fprintf(f, "%s\n    {\"domain\": ", i ? "," : "");
		lp_json_str(f, s->domain);
		fputs(", \"name\": ", f);
		lp_json_str(f, s->name);
		fprintf(f,
			", \"unattributed\": %s, \"instances\": %" PRId64
			", \"share\": %.8f,\n     "
			"\"stats\": ",
			s->unattributed ? "true" : "false", s->instances, s->share);
		json_stat(f, &s->st);
		fputs(", \"categories\": ", f);
		json_cats(f, b, s->cat_ns);
		if (b->has_counters)
			json_cnt(f, b, &s->cnt);
		fputc('}', f);
	}
	fputs(b->nstages ? "\n  ],\n  \"tail\": " : "],\n  \"tail\": ", f);
	json_tail(f, b);
	fputs(",\n  \"slowest\": [", f);
	for (size_t i = 0; i < b->nslow; i++) {
		const struct lp_breakdown_slow *s = &b->slow[i];
		fprintf(f,
			"%s\n    {\"range_id\": %" PRId64 ", \"thread_id\": %" PRId64
			", \"tid\": %" PRId64 ", \"start_ns\": %" PRId64
			", \"since_run_start_ns\": %" PRId64 ", \"latency_ns\": %" PRId64
			", \"stage_ns\": [",
			i ? "," : "", s->range_id, s->thread_id, s->tid, s->start_ns, s->rel_ns,
			s->dur_ns);
		for (size_t k = 0; k < b->nstages; k++)
			fprintf(f, "%s%" PRId64, k ? ", " : "", s->stage_ns[k]);
		fputs("],\n     \"largest_wait\": ", f);
		json_slow_wait(f, b, s);
		fputc('}', f);
	}
	fputs(b->nslow ? "\n  ],\n  \"threads\": " : "],\n  \"threads\": ", f);
	json_threads(f, b);
}

void lp_breakdown_write_json(FILE *f, const struct lp_breakdown *b)
{
	lp_view_json_open(f, "breakdown", 1);
	lp_breakdown_write_json_members(f, b);
	fputs("\n}\n", f);
}

/* ---- CSV -------------------------------------------------------------- */

/* Readers take CSV columns by position: the categories added since the
 * column list was first published (idle and join waits) come last in each
 * row, after the counters, so the older columns keep their places. */
static int csv_late(const struct lp_breakdown *b, int k)
{
	return !strcmp(b->cat_name[k], "idle_wait") || !strcmp(b->cat_name[k], "join_wait");
}

static void csv_cat_names(FILE *f, const struct lp_breakdown *b, int late)
{
	for (int k = 0; k < b->ncat; k++)
		if (csv_late(b, k) == late)
			fprintf(f, ",%s_ns", b->cat_name[k]);
}

static void csv_cat_values(FILE *f, const struct lp_breakdown *b, const int64_t *ns, int late)
{
	for (int k = 0; k < b->ncat; k++)
		if (csv_late(b, k) == late)
			fprintf(f, ",%" PRId64, ns[k]);
}

void lp_breakdown_write_csv(FILE *f, const struct lp_breakdown *b)
{
	if (!b->has_ranges) {
		fputs("thread_id,tid,name,time_ns", f);
		csv_cat_names(f, b, 0);
		csv_cat_names(f, b, 1);
		fputc('\n', f);
		for (size_t i = 0; i < b->nthreads; i++) {
			const struct lp_breakdown_thread *t = &b->threads[i];
			fprintf(f, "%" PRId64 ",%" PRId64 ",", t->thread_id, t->tid);
			lp_csv_str(f, t->name);
			fprintf(f, ",%" PRId64, t->total_ns);
			csv_cat_values(f, b, t->cat_ns, 0);
			csv_cat_values(f, b, t->cat_ns, 1);
			fputc('\n', f);
		}
		return;
	}
	fputs("domain,stage,unattributed,instances,requests,total_ns,mean_ns,p50_ns,p90_ns,p99_ns,"
	      "max_ns,share",
	      f);
	csv_cat_names(f, b, 0);
	for (int k = 0; b->has_counters && k < LP_BREAKDOWN_NCNT; k++)
		fprintf(f, ",%s", b->cnt_name[k]);
	csv_cat_names(f, b, 1);
	fputc('\n', f);
	for (size_t i = 0; i < b->nstages; i++) {
		const struct lp_breakdown_stage *s = &b->stages[i];
		lp_csv_str(f, s->domain);
		fputc(',', f);
		lp_csv_str(f, s->name);
		fprintf(f,
			",%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.1f,%" PRId64 ",%" PRId64
			",%" PRId64 ",%" PRId64 ",%.6f",
			s->unattributed, s->instances, s->st.n, s->st.total, s->st.mean, s->st.p50,
			s->st.p90, s->st.p99, s->st.max, s->share);
		csv_cat_values(f, b, s->cat_ns, 0);
		/* unknown counters are empty cells, never 0 */
		for (int k = 0; b->has_counters && k < LP_BREAKDOWN_NCNT; k++)
			if (isnan(s->cnt.v[k]))
				fputc(',', f);
			else
				fprintf(f, ",%.6g", s->cnt.v[k]);
		csv_cat_values(f, b, s->cat_ns, 1);
		fputc('\n', f);
	}
}

/* ---- --ranges --------------------------------------------------------- */

void lp_range_stats_write_text(FILE *f, const struct lp_range_stats *s)
{
	if (!s->has_ranges) {
		fputs("No NVTX ranges in this run.\n", f);
		return;
	}
	size_t dw = 6, nw = 5;
	for (size_t i = 0; i < s->n; i++) {
		char cell[1024];
		size_t w = lp_txt_cell(cell, sizeof(cell), s->v[i].domain, 24);
		dw = w > dw ? w : dw;
		w = lp_txt_cell(cell, sizeof(cell), s->v[i].name, LP_BREAKDOWN_NAME_W);
		nw = w > nw ? w : nw;
	}
	lp_txt_pad(f, "domain", dw, 0);
	fputc(' ', f);
	lp_txt_pad(f, "range", nw, 0);
	fprintf(f, " %9s %10s %9s %9s %9s %9s %9s\n", "count", "total", "mean", "p50", "p90", "p99",
		"max");
	for (size_t i = 0; i < s->n; i++) {
		const struct lp_range_stat *r = &s->v[i];
		lp_txt_pad(f, *r->domain ? r->domain : "-", dw, 0);
		fputc(' ', f);
		lp_txt_pad(f, r->name, nw, 0);
		fprintf(f, " %9" PRId64 " ", r->st.n);
		text_ns_cell(f, (double)r->st.total, 10);
		fputc(' ', f);
		text_ns_cell(f, r->st.mean, 9);
		fputc(' ', f);
		text_ns_cell(f, (double)r->st.p50, 9);
		fputc(' ', f);
		text_ns_cell(f, (double)r->st.p90, 9);
		fputc(' ', f);
		text_ns_cell(f, (double)r->st.p99, 9);
		fputc(' ', f);
		text_ns_cell(f, (double)r->st.max, 9);
		fputc('\n', f);
	}
}

void lp_range_stats_write_json(FILE *f, const struct lp_range_stats *s)
{
	lp_view_json_open(f, "ranges", 1);
	fprintf(f, "\"has_ranges\": %s,\n  \"ranges\": [", s->has_ranges ? "true" : "false");
	for (size_t i = 0; i < s->n; i++) {
		fprintf(f, "%s\n    {\"domain\": ", i ? "," : "");
		lp_json_str(f, s->v[i].domain);
		fputs(", \"name\": ", f);
		lp_json_str(f, s->v[i].name);
		fputs(", \"stats\": ", f);
		json_stat(f, &s->v[i].st);
		fputc('}', f);
	}
	fputs(s->n ? "\n  ]\n}\n" : "]\n}\n", f);
}

void lp_range_stats_write_csv(FILE *f, const struct lp_range_stats *s)
{
	fputs("domain,name,count,total_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns\n", f);
	for (size_t i = 0; i < s->n; i++) {
		const struct lp_range_stat *r = &s->v[i];
		lp_csv_str(f, r->domain);
		fputc(',', f);
		lp_csv_str(f, r->name);
		fprintf(f,
			",%" PRId64 ",%" PRId64 ",%.1f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
			"\n",
			r->st.n, r->st.total, r->st.mean, r->st.p50, r->st.p90, r->st.p99,
			r->st.max);
	}
}
