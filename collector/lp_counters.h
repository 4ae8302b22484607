/* SPDX-License-Identifier: MIT */
/*
 * CPU counters at stage boundaries (libpfm4 + perf_event). The NVTX source
 * calls lp_counters_boundary() with the timestamp it stored for a range
 * begin/end; a sample carries that timestamp, and the importer pairs each
 * boundary with its thread's latest sample at or before it. Counting follows
 * LATPROF_COUNTERS (unset = the default software set, "none" = off) and
 * LATPROF_COUNTERS_INTERVAL_NS (min ns between two reads on a thread,
 * default 20000, 0 = every boundary); records in lp_log_counters.h.
 */
#ifndef LP_COUNTERS_H
#define LP_COUNTERS_H

#include <stdint.h>

#include "lp_core.h"

/* In LATPROF_DIR: the run's counter set-up, made by its first process. */
#define LP_CNT_CACHE_FILE "counters.cache"

/* Read this thread's counter group and record it at ts, unless the thread
 * read less than LATPROF_COUNTERS_INTERVAL_NS (default 20 us) before ts:
 * then nothing (one TLS compare). Opens the group on the thread's first
 * call if nothing opened it before. Cost of a read: one read() syscall. */
LP_EXPORT void lp_counters_boundary(uint64_t ts);
/* lp_counters_boundary() with its common case inline: the thread's
 * state starts with the ts of its next read (0: not set up), so a boundary
 * within the interval, or on a thread that never reads, costs one TLS
 * compare and no call. */
struct lp_cnt_thread;
LP_EXPORT extern __thread struct lp_cnt_thread lp_cnt_self
    __attribute__((tls_model("initial-exec")));
static inline void lp_counters_mark(uint64_t ts)
{
	if (__builtin_expect(ts >= *(const uint64_t *)(const void *)&lp_cnt_self, 0))
		lp_counters_boundary(ts);
}
/* A recording thread began: from now on its whole-thread totals are
 * written at its exit. Called at thread start by preload, and for the main
 * thread when the process creates its log (its first record) or its first
 * thread. Opens the thread's counter group only when the set has an event
 * the kernel's thread accounting does not keep (lp_taskacct.h); else the
 * group waits for the thread's first boundary (lp_counters_thread_ranges).
 * A process that records nothing never opens one. Cheap when done. */
LP_EXPORT void lp_counters_thread_start(void);
/* This thread marks stage boundaries: open its group now. Called by the
 * NVTX source before a thread's first time stamp, so that opening (tens of
 * us, the process-wide set-up on the first thread) never lands inside a
 * range. Cheap when already open. */
LP_EXPORT void lp_counters_thread_ranges(void);
/* Record the thread's totals and close its group. Runs by itself from a
 * pthread key destructor (and at process exit for the exiting thread);
 * calling it earlier, e.g. from preload's thread-exit hook, is safe. */
LP_EXPORT void lp_counters_thread_exit(void);

#endif
