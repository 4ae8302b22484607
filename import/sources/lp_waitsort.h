/* SPDX-License-Identifier: MIT */
/*
 * Lock waits put in start order before the importer stores them
 * (lp_import_core.c), so that lock_waits, clustered by (start_ns, id),
 * grows at its right edge, where SQLite appends without a search from
 * the root, instead of an index being sorted from the whole table after
 * the load.
 *
 * The workload: up to 10^7 waits in one import, arriving in log order.
 * Each thread's waits come in start order (a thread waits for one lock at
 * a time and records the wait when it ends), but the log holds each
 * thread's records in chunks, so the stream as a whole steps back in time
 * at every chunk of another thread (the import bench's 1 M waits of 4
 * threads: 345 times, 57 ms back on average). A row joins its thread's
 * run while its start is no earlier than the run's last one, else it
 * opens a new run; the runs are about as many as the threads. Draining
 * merges them through a binary heap keyed by (start, arrival), so equal
 * starts keep their log order: O(n log k) for k runs, and the rows
 * themselves are read once, in place. 56 bytes a row are held until the
 * caller drains, which it does every LP_WAITSORT_CAP rows and at the end;
 * rows of two drains are each in order, not with each other.
 */
#ifndef LP_WAITSORT_H
#define LP_WAITSORT_H

#include <stddef.h>
#include <stdint.h>

/* Rows held before the caller drains: 56 MiB. */
#define LP_WAITSORT_CAP ((size_t)1 << 20)

/* A lock wait as lock_waits stores it; ids are the database's own. */
struct lp_waitsort_row {
	int64_t start_ns, dur_ns;
	int64_t runq_ns;		       /* -1: unknown */
	uint32_t lock_id, thread_id, stack_id; /* stack 0: none */
	uint32_t owner_tid;		       /* 0: unknown */
	uint32_t flags;
	uint32_t mode;
	uint32_t next_; /* private: the next row of this row's run */
};

struct lp_waitsort {
	struct lp_waitsort_row *rows; /* LP_WAITSORT_CAP of them, mapped */
	size_t n;
	uint32_t *runs; /* the first row of each run */
	size_t nruns, cap_runs;
	/* By thread_id: 1 + the last row of the thread's open run; 0 none. */
	uint32_t *tail;
	size_t cap_tail;
};

/* Holds r: 0, or -ENOMEM (nothing held changed). */
int lp_waitsort_add(struct lp_waitsort *w, const struct lp_waitsort_row *r);

static inline int lp_waitsort_full(const struct lp_waitsort *w)
{
	return w->n >= LP_WAITSORT_CAP;
}

/* Calls emit for every row held, in (start, arrival) order (in arrival
 * order if the merge's heap cannot be allocated), and empties w whatever
 * the outcome. emit's first non-zero return stops the drain and is
 * returned. */
int lp_waitsort_drain(struct lp_waitsort *w, int (*emit)(void *ctx, const struct lp_waitsort_row *),
		      void *ctx);

void lp_waitsort_free(struct lp_waitsort *w);

#endif
