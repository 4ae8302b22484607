/* SPDX-License-Identifier: MIT */
/*
 * Data the charts and the timeline need that no other analysis gives:
 * request latency over time and its CDF, per-lane busy time per time bin
 * (CPU threads and GPU streams), lock wait per bin, the stages of single
 * requests (for the median / p99 request timelines), and every event of a
 * run as a flat trace (for the Chrome/Perfetto export). Structs only;
 * report/lp_plot.c, lp_html.c and lp_chrome.c render them.
 */
#ifndef LP_TIMESERIES_H
#define LP_TIMESERIES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct lp_breakdown;
struct lp_rset;

/* ---- time series over the run ---- */

struct lp_ts_req {
	int64_t range_id;
	int64_t start_ns; /* CLOCK_MONOTONIC */
	int64_t dur_ns;
};

enum lp_ts_lane_kind { LP_LANE_CPU, LP_LANE_GPU };

struct lp_ts_lane {
	enum lp_ts_lane_kind kind;
	char *name; /* CPU: "name tid" or "tid"; GPU: "GPU d stream s (pid p)" */
	int64_t id; /* CPU: threads.id; GPU: stream */
	int pid;
	double *busy; /* [nbins] fraction of the bin, 0..1 */
	int64_t total_busy_ns;
	/* CPU lanes with task-clock: the fractions of each bin on a CPU and
	 * preempted (runnable, off the CPU: outside recorded waits and not on a
	 * CPU, plus the waits' run-queue tails); the rest of the thread's life
	 * is waiting. NULL without task-clock (busy is then all we know). */
	double *oncpu, *preempted;
	int64_t total_oncpu_ns, total_preempted_ns;
};

#define LP_TS_MAXBINS 200

struct lp_timeseries {
	int64_t start_ns, end_ns; /* the run: earliest process start, latest end */
	int64_t bin_ns;
	size_t nbins;

	/* Requests (the breakdown's request range), by start time. */
	size_t nreq;
	struct lp_ts_req *req;
	int64_t p50_ns, p90_ns, p99_ns; /* nearest rank, as the breakdown */

	/* CPU: wall time not blocked in a recorded lock or condition wait
	 * while the thread lived; GPU: union of kernels, copies and memsets. */
	size_t nlanes;
	struct lp_ts_lane *lanes;
	int has_gpu;

	/* Lock wait per bin, summed over threads (ns of waiting in the bin). */
	int64_t *lock_wait_ns, *cond_wait_ns; /* [nbins] */
	int64_t *lock_waits;		      /* waits that began in the bin */
	int64_t total_lock_wait_ns, nlock_waits;
};

/* b: the breakdown of the same database (requests come from its request
 * range); NULL or without ranges gives no requests. ranges: NULL, or the
 * ranges b kept (lp_breakdown_opts.keep_ranges), read instead of the table.
 * 0 or -errno with err. */
int lp_timeseries_compute(sqlite3 *db, const struct lp_breakdown *b, const struct lp_rset *ranges,
			  struct lp_timeseries *ts, char *err, size_t errlen);
void lp_timeseries_free(struct lp_timeseries *ts);

/* ---- one request, end to end (the timeline) ---- */

/* LP_TL_SLEEP, _IO (file and socket), _WAIT (poll and other blocking
 * calls): blocking_calls by category. LP_TL_GIL: a lock or condition wait
 * of class gil (lp_waits.h), which LP_TL_LOCK and LP_TL_COND leave out, as
 * they leave out LP_TL_IDLE's and LP_TL_JOIN's: the breakdown's categories. */
enum lp_tl_kind {
	LP_TL_RANGE,
	LP_TL_LOCK,
	LP_TL_COND,
	LP_TL_API,
	LP_TL_GPU,
	LP_TL_SLEEP,
	LP_TL_IO,
	LP_TL_WAIT,
	LP_TL_GIL,
	LP_TL_RUNQ, /* a wait's run-queue tail (runq_ns): preempted */
	LP_TL_IDLE, /* a lock or condition wait of class idle: waiting for work */
	LP_TL_JOIN  /* class join, or a pthread_join call: waiting for a thread to end */
};

struct lp_tl_item {
	enum lp_tl_kind kind;
	int lane;  /* index into lanes */
	int depth; /* ranges: nesting below the request (0 = request) */
	int64_t start_ns, end_ns;
	char *name; /* range, lock, API or kernel name */
};

struct lp_tl_lane {
	int64_t thread_id; /* 0 for a GPU stream */
	char *name;
};

struct lp_req_timeline {
	int valid;
	const char *label; /* "median request", "p99 request" (static) */
	int64_t range_id, start_ns, end_ns;
	size_t nlanes;
	struct lp_tl_lane *lanes;
	size_t n;
	struct lp_tl_item *items; /* by start */
};

/* The request (lp_ts_req) whose latency is at_ns; ranges below it (on any
 * thread), lock and condition waits, CUDA API calls and their GPU work
 * inside its time on its lanes. 0 or -errno with err. */
int lp_req_timeline_compute(sqlite3 *db, const struct lp_timeseries *ts, int64_t at_ns,
			    const char *label, struct lp_req_timeline *t, char *err, size_t errlen);
void lp_req_timeline_free(struct lp_req_timeline *t);

/* ---- the whole run as a flat trace (Chrome export) ---- */

enum lp_ev_kind {
	LP_EV_RANGE,
	LP_EV_LOCK,
	LP_EV_COND,
	LP_EV_API,
	LP_EV_KERNEL,
	LP_EV_MEMCPY,
	LP_EV_MEMSET,
	LP_EV_NKINDS
};

struct lp_tr_event {
	enum lp_ev_kind kind;
	int pid;     /* process or GPU pseudo-process */
	int64_t tid; /* thread tid or stream */
	int64_t start_ns, end_ns;
	char *name;
	char *detail; /* domain, lock kind/address, copy kind...; may be NULL */
	int64_t id;   /* row id in its table */
	int64_t corr; /* API/GPU: process-scoped correlation id, else 0 */
	int64_t process_id;
	int cross_thread; /* a range that ended on another thread */
};

struct lp_tr_track {
	int pid;
	int64_t tid;
	char *name;
	int is_process; /* M process_name (tid ignored) */
	int sort;	/* sort index */
};

struct lp_tr_counter {
	int pid;
	char *name; /* "event tid N" */
	int64_t ts_ns;
	double value; /* delta since the thread's previous sample */
};

struct lp_trace {
	int64_t base_ns;
	size_t nev, ntracks, ncounters, nmarks;
	struct lp_tr_event *ev;
	struct lp_tr_track *tracks;
	struct lp_tr_counter *counters;
	struct lp_tr_event *marks; /* NVTX marks: instants (end_ns == start_ns) */
	int64_t count[LP_EV_NKINDS];
};

int lp_trace_load(sqlite3 *db, struct lp_trace *t, char *err, size_t errlen);
void lp_trace_free(struct lp_trace *t);

#endif
