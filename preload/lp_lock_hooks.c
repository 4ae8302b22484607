/* SPDX-License-Identifier: MIT */
/*
 * Lock hooks: try the non-blocking form first, so an uncontended acquisition
 * costs one extra call and records nothing; only a wait is timed and written.
 * Condition waits are always waits, so each one is recorded.
 */
#define _GNU_SOURCE
#include "lp_preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lp_core.h"
#include "lp_inflight.h"
#include "lp_py.h"
#include "lp_runq.h"

enum lp_op { LP_OP_PLAIN, LP_OP_TIMED, LP_OP_CLOCK };

#define LP_PSHARED_BIT 128 /* glibc PTHREAD_MUTEX_PSHARED_BIT in __kind */

static uint32_t lp_flags(int rc)
{
	return rc == 0 ? 0 : rc == ETIMEDOUT ? LP_WAITF_TIMEDOUT : LP_WAITF_FAILED;
}

/* The waiter's stack, taken after trylock failed and before it blocks:
 * never while it holds the lock, where the unwind and the intern lookup
 * would lengthen every other thread's wait. */
__attribute__((noinline)) static uint32_t lp_lock_stack(void *ra, struct lp_py_wait *py)
{
	lp_pre_modules_refresh();
	*py = (struct lp_py_wait){0};
	lp_py_frames(py);
	return lp_pre_stack(ra);
}

/* The wait slot for the exit sweep (lp_inflight.h), filled before the
 * real call: 1 when this call owns it. */
static int lp_lock_begin(uint32_t kind, const void *lock, void *ra, uint32_t stack, uint64_t t0)
{
	return lp_inf_begin((uint32_t)LP_REC_LOCK_WAIT << 8 | kind, (uint64_t)(uintptr_t)lock, 0,
			    ra, stack, 0, t0);
}

void lp_lock_write(uint32_t tid, uint32_t kind, uint64_t lock, uint64_t t0, uint64_t t1,
		   uint32_t owner, uint32_t flags, uint32_t stack, uint64_t runq)
{
	struct lp_rec_lock_wait *r = lp_rec_begin_for(tid, LP_REC_LOCK_WAIT, kind, sizeof(*r));
	if (!r)
		return;
	r->lock = lock;
	r->start = t0;
	r->end = t1;
	r->stack = stack;
	r->owner = owner;
	r->flags = flags;
	r->pad = 0;
	r->runq = runq;
	lp_rec_commit();
}

void lp_cond_write(uint32_t tid, uint32_t kind, uint64_t cond, uint64_t mutex, uint64_t t0,
		   uint64_t t1, uint32_t stack, uint32_t flags, uint64_t runq)
{
	struct lp_rec_cond_wait *r = lp_rec_begin_for(tid, LP_REC_COND_WAIT, kind, sizeof(*r));
	if (!r)
		return;
	r->cond = cond;
	r->mutex = mutex;
	r->start = t0;
	r->end = t1;
	r->stack = stack;
	r->flags = flags;
	r->runq = runq;
	lp_rec_commit();
}

__attribute__((noinline)) static void lp_lock_record(uint32_t kind, const void *lock, uint64_t t0,
						     uint64_t t1, uint32_t owner, uint32_t flags,
						     uint32_t stack, int mine,
						     const struct lp_py_wait *py)
{
	if (lp_inf_end(mine))
		return; /* the exit sweep wrote it */
	lp_lock_write(lp_tid(), kind, (uint64_t)(uintptr_t)lock, t0, t1, owner, flags, stack,
		      lp_runq_take(t0, t1));
	lp_py_write(py, t0);
}

/* ---- process-shared locks --------------------------------------------- */

/*
 * A process-shared lock lives at a different address in each process that
 * maps it; its mapping (device, inode, offset: /proc/self/maps) is the same
 * in all. Each thread writes it once per address it waits on, so the
 * importer reads it before that thread's waits; a private mapping is
 * remembered too, so /proc/self/maps is read once per thread and lock.
 */
#define LP_SHARED_SEEN 8

static __thread uintptr_t lp_shared_seen[LP_SHARED_SEEN] __attribute__((tls_model("initial-exec")));
static __thread unsigned lp_shared_next __attribute__((tls_model("initial-exec")));

/* The line of /proc/self/maps that holds addr: 1 shared (r and path
 * filled), 0 private, -1 not this line. */
