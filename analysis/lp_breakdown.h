/* SPDX-License-Identifier: MIT */
/*
 * Requests and stages from NVTX ranges: per-stage percentiles, the split of
 * each stage's time into categories (lock wait, condition wait, CPU, and
 * CUDA ones), tail attribution and the slowest requests. The plain
 * per-name statistics of `report --ranges` are lp_range_stats.h's.
 *
 * Everything is computed from compact arrays loaded with one ordered query
 * per table; no per-row allocation, no per-stage SQL (10M ranges in a few
 * seconds). Writers (report/lp_report_breakdown.h) only read these structs.
 */
#ifndef LP_BREAKDOWN_H
#define LP_BREAKDOWN_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_ivset.h" /* intervals: the currency of category providers */
#include "lp_rset.h"

/* ---- categories ---- */

/*
 * A category of time inside a stage: a name and a source of per-thread
 * intervals. The list order is the precedence: where two categories overlap
 * on a thread (sync wait inside a CUDA API call, say) the earlier one owns
 * the time. CPU is not a provider: it is what no category covers. A CUDA
 * source adds one entry to lp_breakdown_categories[] in lp_breakdown.c.
 */
struct lp_breakdown_category {
	const char *name;  /* JSON/CSV key, e.g. "lock_wait" */
	const char *label; /* column header, e.g. "lock wait" */
	/* Appends this category's intervals; returns 0, -ENOENT when its
	 * tables are absent (category shown as zero) or -errno with err. */
	int (*load)(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen);
	/* Describes an interval key (the lock, say) for tail attribution;
	 * NULL when keys mean nothing. Writes into buf, returns buf or NULL. */
	const char *(*describe)(sqlite3 *db, int64_t key, char *buf, size_t len);
	/* The tables whose rows its intervals are (LP_BREAKDOWN_ROWS_*), where
	 * a slowest request's largest wait finds its call site; 0: not a wait
	 * of the thread (GPU execution), never a largest wait. */
	unsigned rows;
};

enum {
	LP_BREAKDOWN_ROWS_LOCK = 1,  /* lock_waits */
	LP_BREAKDOWN_ROWS_COND = 2,  /* cond_waits */
	LP_BREAKDOWN_ROWS_BLOCK = 4, /* blocking_calls */
	LP_BREAKDOWN_ROWS_CUDA = 8,  /* cuda_api */
};

#define LP_BREAKDOWN_MAXCAT 20

/*
 * After the providers come three slots for the time no provider covers
 * (the rest), split by the CPU counters: on-CPU (task-clock, at most the
 * rest), preempted (the rest of the rest: runnable, waiting for a CPU), and,
 * where a row has no task-clock, the unsplit "cpu or preempted (not
 * counted)". A row fills either the first two or the third.
 */
enum { LP_BREAKDOWN_ONCPU, LP_BREAKDOWN_PREEMPTED, LP_BREAKDOWN_UNSPLIT, LP_BREAKDOWN_NREST };

/* ---- the breakdown result ---- */

#define LP_BREAKDOWN_UNATTRIBUTED "(unattributed)"

/*
 * CPU-counter columns (schemas/counters.sql, range_counters), from the
 * deltas of the very ranges this breakdown counts, so they follow --request
 * and --stage-depth. Each value is NAN where it is unknown: never 0.
 */
enum {
	LP_BREAKDOWN_CNT_CS,	 /* context switches per request */
	LP_BREAKDOWN_CNT_MIG,	 /* CPU migrations per request */
	LP_BREAKDOWN_CNT_FAULTS, /* page faults (minor + major) per request */
	LP_BREAKDOWN_CNT_ONCPU,	 /* task-clock / wall time of the counted ranges, 0..1 */
	LP_BREAKDOWN_CNT_IPC,	 /* instructions / cycles */
	LP_BREAKDOWN_NCNT
};

struct lp_breakdown_cnt {
	int64_t ranges;	  /* instances with counter deltas */
	int64_t requests; /* requests holding such an instance (the per-request divisor) */
	int64_t wall_ns;  /* summed duration of those instances */
	int scaled;	  /* some delta was scaled (multiplexed counters) */
	double v[LP_BREAKDOWN_NCNT];
	const char *why; /* why this row has no deltas (ranges == 0), else NULL */
};

