/* SPDX-License-Identifier: MIT */
/* CPU counters per stage and per thread: see lp_counter_totals.h. */
#define _GNU_SOURCE
#include "lp_counter_totals.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"

static int cr_sqlerr(sqlite3 *db, char *err, size_t errlen)
{
	snprintf(err, errlen, "counters: %s", sqlite3_errmsg(db));
	return -EIO;
}

int lp_counters_event(const struct lp_counter_totals *r, const char *name)
{
	for (size_t i = 0; i < r->n_events; i++)
		if (!strcmp(r->events[i].name, name))
			return (int)i;
	return -1;
}

static int cr_event_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_counter_totals *r = ctx;
	struct lp_cnt_event_info *n = realloc(r->events, (r->n_events + 1) * sizeof(*r->events));
	if (!n)
		return -ENOMEM;
	r->events = n;
	struct lp_cnt_event_info *e = &r->events[r->n_events++];
	e->name = lp_db_col_strdup(st, 0);
	e->available = sqlite3_column_int(st, 1);
	e->multiplexed = sqlite3_column_int(st, 2);
	e->reason = e->available ? NULL : lp_db_col_strdup(st, 3);
	e->is_time = e->name && (!strcmp(e->name, "task-clock") || !strcmp(e->name, "cpu-clock"));
	return 0;
}

static int cr_events(sqlite3 *db, struct lp_counter_totals *r, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	const char *sql =
	    "SELECT name, max(available), max(multiplexed), (SELECT reason FROM counter_events "
	    "e2 WHERE e2.name = e.name AND e2.available = 0 ORDER BY id LIMIT 1) "
	    "FROM counter_events e GROUP BY name ORDER BY min(idx), min(id)";
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return cr_sqlerr(db, err, errlen);
	int rc = lp_db_step_all(st, cr_event_row, r, err, errlen);
	sqlite3_finalize(st);
	if (rc)
		return rc;
	char buf[1024];
	const char *note = lp_db_meta(db, "counters_note", buf, sizeof(buf));
	r->note = note ? strdup(note) : NULL;
	return 0;
}

/* IPC from the cells of one row, when both events were counted there. */
static void cr_ipc(const struct lp_counter_totals *r, const struct lp_cnt_cell *v, int *has,
		   double *ipc)
{
	int ins = lp_counters_event(r, "instructions"), cyc = lp_counters_event(r, "cycles");
	*has = ins >= 0 && cyc >= 0 && v[ins].has && v[cyc].has && v[cyc].total > 0;
	*ipc = *has ? v[ins].total / v[cyc].total : 0;
}

static int cr_stage_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_counter_totals *r = ctx;
	const char *name = (const char *)sqlite3_column_text(st, 0);
	name = name ? name : "(unnamed)";
	int ev = lp_counters_event(r, (const char *)sqlite3_column_text(st, 1));
	if (ev < 0)
		return 0;
	struct lp_cnt_stage *s = NULL;
	for (size_t i = 0; i < r->n_stages; i++)
		if (!strcmp(r->stages[i].name, name))
			s = &r->stages[i];
	if (!s) {
		struct lp_cnt_stage *n = realloc(r->stages, (r->n_stages + 1) * sizeof(*r->stages));
		if (!n)
			return -ENOMEM;
		r->stages = n;
		s = &r->stages[r->n_stages++];
		memset(s, 0, sizeof(*s));
		s->name = strdup(name);
		s->v = calloc(r->n_events, sizeof(*s->v));
	}
	long long calls = sqlite3_column_int64(st, 2);
	if (calls > s->calls)
		s->calls = calls;
	struct lp_cnt_cell *c = &s->v[ev];
	c->has = 1;
	c->total = sqlite3_column_double(st, 3);
	c->per_call = calls ? c->total / (double)calls : 0;
	c->scaled = sqlite3_column_int(st, 4);
	return 0;
}

static int cr_stages(sqlite3 *db, struct lp_counter_totals *r, char *err, size_t errlen)
{
	if (!lp_db_has_table(db, "ranges"))
		return 0;
	sqlite3_stmt *st;
	const char *sql =
	    "SELECT s.value, e.name, count(*), sum(rc.delta), max(rc.scaled) "
	    "FROM range_counters rc JOIN ranges r ON r.id = rc.range_id "
	    "JOIN counter_events e ON e.id = rc.event_id LEFT JOIN strings s ON s.id = r.name_id "
	    "GROUP BY s.value, e.name ORDER BY min(r.start_ns), s.value";
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return cr_sqlerr(db, err, errlen);
	int rc = lp_db_step_all(st, cr_stage_row, r, err, errlen);
	sqlite3_finalize(st);
	if (rc)
		return rc;
	for (size_t i = 0; i < r->n_stages; i++)
		cr_ipc(r, r->stages[i].v, &r->stages[i].has_ipc, &r->stages[i].ipc);
	return 0;
}

struct cr_thread_load {
	struct lp_counter_totals *r;
	int64_t cur;
	struct lp_cnt_thread *t;
};