static int lp_shared_line(const char *l, uintptr_t addr, struct lp_rec_lock_shared *r, char *path,
			  size_t cap, size_t *plen)
{
	unsigned long lo, hi, off, ino;
	unsigned maj, min;
	char perms[8];
	int n = 0;
	if (sscanf(l, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perms, &off, &maj, &min, &ino, &n) <
		7 ||
	    addr < lo || addr >= hi)
		return -1;
	if (perms[3] != 's')
		return 0;
	r->dev = makedev(maj, min);
	r->ino = ino;
	r->offset = off + (addr - lo);
	size_t len = n > 0 ? strcspn(l + n, "\n") : 0;
	static const char del[] = " (deleted)";
	if (len >= sizeof(del) - 1 &&
	    !memcmp(l + n + len - (sizeof(del) - 1), del, sizeof(del) - 1))
		len -= sizeof(del) - 1;
	*plen = len < cap ? len : cap;
	memcpy(path, l + n, *plen);
	return 1;
}

/* 1 when addr lies in a shared mapping (r, path filled), else 0. */
static int lp_shared_find(uintptr_t addr, struct lp_rec_lock_shared *r, char *path, size_t cap,
			  size_t *plen)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	size_t have = 0;
	int found = -1;
	for (ssize_t got; found < 0 && (got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0;) {
		have += (size_t)got;
		buf[have] = 0;
		char *l = buf, *nl;
		while (found < 0 && (nl = strchr(l, '\n'))) {
			*nl = 0;
			found = lp_shared_line(l, addr, r, path, cap, plen);
			l = nl + 1;
		}
		have -= (size_t)(l - buf);
		memmove(buf, l, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: not a mapping's */
	}
	close(fd);
	return found == 1;
}

void lp_lock_shared_note(const void *lock)
{
	uintptr_t a = (uintptr_t)lock;
	for (unsigned i = 0; i < LP_SHARED_SEEN; i++)
		if (lp_shared_seen[i] == a)
			return;
	lp_shared_seen[lp_shared_next++ % LP_SHARED_SEEN] = a;
	struct lp_rec_lock_shared m = {.lock = a};
	char path[256];
	size_t plen = 0;
	if (!lp_shared_find(a, &m, path, sizeof(path), &plen))
		return;
	struct lp_rec_lock_shared *r =
	    lp_rec_begin(LP_REC_LOCK_SHARED, (uint32_t)plen, sizeof(*r) + plen);
	if (!r)
		return;
	*r = m;
	memcpy(r + 1, path, plen);
	lp_rec_commit();
}

/* ---- hold times of contended mutexes and rwlocks ---------------------- */

/*
 * A mutex or rwlock some thread has waited on is marked in lp_hold_locks (lock-free,
 * open addressing, never emptied); from then on each acquisition of it
 * notes the time and call site on the acquiring thread (lp_hold_at), and
 * its release writes the hold when it lasted LP_HOLD_MIN_NS. A lock
 * nobody waited on costs the acquisition one load of lp_holds_on and the
 * release one thread-local load (lp_hold_n). Each reader of an rwlock
 * notes its own hold, as a writer does.
 */
#define LP_HOLD_LOCKS 1024 /* a power of two */
#define LP_HOLD_PROBE 16
#define LP_HOLD_NEST 8

static uintptr_t lp_hold_locks[LP_HOLD_LOCKS];
static int lp_holds_on;

struct lp_hold {
	uintptr_t lock;
	uint64_t t0;
	void *ra;
	uint32_t kind; /* enum lp_lock_kind: the record's aux */
};
static __thread struct lp_hold lp_hold_at[LP_HOLD_NEST] __attribute__((tls_model("initial-exec")));
static __thread unsigned lp_hold_n __attribute__((tls_model("initial-exec")));

static unsigned lp_hold_slot(uintptr_t a)
{
	return (unsigned)(((uint64_t)a >> 3) * 0x9e3779b97f4a7c15ull >> 54) & (LP_HOLD_LOCKS - 1);
}

/* 1 when lock is marked; with add, marks it first. */
static int lp_hold_marked(uintptr_t a, int add)
{
	unsigned i = lp_hold_slot(a);
	for (unsigned k = 0; k < LP_HOLD_PROBE; k++, i = (i + 1) & (LP_HOLD_LOCKS - 1)) {
		uintptr_t v = __atomic_load_n(&lp_hold_locks[i], __ATOMIC_RELAXED);
		if (v == a)
			return 1;
		if (v)
			continue;
		if (!add)
			return 0;
		uintptr_t zero = 0;
		if (__atomic_compare_exchange_n(&lp_hold_locks[i], &zero, a, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED) ||
		    zero == a) {
			__atomic_store_n(&lp_holds_on, 1, __ATOMIC_RELAXED);
			return 1;
		}
	}
	if (add) /* the table is full: this lock's holds are not timed */
		lp_core_drop_hold();
	return 0;
}

/* This thread has just acquired m (marked or not): its hold is noted when
 * m is marked. Keeps errno. */
__attribute__((noinline)) static void lp_hold_begin(const void *m, void *ra, uint32_t kind)
{
	uintptr_t a = (uintptr_t)m;
	if (!lp_pre_recording() || !lp_hold_marked(a, 0))
		return;
	if (lp_hold_n >= LP_HOLD_NEST) { /* more marked mutexes held at once: not timed */
		lp_core_drop_hold();
		return;
	}
	lp_hold_at[lp_hold_n++] = (struct lp_hold){a, lp_now(), ra, kind};
}

/* This thread releases m, at t1: the hold it noted, written when long.
 * Called after the release, so no waiter waits on the record. */
static void lp_hold_write(const struct lp_hold *h, uint64_t t1)
{
	if (t1 - h->t0 < LP_HOLD_MIN_NS || !__atomic_load_n(&lp_pre_on, __ATOMIC_ACQUIRE))
		return;
	int saved = errno, guard = lp_pre_guard;
	lp_pre_guard = 1;
	lp_pre_modules_refresh();
	uint32_t stack = lp_pre_site_stack(h->ra);
	struct lp_rec_lock_hold *r = lp_rec_begin(LP_REC_LOCK_HOLD, h->kind, sizeof(*r));
	if (r) {
		*r = (struct lp_rec_lock_hold){h->lock, h->t0, t1, stack, 0};
		lp_rec_commit();
	}
	lp_pre_guard = guard;
	errno = saved;
}

/* The noted hold of m, taken off this thread's list: 1, else 0. */
static int lp_hold_take(const void *m, struct lp_hold *out)
{
	for (unsigned i = lp_hold_n; i-- > 0;)
		if (lp_hold_at[i].lock == (uintptr_t)m) {
			*out = lp_hold_at[i];
			lp_hold_at[i] = lp_hold_at[--lp_hold_n];
			return 1;
		}
	return 0;
}

/* ---- mutexes ---------------------------------------------------------- */

static int lp_mutex_call(pthread_mutex_t *m, enum lp_op op, clockid_t clk,
			 const struct timespec *ts)
{
	switch (op) {
	case LP_OP_TIMED:
		if (LP_REAL(mutex_timedlock))
			return lp_real.mutex_timedlock(m, ts);
		break;
	case LP_OP_CLOCK:
		if (LP_REAL(mutex_clocklock))
			return lp_real.mutex_clocklock(m, clk, ts);
		break;
	default:
		if (LP_REAL(mutex_lock))
			return lp_real.mutex_lock(m);
	}
	/* Only inside our own dlsym: spin rather than fail. */
	int rc;
	while ((rc = pthread_mutex_trylock(m)) == EBUSY)
		sched_yield();
	return rc;
}

__attribute__((noinline)) static int lp_mutex_slow(pthread_mutex_t *m, enum lp_op op, clockid_t clk,
						   const struct timespec *ts, void *ra)
{
	if (!lp_pre_recording() || lp_pre_own_pc(ra))
		return lp_mutex_call(m, op, clk, ts);
	int saved = errno;
	lp_pre_guard = 1;
	uint32_t owner = (uint32_t)__atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
	struct lp_py_wait py;
	if (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & LP_PSHARED_BIT)
		lp_lock_shared_note(m);
	uint32_t stack = lp_lock_stack(ra, &py);
	uint64_t t0 = lp_now();
	int mine = lp_lock_begin(LP_LOCK_MUTEX, m, ra, stack, t0);
	int rc = lp_mutex_call(m, op, clk, ts);
	uint64_t t1 = lp_now();
	lp_lock_record(LP_LOCK_MUTEX, m, t0, t1, owner, lp_flags(rc), stack, mine, &py);
	lp_pre_guard = 0;
	if ((rc == 0 || rc == EOWNERDEAD) && lp_hold_marked((uintptr_t)m, 1))
		lp_hold_begin(m, ra, LP_LOCK_MUTEX);
	errno = saved;
	return rc;
}

/*
 * The uncontended acquisition of a normal mutex, done here rather than by a
 * second call into glibc: it is the hottest path of any program with locks,
 * and the call it saves is most of the interposer's cost (bench_lock). It is
 * glibc's own fast path on the public pthread_mutex_t fields, which are ABI:
 * __lock goes 0 -> 1 (a plain store while glibc says the process is single
 * threaded and the mutex is private, as glibc itself does, else a CAS),
 * then __owner = kernel tid and ++__nusers. glibc's unlock undoes exactly
 * that. Any other kind (recursive, error-checking, robust, PI, elision) has
 * __kind != 0 and goes through glibc.
 */

/* This thread's kernel tid, as glibc stores it in __owner; 0 until the
 * thread's first lock, and again in a forked child (lp_locks_forked). */
static __thread uint32_t lp_lock_tid __attribute__((tls_model("initial-exec")));

static void lp_locks_forked(void)
{
	if (lp_lock_tid) /* no write, no copy-on-write fault, when unset */
		lp_lock_tid = 0;
	if (lp_shared_next) { /* the child's log has not seen them */
		memset(lp_shared_seen, 0, sizeof(lp_shared_seen));
		lp_shared_next = 0;
	}
}

__attribute__((constructor)) static void lp_locks_init(void)
{
	pthread_atfork(NULL, NULL, lp_locks_forked);
}

__attribute__((noinline)) static uint32_t lp_lock_tid_slow(void)
{
	return lp_lock_tid = (uint32_t)gettid();
}

static inline int lp_mutex_fast(pthread_mutex_t *m)
{
	int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
	if (__builtin_expect(kind & ~LP_PSHARED_BIT, 0))
		return 0;
	if (__libc_single_threaded && !kind) {
		if (m->__data.__lock != 0)
			return 0;
		m->__data.__lock = 1;
	} else {
		int zero = 0;
		if (!__atomic_compare_exchange_n(&m->__data.__lock, &zero, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			return 0;
	}
	uint32_t tid = lp_lock_tid;
	m->__data.__owner = (int)(__builtin_expect(tid != 0, 1) ? tid : lp_lock_tid_slow());
	++m->__data.__nusers;
	return 1;
}

/* Any trylock result but EBUSY is final: EOWNERDEAD, for one, means we now
 * hold the lock. The hottest hook skips the frame-pointer prologue: its
 * slow path is a sibling call, so no unwinder ever sees this frame. */
LP_HOOK LP_HOT_NOFP int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (__builtin_expect(lp_mutex_fast(m), 1)) {
		if (__builtin_expect(__atomic_load_n(&lp_holds_on, __ATOMIC_RELAXED), 0))
			lp_hold_begin(m, __builtin_return_address(0), LP_LOCK_MUTEX);
		return 0;
	}
	int rc = pthread_mutex_trylock(m);
	if (__builtin_expect(rc != EBUSY, 1)) {
		if (__builtin_expect(__atomic_load_n(&lp_holds_on, __ATOMIC_RELAXED), 0) && !rc)
			lp_hold_begin(m, __builtin_return_address(0), LP_LOCK_MUTEX);
		return rc;
	}
	return lp_mutex_slow(m, LP_OP_PLAIN, 0, NULL, __builtin_return_address(0));
}

LP_HOOK int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	int rc = pthread_mutex_trylock(m);
	if (rc != EBUSY)
		return rc;
	return lp_mutex_slow(m, LP_OP_TIMED, 0, ts, __builtin_return_address(0));
}

LP_HOOK int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk, const struct timespec *ts)
{
	int rc = pthread_mutex_trylock(m);
	if (rc != EBUSY)
		return rc;
	return lp_mutex_slow(m, LP_OP_CLOCK, clk, ts, __builtin_return_address(0));
}

