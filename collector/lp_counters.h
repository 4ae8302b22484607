/* SPDX-License-Identifier: MIT */
/*
 * CPU counters at stage boundaries (libpfm4 + perf_event). The NVTX source
 * calls lp_counters_boundary() with the timestamp it stored for a range
 * begin/end, so the importer can pair counter samples with ranges by
 * (thread, ts). A no-op until counting is enabled (LATPROF_COUNTERS).
 */
#ifndef LP_COUNTERS_H
#define LP_COUNTERS_H

#include <stdint.h>

#include "lp_core.h"

LP_EXPORT void lp_counters_boundary(uint64_t ts);
/* Open this thread's counter group (called at thread start by preload). */
LP_EXPORT void lp_counters_thread_start(void);

#endif
