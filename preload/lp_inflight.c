/* SPDX-License-Identifier: MIT */
/*
 * The table of threads' wait slots and the exit sweep (lp_inflight.h).
 *
 * Workload: one entry per thread that ever waited in a hook, claimed at
 * its first wait, released by a key destructor at its exit; read once, at
 * process exit. A fixed array of LP_INF_MAX pointers (zero pages until
 * used), claimed by compare-and-swap, scanned up to its high-water mark.
 *
 * Fork: the child has one thread, and the other entries of the table point
 * to the parent's threads' TLS, which the child's glibc may reuse as
 * stacks. The child bumps lp_inf_gen; its first registration finds the
 * table of an older generation and empties it before use, and its sweep
 * ignores a table it never registered in. The child inherits the mapping
 * of the shared slots (MAP_SHARED stays shared): its thread claims a slot
 * of its own there and never writes the parent's.
 *
 * Shared slots (lp_inflight_format.h) are claimed at registration and
 * given back when their thread ends, when the image exits (after the
 * sweep) and before it execs. A killed image never gives them back: that
 * is what the importer reads. The exit and exec give-backs race with a
 * thread of the image still running then; the worst it can do is write
 * one wait into a slot another process just claimed (a record missed or
 * misdated), never harm either process.
 */
#define _GNU_SOURCE
#include "lp_inflight.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "lp_blk_clock.h"
#include "lp_core.h"
#include "lp_preload.h"
#include "lp_raw.h"

#define LP_INF_MAX 4096

__thread struct lp_inf_thread lp_inf __attribute__((tls_model("initial-exec")));
uint32_t lp_inf_gen = 1; /* tab_gen 0 < 1: a new process's table is unused */

static struct lp_inf_thread *lp_inf_tab[LP_INF_MAX];
static uint32_t lp_inf_hi;	 /* entries below this were ever claimed */
static uint32_t lp_inf_tab_gen;	 /* the generation the table's entries belong to */
static uint32_t lp_inf_tab_lock; /* the holder's tid, or 0 */
static pthread_key_t lp_inf_key;
static int lp_inf_key_ok;
static int lp_inf_swept;

/* A lock of our own (the pthread ones are the hooks'), held to empty a
 * stale table (once per forked child) and to map the shared file (once per
 * image); it holds the holder's tid. Another thread's hold is waited out
 * (a few system calls), for a bounded time: the holder may be stopped in a
 * signal handler that waits for a lock the waiter holds. This thread's own
 * hold means a signal handler's hooked call interrupted the registration,
 * and waiting would never end. 0 in either case: the caller goes on
 * without. */
#define LP_INF_LOCK_SPINS (1u << 16) /* some 1-5 ms of pause instructions */