/* glibc's unlock, called directly: its non-default alias, so no dlsym
 * (which may itself unlock) stands between a hook and the real call. */
#if defined(__x86_64__)
int lp_glibc_mutex_unlock(pthread_mutex_t *m);
__asm__(".symver lp_glibc_mutex_unlock,__pthread_mutex_unlock@GLIBC_2.2.5");
/* A sanitizer runtime loaded before us (an app built with -fsanitize, or
 * latprof's own LATPROF_SANITIZE builds) defines an unversioned
 * __pthread_mutex_unlock that the alias above binds to, with no real
 * function behind it on glibc >= 2.34: a call through it jumps to 0. Then
 * libc's own unlock, found by its handle before any hook runs, is called. */
static int (*lp_unlock_libc)(pthread_mutex_t *);
#define LP_MUTEX_UNLOCK(m)                                                                         \
	(__builtin_expect(lp_unlock_libc != NULL, 0) ? lp_unlock_libc(m) : lp_glibc_mutex_unlock(m))

__attribute__((constructor(101))) static void lp_unlock_resolve(void)
{
	static const char *const runtimes[] = {"__asan_init", "__tsan_init", "__msan_init",
					       "__hwasan_init"};
	int saved = errno, sanitized = 0;
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		sanitized |= dlsym(RTLD_DEFAULT, runtimes[i]) != NULL;
	void *libc = sanitized ? dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (libc) {
		lp_unlock_libc = (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_unlock");
		dlclose(libc);
	}
	errno = saved;
}
#else
#define LP_MUTEX_UNLOCK(m) (LP_REAL(mutex_unlock) ? lp_real.mutex_unlock(m) : EAGAIN)
#endif

__attribute__((noinline)) static int lp_mutex_unlock_held(pthread_mutex_t *m)
{
	struct lp_hold h;
	if (!lp_hold_take(m, &h))
		return LP_MUTEX_UNLOCK(m);
	uint64_t t1 = lp_now();
	int rc = LP_MUTEX_UNLOCK(m);
	if (!rc)
		lp_hold_write(&h, t1);
	return rc;
}

/* Only a thread holding a marked mutex does more than glibc's unlock. */
LP_HOOK LP_HOT_NOFP int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (__builtin_expect(lp_hold_n != 0, 0))
		return lp_mutex_unlock_held(m);
	return LP_MUTEX_UNLOCK(m);
}

