/* SPDX-License-Identifier: MIT */
/*
 * The tool's side of the run's table of waits in progress
 * (format/lp_inflight_format.h): `latprof run` makes it, the importer
 * reads the waits that processes killed by a signal died in.
 */
#ifndef LP_INF_TABLE_H
#define LP_INF_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* One wait found in progress, its start in CLOCK_MONOTONIC ns. */
struct lp_inf_wait {
	uint32_t pid, tid;
	uint64_t image; /* the image's start_ns */
	uint64_t start;
	uint64_t obj, obj2, ra;
	uint32_t what; /* record type << 8 | aux */
	uint32_t stack;
	int imported; /* set by the importer once it wrote this wait */
};

struct lp_inf_waits {
	struct lp_inf_wait *v;
	size_t n, cap;
	long long unconverted; /* in TSC ticks, with no usable second point */
	long long full;	       /* threads that found no free slot (kept theirs in TLS) */
};

/* Make DIR/inflight.lpinf at its full size, with a TSC point. 0, or
 * -errno (the file is then absent and processes keep their slots in TLS). */
int lp_inflight_make(const char *dir);

/* Every wait in progress in DIR/inflight.lpinf (none when the file is
 * absent or not a table of this format). -errno only for memory. */
int lp_inflight_load(const char *dir, struct lp_inf_waits *out);
void lp_inflight_free(struct lp_inf_waits *w);

#endif
