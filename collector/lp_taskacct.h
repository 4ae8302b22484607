/* SPDX-License-Identifier: MIT */
/*
 * A thread's CPU time, context switches, migrations and page faults as the
 * kernel's own per-thread accounting keeps them (/proc/self/task/TID/sched
 * and stat; getrusage(RUSAGE_THREAD) and CLOCK_THREAD_CPUTIME_ID for the
 * calling thread when /proc cannot be read). The same counts as the
 * perf_event software events task-clock, context-switches, cpu-migrations,
 * minor-faults and major-faults over the thread's whole life, read without
 * a perf_event open on the thread: a thread with perf events pays for them
 * at every context switch (docs/schema.md, "Counters").
 *
 * Workload: a read at each recording thread's exit and, from the exiting
 * thread, for each one still running at the process's exit. Never on a hot
 * path. Raw system calls only (async-signal-safe: exit() may run in a
 * handler); errno preserved.
 */
#ifndef LP_TASKACCT_H
#define LP_TASKACCT_H

#include <stdint.h>

enum lp_acct_field {
	LP_ACCT_CPU_NS,	    /* time on a CPU since the thread began (steal included) */
	LP_ACCT_SWITCHES,   /* voluntary + involuntary context switches */
	LP_ACCT_MIGRATIONS, /* moves to another CPU (needs /proc/PID/sched) */
	LP_ACCT_MINFLT,	    /* page faults served without I/O */
	LP_ACCT_MAJFLT,	    /* page faults that read from disk */
	LP_ACCT_N
};

struct lp_task_acct {
	uint64_t v[LP_ACCT_N];
	uint32_t have; /* bit f: v[f] was read */
};

/* Thread tid of this process; self: tid is the calling thread (then the
 * fields /proc cannot give come from getrusage and the thread's clock).
 * Fills a->have with what was read (0: nothing). */
void lp_task_acct_read(uint32_t tid, int self, struct lp_task_acct *a);

/* Thread tid's schedstat run_delay (ns on a run queue since it began) into
 * *ns: 0, or -1 when it cannot be read (no CONFIG_SCHED_INFO, /proc). */
int lp_task_run_delay(uint32_t tid, uint64_t *ns);

#endif
