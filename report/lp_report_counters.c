/* SPDX-License-Identifier: MIT */
/* Writers for `latprof report --counters`: see lp_report_counters.h. */
#include "lp_report_counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_out.h"
#include "lp_report_locks.h" /* lp_txt_ns, lp_txt_pad, lp_txt_cell */
#include "lp_view.h"

#define LP_CR_NAME_W 28

static int cr_want_ipc(const struct lp_counter_totals *r)
{
	return lp_counters_event(r, "cycles") >= 0 && lp_counters_event(r, "instructions") >= 0;
}

static size_t cr_col_w(const struct lp_cnt_event_info *e)
{
	size_t w = strlen(e->name);
	return w < 11 ? 11 : w;
}

static void cr_cell_text(FILE *f, const struct lp_counter_totals *r, size_t i,
			 const struct lp_cnt_cell *c, int per_call)
{
	const struct lp_cnt_event_info *e = &r->events[i];
	char buf[64];
	double v = per_call ? c->per_call : c->total;
	if (!e->available)
		snprintf(buf, sizeof(buf), "unavailable");
	else if (!c->has)
		snprintf(buf, sizeof(buf), "-");
	else if (e->is_time)
		lp_txt_ns(v, buf, sizeof(buf));
	else if (per_call)
		snprintf(buf, sizeof(buf), "%.2f", v);
	else
		snprintf(buf, sizeof(buf), "%.0f", v);
	if (c->has && c->scaled)
		strncat(buf, "*", sizeof(buf) - strlen(buf) - 1);
	fputs("  ", f);
	lp_txt_pad(f, buf, cr_col_w(e), 1);
}

static void cr_ipc_text(FILE *f, const struct lp_counter_totals *r, int has, double ipc)
{
	char buf[32];
	if (!cr_want_ipc(r))
		return;
	if (has)
		snprintf(buf, sizeof(buf), "%.2f", ipc);
	else
		snprintf(buf, sizeof(buf), "%s", r->ipc_reason ? "unavailable" : "-");
	fputs("  ", f);
	lp_txt_pad(f, buf, 11, 1);
}

static void cr_header(FILE *f, const struct lp_counter_totals *r, const char *first,
		      const char *second)
{
	lp_txt_pad(f, first, LP_CR_NAME_W, 0);
	fputs("  ", f);
	lp_txt_pad(f, second, 11, 1);
	for (size_t i = 0; i < r->n_events; i++) {
		fputs("  ", f);
		lp_txt_pad(f, r->events[i].name, cr_col_w(&r->events[i]), 1);
	}
	if (cr_want_ipc(r)) {
		fputs("  ", f);
		lp_txt_pad(f, "ipc", 11, 1);
	}
	fputc('\n', f);
}

static void cr_events_text(FILE *f, const struct lp_counter_totals *r)
{
	size_t avail = 0;
	for (size_t i = 0; i < r->n_events; i++)
		avail += r->events[i].available != 0;
	fprintf(f, "CPU counters: %zu event%s counted, %zu unavailable\n", avail,
		avail == 1 ? "" : "s", r->n_events - avail);
	if (r->note) {
		char cell[1024];
		lp_txt_cell(cell, sizeof(cell), r->note, 400);
		fprintf(f, "  note: %s\n", cell);
	}
	for (size_t i = 0; i < r->n_events; i++) {
		const struct lp_cnt_event_info *e = &r->events[i];
		char name[128], why[1024];
		lp_txt_cell(name, sizeof(name), e->name, 40);
		if (e->available) {
			fprintf(f, "  %-20s counted%s\n", name,
				e->multiplexed ? " (multiplexed: * values are scaled estimates)"
					       : "");
		} else {
			lp_txt_cell(why, sizeof(why), e->reason ? e->reason : "unknown reason",
				    300);
			fprintf(f, "  %-20s unavailable (%s)\n", name, why);
		}
	}
	if (cr_want_ipc(r) && r->ipc_reason) {
		char why[1024];
		lp_txt_cell(why, sizeof(why), r->ipc_reason, 300);
		fprintf(f, "  %-20s unavailable (%s)\n", "ipc", why);
	}
}

void lp_counters_write_text(FILE *f, const struct lp_counter_totals *r)
{
	if (!r->has_counters && r->note) {
		fprintf(f, "No CPU counters: %s.\n", r->note);
		return;
	}
	if (!r->has_counters) {
		fputs("No CPU counters in this recording (recorded with --counters none, or by "
		      "a latprof without counter support).\n",
		      f);
		return;
	}
	cr_events_text(f, r);
	char cell[256];
	fputs("\nPer stage (mean per call; * = scaled after multiplexing)\n", f);
	if (!r->n_stages)
		fputs("  no NVTX ranges with counter samples\n", f);
	else
		cr_header(f, r, "stage", "calls");
	for (size_t s = 0; s < r->n_stages; s++) {
		const struct lp_cnt_stage *st = &r->stages[s];
		char calls[32];
		lp_txt_cell(cell, sizeof(cell), st->name, LP_CR_NAME_W);
		lp_txt_pad(f, cell, LP_CR_NAME_W, 0);
		snprintf(calls, sizeof(calls), "%lld", st->calls);
		fputs("  ", f);
		lp_txt_pad(f, calls, 11, 1);
		for (size_t i = 0; i < r->n_events; i++)
			cr_cell_text(f, r, i, &st->v[i], 1);
		cr_ipc_text(f, r, st->has_ipc, st->ipc);
		fputc('\n', f);
	}
	fputs("\nPer thread (totals while counted)\n", f);
	if (r->n_threads)
		cr_header(f, r, "thread", "counted");
	for (size_t t = 0; t < r->n_threads; t++) {
		const struct lp_cnt_thread *th = &r->threads[t];
		char id[320], span[32];
		char nm[256];
		lp_txt_cell(nm, sizeof(nm), th->name, 12);
		snprintf(id, sizeof(id), "%d/%d %s", th->pid, th->tid, th->name ? nm : "");
		lp_txt_cell(cell, sizeof(cell), id, LP_CR_NAME_W);
		lp_txt_pad(f, cell, LP_CR_NAME_W, 0);
		if (th->span_ns)
			lp_txt_ns((double)th->span_ns, span, sizeof(span));
		else
			snprintf(span, sizeof(span), "?");
		fputs("  ", f);
		lp_txt_pad(f, span, 11, 1);
		for (size_t i = 0; i < r->n_events; i++)
			cr_cell_text(f, r, i, &th->v[i], 0);
		cr_ipc_text(f, r, th->has_ipc, th->ipc);
		fputc('\n', f);
	}
}

