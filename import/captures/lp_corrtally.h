/* SPDX-License-Identifier: MIT */
/*
 * GPU work whose launching call is not in the capture, counted by
 * correlation id while an importer writes rows (lp_import_foreign.c, for
 * the nsys and Kineto importers): which ids have a call (a bit each), how
 * much work (kernels, copies, memsets) has each id (a count each). The
 * count needs no order between the two: an nsys export lists the calls
 * first, a Kineto trace may list a kernel before its call.
 *
 * The workload: one call per GPU operation or so, 10^4 to 10^7 of each in
 * one import, ids from CUPTI, which counts them from 1 in each process, so
 * they are small and dense. Ids index arrays (one pair per key, a process),
 * so a step is a few instructions on memory that stays in the cache,
 * where a hash set of 10^6 ids missed it on every row. Memory follows the
 * largest id and is bounded (LP_CORRTALLY_MAX_BYTES); past it, for an id
 * or key that does not fit, or out of memory, the tally turns itself off
 * and the caller counts by SQL instead (lp_foreign_finish).
 */
#ifndef LP_CORRTALLY_H
#define LP_CORRTALLY_H

#include <stddef.h>
#include <stdint.h>

#define LP_CORRTALLY_MAX_BYTES ((size_t)64 << 20)
#define LP_CORRTALLY_MAX_KEY (1 << 16)

struct lp_corrtally {
	struct lp_corrtally_key {
		uint64_t *call; /* bit per id */
		uint16_t *work; /* per id, saturating: then off */
		size_t cap;	/* ids covered, a multiple of 64 */
	} * keys;
	size_t nkeys, bytes;
	int off;
};

/* A call with id corr under key (process) was written. */
void lp_corrtally_call(struct lp_corrtally *t, int64_t key, int64_t corr);
/* A GPU operation with id corr under key was written. */
void lp_corrtally_work(struct lp_corrtally *t, int64_t key, int64_t corr);
/* Operations whose (key, id) has no call; -1 when the tally is off. */
long long lp_corrtally_unmatched(const struct lp_corrtally *t);
/* Frees the arrays and turns the tally off. */
void lp_corrtally_free(struct lp_corrtally *t);

#endif
