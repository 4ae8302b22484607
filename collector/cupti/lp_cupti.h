/* SPDX-License-Identifier: MIT */
/*
 * CUPTI collector internals. The translator is a plain function over one
 * completed activity buffer so unit tests can feed it hand-built buffers of
 * the real cupti_activity.h structs without a GPU.
 */
#ifndef LP_CUPTI_H
#define LP_CUPTI_H

#include <stddef.h>
#include <stdint.h>

struct lp_cupti_counts {
	uint64_t records;	/* activity records translated */
	uint64_t unknown_kinds; /* skipped: kinds we do not translate */
	uint64_t log_drops;	/* the core log refused the record */
	uint64_t bad_ts;	/* dropped: start or end 0, or end before start */
	uint64_t foreign_ts;	/* dropped: stamped by a clock that is not latprof's */
	uint64_t filtered;	/* API calls kept as counts only (lp_cupti_api_counts) */
};

/* Translate every record of buf[0, valid) into the recording core's log.
 * Walks with cuptiActivityGetNextRecord (pure buffer parsing: works
 * without a driver). Returns the number of records seen. */
uint64_t lp_cupti_translate(uint8_t *buf, size_t valid, struct lp_cupti_counts *c);

/* Writes an LP_REC_CUDA_STATUS record. */
void lp_cupti_status(unsigned phase, int code, unsigned detail, unsigned driver_version,
		     const char *msg);

/* Writes an LP_REC_CUDA_STATS record with the totals so far; conflicts
 * is a mask of LP_CUDA_CONFLICT_*. */
void lp_cupti_stats(const struct lp_cupti_counts *c, uint64_t dropped, uint64_t buffers,
		    uint64_t denied, uint32_t conflicts);

/* Writes one LP_REC_CUDA_API_COUNT record per filtered API seen so far. */
void lp_cupti_api_counts(void);

/* The collector's own threads (tid): their API records are not the app's
 * and are not imported. Its flush thread calls cuCtxGetCurrent before the
 * final forced flush: that call's DRIVER record coming back (counted by
 * lp_cupti_probe_seen) proves the capture still ran to the end. */
void lp_cupti_own_thread(uint32_t tid);
uint64_t lp_cupti_probe_seen(void);

/* The CUDA driver's function name, from the loaded libcuda.so.1 (the
 * driver is what loads this library), else the global scope. */
void *lp_cupti_driver_sym(const char *name);

#endif