static int cr_thread_row(sqlite3_stmt *st, void *ctx)
{
	struct cr_thread_load *l = ctx;
	struct lp_counter_totals *r = l->r;
	int64_t id = sqlite3_column_int64(st, 0);
	if (!l->t || id != l->cur) {
		struct lp_cnt_thread *n =
		    realloc(r->threads, (r->n_threads + 1) * sizeof(*r->threads));
		if (!n)
			return -ENOMEM;
		r->threads = n;
		l->t = &r->threads[r->n_threads++];
		memset(l->t, 0, sizeof(*l->t));
		l->cur = id;
		l->t->pid = sqlite3_column_int(st, 1);
		l->t->tid = sqlite3_column_int(st, 2);
		l->t->name = lp_db_col_strdup(st, 3);
		l->t->source = lp_db_col_strdup(st, 4);
		if (sqlite3_column_type(st, 5) != SQLITE_NULL)
			l->t->span_ns = sqlite3_column_int64(st, 6) - sqlite3_column_int64(st, 5);
		l->t->v = calloc(r->n_events, sizeof(*l->t->v));
	}
	int ev = lp_counters_event(r, (const char *)sqlite3_column_text(st, 7));
	if (ev < 0 || !l->t->v)
		return 0;
	struct lp_cnt_cell *c = &l->t->v[ev];
	c->has = 1;
	c->total = c->per_call = sqlite3_column_double(st, 8);
	c->scaled = sqlite3_column_int(st, 9);
	return 0;
}

static int cr_threads(sqlite3 *db, struct lp_counter_totals *r, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	const char *sql = "SELECT t.id, p.pid, t.tid, t.name, tc.source, tc.start_ns, tc.end_ns, "
			  "e.name, tc.value, tc.scaled FROM thread_counters tc "
			  "JOIN threads t ON t.id = tc.thread_id JOIN processes p ON p.id = "
			  "t.process_id JOIN counter_events e ON e.id = tc.event_id "
			  "ORDER BY p.id, t.tid, t.id";
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return cr_sqlerr(db, err, errlen);
	struct cr_thread_load l = {r, 0, NULL};
	int rc = lp_db_step_all(st, cr_thread_row, &l, err, errlen);
	sqlite3_finalize(st);
	if (rc)
		return rc;
	for (size_t i = 0; i < r->n_threads; i++)
		cr_ipc(r, r->threads[i].v, &r->threads[i].has_ipc, &r->threads[i].ipc);
	return 0;
}

static void cr_ipc_reason(struct lp_counter_totals *r)
{
	int ins = lp_counters_event(r, "instructions"), cyc = lp_counters_event(r, "cycles");
	char buf[600];
	if (ins < 0 || cyc < 0)
		snprintf(buf, sizeof(buf), "not recorded (latprof run --counters default,hw)");
	else if (!r->events[cyc].available || !r->events[ins].available)
		snprintf(buf, sizeof(buf), "%s",
			 r->events[!r->events[cyc].available ? cyc : ins].reason
			     ? r->events[!r->events[cyc].available ? cyc : ins].reason
			     : "cycles/instructions unavailable");
	else
		return;
	r->ipc_reason = strdup(buf);
}

int lp_counter_totals_compute(sqlite3 *db, struct lp_counter_totals *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!lp_db_has_table(db, "counter_events") || !lp_db_count(db, "counter_events"))
		return 0;
	out->has_counters = 1;
	int rc = cr_events(db, out, err, errlen);
	if (!rc)
		rc = cr_stages(db, out, err, errlen);
	if (!rc)
		rc = cr_threads(db, out, err, errlen);
	if (rc) {
		lp_counter_totals_free(out);
		return rc;
	}
	cr_ipc_reason(out);
	return 0;
}

int lp_counters_stage_totals(const struct lp_counter_totals *r, const char *stage, double *cs,
			     double *faults, double *ipc)
{
	*cs = *faults = *ipc = NAN;
	for (size_t i = 0; i < r->n_stages; i++) {
		const struct lp_cnt_stage *s = &r->stages[i];
		if (strcmp(s->name, stage))
			continue;
		int e = lp_counters_event(r, "context-switches");
		if (e >= 0 && s->v[e].has)
			*cs = s->v[e].total;
		int mi = lp_counters_event(r, "minor-faults"),
		    ma = lp_counters_event(r, "major-faults");
		int pf = lp_counters_event(r, "page-faults");
		if (mi >= 0 && s->v[mi].has)
			*faults = s->v[mi].total + (ma >= 0 && s->v[ma].has ? s->v[ma].total : 0);
		else if (pf >= 0 && s->v[pf].has)
			*faults = s->v[pf].total;
		if (s->has_ipc)
			*ipc = s->ipc;
		return 0;
	}
	return -ENOENT;
}

void lp_counter_totals_free(struct lp_counter_totals *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		free(r->events[i].name);
		free(r->events[i].reason);
	}
	for (size_t i = 0; i < r->n_stages; i++) {
		free(r->stages[i].name);
		free(r->stages[i].v);
	}
	for (size_t i = 0; i < r->n_threads; i++) {
		free(r->threads[i].name);
		free(r->threads[i].source);
		free(r->threads[i].v);
	}
	free(r->events);
	free(r->stages);
	free(r->threads);
	free(r->note);
	free(r->ipc_reason);
	memset(r, 0, sizeof(*r));
}