/* ---- rwlocks ---------------------------------------------------------- */

static int lp_rw_call(pthread_rwlock_t *l, int wr, enum lp_op op, clockid_t clk,
		      const struct timespec *ts)
{
	int (*fn)(pthread_rwlock_t *) = wr ? LP_REAL(rw_wrlock) : LP_REAL(rw_rdlock);
	switch (op) {
	case LP_OP_TIMED:
		if (wr ? LP_REAL(rw_timedwrlock) : LP_REAL(rw_timedrdlock))
			return (wr ? lp_real.rw_timedwrlock : lp_real.rw_timedrdlock)(l, ts);
		break;
	case LP_OP_CLOCK:
		if (wr ? LP_REAL(rw_clockwrlock) : LP_REAL(rw_clockrdlock))
			return (wr ? lp_real.rw_clockwrlock : lp_real.rw_clockrdlock)(l, clk, ts);
		break;
	default:
		if (fn)
			return fn(l);
	}
	int rc;
	while ((rc = wr ? pthread_rwlock_trywrlock(l) : pthread_rwlock_tryrdlock(l)) == EBUSY)
		sched_yield();
	return rc;
}

__attribute__((noinline)) static int lp_rw_slow(pthread_rwlock_t *l, int wr, enum lp_op op,
						clockid_t clk, const struct timespec *ts, void *ra)
{
	if (!lp_pre_recording() || lp_pre_own_pc(ra))
		return lp_rw_call(l, wr, op, clk, ts);
	int saved = errno;
	lp_pre_guard = 1;
	uint32_t owner = (uint32_t)__atomic_load_n(&l->__data.__cur_writer, __ATOMIC_RELAXED);
	struct lp_py_wait py;
	uint32_t stack = lp_lock_stack(ra, &py);
	uint32_t kind = wr ? LP_LOCK_RWLOCK_WR : LP_LOCK_RWLOCK_RD;
	uint64_t t0 = lp_now();
	int mine = lp_lock_begin(kind, l, ra, stack, t0);
	int rc = lp_rw_call(l, wr, op, clk, ts);
	uint64_t t1 = lp_now();
	lp_lock_record(kind, l, t0, t1, owner, lp_flags(rc), stack, mine, &py);
	lp_pre_guard = 0;
	if (rc == 0 && lp_hold_marked((uintptr_t)l, 1))
		lp_hold_begin(l, ra, kind);
	errno = saved;
	return rc;
}

