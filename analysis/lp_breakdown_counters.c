/* SPDX-License-Identifier: MIT */
/*
 * The breakdown's CPU-counter columns (lp_breakdown.h, LP_BREAKDOWN_CNT_*): which
 * columns the run can show and why not, the per-range deltas of
 * range_counters for the loaded ranges, and their sums per stage, per
 * request and for the tail stage.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_breakdown_work.h"
#include "lp_counter_totals.h" /* event availability and reasons */
#include "lp_db.h"
#include "lp_map.h"
#include "lp_util.h"

/* Per-range kinds loaded from range_counters; faults fold minor + major (or
 * page-faults when the minor/major pair was not recorded). */
enum { RC_CS, RC_MIG, RC_FAULTS, RC_TASK, RC_CYC, RC_INS, RC_N };
#define RC_SCALED 0x8000u

static const struct {
	const char *name;
	int kind, col;
} rc_events[] = {
    {"context-switches", RC_CS, LP_BREAKDOWN_CNT_CS},
    {"cpu-migrations", RC_MIG, LP_BREAKDOWN_CNT_MIG},
    {"minor-faults", RC_FAULTS, LP_BREAKDOWN_CNT_FAULTS},
    {"major-faults", RC_FAULTS, LP_BREAKDOWN_CNT_FAULTS},
    {"page-faults", RC_FAULTS, LP_BREAKDOWN_CNT_FAULTS},
    {"task-clock", RC_TASK, LP_BREAKDOWN_CNT_ONCPU},
    {"cycles", RC_CYC, LP_BREAKDOWN_CNT_IPC},
    {"instructions", RC_INS, LP_BREAKDOWN_CNT_IPC},
};
#define RC_NEVENTS ARRAY_SIZE(rc_events)

static const char *const cnt_names[LP_BREAKDOWN_NCNT] = {
    "context_switches_per_request", "migrations_per_request", "faults_per_request", "on_cpu_share",
    "ipc"};
static const char *const cnt_labels[LP_BREAKDOWN_NCNT] = {"cs/req", "migr/req", "faults/req",
							  "cpu/wall", "IPC"};

/* Column availability and reasons for the whole run, from the event list
 * of lp_counter_totals (one reason per event name). Returns 1 when the run
 * counted anything, 0 when not, -errno with err. */
static int cnt_columns(sqlite3 *db, struct lp_breakdown *out, int *use_pf, char *err, size_t errlen)
{
	struct lp_counter_totals r;
	int rc = lp_counter_totals_compute(db, &r, err, errlen);
	if (rc || !r.has_counters)
		return rc;
	int avail[LP_BREAKDOWN_NCNT] = {0};
	const char *why[LP_BREAKDOWN_NCNT] = {0};
	for (size_t k = 0; k < RC_NEVENTS; k++) {
		int e = lp_counters_event(&r, rc_events[k].name), c = rc_events[k].col;
		if (e < 0)
			continue;
		out->cnt_recorded[c] = 1;
		avail[c] |= r.events[e].available;
		why[c] = why[c] ? why[c] : r.events[e].reason;
	}
	*use_pf = lp_counters_event(&r, "minor-faults") < 0;
	for (int c = 0; c < LP_BREAKDOWN_NCNT && !rc; c++) {
		char buf[600];
		out->cnt_name[c] = cnt_names[c];
		out->cnt_label[c] = cnt_labels[c];
		if (c == LP_BREAKDOWN_CNT_IPC && r.ipc_reason)
			snprintf(buf, sizeof(buf), "%s", r.ipc_reason);
		else if (!out->cnt_recorded[c])
			snprintf(buf, sizeof(buf), "not recorded (see latprof run --counters)");
		else if (!avail[c])
			snprintf(buf, sizeof(buf), "%s", why[c] ? why[c] : "unavailable here");
		else
			continue;
		if (!(out->cnt_reason[c] = strdup(buf)))
			rc = -ENOMEM;
	}
	lp_counter_totals_free(&r);
	return rc ? rc : 1;
}

struct event_map {
	struct lp_map *m;
	int use_pf;
};

