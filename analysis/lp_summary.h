/* SPDX-License-Identifier: MIT */
/* What a run was: processes and how they ended, threads, duration, records
 * lost while recording, which sources captured data. For `latprof report`
 * without a view flag; rendered by report/lp_report_summary.c. */
#ifndef LP_SUMMARY_H
#define LP_SUMMARY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct lp_summary_proc {
	int pid, ppid;
	char *cmdline;	/* NULL when the start record was lost */
	char *exit_how; /* exit, _exit, signal, returned, exec, NULL = unknown */
	int has_status; /* exit_status is valid */
	int exit_status;
	int exit_signal;	  /* 0 when not killed by a signal */
	int64_t start_ns, end_ns; /* end_ns 0 when unknown */
	long long threads;
	long long dropped_records, dropped_chunks, dropped_strings;
	int log_closed;	  /* 0: the process died before closing its log */
	char *title;	  /* its title at exit when it rewrote it (postgres), else NULL */
	long long events; /* lock waits, condition waits and NVTX ranges recorded */
};

struct lp_run_summary {
	char *latprof_version, *host, *wall_start, *run_cmdline; /* meta, NULL if absent */
	char *import_source;	  /* meta import.source: another profiler's capture, NULL if ours */
	int64_t start_ns, end_ns; /* earliest process start, latest end */
	struct lp_summary_proc *procs; /* by start time */
	size_t n_procs;
	long long threads;
	long long dropped_records, dropped_chunks, dropped_strings;
	long long lock_waits, cond_waits;
	int gpu_captured; /* meta cuda.captured is present and not 0 */
	char *gpu_status; /* meta cuda.status: why not, or what; NULL if absent */
};

int lp_summary_analyze(sqlite3 *db, struct lp_run_summary *s, char *err, size_t errlen);
void lp_summary_free(struct lp_run_summary *s);

#endif
