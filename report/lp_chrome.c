/* SPDX-License-Identifier: MIT */
#include "lp_chrome.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lp_out.h"

static const char *const lp_ev_cat[LP_EV_NKINDS] = {
    [LP_EV_RANGE] = "nvtx",    [LP_EV_LOCK] = "lock_wait", [LP_EV_COND] = "cond_wait",
    [LP_EV_API] = "cuda_api",  [LP_EV_KERNEL] = "kernel",  [LP_EV_MEMCPY] = "memcpy",
    [LP_EV_MEMSET] = "memset",
};

static const char *const lp_ev_detail_key[LP_EV_NKINDS] = {
    [LP_EV_RANGE] = "domain",  [LP_EV_LOCK] = "kind",	  [LP_EV_COND] = "cond",
    [LP_EV_API] = "api",       [LP_EV_KERNEL] = "detail", [LP_EV_MEMCPY] = "detail",
    [LP_EV_MEMSET] = "detail",
};

/* µs with ns precision: "-0.001", "12.345". */
static void chrome_us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	fprintf(f, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		(unsigned long long)(a % 1000));
}

static const struct lp_tr_event *lp_sort_ev; /* qsort context */

/* Per track, by start; the longer first so that parents precede children. */
static int ev_cmp(const void *pa, const void *pb)
{
	const struct lp_tr_event *a = &lp_sort_ev[*(const size_t *)pa];
	const struct lp_tr_event *b = &lp_sort_ev[*(const size_t *)pb];
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* GPU work by (process, correlation) for the flow arrows. */
static int corr_cmp(const void *pa, const void *pb)
{
	const struct lp_tr_event *a = &lp_sort_ev[*(const size_t *)pa];
	const struct lp_tr_event *b = &lp_sort_ev[*(const size_t *)pb];
	if (a->process_id != b->process_id)
		return a->process_id < b->process_id ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static void ev_common(FILE *f, const struct lp_trace *t, const struct lp_tr_event *e,
		      const char *ph, int64_t ts)
{
	fprintf(f, "{\"ph\":\"%s\",\"cat\":\"%s\",\"name\":", ph, lp_ev_cat[e->kind]);
	lp_json_str(f, e->name);
	fprintf(f, ",\"pid\":%d,\"tid\":%lld,\"ts\":", e->pid, (long long)e->tid);
	chrome_us(f, ts - t->base_ns);
}

static void ev_args(FILE *f, const struct lp_tr_event *e)
{
	fprintf(f, ",\"args\":{\"id\":%lld", (long long)e->id);
	if (e->detail) {
		fprintf(f, ",\"%s\":", lp_ev_detail_key[e->kind]);
		lp_json_str(f, e->detail);
	}
	if (e->corr)
		fprintf(f, ",\"correlation\":%lld", (long long)e->corr);
	fputc('}', f);
}

static void write_x(FILE *f, const struct lp_trace *t, const struct lp_tr_event *e)
{
	fputs(",\n", f);
	ev_common(f, t, e, "X", e->start_ns);
	fputs(",\"dur\":", f);
	chrome_us(f, e->end_ns - e->start_ns);
	ev_args(f, e);
	fputc('}', f);
}

/* An async pair on the process's track for cat+id (Perfetto: one async
 * track per (pid, cat, name) with nesting by id). */
static void write_async(FILE *f, const struct lp_trace *t, const struct lp_tr_event *e)
{
	unsigned long long id = ((unsigned long long)e->kind << 48) | (unsigned long long)e->id;
	fputs(",\n", f);
	ev_common(f, t, e, "b", e->start_ns);
	fprintf(f, ",\"id\":\"0x%llx\"", id);
	ev_args(f, e);
	fputs("},\n", f);
	ev_common(f, t, e, "e", e->end_ns);
	fprintf(f, ",\"id\":\"0x%llx\"}", id);
}

static void write_meta(FILE *f, const struct lp_trace *t)
{
	int first = 1;
	for (size_t i = 0; i < t->ntracks; i++) {
		const struct lp_tr_track *k = &t->tracks[i];
		const char *what = k->is_process ? "process" : "thread";
		fprintf(f,
			"%s{\"ph\":\"M\",\"name\":\"%s_name\",\"pid\":%d,\"tid\":%lld,"
			"\"args\":{\"name\":",
			first ? "" : ",\n", what, k->pid, (long long)k->tid);
		lp_json_str(f, k->name);
		fprintf(f,
			"}},\n{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%d,\"tid\":%lld,"
			"\"args\":{\"sort_index\":%d}}",
			what, k->pid, (long long)k->tid, k->sort);
		first = 0;
	}
	if (first) /* no tracks: keep the array's commas simple */
		fputs("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
		      "\"args\":{\"name\":\"latprof\"}}",
		      f);
}

/* Marks emitted[] for slices written as X; returns -ENOMEM. */
static int write_slices(FILE *f, const struct lp_trace *t, size_t *ord, uint8_t *asx,
			struct lp_chrome_stats *st)
{
	int64_t *stack = malloc((t->nev + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	size_t depth = 0;
	for (size_t k = 0; k < t->nev; k++) {
		const struct lp_tr_event *e = &t->ev[ord[k]];
		const struct lp_tr_event *p = k ? &t->ev[ord[k - 1]] : NULL;
		if (!p || p->pid != e->pid || p->tid != e->tid)
			depth = 0;
		/* a zero-length slice at its parent's end still nests in it */
		while (depth && (stack[depth - 1] < e->start_ns ||
				 (stack[depth - 1] == e->start_ns && e->end_ns > e->start_ns)))
			depth--;
		if (e->cross_thread || (depth && e->end_ns > stack[depth - 1])) {
			write_async(f, t, e);
			st->async_slices++;
			continue;
		}
		stack[depth++] = e->end_ns;
		asx[ord[k]] = 1;
		write_x(f, t, e);
		st->slices++;
	}
	free(stack);
	return 0;
}

/* s at the API call's start (binds to the call), f with bp "e" at the GPU
 * slice's start (binds to the enclosing slice: the kernel itself). */
static int write_flows(FILE *f, const struct lp_trace *t, const uint8_t *asx,
		       struct lp_chrome_stats *st)
{
	size_t ng = 0;
	size_t *g = malloc((t->nev + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (size_t i = 0; i < t->nev; i++)
		if (t->ev[i].kind >= LP_EV_KERNEL && asx[i])
			g[ng++] = i;
	qsort(g, ng, sizeof(*g), corr_cmp);
	long long id = 0;
	for (size_t i = 0; i < t->nev; i++) {
		const struct lp_tr_event *a = &t->ev[i];
		if (a->kind != LP_EV_API || !asx[i] || !a->corr)
			continue;
		size_t lo = 0, hi = ng;
		while (lo < hi) { /* first GPU event of (process, corr) */
			size_t m = (lo + hi) / 2;
			const struct lp_tr_event *x = &t->ev[g[m]];
			if (x->process_id < a->process_id ||
			    (x->process_id == a->process_id && x->corr < a->corr))
				lo = m + 1;
			else
				hi = m;
		}
		for (; lo < ng; lo++) {
			const struct lp_tr_event *k = &t->ev[g[lo]];
			if (k->process_id != a->process_id || k->corr != a->corr)
				break;
			id++;
			fprintf(f,
				",\n{\"ph\":\"s\",\"cat\":\"cuda_flow\",\"name\":\"launch\","
				"\"id\":%lld,\"pid\":%d,\"tid\":%lld,\"ts\":",
				id, a->pid, (long long)a->tid);
			chrome_us(f, a->start_ns - t->base_ns);
			fprintf(f,
				"},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"cuda_flow\","
				"\"name\":\"launch\",\"id\":%lld,\"pid\":%d,\"tid\":%lld,\"ts\":",
				id, k->pid, (long long)k->tid);
			chrome_us(f, k->start_ns - t->base_ns);
			fputc('}', f);
			st->flows++;
		}
	}
	free(g);
	return 0;
}

static void write_counters(FILE *f, const struct lp_trace *t, struct lp_chrome_stats *st)
{
	for (size_t i = 0; i < t->ncounters; i++) {
		const struct lp_tr_counter *c = &t->counters[i];
		fputs(",\n{\"ph\":\"C\",\"name\":", f);
		lp_json_str(f, c->name);
		fprintf(f, ",\"pid\":%d,\"ts\":", c->pid);
		chrome_us(f, c->ts_ns - t->base_ns);
		fprintf(f, ",\"args\":{\"value\":%.17g}}", c->value);
		st->counters++;
	}
	for (size_t i = 0; i < t->nmarks; i++) {
		const struct lp_tr_event *m = &t->marks[i];
		fputs(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx_mark\",\"name\":", f);
		lp_json_str(f, m->name);
		fprintf(f, ",\"pid\":%d,\"tid\":%lld,\"ts\":", m->pid, (long long)m->tid);
		chrome_us(f, m->start_ns - t->base_ns);
		fputc('}', f);
		st->instants++;
	}
}

int lp_chrome_write(FILE *f, const struct lp_trace *t, struct lp_chrome_stats *st)
{
	memset(st, 0, sizeof(*st));
	size_t *ord = malloc((t->nev + 1) * sizeof(*ord));
	uint8_t *asx = calloc(t->nev + 1, 1);
	int rc = -ENOMEM;
	if (!ord || !asx)
		goto out;
	for (size_t i = 0; i < t->nev; i++)
		ord[i] = i;
	lp_sort_ev = t->ev;
	qsort(ord, t->nev, sizeof(*ord), ev_cmp);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"latprof\",\"base_ns\":",
	      f);
	fprintf(f, "%lld},\n\"traceEvents\":[\n", (long long)t->base_ns);
	write_meta(f, t);
	rc = write_slices(f, t, ord, asx, st);
	if (!rc)
		rc = write_flows(f, t, asx, st);
	if (!rc) {
		write_counters(f, t, st);
		fputs("\n]}\n", f);
		rc = ferror(f) ? -EIO : 0;
	}
out:
	free(ord);
	free(asx);
	return rc;
}