/* An acquisition that did not wait: its hold is noted when l is marked. */
static inline int lp_rw_acquired(pthread_rwlock_t *l, int wr, int rc, void *ra)
{
	if (__builtin_expect(__atomic_load_n(&lp_holds_on, __ATOMIC_RELAXED), 0) && !rc)
		lp_hold_begin(l, ra, wr ? LP_LOCK_RWLOCK_WR : LP_LOCK_RWLOCK_RD);
	return rc;
}

LP_HOOK int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	int rc = pthread_rwlock_tryrdlock(l);
	if (__builtin_expect(rc != EBUSY, 1))
		return lp_rw_acquired(l, 0, rc, __builtin_return_address(0));
	return lp_rw_slow(l, 0, LP_OP_PLAIN, 0, NULL, __builtin_return_address(0));
}

LP_HOOK int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	int rc = pthread_rwlock_trywrlock(l);
	if (__builtin_expect(rc != EBUSY, 1))
		return lp_rw_acquired(l, 1, rc, __builtin_return_address(0));
	return lp_rw_slow(l, 1, LP_OP_PLAIN, 0, NULL, __builtin_return_address(0));
}

LP_HOOK int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	int rc = pthread_rwlock_tryrdlock(l);
	if (rc != EBUSY)
		return lp_rw_acquired(l, 0, rc, __builtin_return_address(0));
	return lp_rw_slow(l, 0, LP_OP_TIMED, 0, ts, __builtin_return_address(0));
}