/* ---- JSON ---- */

static void cr_json_cells(FILE *f, const struct lp_counter_totals *r, const struct lp_cnt_cell *v,
			  int per_call)
{
	fputs("{", f);
	for (size_t i = 0; i < r->n_events; i++) {
		fputs(i ? ", " : "", f);
		lp_json_str(f, r->events[i].name);
		if (!r->events[i].available || !v[i].has) {
			fputs(": null", f);
			continue;
		}
		fprintf(f, ": {\"total\": %.0f", v[i].total);
		if (per_call)
			fprintf(f, ", \"per_call\": %.6g", v[i].per_call);
		fprintf(f, ", \"scaled\": %s}", v[i].scaled ? "true" : "false");
	}
	fputs("}", f);
}

static void cr_json_ipc(FILE *f, int has, double ipc)
{
	if (has)
		fprintf(f, ", \"ipc\": %.4f", ipc);
	else
		fputs(", \"ipc\": null", f);
}

void lp_counters_write_json(FILE *f, const struct lp_counter_totals *r)
{
	lp_view_json_open(f, "counters", 1);
	fprintf(f, "\"has_counters\": %s,\n \"note\": ", r->has_counters ? "true" : "false");
	lp_json_str(f, r->note);
	fputs(",\n \"ipc_unavailable_reason\": ", f);
	lp_json_str(f, r->ipc_reason);
	fputs(",\n \"events\": [", f);
	for (size_t i = 0; i < r->n_events; i++) {
		const struct lp_cnt_event_info *e = &r->events[i];
		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
		lp_json_str(f, e->name);
		fprintf(f, ", \"available\": %s, \"reason\": ", e->available ? "true" : "false");
		lp_json_str(f, e->reason);
		fprintf(f, ", \"multiplexed\": %s}", e->multiplexed ? "true" : "false");
	}
	fputs("],\n \"stages\": [", f);
	for (size_t s = 0; s < r->n_stages; s++) {
		const struct lp_cnt_stage *st = &r->stages[s];
		fputs(s ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
		lp_json_str(f, st->name);
		fprintf(f, ", \"calls\": %lld, \"counters\": ", st->calls);
		cr_json_cells(f, r, st->v, 1);
		cr_json_ipc(f, st->has_ipc, st->ipc);
		fputs("}", f);
	}
	fputs("],\n \"threads\": [", f);
	for (size_t t = 0; t < r->n_threads; t++) {
		const struct lp_cnt_thread *th = &r->threads[t];
		fprintf(f, "%s  {\"pid\": %d, \"tid\": %d, \"name\": ", t ? ",\n" : "\n", th->pid,
			th->tid);
		lp_json_str(f, th->name);
		fputs(", \"source\": ", f);
		lp_json_str(f, th->source);
		fprintf(f, ", \"span_ns\": %lld, \"counters\": ", (long long)th->span_ns);
		cr_json_cells(f, r, th->v, 0);
		cr_json_ipc(f, th->has_ipc, th->ipc);
		fputs("}", f);
	}
	fputs("]}\n", f);
}

/* ---- CSV: one row per (scope, event) ---- */

static void cr_csv_rows(FILE *f, const struct lp_counter_totals *r, const char *section,
			const char *scope, long long calls, const struct lp_cnt_cell *v)
{
	for (size_t i = 0; i < r->n_events; i++) {
		const struct lp_cnt_event_info *e = &r->events[i];
		fprintf(f, "%s,", section);
		lp_csv_str(f, scope);
		fprintf(f, ",%lld,", calls);
		lp_csv_str(f, e->name);
		if (e->available && v[i].has)
			fprintf(f, ",%.0f,%.3f,%d,1,\n", v[i].total, v[i].per_call, v[i].scaled);
		else if (e->available)
			fputs(",,,,1,\n", f);
		else {
			fputs(",,,,0,", f);
			lp_csv_str(f, e->reason);
			fputc('\n', f);
		}
	}
}

void lp_counters_write_csv(FILE *f, const struct lp_counter_totals *r)
{
	fputs("section,scope,calls,event,total,per_call,scaled,available,reason\n", f);
	for (size_t s = 0; s < r->n_stages; s++)
		cr_csv_rows(f, r, "stage", r->stages[s].name, r->stages[s].calls, r->stages[s].v);
	for (size_t t = 0; t < r->n_threads; t++) {
		char scope[64];
		snprintf(scope, sizeof(scope), "%d/%d", r->threads[t].pid, r->threads[t].tid);
		cr_csv_rows(f, r, "thread", scope, 1, r->threads[t].v);
	}
}
