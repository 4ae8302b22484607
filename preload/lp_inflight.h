/* SPDX-License-Identifier: MIT */
/*
 * Waits in progress, for the exit sweep (lp_inflight.c).
 *
 * A hook writes a wait when the wait returns. A thread still blocked when
 * the process exits (an idle worker in pthread_cond_wait, a server's
 * thread in epoll_wait, a logger asleep, a shell in wait4) never returns:
 * without the sweep its last wait is never written, and the breakdown
 * counts that time as on-CPU or preempted, the opposite of the truth
 * (xz -T2: a worker idle for the last 5 of 14 s showed "preempted 37%"
 * while the kernel's schedstat said 0.02 s on a run queue).
 *
 * So each hook that may block fills its thread's slot before the real
 * call and empties it after; at exit the exiting thread writes every slot
 * still full as a wait that ended at the exit, flagged
 * LP_WAITF_UNFINISHED, on behalf of its thread (lp_rec_begin_for).
 *
 * A process killed by a signal it does not handle runs no sweep: the slots
 * therefore live in the run's shared file (lp_inflight_format.h), where
 * the importer finds the waits the process died in.
 *
 * Costs on the hooks' path: a compare to see the thread registered, two
 * loads, five stores before the call, one store after it. Registration (a
 * slot claimed in the shared file, an entry in a fixed table) happens at a
 * thread's first hooked wait, so a process that never waits never touches
 * either; a process image maps the file at its first registration.
 */
#ifndef LP_INFLIGHT_H
#define LP_INFLIGHT_H

#include <stdint.h>

#include "lp_inflight_format.h"

/* A thread's handle on its slot: the slot itself is in the run's shared
 * table (lp_inflight_format.h), or, where that cannot be mapped or is
 * full, `own` in TLS, which is lost when the process is killed. */
struct lp_inf_thread {
	struct lp_inflight *slot; /* the slot in use: shared, or &own */
	uint32_t gen;		  /* == lp_inf_gen: registered in this process image */
	int32_t idx;		  /* its entry in the table, -1 when the table was full */
	uint32_t retry;		  /* on `own` only because another thread was mapping */
	struct lp_inflight own;
};

extern __thread struct lp_inf_thread lp_inf __attribute__((tls_model("initial-exec")));
extern uint32_t lp_inf_gen;

void lp_inf_register(void);
/* For a thread on `own` with retry set: claim a shared slot now if the
 * file can be mapped; the slot to use. */
struct lp_inflight *lp_inf_retry(void);

/*
 * Before the real call. 1 when this call owns the slot; 0 when an outer
 * wait of the same thread holds it (a signal handler's call made inside a
 * blocked call), which keeps it.
 */
static inline int lp_inf_begin(uint32_t what, uint64_t obj, uint64_t obj2, void *ra, uint32_t stack,
			       uint32_t tsc, uint64_t start)
{
	struct lp_inf_thread *t = &lp_inf;
	if (__builtin_expect(t->gen != __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED), 0))
		lp_inf_register();
	struct lp_inflight *s = t->slot;
	if (__builtin_expect(s == &t->own && t->retry, 0))
		s = lp_inf_retry();
	if (s->start)
		return 0;
	s->obj = obj;
	s->obj2 = obj2;
	s->ra = (uint64_t)(uintptr_t)ra;
	s->what = what;
	s->stack = stack;
	s->tsc = tsc;
	/* last, so that a sweep that sees the start sees the fields */
	__atomic_store_n(&s->start, start > LP_INF_TAKEN ? start : LP_INF_TAKEN + 1,
			 __ATOMIC_RELEASE);
	return 1;
}

/* After a call that is not written: empty the slot. */
static inline void lp_inf_clear(int mine)
{
	if (mine)
		__atomic_store_n(&lp_inf.slot->start, 0, __ATOMIC_RELEASE);
}

/* After a call about to be written: empty the slot; 1 when the exit sweep
 * wrote this wait already (the thread returned while the process exited),
 * so the caller must not write it again. */
static inline int lp_inf_end(int mine)
{
	return mine &&
	       __atomic_exchange_n(&lp_inf.slot->start, 0, __ATOMIC_ACQ_REL) == LP_INF_TAKEN;
}

/* At exit, on the exiting thread (guard set): write every wait still in
 * progress, this thread's own included (exit() called from a signal
 * handler that interrupted a wait). Once per process. */
void lp_inf_sweep(void);
/* Before exec: the image's slots go back to the run's table (its threads
 * end with it), and every thread registers again at its next wait should
 * the exec fail. */
void lp_inf_before_exec(void);
/* The sweep's writer for a blocking call (lp_block.c): its clock, its
 * threshold, its descriptor's kind. */
void lp_blk_unfinished(const struct lp_inflight *w, uint32_t tid, uint64_t start);
/* One LOCK_WAIT or COND_WAIT record for thread tid (lp_lock_hooks.c): the
 * hooks' own (their thread) and the sweep's (the waiting thread; runq
 * LP_RUNQ_UNKNOWN). */
/* Before a recorded wait on a lock that says it is process-shared: the
 * lock's mapping identity (LP_REC_LOCK_SHARED), once per thread and address
 * (lp_lock_hooks.c). */
void lp_lock_shared_note(const void *lock);
void lp_lock_write(uint32_t tid, uint32_t kind, uint64_t lock, uint64_t t0, uint64_t t1,
		   uint32_t owner, uint32_t flags, uint32_t stack, uint64_t runq);
void lp_cond_write(uint32_t tid, uint32_t kind, uint64_t cond, uint64_t mutex, uint64_t t0,
		   uint64_t t1, uint32_t stack, uint32_t flags, uint64_t runq);

#endif