LP_HOOK int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	int rc = pthread_rwlock_trywrlock(l);
	if (rc != EBUSY)
		return lp_rw_acquired(l, 1, rc, __builtin_return_address(0));
	return lp_rw_slow(l, 1, LP_OP_TIMED, 0, ts, __builtin_return_address(0));
}

LP_HOOK int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clk,
				       const struct timespec *ts)
{
	int rc = pthread_rwlock_tryrdlock(l);
	if (rc != EBUSY)
		return lp_rw_acquired(l, 0, rc, __builtin_return_address(0));
	return lp_rw_slow(l, 0, LP_OP_CLOCK, clk, ts, __builtin_return_address(0));
}

LP_HOOK int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clk,
				       const struct timespec *ts)
{
	int rc = pthread_rwlock_trywrlock(l);
	if (rc != EBUSY)
		return lp_rw_acquired(l, 1, rc, __builtin_return_address(0));
	return lp_rw_slow(l, 1, LP_OP_CLOCK, clk, ts, __builtin_return_address(0));
}

#define LP_RW_UNLOCK(l) (LP_REAL(rw_unlock) ? lp_real.rw_unlock(l) : EAGAIN)

__attribute__((noinline)) static int lp_rw_unlock_held(pthread_rwlock_t *l)
{
	struct lp_hold h;
	if (!lp_hold_take(l, &h))
		return LP_RW_UNLOCK(l);
	uint64_t t1 = lp_now();
	int rc = LP_RW_UNLOCK(l);
	if (!rc)
		lp_hold_write(&h, t1);
	return rc;
}

/* Only a thread holding a marked lock does more than glibc's unlock. */
LP_HOOK int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	if (__builtin_expect(lp_hold_n != 0, 0))
		return lp_rw_unlock_held(l);
	return LP_RW_UNLOCK(l);
}

/* ---- spinlocks -------------------------------------------------------- */

/*
 * A spinlock never sleeps, so the wait is the spinning itself: timed from the
 * failed trylock to acquisition. pthread_spin_trylock is left alone, as
 * pthread_mutex_trylock is: a failed try is the caller's choice, not a wait.
 * There is no owner field in a pthread_spinlock_t (an int), so owner is 0.
 */
static int lp_spin_call(pthread_spinlock_t *l)
{
	if (LP_REAL(spin_lock))
		return lp_real.spin_lock(l);
	int rc;
	while ((rc = pthread_spin_trylock(l)) == EBUSY)
		sched_yield();
	return rc;
}

__attribute__((noinline)) static int lp_spin_slow(pthread_spinlock_t *l, void *ra)
{
	if (!lp_pre_recording() || lp_pre_own_pc(ra))
		return lp_spin_call(l);
	int saved = errno;
	lp_pre_guard = 1;
	struct lp_py_wait py;
	uint32_t stack = lp_lock_stack(ra, &py);
	/* pthread_spinlock_t is a volatile int: pass the address only. */
	const void *lock = (const void *)(uintptr_t)l;
	uint64_t t0 = lp_now();
	int mine = lp_lock_begin(LP_LOCK_SPIN, lock, ra, stack, t0);
	int rc = lp_spin_call(l);
	uint64_t t1 = lp_now();
	lp_lock_record(LP_LOCK_SPIN, lock, t0, t1, 0, lp_flags(rc), stack, mine, &py);
	lp_pre_guard = 0;
	errno = saved;
	return rc;
}

