/* SPDX-License-Identifier: MIT */
/*
 * Reader of one per-process event log (schemas/eventlog.md). Never trusts
 * the file: every length is bounds-checked, damage is reported with a
 * sentence, and a torn tail (a record past `committed`) is simply not seen.
 */
#ifndef LP_LOGREAD_H
#define LP_LOGREAD_H

#include <stddef.h>
#include <stdint.h>

#include "lp_log_format.h"

struct lp_stretch {
	uint64_t seq;
	uint32_t tid;
	uint32_t chunk;
	uint32_t begin; /* offset of the first record after CTX, from chunk data */
	uint32_t end;	/* committed end of this stretch */
};

struct lp_log {
	const char *path;
	const unsigned char *map;
	size_t size;
	struct lp_log_header hdr; /* copied: the app may still be writing */
	struct lp_stretch *stretches;
	size_t n_stretches;
	uint64_t damaged_chunks; /* chunks whose records stopped making sense */
	uint64_t orphan_bytes;	 /* records before any CTX (never written so) */
};

/* Map and validate; 0 or -EINVAL/-errno with one sentence in err. */
int lp_log_open(struct lp_log *log, const char *path, char *err, size_t errlen);
void lp_log_close(struct lp_log *log);

/* Calls fn for every committed record, stretch by stretch in seq order
 * (so each thread's records come in the order it wrote them). A non-zero
 * return from fn stops the walk and is returned. */
typedef int (*lp_log_fn)(void *ctx, uint32_t tid, const struct lp_rec_header *h,
			 const void *payload, size_t len);
int lp_log_foreach(const struct lp_log *log, lp_log_fn fn, void *ctx);

/* Checks a directory holds a recording: returns the number of *.lplog
 * files, plus one for a non-empty process table (procs.lptab). */
int lp_log_dir_count(const char *dir);

#endif