static int lp_inf_lock(uint32_t tid)
{
	uint32_t none = 0;
	for (uint32_t i = 0; !__atomic_compare_exchange_n(&lp_inf_tab_lock, &none, tid, 0,
							  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
	     i++) {
		if (none == tid || i == LP_INF_LOCK_SPINS)
			return 0;
		none = 0;
#if defined(__x86_64__)
		__builtin_ia32_pause();
#endif
	}
	return 1;
}

static void lp_inf_unlock(void)
{
	__atomic_store_n(&lp_inf_tab_lock, 0, __ATOMIC_RELEASE);
}

/* ---- the run's shared slots ---- */

/* The mapped file, or NULL: not tried yet, or it could not be mapped
 * (lp_inf_map_failed). Inherited by a forked child with the mapping. */
static struct lp_inf_file_header *lp_inf_map;
static int lp_inf_map_failed;

static int lp_inf_map_due(void)
{
	return !__atomic_load_n(&lp_inf_map, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&lp_inf_map_failed, __ATOMIC_RELAXED);
}

static int lp_inf_file_ok(const struct lp_inf_file_header *h, uint64_t size)
{
	return !memcmp(h->magic, LP_INF_MAGIC, sizeof(h->magic)) && h->version == LP_INF_VERSION &&
	       h->header_size == LP_INF_HEADER_SIZE && h->slot_size == sizeof(struct lp_inflight) &&
	       h->n_slots &&
	       size >= LP_INF_HEADER_SIZE + (uint64_t)h->n_slots * sizeof(struct lp_inflight);
}

/* Map LATPROF_DIR/inflight.lpinf once per image (raw calls: no hook sees
 * latprof's own; each is safe in a signal handler). Caller holds the lock. */
static void lp_inf_map_file(void)
{
	const char *dir = lp_core_dir();
	char path[PATH_MAX];
	size_t len = dir ? strlen(dir) : 0;
	if (!len || len + sizeof("/" LP_INF_FILE) > sizeof(path)) {
		lp_inf_map_failed = 1;
		return;
	}
	memcpy(path, dir, len);
	memcpy(path + len, "/" LP_INF_FILE, sizeof("/" LP_INF_FILE));
	int fd = (int)LP_RAW(SYS_openat, AT_FDCWD, path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0, 0, 0);
	if (fd < 0) {
		lp_inf_map_failed = 1;
		return;
	}
	struct stat st;
	void *m = MAP_FAILED;
	if (LP_RAW(SYS_fstat, fd, &st, 0, 0, 0, 0) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size >= (off_t)LP_INF_HEADER_SIZE && st.st_size <= (off_t)(64 << 20))
		m = (void *)LP_RAW(SYS_mmap, 0, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				   0);
	LP_RAW(SYS_close, fd, 0, 0, 0, 0, 0);
	if (m != MAP_FAILED && (long)m >= 0 && !lp_inf_file_ok(m, (uint64_t)st.st_size)) {
		LP_RAW(SYS_munmap, m, st.st_size, 0, 0, 0, 0);
		m = MAP_FAILED;
	}
	if (m == MAP_FAILED || (long)m < 0)
		lp_inf_map_failed = 1;
	else
		__atomic_store_n(&lp_inf_map, (struct lp_inf_file_header *)m, __ATOMIC_RELEASE);
}

static struct lp_inflight *lp_inf_slots(const struct lp_inf_file_header *h)
{
	return (struct lp_inflight *)((char *)h + LP_INF_HEADER_SIZE);
}

/* A free shared slot for thread tid of this image, or NULL. */
static struct lp_inflight *lp_inf_claim(uint32_t tid)
{
	struct lp_inf_file_header *h = __atomic_load_n(&lp_inf_map, __ATOMIC_ACQUIRE);
	uint32_t pid;
	uint64_t image;
	lp_core_image(&pid, &image);
	if (!h || !pid)
		return NULL;
	uint64_t owner = (uint64_t)pid << 32 | tid;
	uint32_t n = h->n_slots, first = __atomic_fetch_add(&h->hint, 1, __ATOMIC_RELAXED);
	struct lp_inflight *slots = lp_inf_slots(h);
	for (uint32_t k = 0; k < n; k++) {
		struct lp_inflight *s = &slots[(first + k) % n];
		uint64_t none = 0;
		if (__atomic_load_n(&s->owner, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&s->owner, &none, owner, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		s->image = image;
		__atomic_store_n(&s->start, 0, __ATOMIC_RELEASE);
		return s;
	}
	__atomic_fetch_add(&h->full, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Give a thread's shared slot back to the run. */
static void lp_inf_release(struct lp_inf_thread *t)
{
	struct lp_inflight *s = t->slot;
	if (!s || s == &t->own)
		return;
	__atomic_store_n(&s->start, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->owner, 0, __ATOMIC_RELEASE);
}

/* ---- the image's table of its threads ---- */

/* An entry the exit sweep is reading: the thread's TLS must outlive that. */
#define LP_INF_BUSY ((struct lp_inf_thread *)1)

static void lp_inf_thread_end(void *arg)
{
	(void)arg;
	struct lp_inf_thread *t = &lp_inf;
	if (t->gen != __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED)) {
		t->gen = 0;
		return;
	}
	if (t->idx >= 0) {
		struct lp_inf_thread *mine = t;
		/* the sweep holds it for the time of one record */
		while (!__atomic_compare_exchange_n(&lp_inf_tab[t->idx], &mine, NULL, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			mine = t;
	}
	lp_inf_release(t);
	t->gen = 0;
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
	/* held by a thread of the parent's, which the child does not have */
	if (__atomic_load_n(&lp_inf_tab_lock, __ATOMIC_RELAXED))
		lp_inf_unlock();
}

__attribute__((constructor)) static void lp_inf_init(void)
{
	lp_inf_key_ok = pthread_key_create(&lp_inf_key, lp_inf_thread_end) == 0;
	pthread_atfork(NULL, NULL, lp_inf_forked);
}

void lp_inf_register(void)
{
	struct lp_inf_thread *t = &lp_inf;
	int saved = errno;
	uint32_t gen = __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED);
	uint32_t tid = lp_tid();
	/* Until registered, the TLS slot (a forked child's pointer is its
	 * parent's slot, never to be written). */
	t->own.start = 0;
	t->own.owner = (uint64_t)tid;
	t->slot = &t->own;
	if (__atomic_load_n(&lp_inf_tab_gen, __ATOMIC_ACQUIRE) != gen || lp_inf_map_due()) {
		if (lp_inf_lock(tid)) {
			if (lp_inf_tab_gen != gen) {
				memset(lp_inf_tab, 0, lp_inf_hi * sizeof(lp_inf_tab[0]));
				lp_inf_hi = 0;
				__atomic_store_n(&lp_inf_tab_gen, gen, __ATOMIC_RELEASE);
			}
			if (lp_inf_map_due())
				lp_inf_map_file();
			lp_inf_unlock();
		} else if (__atomic_load_n(&lp_inf_tab_gen, __ATOMIC_ACQUIRE) != gen) {
			errno = saved; /* a stale table: the next call registers */
			return;
		}
		/* Else only the mapping was busy: register now, in the table the
		 * exit sweep reads, with the TLS slot if the file is not mapped
		 * yet. A thread that gave up here went on unregistered, and the
		 * sweep could not see a wait still in progress at exit. */
	}
	t->slot = lp_inf_claim(tid);
	if (!t->slot)
		t->slot = &t->own;
	/* The file not mapped yet: another thread held the lock past our
	 * bounded wait (a loaded machine deschedules it while it maps). */
	t->retry = t->slot == &t->own && lp_inf_map_due();
	t->idx = -1;
	for (uint32_t i = 0; i < LP_INF_MAX; i++) {
		struct lp_inf_thread *none = NULL;
		if (__atomic_load_n(&lp_inf_tab[i], __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&lp_inf_tab[i], &none, t, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		t->idx = (int32_t)i;
		uint32_t hi = __atomic_load_n(&lp_inf_hi, __ATOMIC_RELAXED);
		while (hi <= i && !__atomic_compare_exchange_n(&lp_inf_hi, &hi, i + 1, 0,
							       __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		break;
	}
	/* the key's value only makes its destructor run at thread exit */
	if (lp_inf_key_ok && (t->idx >= 0 || t->slot != &t->own))
		pthread_setspecific(lp_inf_key, (void *)1);
	t->gen = gen; /* also when the table is full: no second try per call */
	errno = saved;
}

/*
 * A thread that registered while another held the lock to map the file
 * got the TLS slot, which a kill loses: CI saw a condition wait of a
 * SIGKILLed process missing (block_killwait, 1 run in some 50), its thread
 * having registered at a contended mutex as four others started. At its
 * next waits it tries again, until the file is mapped or known not to
 * be; never while its own slot holds a wait (an outer call's, interrupted
 * by a signal handler's hooked call), which must end where it began.
 */
struct lp_inflight *lp_inf_retry(void)
{
	struct lp_inf_thread *t = &lp_inf;
	if (__atomic_load_n(&t->own.start, __ATOMIC_RELAXED))
		return t->slot;
	int saved = errno;
	uint32_t tid = lp_tid();
	if (lp_inf_map_due() && lp_inf_lock(tid)) {
		if (lp_inf_map_due())
			lp_inf_map_file();
		lp_inf_unlock();
	}
	if (!lp_inf_map_due()) {
		t->retry = 0;
		struct lp_inflight *s = lp_inf_claim(tid);
		if (s) {
			__atomic_store_n(&t->slot, s, __ATOMIC_RELEASE); /* the sweep reads it */
			/* its destructor gives the slot back at thread exit */
			if (lp_inf_key_ok)
				pthread_setspecific(lp_inf_key, (void *)1);
		}
	}
	errno = saved;
	return t->slot;
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
	uint32_t type = w.what >> 8, aux = w.what & 0xff, tid = (uint32_t)w.owner;
	if (type == LP_REC_BLOCK) {
		lp_blk_unfinished(&w, tid, start);
		return;
	}
	/* Lock and condition waits start at an lp_now(). A condition wait's
	 * stack is taken after it returns: here only its site is known. */
	uint64_t end = now > start ? now : start;
	uint32_t stack = w.stack ? w.stack : lp_pre_site_stack((void *)(uintptr_t)w.ra);
	if (type == LP_REC_LOCK_WAIT)
		lp_lock_write(tid, aux, w.obj, start, end, 0, LP_WAITF_UNFINISHED, stack,
			      LP_RUNQ_UNKNOWN);
	else
		lp_cond_write(tid, aux, w.obj, w.obj2, start, end, stack, LP_WAITF_UNFINISHED,
			      LP_RUNQ_UNKNOWN);
}

/* Each registered thread of this image: take its wait (write it, at
 * exit) and/or give its shared slot back. */
static void lp_inf_each(int take, int release)
{
	uint32_t gen = __atomic_load_n(&lp_inf_gen, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lp_inf_tab_gen, __ATOMIC_ACQUIRE) != gen)
		return; /* no thread of this process ever waited in a hook */
	int saved = errno;
	uint64_t now = take ? lp_now() : 0;
	uint32_t hi = __atomic_load_n(&lp_inf_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi && i < LP_INF_MAX; i++) {
		struct lp_inf_thread *t = __atomic_load_n(&lp_inf_tab[i], __ATOMIC_ACQUIRE);
		/* held BUSY, the entry keeps its thread from finishing its exit */
		if (!t || t == LP_INF_BUSY ||
		    !__atomic_compare_exchange_n(&lp_inf_tab[i], &t, LP_INF_BUSY, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		if (t->gen == gen && take)
			lp_inf_take(t->slot, now);
		if (t->gen == gen && release)
			lp_inf_release(t);
		__atomic_store_n(&lp_inf_tab[i], t, __ATOMIC_RELEASE);
	}
	errno = saved;
}

void lp_inf_sweep(void)
{
	if (__atomic_exchange_n(&lp_inf_swept, 1, __ATOMIC_ACQ_REL))
		return;
	lp_inf_each(1, 1);
}

void lp_inf_before_exec(void)
{
	lp_inf_each(0, 1);
	/* Should the exec fail, every thread claims a slot again. */
	__atomic_add_fetch(&lp_inf_gen, 1, __ATOMIC_RELAXED);
}