/*
 * The free spinlock taken inline, as lp_mutex_fast takes a free mutex: the
 * call to pthread_spin_trylock it saves was the hook's whole cost (bench
 * lock, spin: 1.26x bare with the call). glibc's x86_64 spinlock is an int
 * that pthread_spin_init and pthread_spin_unlock set to 1, its trylock one
 * CAS 1 -> 0 (sysdeps/x86_64/nptl; 2.36's code). That encoding is not ABI
 * (the generic C spinlock other ports use is free at 0), so the
 * constructor checks it on a spinlock of its own through glibc's calls;
 * any other result leaves lp_spin_inline 0 and the hook calls trylock.
 */
static int lp_spin_inline;

__attribute__((constructor)) static void lp_spin_probe(void)
{
#if defined(__x86_64__)
	pthread_spinlock_t probe;
	if (pthread_spin_init(&probe, PTHREAD_PROCESS_PRIVATE) || probe != 1)
		return;
	int taken = pthread_spin_trylock(&probe) == 0 && probe == 0 &&
		    pthread_spin_trylock(&probe) == EBUSY && probe == 0;
	pthread_spin_unlock(&probe);
	lp_spin_inline = taken && probe == 1;
	pthread_spin_destroy(&probe);
#endif
}

/* 0 when taken; EBUSY or what glibc's trylock said otherwise. */
static inline int lp_spin_try(pthread_spinlock_t *l)
{
	int one = 1;
	if (__builtin_expect(lp_spin_inline, 1))
		return __atomic_compare_exchange_n(l, &one, 0, 0, __ATOMIC_ACQUIRE,
						   __ATOMIC_RELAXED)
			   ? 0
			   : EBUSY;
	return pthread_spin_trylock(l);
}

/* Same shape as pthread_mutex_lock: one trylock, a sibling call when busy. */
LP_HOOK LP_HOT_NOFP int pthread_spin_lock(pthread_spinlock_t *l)
{
	int rc = lp_spin_try(l);
	if (__builtin_expect(rc != EBUSY, 1))
		return rc;
	return lp_spin_slow(l, __builtin_return_address(0));
}

/* ---- semaphores (also Python's threading.Lock) ------------------------- */

static int lp_sem_call(sem_t *s, enum lp_op op, clockid_t clk, const struct timespec *ts)
{
	switch (op) {
	case LP_OP_TIMED:
		if (LP_REAL(sem_timedwait))
			return lp_real.sem_timedwait(s, ts);
		break;
	case LP_OP_CLOCK:
		if (LP_REAL(sem_clockwait))
			return lp_real.sem_clockwait(s, clk, ts);
		break;
	default:
		if (LP_REAL(sem_wait))
			return lp_real.sem_wait(s);
	}
	int rc;
	while ((rc = sem_trywait(s)) != 0 && errno == EAGAIN)
		sched_yield();
	return rc;
}

/* glibc's sem_t (struct new_sem): a 64-bit value, then `private`, which
 * glibc sets to FUTEX_SHARED, i.e. LLL_SHARED = FUTEX_PRIVATE_FLAG (128:
 * glibc's futex calls xor it in), for sem_init(pshared = 1) and sem_open,
 * and to 0 for a private semaphore. */
static int lp_sem_shared(const sem_t *s)
{
#if __SIZEOF_POINTER__ == 8
	return ((const int *)(const void *)s)[2] == 128;
#else
	(void)s;
	return 0;
#endif
}

/* `saved` is errno from before the trywait that failed with EAGAIN. */
__attribute__((noinline)) static int lp_sem_slow(sem_t *s, enum lp_op op, clockid_t clk,
						 const struct timespec *ts, int saved, void *ra)
{
	errno = saved;
	if (!lp_pre_recording() || lp_pre_own_pc(ra))
		return lp_sem_call(s, op, clk, ts);
	lp_pre_guard = 1;
	struct lp_py_wait py;
	if (lp_sem_shared(s))
		lp_lock_shared_note(s);
	uint32_t stack = lp_lock_stack(ra, &py);
	errno = saved;
	uint64_t t0 = lp_now();
	int mine = lp_lock_begin(LP_LOCK_SEM, s, ra, stack, t0);
	int rc = lp_sem_call(s, op, clk, ts);
	uint64_t t1 = lp_now();
	int err = errno;
	uint32_t flags = rc == 0 ? 0 : err == ETIMEDOUT ? LP_WAITF_TIMEDOUT : LP_WAITF_FAILED;
	lp_lock_record(LP_LOCK_SEM, s, t0, t1, 0, flags, stack, mine, &py);
	lp_pre_guard = 0;
	errno = err;
	return rc;
}