struct lp_breakdown_stage {
	char *domain; /* "" for the default domain */
	char *name;   /* LP_BREAKDOWN_UNATTRIBUTED for the uncovered rest */
	int unattributed;
	int64_t instances; /* ranges; for (unattributed): requests */
	struct lp_dist st; /* over per-request time in the stage (requests that have it) */
	double share;	   /* of all request time, 0..1 */
	int64_t
	    cat_ns[LP_BREAKDOWN_MAXCAT]; /* total per category, then the LP_BREAKDOWN_NREST slots */
	struct lp_breakdown_cnt cnt;	 /* when lp_breakdown.has_counters */
};

#define LP_BREAKDOWN_NSLOW 10

struct lp_breakdown_slow {
	int64_t range_id, thread_id, tid;
	int64_t start_ns, rel_ns, dur_ns;
	int64_t *stage_ns; /* [nstages] per-request time in each stage */
	/* Its largest wait: the longest stretch of one wait category's time
	 * (a category with rows) inside the request's span on its thread or a
	 * stage's span on another thread, as the split counts it (precedence
	 * applied, clipped to the span, without the run-queue tail), and the
	 * row it lies in: (wait_thread_id, wait_start_ns) of the category's
	 * tables. wait_cat < 0: none. */
	int wait_cat;
	int64_t wait_ns, wait_thread_id, wait_start_ns;
	/* Its call site: the Python one ("handler.py:42 serve_one",
	 * wait_python) where the wait has Python frames; else the lock's name
	 * for a lock or GIL wait, "recv on socket in fetch_reply" for a
	 * blocking call, "fn file:line" for a condition wait, the API call's
	 * name for CUDA. NULL when unknown. */
	char *wait_site;
	char *wait_source; /* the Python site's line text, NULL when not read */
	int wait_python;
};

struct lp_breakdown_tail {
	int valid;	       /* enough requests to compare */
	int64_t n_tail, n_mid; /* requests >= p99, requests in [p40, p60] */
	int64_t p40_ns, p60_ns, p99_ns;
	int stage;			    /* index into stages[], -1 when none grows */
	double stage_tail_ns, stage_mid_ns; /* mean per-request time in that stage */
	int cat;			    /* index of the category that grows most inside it */
	double cat_tail_ns, cat_mid_ns;
	/* Every category's growth in that stage, tail mean minus median mean
	 * per request, by the same split as the stage rows (the rest by
	 * task-clock, each wait's run-queue part preempted): cat is the
	 * largest, cat_growth_ns[cat] = cat_tail_ns - cat_mid_ns. */
	double cat_growth_ns[LP_BREAKDOWN_MAXCAT];
	int has_key;			/* the category names what it waited on */
	int key_site;			/* key is a blocking call's stack, not a lock */
	int64_t key;			/* lock id, or stacks.id when key_site */
	char *key_name;			/* locks.name, or kind@address */
	double key_tail_ns, key_mid_ns; /* mean wait on it inside that stage */
	/* What the other categories with keys that grow by >= 20% of the
	 * stage's growth waited on most (NULL for the rest, and for cat). */
	char *cat_key_name[LP_BREAKDOWN_MAXCAT];
	/* Counters of that stage, tail against median (has_cnt: task-clock
	 * was counted there). descheduled: the growth is cpu time, yet the
	 * on-CPU share fell: the stage waited for a CPU (preempted). */
	int has_cnt, descheduled;
	double oncpu_tail, oncpu_mid;	      /* on-CPU share of the stage's time */
	double offcpu_tail_ns, offcpu_mid_ns; /* wall - task-clock per request */
	double cs_tail, cs_mid;		      /* context switches per request, NAN if not counted */
};

struct lp_breakdown_thread {
	int64_t thread_id, tid;
	char *name;
	int64_t total_ns;
	/* Its task-clock over its life (thread_counters), -1 when not counted:
	 * the kernel's CPU inside recorded calls too, which cat_ns[] gives to
	 * the calls. What /proc/PID/task/TID/stat's utime+stime measure. */
	int64_t cpu_ns;
	int64_t cat_ns[LP_BREAKDOWN_MAXCAT];
};

struct lp_breakdown_root {
	char *domain, *name;
	int64_t count;
};