static int event_map_row(sqlite3_stmt *st, void *ctx)
{
	struct event_map *e = ctx;
	const char *name = (const char *)sqlite3_column_text(st, 1);
	int rc = 0;
	for (size_t k = 0; name && k < RC_NEVENTS && !rc; k++)
		if (!strcmp(name, rc_events[k].name) && (e->use_pf || strcmp(name, "page-faults")))
			rc = lp_map_put(e->m, (uint64_t)sqlite3_column_int64(st, 0),
					(uint64_t)rc_events[k].kind + 1);
	return rc;
}

/* counter_events.id -> RC_ kind + 1, for the events that were counted. */
static int cnt_event_map(sqlite3 *db, int use_pf, struct lp_map *m, char *err, size_t errlen)
{
	struct event_map e = {m, use_pf};
	return lp_db_query(db, "SELECT id, name FROM counter_events WHERE available", NULL, 0,
			   event_map_row, &e, err, errlen);
}

struct deltas {
	struct lp_breakdown_work *b;
	struct lp_map evk;
};

static int deltas_row(sqlite3_stmt *st, void *ctx)
{
	struct deltas *d = ctx;
	struct lp_breakdown_work *b = d->b;
	uint64_t kind;
	int32_t i = lp_rset_index(&b->rs, sqlite3_column_int64(st, 0));
	if (i < 0 || !lp_map_get(&d->evk, (uint64_t)sqlite3_column_int64(st, 1), &kind))
		return 0;
	b->cv[(size_t)i * RC_N + kind - 1] += sqlite3_column_int64(st, 2);
	b->cmask[i] |= (uint16_t)(1u << (kind - 1));
	b->cmask[i] |= sqlite3_column_int(st, 3) ? RC_SCALED : 0;
	return 0;
}

/* Deltas of the loaded ranges (one scan of range_counters in key order). */
int lp_breakdown_counters_load(struct lp_breakdown_work *b, struct lp_breakdown *out, char *err,
			       size_t errlen)
{
	int use_pf = 0, rc = cnt_columns(b->db, out, &use_pf, err, errlen);
	if (rc <= 0)
		return rc;
	out->has_counters = 1;
	if (!lp_db_has_table(b->db, "range_counters") || !b->rs.n)
		return 0;
	struct deltas d = {b, {0}};
	b->cv = calloc(b->rs.n * RC_N, sizeof(*b->cv));
	b->cmask = calloc(b->rs.n, sizeof(*b->cmask));
	rc = !b->cv || !b->cmask ? -ENOMEM : cnt_event_map(b->db, use_pf, &d.evk, err, errlen);
	if (!rc)
		rc = lp_db_query(b->db,
				 "SELECT range_id, event_id, delta, scaled FROM range_counters",
				 NULL, 0, deltas_row, &d, err, errlen);
	lp_map_free(&d.evk);
	if (rc == -EIO)
		snprintf(err, errlen, "database error reading range_counters: %s",
			 sqlite3_errmsg(b->db));
	return rc;
}

/* Sums over the counted ranges of one row (a stage, the requests). */
struct cacc {
	double sum[RC_N];
	uint32_t has;
	int64_t ranges, requests, wall;
	int scaled;
	size_t seen; /* request + 1 that was last counted */
};

static void cacc_add(struct cacc *a, const struct lp_breakdown_work *b, size_t r, int32_t i)
{
	uint16_t m = b->cmask[i];
	if (!(m & ~RC_SCALED))
		return;
	for (int k = 0; k < RC_N; k++)
		a->sum[k] += (double)b->cv[(size_t)i * RC_N + (size_t)k];
	a->has |= m & ~RC_SCALED;
	a->scaled |= !!(m & RC_SCALED);
	a->ranges++;
	a->wall += b->rs.r[i].end - b->rs.r[i].start;
	a->requests += a->seen != r + 1;
	a->seen = r + 1;
}

static double cacc_per(const struct cacc *a, int k, double div)
{
	return (a->has & (1u << k)) && div > 0 ? a->sum[k] / div : NAN;
}

