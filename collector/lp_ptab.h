/* SPDX-License-Identifier: MIT */
/*
 * Writer of the run's process table (lp_ptab_format.h), inside
 * liblatprof_core: the core appends a process image's start, exec and exit
 * here while the image has no event log of its own. Not exported.
 */
#ifndef LP_PTAB_H
#define LP_PTAB_H

#include <stddef.h>
#include <stdint.h>

#include "lp_ptab_format.h"

/* Open DIR/procs.lptab for appending, creating it if it is the run's
 * first process. 0 or -errno. */
int lp_ptab_open(const char *dir);
/* Append one record with a single write(); a failure is counted and
 * reported in the `lost` field of this image's next record. Keeps errno. */
int lp_ptab_put(uint16_t type, uint32_t pid, uint64_t start_ns, uint64_t ts, const void *fixed,
		size_t flen, const void *text, size_t tlen);
/* The same for a vfork child (lp_core_vfork_child), whose memory is its
 * parent's: its records say 0 lost, a failure is counted in the parent's
 * next record, and a descriptor it lost is reopened without keeping it. */
int lp_ptab_put_child(uint16_t type, uint32_t pid, uint64_t start_ns, uint64_t ts,
		      const void *fixed, size_t flen, const void *text, size_t tlen);
/* Count n records of this image lost elsewhere (dropped without a log). */
void lp_ptab_lose(uint64_t n);
/* In a forked child: the inherited descriptor stays, the count restarts. */
void lp_ptab_fork_child(void);

#endif