struct lp_breakdown {
	int has_ranges; /* 0: no NVTX ranges; only threads[] is filled */
	int64_t run_start_ns, run_end_ns;

	int ncat; /* providers + LP_BREAKDOWN_NREST */
	const char *cat_name[LP_BREAKDOWN_MAXCAT], *cat_label[LP_BREAKDOWN_MAXCAT];

	char *req_domain, *req_name;
	int req_explicit;   /* --request given */
	int stage_depth;    /* levels below the request */
	struct lp_dist req; /* request latency */
	int64_t req_cat_ns[LP_BREAKDOWN_MAXCAT];
	int stages_overlap;	  /* some stages overlap in a request: shares may exceed 100% */
	int64_t req_open_skipped; /* request ranges still open at exit, left out */

	size_t nstages; /* sorted by total, (unattributed) last */
	struct lp_breakdown_stage *stages;

	size_t nroots; /* other outermost range names (when not --request) */
	struct lp_breakdown_root *roots;

	struct lp_breakdown_tail tail;
	size_t nslow;
	struct lp_breakdown_slow slow[LP_BREAKDOWN_NSLOW];

	/* No ranges: the whole run per thread (also filled when ranges exist). */
	size_t nthreads;
	struct lp_breakdown_thread *threads;
	int64_t run_cat_ns[LP_BREAKDOWN_MAXCAT], run_thread_ns;

	/* CPU counters: 0 when the run counted none (--counters none). */
	int has_counters;
	const char *cnt_name[LP_BREAKDOWN_NCNT], *cnt_label[LP_BREAKDOWN_NCNT];
	int cnt_recorded[LP_BREAKDOWN_NCNT]; /* its events were asked for (even if unavailable) */
	char
	    *cnt_reason[LP_BREAKDOWN_NCNT]; /* why a column is unknown for the whole run, or NULL */
	struct lp_breakdown_cnt req_cnt;    /* the request ranges' own deltas */
};

struct lp_breakdown_opts {
	const char *request; /* NAME or DOMAIN::NAME; NULL = most frequent outermost range */
	int stage_depth;     /* >= 1; 0 means 1 */
	/* When non-NULL and the computation succeeds, the ranges it loaded
	 * (every depth with a request given, else depths 0..stage_depth) move
	 * here instead of being freed: the rules read requests and stages from
	 * them rather than scanning the table again. lp_rset_free() them. */
	struct lp_rset *keep_ranges;
};

/* Computes the breakdown. Returns 0; -ENOENT with err when --request names
 * no range (the CLI exits 2); -errno with err on database errors. */
int lp_breakdown_compute(sqlite3 *db, const struct lp_breakdown_opts *opts,
			 struct lp_breakdown *out, char *err, size_t errlen);
void lp_breakdown_free(struct lp_breakdown *b);

/* A whole thread's time outside its waits (rest), split with the kernel's
 * run_delay of the thread (delay) beside its task-clock (task), given the
 * waits' own run-queue parts (runq): *out, preempted outside the waits, is
 * run_delay less runq, at most the rest; *on, on a CPU, is task-clock, at
 * most what that leaves (task-clock also counts the kernel's work inside
 * the waits); what neither covers was off the CPU and not on a run queue:
 * blocking the interposer did not record (calls under the threshold, calls
 * it does not hook, page faults that read). The breakdown's thread rows
 * and the heatmap's lanes split by this. */
void lp_breakdown_split_runq(int64_t rest, int64_t runq, int64_t task, int64_t delay, int64_t *on,
			     int64_t *out);

struct lp_map;
/* threads.id -> run_delay ns for every thread the kernel's schedstat was
 * read for (threads.run_delay_ns, schema 5; none in an older database). */
int lp_breakdown_thread_delays(sqlite3 *db, struct lp_map *delay, char *err, size_t errlen);

/* Exposed for tests and future sources. */
extern const struct lp_breakdown_category lp_breakdown_categories[];
extern const size_t lp_breakdown_ncategories;

/* True when category k holds time anywhere in b (on-CPU always when the run
 * counted, the unsplit rest always when it did not): writers leave out
 * columns that would be all zero. */
int lp_breakdown_cat_has_time(const struct lp_breakdown *b, int k);

#endif
