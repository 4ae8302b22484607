/* SPDX-License-Identifier: MIT */
/*
 * Recording core: the API every in-process source (preload/, nvtx, cupti,
 * counters) writes through. Lives in liblatprof_core.so so that one process
 * has exactly one log no matter how many sources are loaded.
 *
 * Rules for callers (all run inside the app):
 *  - lp_rec_begin()/lp_rec_commit() are the hot path: no locks, no malloc,
 *    no syscalls once the thread holds a chunk. A NULL return means the
 *    record was dropped (and counted); the caller just carries on.
 *  - Nothing here changes errno.
 *  - Everything is a no-op until lp_core_init() succeeded (LATPROF_DIR set).
 *  - A process that never records has no log, only its lines in the run's
 *    process table: lp_rec_begin() creates the log the first time.
 */
#ifndef LP_CORE_H
#define LP_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "lp_log_format.h"

#define LP_EXPORT __attribute__((visibility("default")))

/* Start recording this process (idempotent; thread-safe): it is entered
 * in the run's process table (lp_ptab_format.h); its own log is created by
 * its first record. Returns 0 or -errno. */
LP_EXPORT int lp_core_init(void);
/* True once this process records (lp_core_init succeeded), log or not. */
LP_EXPORT int lp_core_active(void);
/* Call in the child right after fork(): the child is entered in the table
 * and gets a log of its own at its first record. */
LP_EXPORT void lp_core_after_fork_child(void);
/* vfork: the child shares the parent's memory, this thread's TLS
 * included, until it execs or exits, and the parent's thread waits. In the
 * child (after vfork returned 0): enter it in the table under its own pid,
 * writing nothing the parent's memory keeps but this thread's vfork slot;
 * its exec and exit then go to the table as its own, never to the parent's
 * log. In the parent once resumed: clear the slot. parent_tid is the
 * vforking thread's lp_tid(), taken before the vfork. */
LP_EXPORT void lp_core_vfork_child(uint32_t parent_tid);
LP_EXPORT void lp_core_vfork_parent(void);
/* True in a vfork child, before its exec or exit. */
LP_EXPORT int lp_core_in_vfork(void);
/* fn runs on the thread that creates the log, right after the log's start
 * records (the interposer opens that thread's counters there). */
LP_EXPORT void lp_core_on_log_open(void (*fn)(void));
/* fn runs first in lp_core_exit (exit, _exit, _Exit, return from main, the
 * core's destructor), once, before the exit record: a source that holds
 * records outside the log (CUPTI's activity buffers) hands them over there.
 * Several sources may register (up to 4); never in a vfork child. */
LP_EXPORT void lp_core_on_exit(void (*fn)(void));
/* Write the exit record (to the log, or to the table when there is none)
 * and mark the log closed. Safe to call twice. */
LP_EXPORT void lp_core_exit(int status, unsigned how);
/* Before exec*(): record it (log or table); the new image starts afresh.
 * why: NULL, or why the new image will not be recorded (the interposer
 * leaves itself out of its LD_PRELOAD), kept after the path's NUL. */
LP_EXPORT void lp_core_before_exec(const char *path, const char *why);
/* After a raw clone() (one that bypassed pthread_create and fork) made
 * task tid with these clone flags: the process table counts it for this
 * image, since nothing the task does is recorded. */
LP_EXPORT void lp_core_raw_clone(uint64_t flags, uint32_t tid);
/* In a child of a raw clone() without CLONE_VM: a copy of our memory that
 * no fork handler ran in. It records nothing from now on: its records
 * would land in the parent's log, which it still maps. */
LP_EXPORT void lp_core_detach_child(void);
/* This run's log directory (LATPROF_DIR as read at start-up), or NULL
 * while no log is open. For files shared by the run's processes. */
LP_EXPORT const char *lp_core_dir(void);
/* Before this process, running as root, drops to uid (setuid and kin):
 * hand the run's directory and its shared files to uid, so that it and
 * the processes it forks and execs can still write their logs. */
LP_EXPORT void lp_core_before_uid_drop(uid_t uid);
/* This image's pid and start (CLOCK_MONOTONIC ns): the process table's key
 * for it. Zeros while recording is off. */
LP_EXPORT void lp_core_image(uint32_t *pid, uint64_t *start_ns);
/* Append a module snapshot (dl_iterate_phdr) so stacks can be symbolized. */
LP_EXPORT void lp_core_record_modules(void);
/* Count one hold of a contended lock that could not be timed (the log
 * header's dropped_holds). Lock-free; keeps errno. */
LP_EXPORT void lp_core_drop_hold(void);

/*
 * Reserve a record of `payload` bytes of type `type` with header aux
 * `aux`; returns the payload (zero-filled is NOT guaranteed) or NULL.
 * Must be followed by lp_rec_commit() on the same thread before any other
 * lp_rec_begin(). Signal handlers that interrupt a begin/commit pair get
 * NULL (counted as dropped) instead of corrupting the record.
 */
