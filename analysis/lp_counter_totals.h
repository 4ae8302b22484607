/* SPDX-License-Identifier: MIT */
/*
 * CPU counters per stage and per thread (`latprof report --counters`),
 * from the tables of schemas/counters.sql. An event no process could count
 * has available = 0 and a reason: its cells are "unavailable", never 0.
 * Rendered by report/lp_report_counters.c.
 */
#ifndef LP_COUNTER_TOTALS_H
#define LP_COUNTER_TOTALS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct lp_cnt_event_info {
	char *name;
	int available;	 /* counted in at least one process */
	char *reason;	 /* why not, when !available */
	int multiplexed; /* some values were scaled */
	int is_time;	 /* task-clock/cpu-clock: values are ns */
};

/* One event's figure in a row; has = 0 when not counted there. */
struct lp_cnt_cell {
	int has;
	int scaled;
	double total;
	double per_call; /* stages: total / calls; threads: = total */
};

struct lp_cnt_stage {
	char *name;	       /* range name */
	long long calls;       /* ranges with counter deltas */
	struct lp_cnt_cell *v; /* [n_events] */
	int has_ipc;
	double ipc; /* instructions / cycles over all calls */
};

struct lp_cnt_thread {
	int pid, tid;
	char *name;	 /* NULL if never named */
	char *source;	 /* "exit" or "last_sample" */
	int64_t span_ns; /* time the group counted, 0 when unknown */
	struct lp_cnt_cell *v;
	int has_ipc;
	double ipc;
};

struct lp_counter_totals {
	int has_counters; /* 0: recorded with --counters none, or an old database */
	size_t n_events;
	struct lp_cnt_event_info *events;
	char *note;	  /* the perf_event_paranoid line, or NULL */
	char *ipc_reason; /* why IPC is missing (cycles/instructions unavailable), or NULL */
	size_t n_stages;
	struct lp_cnt_stage *stages; /* by first start time */
	size_t n_threads;
	struct lp_cnt_thread *threads;
};

int lp_counter_totals_compute(sqlite3 *db, struct lp_counter_totals *out, char *err, size_t errlen);
void lp_counter_totals_free(struct lp_counter_totals *r);

/* Index of an event by name, -1 if absent. */
int lp_counters_event(const struct lp_counter_totals *r, const char *name);
/*
 * For the breakdown's per-stage columns: totals over every range named
 * `stage` (divide by the request count for "per request"). Each output is
 * NAN when unavailable: cs = context-switches, faults = minor + major (or
 * page-faults), ipc = instructions / cycles. Returns 0, -ENOENT if the
 * stage has no counter data.
 */
int lp_counters_stage_totals(const struct lp_counter_totals *r, const char *stage, double *cs,
			     double *faults, double *ipc);

#endif
