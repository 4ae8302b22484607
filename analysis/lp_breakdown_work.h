/* SPDX-License-Identifier: MIT */
/*
 * The working state of one breakdown computation, shared by the files
 * that compute it (lp_breakdown.c: requests, stages, categories, tail;
 * lp_breakdown_counters.c: the CPU-counter columns). Not for use outside them.
 */
#ifndef LP_BREAKDOWN_WORK_H
#define LP_BREAKDOWN_WORK_H

#include "lp_breakdown.h"
#include "lp_rset.h"

/* Loaded categories: sets disjoint across categories (precedence = order). */
struct lp_breakdown_cats {
	int n; /* providers */
	struct lp_ivset set[LP_BREAKDOWN_MAXCAT];
	struct lp_ivec raw[LP_BREAKDOWN_MAXCAT]; /* sorted by (thread, start), kept for keys */
	/* The waits' run-queue tails (lp_breakdown.c, "Run queue"), minus every
	 * category: preempted time, measured. A split accumulates it in the
	 * slot after the rest's (n + LP_BREAKDOWN_PREEMPTED), and presence bit n. */
	struct lp_ivset runq;
};

/* Working state of one computation. */
struct lp_breakdown_work {
	sqlite3 *db;
	struct lp_rset rs;
	struct lp_breakdown_cats cats;
	int stage_depth;
	size_t nreq;
	int32_t *req; /* request -> range index */
	int64_t *dur; /* request -> duration */
	uint8_t *tag; /* 2 = tail (>= p99), 1 = around the median, 0 = other */
	size_t *off;  /* CSR: stage instances of request r at sidx[off[r]..off[r+1]) */
	int32_t *sidx;
	int32_t *slot_of_key; /* range key -> stage slot, -1 */
	size_t nslot;	      /* stage slots; slot nslot is (unattributed) */
	int64_t open_skipped; /* request ranges open at exit, left out */
	int32_t *key_of_slot;
	int64_t
	    *cv; /* [rs.n * kinds] counter deltas per range (lp_breakdown_counters.c), or NULL */
	uint16_t *cmask; /* [rs.n] kinds present, and "scaled" (lp_breakdown_counters.c) */
};

/* ---- lp_breakdown_counters.c ---- */

/* Column availability for the run and the deltas of the loaded ranges
 * (b->cv, b->cmask); 0 or -errno with err. */
int lp_breakdown_counters_load(struct lp_breakdown_work *b, struct lp_breakdown *out, char *err,
			       size_t errlen);
/* Per-stage (slot) and request counters; pos_of_slot maps slots to rows. */
int lp_breakdown_counters_stages(const struct lp_breakdown_work *b, struct lp_breakdown *out,
				 const size_t *pos_of_slot);
/* The tail stage's counters, tail against median. */
void lp_breakdown_counters_tail(const struct lp_breakdown_work *b, struct lp_breakdown_tail *t);

/* ---- lp_breakdown_threads.c ---- */

/* Fills the category times of out->threads (life: each one's [start, end),
 * two values a thread) and out->run_cat_ns in one pass over the wait
 * tables in start order, as cats_split over the loaded sets would. 0;
 * -EAGAIN when the rows were not in start order (then the sets must
 * answer); -errno with err. */
int lp_breakdown_threads_stream(sqlite3 *db, struct lp_breakdown *out, const int64_t *life,
				char *err, size_t errlen);

#endif