LP_EXPORT void *lp_rec_begin(uint16_t type, uint32_t aux, size_t payload);
LP_EXPORT void lp_rec_commit(void);
/* lp_rec_begin() for a record that belongs to thread `tid`, written by the
 * calling thread (at exit, a wait still in progress on another thread).
 * Commit with lp_rec_commit() as usual. */
LP_EXPORT void *lp_rec_begin_for(uint32_t tid, uint16_t type, uint32_t aux, size_t payload);

/* Bytes of a log chunk, its header included (the log header says so too). */
#define LP_CHUNK_SIZE (64u * 1024u)

/* A thread's recording state: the core's own, in a header only so that
 * lp_rec_put8() can write inline (one initial-exec TLS base: no
 * __tls_get_addr, no call). */
struct lp_thread {
	struct lp_chunk_header *chunk;
	uint32_t used; /* bytes after the chunk header */
	uint32_t pending;
	uint32_t tid;
	uint32_t gen; /* lp_gen when tid/chunk were set */
	uint32_t backoff;
	volatile int busy; /* inside a record: a signal handler's is dropped */
};
LP_EXPORT extern __thread struct lp_thread lp_rec_self __attribute__((tls_model("initial-exec")));

/* lp_rec_put8() when the thread has no chunk, or no room in it. */
LP_EXPORT void lp_rec_put8_slow(uint16_t type, uint32_t aux, uint64_t v);

#ifdef LATPROF_TEST_SLOW_HOTPATH
/* A test build's deliberately slowed record path: the benchmarks must see
 * it and fail (tests/bench/test_bench_gate.py). */
static inline void lp_test_slow_hotpath(void)
{
	for (volatile int i = 0; i < LATPROF_TEST_SLOW_HOTPATH; i++)
		;
}
#else
static inline void lp_test_slow_hotpath(void)
{
}
#endif

/*
 * A 16-byte record (header and one u64: a time stamp) written inline, the
 * NVTX push and pop's: what lp_rec_begin + lp_rec_commit do, without the
 * two calls, when the thread holds a chunk with room. The busy flag is
 * set before the position is read, so a signal handler that records in
 * between gets its own place (or is dropped inside ours), as with
 * lp_rec_begin. errno untouched.
 */
static inline void lp_rec_put8(uint16_t type, uint32_t aux, uint64_t v)
{
	struct lp_thread *t = &lp_rec_self;
	lp_test_slow_hotpath();
	if (__builtin_expect(!t->busy, 1)) {
		t->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		struct lp_chunk_header *c = t->chunk;
		uint32_t u = t->used;
		if (__builtin_expect(c && u + 16 <= LP_CHUNK_SIZE - sizeof(*c), 1)) {
			struct lp_rec_header *h = (struct lp_rec_header *)((char *)(c + 1) + u);
			h->type = type;
			h->size = 16;
			h->aux = aux;
			*(uint64_t *)(h + 1) = v;
			t->used = u + 16;
			__atomic_store_n(&c->committed, (uint64_t)u + 16, __ATOMIC_RELEASE);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			t->busy = 0;
			return;
		}
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->busy = 0;
	}
	lp_rec_put8_slow(type, aux, v);
}

/* Intern a string/stack for this process: returns its id (> 0), writing
 * its definition record the first time; 0 if it could not be recorded. */
LP_EXPORT uint32_t lp_intern_string(const char *s, size_t len);
LP_EXPORT uint32_t lp_intern_stack(const uint64_t *pcs, unsigned n);

/* backtrace() loads libgcc_s (dlopen, malloc) on first use. Loading it in
 * every process cost ~15% of a short process's start (a shell's /bin/true),
 * so it is loaded when a process is about to get a second thread, the
 * first that can contend a lock (preload's pthread_create), outside any
 * lock hook; else at the first stack captured. Idempotent, keeps errno. */
LP_EXPORT void lp_core_warm_unwinder(void);

/* backtrace() that goes on through JIT code by frame pointers where the
 * DWARF unwinder stops in code no loaded object covers (lp_unwind.c).
 * Returns the frames written to buf (innermost first); keeps errno. */
LP_EXPORT int lp_core_backtrace(void **buf, int max);
/* Looks the unwinder up in libgcc_s once backtrace() has loaded it. */
void lp_unwind_resolve(void);

/* Capture the caller's stack (skipping `skip` innermost frames) and intern
 * it. Returns the stack id or 0. */
LP_EXPORT uint32_t lp_capture_stack(unsigned skip);

/* Cached kernel thread id of the calling thread (reset after fork). */
LP_EXPORT uint32_t lp_tid(void);

/* The one clock: CLOCK_MONOTONIC nanoseconds (vDSO, no syscall). */
static inline uint64_t lp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
