/* SPDX-License-Identifier: MIT */
/*
 * The run-queue part of a recorded wait (lp_runq.c): how long the thread,
 * once runnable again (woken, or preempted inside the call), waited for a
 * CPU before the call returned. From the kernel's own accounting of the
 * thread (/proc/thread-self/schedstat: time on a CPU, time on a run
 * queue), read once per recorded wait, after it: never on the path of a
 * call that is not recorded.
 */
#ifndef LP_RUNQ_H
#define LP_RUNQ_H

#include <stdint.h>

#include "lp_log_format.h"

/* The run-queue ns of the wait start..end that the calling thread just
 * ended (CLOCK_MONOTONIC ns), at most end - start; LP_RUNQ_UNKNOWN for the
 * thread's first recorded wait, or where schedstat cannot be read. Only
 * with lp_pre_guard set (a signal handler's wait must not interleave);
 * keeps errno. */
uint64_t lp_runq_take(uint64_t start, uint64_t end);

#endif
