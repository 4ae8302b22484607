/* SPDX-License-Identifier: MIT */
/*
 * The table of threads' wait slots and the exit sweep (lp_inflight.h).
 *
 * Workload: one entry per thread that ever waited in a hook, claimed at
 * its first wait, released by a key destructor at its exit; read once, at
 * process exit. A fixed array of LP_INF_MAX pointers (zero pages until
 * used), claimed by compare-and-swap, scanned up to its high-water mark.
 *
 * Fork: the child has one thread, and the other slots the table points to
 * are the parent's threads' TLS, which the child's glibc may reuse as
 * stacks. The child bumps lp_inf_gen; its first registration finds the
 * table of an older generation and empties it before use, and its sweep
 * ignores a table it never registered in.
 */
#define _GNU_SOURCE
#include "lp_inflight.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "lp_blk_clock.h"
#include "lp_core.h"
#include "lp_preload.h"

#define LP_INF_MAX 4096

__thread struct lp_inflight lp_inf __attribute__((tls_model("initial-exec")));
uint32_t lp_inf_gen = 1; /* tab_gen 0 < 1: a new process's table is unused */

static struct lp_inflight *lp_inf_tab[LP_INF_MAX];
static uint32_t lp_inf_hi;	/* entries below this were ever claimed */
static uint32_t lp_inf_tab_gen; /* the generation the table's entries belong to */
static int lp_inf_tab_lock;
static pthread_key_t lp_inf_key;
static int lp_inf_key_ok;
static int lp_inf_swept;

/* A spin lock of our own: the pthread ones are the hooks'. Held only to
 * empty a stale table, once per forked child. */
static void lp_inf_lock(void)
{
	while (__atomic_exchange_n(&lp_inf_tab_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void lp_inf_unlock(void)
{
	__atomic_store_n(&lp_inf_tab_lock, 0, __ATOMIC_RELEASE);
}

/* An entry the exit sweep is reading: the thread's TLS must outlive that. */
#define LP_INF_BUSY ((struct lp_inflight *)1)

static void lp_inf_thread_end(void *arg)
{
	(void)arg;
	struct lp_inflight *s = &lp_inf;
	if (s->gen == __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED) && s->idx >= 0) {
		struct lp_inflight *mine = s;
		/* the sweep holds it for the time of one record */
		while (!__atomic_compare_exchange_n(&lp_inf_tab[s->idx], &mine, NULL, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			mine = s;
	}
	s->gen = 0;
}

/* Only when the parent used the table: no write, so no copy-on-write
 * fault, in the children of a process that never waited in a hook. */
static void lp_inf_forked(void)
{
	if (__atomic_load_n(&lp_inf_tab_gen, __ATOMIC_RELAXED) ==
	    __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED))
		__atomic_add_fetch(&lp_inf_gen, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lp_inf_swept, __ATOMIC_RELAXED))
		lp_inf_swept = 0;
}

__attribute__((constructor)) static void lp_inf_init(void)
{
	lp_inf_key_ok = pthread_key_create(&lp_inf_key, lp_inf_thread_end) == 0;
	pthread_atfork(NULL, NULL, lp_inf_forked);
}

void lp_inf_register(void)
{
	struct lp_inflight *s = &lp_inf;
	uint32_t gen = __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lp_inf_tab_gen, __ATOMIC_ACQUIRE) != gen) {
		lp_inf_lock();
		if (lp_inf_tab_gen != gen) {
			memset(lp_inf_tab, 0, lp_inf_hi * sizeof(lp_inf_tab[0]));
			lp_inf_hi = 0;
			__atomic_store_n(&lp_inf_tab_gen, gen, __ATOMIC_RELEASE);
		}
		lp_inf_unlock();
	}
	int saved = errno;
	s->start = 0; /* a forked child's copy of its parent's wait is not its own */
	s->tid = lp_tid();
	s->idx = -1;
	for (uint32_t i = 0; i < LP_INF_MAX; i++) {
		struct lp_inflight *none = NULL;
		if (__atomic_load_n(&lp_inf_tab[i], __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&lp_inf_tab[i], &none, s, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		s->idx = (int32_t)i;
		uint32_t hi = __atomic_load_n(&lp_inf_hi, __ATOMIC_RELAXED);
		while (hi <= i && !__atomic_compare_exchange_n(&lp_inf_hi, &hi, i + 1, 0,
							       __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		/* the key's value only makes its destructor run at thread exit */
		if (lp_inf_key_ok)
			pthread_setspecific(lp_inf_key, (void *)1);
		break;
	}
	s->gen = gen; /* also when the table is full: no second try per call */
	errno = saved;
}

/* One slot: taken from its thread by compare-and-swap on the start read
 * first, which also proves the fields copied in between are that wait's
 * (the thread rewrites them only after emptying the slot). */
static void lp_inf_take(struct lp_inflight *s, uint64_t now)
{
	uint64_t start = __atomic_load_n(&s->start, __ATOMIC_ACQUIRE);
	if (start <= LP_INF_TAKEN)
		return;
	struct lp_inflight w = *s;
	if (!__atomic_compare_exchange_n(&s->start, &start, LP_INF_TAKEN, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	uint32_t type = w.what >> 8, aux = w.what & 0xff;
	if (type == LP_REC_BLOCK) {
		lp_blk_unfinished(&w, start);
		return;
	}
	/* Lock and condition waits start at an lp_now(). A condition wait's
	 * stack is taken after it returns: here only its site is known. */
	uint64_t end = now > start ? now : start;
	uint32_t stack = w.stack ? w.stack : lp_pre_site_stack((void *)(uintptr_t)w.ra);
	if (type == LP_REC_LOCK_WAIT)
		lp_lock_write(w.tid, aux, w.obj, start, end, 0, LP_WAITF_UNFINISHED, stack);
	else
		lp_cond_write(w.tid, aux, w.obj, w.obj2, start, end, stack, LP_WAITF_UNFINISHED);
}

void lp_inf_sweep(void)
{
	if (__atomic_exchange_n(&lp_inf_swept, 1, __ATOMIC_ACQ_REL))
		return;
	uint32_t gen = __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lp_inf_tab_gen, __ATOMIC_ACQUIRE) != gen)
		return; /* no thread of this process ever waited in a hook */
	int saved = errno;
	uint64_t now = lp_now();
	uint32_t hi = __atomic_load_n(&lp_inf_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi && i < LP_INF_MAX; i++) {
		struct lp_inflight *s = __atomic_load_n(&lp_inf_tab[i], __ATOMIC_ACQUIRE);
		/* held BUSY, the entry keeps its thread from finishing its exit */
		if (!s || s == LP_INF_BUSY ||
		    !__atomic_compare_exchange_n(&lp_inf_tab[i], &s, LP_INF_BUSY, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		if (s->gen == gen)
			lp_inf_take(s, now);
		__atomic_store_n(&lp_inf_tab[i], s, __ATOMIC_RELEASE);
	}
	errno = saved;
}
