/* SPDX-License-Identifier: MIT */
/*
 * CPU counter records of the event log (types 128..159, see
 * lp_log_format.h). Written by collector/lp_counters.c, read by
 * import/sources/lp_import_counters.c. Same rules as the core records: fixed
 * layouts, 8-byte aligned, little-endian.
 *
 * A process writes one CONFIG record (the event list, which events the
 * machine can count and why not) before its first SAMPLE. A thread that
 * marks NVTX ranges counts with one perf_event group that starts at zero
 * when the group is opened; a SAMPLE holds the group's running totals at an
 * NVTX boundary (ts is the boundary's own timestamp). A thread reads at most once per
 * LATPROF_COUNTERS_INTERVAL_NS, so the importer pairs each range boundary
 * with the thread's latest sample at or before it; TOTAL holds the totals
 * when the thread exits, TOTAL_OF those of a thread still running when the
 * process exited (read by the exiting thread). Totals are the group's, or,
 * when every event is one the kernel's thread accounting keeps, that
 * accounting over the thread's life (collector/lp_taskacct.h; then
 * enabled == running, never scaled).
 */
#ifndef LP_LOG_COUNTERS_H
#define LP_LOG_COUNTERS_H

#include <stdint.h>

#include "lp_log_format.h"

#define LP_CNT_MAX_EVENTS 16

enum lp_cnt_rec_type {
	LP_REC_CNT_CONFIG = 128, /* aux = event count; lp_rec_cnt_config + lp_cnt_event_def[aux] */
	LP_REC_CNT_SAMPLE = 129, /* aux = event mask; lp_rec_cnt_sample + u64 values[] */
	LP_REC_CNT_TOTAL = 130,	 /* aux = event mask; lp_rec_cnt_total + u64 values[] */
	/* aux = event mask; lp_rec_cnt_total_of + u64 values[]: the totals of
	 * another thread of the process, still alive when the process exited,
	 * written by the exiting thread */
	LP_REC_CNT_TOTAL_OF = 131,
	/* aux = errno (EMFILE, ENFILE); u64 ts: this thread's counter group
	 * could not be opened, out of file descriptors (it has no counters) */
	LP_REC_CNT_NOFD = 132,
	/* aux = 0; lp_rec_cnt_runq: a thread's run_delay and CPU affinity when
	 * its totals were written (beside its TOTAL or TOTAL_OF record) */
	LP_REC_CNT_RUNQ = 133,
};

/* lp_rec_cnt_config.flags */
#define LP_CNTF_EXCLUDE_KERNEL 0x1u /* perf_event_paranoid forced user-only counting */
#define LP_CNTF_DENIED 0x2u	    /* perf_event_open refused every event (EACCES/EPERM) */
#define LP_CNTF_NO_LIBPFM 0x4u	    /* built without libpfm4: nothing is counted */

struct lp_rec_cnt_config {
	int32_t paranoid; /* /proc/sys/kernel/perf_event_paranoid, INT32_MIN if unreadable */
	uint32_t flags;	  /* LP_CNTF_* */
	uint32_t note;	  /* string id of a one-line explanation (paranoid), 0 if none */
	uint32_t pad;
	/* struct lp_cnt_event_def events[aux] */
};

struct lp_cnt_event_def {
	uint32_t name;	 /* string id: the name as the user gave it */
	int32_t err;	 /* 0 = counted; > 0 errno of perf_event_open; < 0 libpfm4 code */
	uint32_t reason; /* string id of a sentence saying why it is not counted, 0 if counted */
	uint32_t pad;
};
_Static_assert(sizeof(struct lp_cnt_event_def) == 16, "event def size");

/*
 * aux bit i set = config event i is in this thread's group; values[] holds
 * one u64 per set bit, lowest bit first. enabled/running are the group's
 * PERF_FORMAT_TOTAL_TIME_ENABLED/RUNNING: running < enabled means the
 * kernel multiplexed the group and the values must be scaled.
 */
struct lp_rec_cnt_sample {
	uint64_t ts;
	uint64_t enabled;
	uint64_t running;
	/* uint64_t values[popcount(aux)] */
};

struct lp_rec_cnt_total {
	uint64_t ts;	  /* thread exit (or process exit for the main thread) */
	uint64_t open_ns; /* when the group was opened: totals cover [open_ns, ts] */
	uint64_t enabled;
	uint64_t running;
	/* uint64_t values[popcount(aux)] */
};

struct lp_rec_cnt_total_of {
	uint32_t tid; /* the thread the totals are of */
	uint32_t pad;
	struct lp_rec_cnt_total total;
	/* uint64_t values[popcount(aux)] */
};

/* The kernel's run_delay of thread tid (/proc/self/task/TID/schedstat,
 * its second field): all the time it was runnable but waiting for a CPU,
 * since it began. Whole-thread breakdown rows split their time outside the
 * recorded waits with it: what task-clock leaves of that time is not all
 * run-queue time (blocking too short to record, calls not hooked), nor is
 * all of the rest CPU time outside the waits (task-clock counts the
 * kernel's work inside them too). Beside it the thread's CPU affinity then
 * (sched_getaffinity): an app confined after latprof started it (`latprof
 * run -- taskset -c 0 app`, a pinned pool) runs on fewer cores than
 * latprof's own affinity says. */
struct lp_rec_cnt_runq {
	uint32_t tid;
	uint32_t cpus;	    /* CPUs in its affinity; 0 when unread */
	uint64_t ts;	    /* when it was read */
	uint64_t run_delay; /* ns */
	uint64_t cpu_mask;  /* its affinity's CPUs 0..63 (bit n: CPU n); 0 when unread or
			     * when it holds a CPU past 63 */
};
_Static_assert(sizeof(struct lp_rec_cnt_runq) == 32, "runq total size");

#endif
