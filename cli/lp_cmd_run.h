/* SPDX-License-Identifier: MIT */
/* Internals of `latprof run`, split by concern: output naming
 * (run_output.c) and per-source options and environment (run_sources.c). */
#ifndef LP_CMD_RUN_H
#define LP_CMD_RUN_H

#include <limits.h>
#include <sqlite3.h>
#include <sys/types.h>

enum lp_cuda_mode { LP_CUDA_AUTO = 0, LP_CUDA_ON, LP_CUDA_OFF };

struct lp_run_opts {
	const char *output_pattern;
	char output[PATH_MAX];
	int output_has_pid; /* %p: the name is known only after fork */
	int force;
	int keep_logs;
	char logdir[PATH_MAX];
	char marker[PATH_MAX]; /* OUTPUT.logs -> logdir while the logs exist */
	enum lp_cuda_mode cuda;
	const char *counters; /* NULL = default set */
	char block_ns[24];    /* --block-threshold in ns, "off"; "" = the default */
	int wait_all;	      /* --wait=all: also wait for descendants left running */
	int left_running;     /* descendants still running at import */
};

extern const struct lp_cmd lp_cmd_run;

/* Expand %q{VAR}, pick latprof-N.db, and refuse a bad path before the app
 * starts: one message, returns -1. */
int lp_run_prepare_output(struct lp_run_opts *o);
/* After the app ran: expand %p and re-check. */
int lp_run_finish_output(struct lp_run_opts *o, pid_t app);
/* True when no process wrote a log (the exec failed). */
int lp_run_no_logs(const struct lp_run_opts *o);

/* OUTPUT.logs, a symlink to the log directory while it exists: found
 * after latprof itself was killed (run_output.c). */
void lp_run_mark_logs(struct lp_run_opts *o, pid_t app);
void lp_run_unmark_logs(struct lp_run_opts *o);

/* Source options (--cuda, --counters, --block-threshold): 0 or -1 after a
 * message. */
int lp_run_source_option(struct lp_run_opts *o, int opt, const char *arg);
/* In the child before exec: environment for the NVTX/CUDA/counter sources. */
void lp_run_env_sources(const struct lp_run_opts *o);
/* After import, from the database opened once for every note (NULL: it
 * could not be read): non-zero exit code when a source that was required
 * captured nothing (e.g. --cuda=on without a GPU). */
int lp_run_check_sources(const struct lp_run_opts *o, sqlite3 *db);
/* --cuda (cli/run_cuda.c): CUDA_INJECTION64_PATH; the one-line verdict. */
void lp_run_cuda_env(const struct lp_run_opts *o);
int lp_run_cuda_check(const struct lp_run_opts *o, sqlite3 *db);

/* LATPROF_* settings (cli/run_env.c): 0, or -1 after one message. Values
 * with units (LATPROF_LOG_MB=2G) are rewritten in the collector's unit. */
int lp_run_check_env(void);

/* What was not recorded (cli/run_summary.c): the reason the interposer
 * cannot attach to prog (static, set-user-ID) or NULL; after import, one
 * line per child that exec'd and wrote no log, one for threads without
 * counters. */
const char *lp_run_unattachable(const char *prog);
/* After import, from the database (NULL: nothing to say): the lock waits
 * by class when any is not contention, then what was not recorded (above). */
void lp_run_summary_notes(sqlite3 *db, const char *dbpath);

/* Signals and job control (cli/run_signals.c): one signal, one delivery.
 * init before fork; child in the child before exec; parent after fork. */
int lp_run_signals_init(void);
void lp_run_signals_child(void);
void lp_run_signals_parent(pid_t app);
/* waitpid reported pid stopped with status (WUNTRACED). */
void lp_run_signals_stopped(pid_t pid, int status);
/* The app was reaped: the terminal goes back to latprof's group. */
void lp_run_signals_app_gone(void);
/* --wait=all: INT, TERM or HUP reached latprof after the app exited. */
int lp_run_signals_stop_requested(void);

#endif