static void cacc_finish(const struct cacc *a, struct lp_breakdown_cnt *c, const char *why)
{
	c->ranges = a->ranges;
	c->requests = a->requests;
	c->wall_ns = a->wall;
	c->scaled = a->scaled;
	c->why = a->ranges ? NULL : why;
	c->v[LP_BREAKDOWN_CNT_CS] = cacc_per(a, RC_CS, (double)a->requests);
	c->v[LP_BREAKDOWN_CNT_MIG] = cacc_per(a, RC_MIG, (double)a->requests);
	c->v[LP_BREAKDOWN_CNT_FAULTS] = cacc_per(a, RC_FAULTS, (double)a->requests);
	/* task-clock is read just after each boundary's timestamp: a range
	 * that runs throughout can read a little over its wall time */
	c->v[LP_BREAKDOWN_CNT_ONCPU] = cacc_per(a, RC_TASK, (double)a->wall);
	if (c->v[LP_BREAKDOWN_CNT_ONCPU] > 1) /* false for NAN, which stays */
		c->v[LP_BREAKDOWN_CNT_ONCPU] = 1;
	c->v[LP_BREAKDOWN_CNT_IPC] =
	    a->has & (1u << RC_CYC) ? cacc_per(a, RC_INS, a->sum[RC_CYC]) : NAN;
}

/* Per-stage (slot) and request counters, over this breakdown's instances. */
int lp_breakdown_counters_stages(const struct lp_breakdown_work *b, struct lp_breakdown *out,
				 const size_t *pos_of_slot)
{
	size_t ns = b->nslot + 1;
	struct cacc *acc = calloc(ns, sizeof(*acc)), req = {0};
	if (!acc)
		return -ENOMEM;
	for (size_t r = 0; r < b->nreq && b->cv; r++) {
		cacc_add(&req, b, r, b->req[r]);
		for (size_t j = b->off[r]; j < b->off[r + 1]; j++) {
			int32_t i = b->sidx[j];
			cacc_add(&acc[b->slot_of_key[b->rs.r[i].key]], b, r, i);
		}
	}
	for (size_t s = 0; s < ns; s++)
		cacc_finish(&acc[s], &out->stages[pos_of_slot[s]].cnt,
			    s == b->nslot ? "not a range: counters are read at range boundaries"
					  : "no counter deltas for these ranges (ranges that end "
					    "on another thread are not counted)");
	cacc_finish(&req, &out->req_cnt,
		    "no counter deltas for the request ranges (ranges that end on another "
		    "thread are not counted)");
	free(acc);
	return 0;
}

/* The tail stage's counters, tail against median: was its growth spent
 * running, or descheduled (on-CPU share falling, context switches rising)? */
void lp_breakdown_counters_tail(const struct lp_breakdown_work *b, struct lp_breakdown_tail *t)
{
	size_t slot = (size_t)t->stage;
	struct cacc g[2];
	if (!b->cv || slot == b->nslot)
		return;
	memset(g, 0, sizeof(g));
	for (size_t r = 0; r < b->nreq; r++) {
		if (!b->tag[r])
			continue;
		for (size_t j = b->off[r]; j < b->off[r + 1]; j++)
			if ((size_t)b->slot_of_key[b->rs.r[b->sidx[j]].key] == slot)
				cacc_add(&g[b->tag[r] == 2 ? 0 : 1], b, r, b->sidx[j]);
	}
	if (!(g[0].has & g[1].has & (1u << RC_TASK)) || !g[0].wall || !g[1].wall)
		return;
	t->has_cnt = 1;
	t->oncpu_tail = fmin(g[0].sum[RC_TASK] / (double)g[0].wall, 1.0);
	t->oncpu_mid = fmin(g[1].sum[RC_TASK] / (double)g[1].wall, 1.0);
	/* task-clock deltas come from samples at range boundaries, up to 10%
	 * misplaced: a fully on-CPU stage can read a little over its wall
	 * time. Off-CPU time is never negative. */
	t->offcpu_tail_ns =
	    fmax(0, ((double)g[0].wall - g[0].sum[RC_TASK]) / (double)g[0].requests);
	t->offcpu_mid_ns = fmax(0, ((double)g[1].wall - g[1].sum[RC_TASK]) / (double)g[1].requests);
	t->cs_tail = cacc_per(&g[0], RC_CS, (double)g[0].requests);
	t->cs_mid = cacc_per(&g[1], RC_CS, (double)g[1].requests);
	/* a 5-point drop: below that, timer and fault noise */
	t->descheduled =
	    t->oncpu_tail < t->oncpu_mid - 0.05 && t->offcpu_tail_ns > t->offcpu_mid_ns;
}
