/* SPDX-License-Identifier: MIT */
/*
 * Lock contention analysis: which locks threads queued on, for how long,
 * where and behind whom. One struct, queried from a latprof database and
 * rendered by report/lp_report_locks.c (writers never touch SQLite).
 *
 * Thread time, the denominator of every share: the sum over recorded
 * threads of (end_ns - start_ns), a missing bound taken from the thread's
 * process; when no thread has both, the sum of process durations. A share
 * of 0.5 means the run's threads spent half their lives waiting on it.
 *
 * Only contention and GIL waits are ranked (lp_waits.h LP_RANKED_WAITS):
 * a join, an idle worker or a one-shot event is never a contended lock.
 * The GIL is one row, its condition waits counted on its mutex.
 */
#ifndef LP_LOCKS_H
#define LP_LOCKS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_waits.h"

/* A code location: the innermost recorded frame of a wait's stack, or the
 * frame above a lock wrapper (a frame shared by waits on several locks). */
struct lp_lock_site {
	char *where;	/* "fn file:line", "fn (module+0xoff)", "module+0xoff", "(no stack)" */
	char *function; /* NULL when unknown */
	char *file;	/* NULL without debug info */
	int line;
	char *module;	 /* NULL when no module covered the pc */
	uint64_t offset; /* pc - module load bias */
	long long count;
	int64_t wait_ns;
	int depth;     /* of the site in its stacks: 0 innermost, 1-2 above wrappers */
	int64_t stack; /* one stack through this site (stacks.id), 0 without */
	char *chain;   /* 3 frames from the site (from the wrapper below it): "a <- b <- c" */
	/* A Python site (the wait's innermost Python frame outside threading,
	 * queue and concurrent: docs/python.md): function, file and line are
	 * Python's, chain stays the native one, py_chain is Python's. */
	int python;
	char *source;	/* the line's text when the file was readable at import */
	char *py_chain; /* "serve_one <- worker <- run" */
	int64_t py_stack;
};

/* A GIL wait's holder: the Python function the thread holding the GIL
 * ran when the wait began (racy by nature: docs/python.md). */
struct lp_py_holder {
	char *function, *file;
	long long count;
	int64_t wait_ns;
};

struct lp_lock_thread {
	int tid;
	char *name; /* NULL when the thread was never named */
	long long count;
	int64_t wait_ns; /* waiters: time it waited; owners: time others waited on it */
};

struct lp_lock_row {
	int64_t id;   /* locks.id */
	char *name;   /* variable, or "0xADDR (heap) at <most frequent call site>" */
	char *symbol; /* locks.name: the variable, NULL for heap/stack locks */
	char *module; /* module whose data holds it, NULL for heap/stack */
	uint64_t address;
	char *kind; /* mutex, rwlock, sem, spin */
	int wclass; /* LP_WAIT_CONTENTION or LP_WAIT_GIL (lp_waits.h) */
	int pid;
	char *process;	 /* the process's exe (argv[0]) */
	long long count; /* contended acquisitions */
	long long timeouts;
	int64_t total_ns, max_ns;
	int64_t p50_ns, p99_ns; /* nearest rank, as lp_quantile_nearest */
	double mean_ns;
	double share; /* total_ns / thread time */
	struct lp_lock_site *sites;
	size_t n_sites;
	size_t n_sites_total; /* distinct sites before the cut to top N */
	struct lp_lock_thread *waiters, *owners;
	size_t n_waiters, n_owners;
	long long owner_unknown; /* waits whose owner glibc did not expose */
	/* The holder's stage: the NVTX range the owner was innermost in when
	 * most waits began (lock_waits.owner_range_id), NULL when none. */
	char *holder_stage;
	long long holder_stage_waits; /* waits whose holder was in it */
	/* Recorded holds (lock_holds: those >= 50 us, from the lock's first
	 * wait on): count, nearest-rank p50/p99, max, the part inside requests
	 * (the most frequent outermost range), and the acquiring site and the
	 * holder's stage with the most hold time (NULL when none). */
	long long holds;
	int64_t hold_p50_ns, hold_p99_ns, hold_max_ns, hold_total_ns, held_in_req_ns;
	char *hold_site, *hold_stage;
	/* Per-thread semaphores folded into this row (lp_locks.c, lp_fold_sql:
	 * each waited on by one thread only, like PostgreSQL's PGSemaphore,
	 * their waits at this one site); 0 for a row of one lock. A folded row
	 * has id -frame_id, address 0, no symbol, and pid 0 when its waiters
	 * were in n_processes > 1 processes. */
	long long folded;
	long long n_processes;
	/* GIL rows: holders' functions by wait time, at most top */
	struct lp_py_holder *py_holders;
	size_t n_py_holders;
	long long py_holder_waits; /* waits whose holder's function is known */
};

struct lp_lock_report {
	int top; /* N of --top: locks, sites and threads each cut to N */
	int64_t thread_time_ns;
	const char *thread_time_basis; /* "threads" or "processes" (static) */
	long long n_threads;
	long long n_locks; /* locks with at least one contention or GIL wait */
	/* every recorded wait by class (lp_waits.h): lock and condition waits,
	 * pthread_join calls (join), CUDA host syncs (sync) */
	long long class_n[LP_WAIT_NCLASSES];
	int64_t class_ns[LP_WAIT_NCLASSES];
	long long lock_waits, cond_waits;
	int64_t lock_wait_ns, cond_wait_ns;
	struct lp_lock_row *locks; /* by total wait, descending; at most top */
	size_t n;
};

/* Fill r from db; top <= 0 means 10. Returns 0, or -errno with one
 * sentence in err. r is zeroed first and safe to free either way. */
/* Groups every lock wait once per connection into temp.lp_wagg (src 0:
 * lock_waits, 1: the GIL's condition waits; lock_id, stack_id, thread_id,
 * owner_tid, class; n waits, ns total, mx longest, tmo timed out, rq waited
 * for a CPU, pos/pos_ns longer than 0 and their time), which the lock
 * analysis, the rules and the run summary read instead of the waits.
 * 0, or -EIO / -ENOMEM with err filled. */
int lp_locks_group(sqlite3 *db, char *err, size_t errlen);

int lp_locks_analyze(sqlite3 *db, int top, struct lp_lock_report *r, char *err, size_t errlen);

/* LP_LOCKS_NOFOLD: one row per lock, per-thread semaphores included (the
 * lock rules, which rank lock_waits by lock_id). */
#define LP_LOCKS_NOFOLD 1
/* LP_LOCKS_NATIVE: native call sites even where a wait has Python frames
 * (`latprof report --locks --native`). */
#define LP_LOCKS_NATIVE 2
int lp_locks_analyze_flags(sqlite3 *db, int top, int flags, struct lp_lock_report *r, char *err,
			   size_t errlen);
void lp_lock_report_free(struct lp_lock_report *r);

#endif