LP_HOOK int sem_wait(sem_t *s)
{
	int saved = errno;
	if (__builtin_expect(sem_trywait(s) == 0, 1))
		return 0;
	if (errno != EAGAIN)
		return -1; /* EINVAL: what sem_wait would say too */
	return lp_sem_slow(s, LP_OP_PLAIN, 0, NULL, saved, __builtin_return_address(0));
}

LP_HOOK int sem_timedwait(sem_t *s, const struct timespec *ts)
{
	int saved = errno;
	if (sem_trywait(s) == 0)
		return 0;
	if (errno != EAGAIN)
		return -1;
	return lp_sem_slow(s, LP_OP_TIMED, 0, ts, saved, __builtin_return_address(0));
}

LP_HOOK int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *ts)
{
	int saved = errno;
	if (sem_trywait(s) == 0)
		return 0;
	if (errno != EAGAIN)
		return -1;
	return lp_sem_slow(s, LP_OP_CLOCK, clk, ts, saved, __builtin_return_address(0));
}

/* ---- condition variables ---------------------------------------------- */

static int lp_cond_call(pthread_cond_t *c, pthread_mutex_t *m, enum lp_op op, clockid_t clk,
			const struct timespec *ts)
{
	switch (op) {
	case LP_OP_TIMED:
		if (LP_REAL(cond_timedwait))
			return lp_real.cond_timedwait(c, m, ts);
		break;
	case LP_OP_CLOCK:
		if (LP_REAL(cond_clockwait))
			return lp_real.cond_clockwait(c, m, clk, ts);
		break;
	default:
		if (LP_REAL(cond_wait))
			return lp_real.cond_wait(c, m);
	}
	/* Inside our own dlsym: a spurious wake-up is always allowed. */
	pthread_mutex_unlock(m);
	sched_yield();
	return pthread_mutex_lock(m);
}

/* The wait releases m and takes it back: a hold ends at the wait, and
 * another begins after it. */
static int lp_cond_held(pthread_cond_t *c, pthread_mutex_t *m, enum lp_op op, clockid_t clk,
			const struct timespec *ts, void *ra)
{
	struct lp_hold h;
	int held = lp_hold_take(m, &h);
	uint64_t t1 = held ? lp_now() : 0;
	int rc = lp_cond_call(c, m, op, clk, ts);
	if (held) {
		lp_hold_write(&h, t1);
		lp_hold_begin(m, h.ra, h.kind);
	}
	return rc;
}

__attribute__((noinline)) static int lp_cond_slow(pthread_cond_t *c, pthread_mutex_t *m,
						  enum lp_op op, clockid_t clk,
						  const struct timespec *ts, void *ra)
{
	if (!lp_pre_recording() || lp_pre_own_pc(ra))
		return lp_cond_held(c, m, op, clk, ts, ra);
	int saved = errno;
	lp_pre_guard = 1;
	uint32_t kind = op == LP_OP_PLAIN ? LP_COND_WAIT : LP_COND_TIMEDWAIT;
	struct lp_py_wait py;
	lp_py_holder(&py, c);
	uint64_t t0 = lp_now();
	int mine = lp_inf_begin((uint32_t)LP_REC_COND_WAIT << 8 | kind, (uint64_t)(uintptr_t)c,
				(uint64_t)(uintptr_t)m, ra, 0, 0, t0);
	int rc = lp_cond_held(c, m, op, clk, ts, ra);
	uint64_t t1 = lp_now();
	if (lp_inf_end(mine)) { /* the exit sweep wrote it */
		lp_pre_guard = 0;
		errno = saved;
		return rc;
	}
	lp_pre_modules_refresh();
	uint32_t stack = lp_pre_stack(ra);
	lp_py_frames(&py);
	lp_cond_write(lp_tid(), kind, (uint64_t)(uintptr_t)c, (uint64_t)(uintptr_t)m, t0, t1, stack,
		      lp_flags(rc), lp_runq_take(t0, t1));
	lp_py_write(&py, t0);
	lp_pre_guard = 0;
	errno = saved;
	return rc;
}

/* pthread_cond_wait/timedwait get version GLIBC_2.3.2 from lp_preload.map. */
LP_HOOK int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return lp_cond_slow(c, m, LP_OP_PLAIN, 0, NULL, __builtin_return_address(0));
}

LP_HOOK int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	return lp_cond_slow(c, m, LP_OP_TIMED, 0, ts, __builtin_return_address(0));
}

LP_HOOK int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
				   const struct timespec *ts)
{
	return lp_cond_slow(c, m, LP_OP_CLOCK, clk, ts, __builtin_return_address(0));
}
