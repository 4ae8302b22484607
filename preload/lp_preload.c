/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD interposer: set-up, symbol resolution and the helpers the hooks
 * share. The hooks themselves live in lp_lock_hooks.c and lp_proc.c.
 */
#define _GNU_SOURCE
#include "lp_preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lp_core.h"
#include "lp_counters.h"
#include "lp_py.h"

#define LP_STACK_MAX 40
#define LP_TID_SLOTS 4096u

struct lp_real lp_real;
int lp_pre_on;
__thread int lp_pre_guard __attribute__((tls_model("initial-exec")));

/* Set while this thread runs dlsym, which may call malloc and so, through
 * an app allocator, our lock hooks. */
static __thread int lp_resolving __attribute__((tls_model("initial-exec")));
static uint64_t lp_mod_adds;
static int lp_resolved_all; /* lp_pre_resolve() done: every slot tried */

struct lp_tid_slot {
	unsigned long key; /* pthread_t */
	uint32_t tid;
};
static struct lp_tid_slot lp_tids[LP_TID_SLOTS];

#define LP_SYM(f, name) LP_SYM_AT(lp_real.f, name, NULL)
#define LP_VSYM(f, name, ver) LP_SYM_AT(lp_real.f, name, ver)

/* Every real function the hooks call, resolved one at a time at its first
 * use (LP_REAL): dlsym'ing all of them at start-up was most of the
 * interposer's own start cost in every exec'd image (a shell's /bin/true
 * calls one of them, exit). */
static const struct lp_sym lp_syms[] = {
    LP_SYM(mutex_lock, "pthread_mutex_lock"),
    LP_SYM(mutex_timedlock, "pthread_mutex_timedlock"),
    LP_SYM(mutex_clocklock, "pthread_mutex_clocklock"),
    LP_SYM(rw_rdlock, "pthread_rwlock_rdlock"),
    LP_SYM(rw_wrlock, "pthread_rwlock_wrlock"),
    LP_SYM(rw_timedrdlock, "pthread_rwlock_timedrdlock"),
    LP_SYM(rw_timedwrlock, "pthread_rwlock_timedwrlock"),
    LP_SYM(rw_clockrdlock, "pthread_rwlock_clockrdlock"),
    LP_SYM(rw_clockwrlock, "pthread_rwlock_clockwrlock"),
    LP_SYM(rw_unlock, "pthread_rwlock_unlock"),
    LP_SYM(spin_lock, "pthread_spin_lock"),
    LP_SYM(sem_wait, "sem_wait"),
    LP_SYM(sem_timedwait, "sem_timedwait"),
    LP_SYM(sem_clockwait, "sem_clockwait"),
#if defined(__x86_64__)
    /* Our definitions are the GLIBC_2.3.2 ones (lp_preload.map); the
     * unversioned lookup could hand back the old 2.2.5 ABI. */
    LP_VSYM(cond_wait, "pthread_cond_wait", "GLIBC_2.3.2"),
    LP_VSYM(cond_timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2"),
#else
    LP_SYM(cond_wait, "pthread_cond_wait"),
    LP_SYM(cond_timedwait, "pthread_cond_timedwait"),
#endif
    LP_SYM(cond_clockwait, "pthread_cond_clockwait"),
    LP_SYM(create, "pthread_create"),
    LP_SYM(setname, "pthread_setname_np"),
    LP_SYM(prctl, "prctl"),
    LP_SYM(fork, "fork"),
    LP_SYM(vfork, "vfork"),
    LP_SYM(clone, "clone"),
    LP_SYM(execve, "execve"),
    LP_SYM(execv, "execv"),
    LP_SYM(execvp, "execvp"),
    LP_SYM(execvpe, "execvpe"),
    LP_SYM(fexecve, "fexecve"),
    LP_SYM(posix_spawn, "posix_spawn"),
    LP_SYM(posix_spawnp, "posix_spawnp"),
    LP_SYM(exit, "exit"),
    LP_SYM(uexit, "_exit"),
    LP_SYM(uExit, "_Exit"),
    LP_SYM(wait, "wait"),
    LP_SYM(waitpid, "waitpid"),
    LP_SYM(wait3, "wait3"),
    LP_SYM(wait4, "wait4"),
    LP_SYM(waitid, "waitid"),
    LP_SYM(setuid, "setuid"),
    LP_SYM(seteuid, "seteuid"),
    LP_SYM(setreuid, "setreuid"),
    LP_SYM(setresuid, "setresuid"),
    LP_SYM(dlopen, "dlopen"),
    LP_SYM(dlclose, "dlclose"),
};
#define LP_NSYMS (sizeof(lp_syms) / sizeof(lp_syms[0]))

/* Resolved at start-up all the same: what a signal handler may call first
 * (dlsym is not async-signal-safe) and what a child between vfork and exec
 * calls. lp_block.c's own list says the same of its functions. */
static void **const lp_syms_eager[] = {
    (void **)&lp_real.uexit,   (void **)&lp_real.uExit,	 (void **)&lp_real.wait,
    (void **)&lp_real.waitpid, (void **)&lp_real.wait3,	 (void **)&lp_real.wait4,
    (void **)&lp_real.waitid,  (void **)&lp_real.execve,
};

static void lp_sym_resolve(const struct lp_sym *s)
{
	void *p = s->ver ? dlvsym(RTLD_NEXT, s->name, s->ver) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, s->name);
	if (p)
		__atomic_store_n(s->slot, p, __ATOMIC_RELAXED);
}

/* The entry of tab[n] that fills slot, resolved; 1 if slot is in tab. */
int lp_sym_resolve_in(const struct lp_sym *tab, size_t n, void **slot)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i].slot == slot) {
			lp_sym_resolve(&tab[i]);
			return 1;
		}
	return 0;
}

void lp_sym_resolve_all(const struct lp_sym *tab, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!__atomic_load_n(tab[i].slot, __ATOMIC_RELAXED))
			lp_sym_resolve(&tab[i]);
}

void lp_pre_resolve_slot(void **slot)
{
	if (lp_resolving)
		return;
	int saved = errno;
	lp_resolving = 1;
	if (!lp_sym_resolve_in(lp_syms, LP_NSYMS, slot))
		lp_block_resolve_slot(slot);
	lp_resolving = 0;
	errno = saved;
}

void lp_pre_resolve(void)
{
	if (lp_resolving || __atomic_load_n(&lp_resolved_all, __ATOMIC_ACQUIRE))
		return;
	int saved = errno;
	lp_resolving = 1;
	lp_sym_resolve_all(lp_syms, LP_NSYMS);
	lp_block_resolve();
	lp_resolving = 0;
	__atomic_store_n(&lp_resolved_all, 1, __ATOMIC_RELEASE);
	errno = saved;
}

/* Before a fork: the child must not be the one to call dlsym, since
 * another thread of ours may hold the dynamic linker's lock at the fork,
 * and it would never be released in the child. */
static void lp_pre_atfork_prepare(void)
{
	lp_pre_resolve();
}

static void lp_pre_resolve_eager(void)
{
	for (size_t i = 0; i < sizeof(lp_syms_eager) / sizeof(lp_syms_eager[0]); i++)
		lp_pre_resolve_slot(lp_syms_eager[i]);
	lp_block_resolve_eager();
}

static unsigned lp_tid_hash(unsigned long key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 40) & (LP_TID_SLOTS - 1);
}

/* Insert-only open addressing: a pthread_t reused for a new thread just
 * overwrites its tid, so the table stays bounded by distinct stacks. */
void lp_pre_tid_put(pthread_t th, uint32_t tid)
{
	unsigned long key = (unsigned long)th;
	unsigned i = lp_tid_hash(key);
	for (unsigned n = 0; n < LP_TID_SLOTS; n++, i = (i + 1) & (LP_TID_SLOTS - 1)) {
		unsigned long cur = __atomic_load_n(&lp_tids[i].key, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			unsigned long zero = 0;
			if (__atomic_compare_exchange_n(&lp_tids[i].key, &zero, key, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				cur = key;
			else
				cur = zero;
		}
		if (cur == key) {
			__atomic_store_n(&lp_tids[i].tid, tid, __ATOMIC_RELEASE);
			return;
		}
	}
}

uint32_t lp_pre_tid_get(pthread_t th)
{
	unsigned long key = (unsigned long)th;
	unsigned i = lp_tid_hash(key);
	for (unsigned n = 0; n < LP_TID_SLOTS; n++, i = (i + 1) & (LP_TID_SLOTS - 1)) {
		unsigned long cur = __atomic_load_n(&lp_tids[i].key, __ATOMIC_ACQUIRE);
		if (cur == key)
			return __atomic_load_n(&lp_tids[i].tid, __ATOMIC_ACQUIRE);
		if (cur == 0)
			return 0;
	}
	return 0;
}

int lp_pre_own_pc(const void *pc)
{
	struct dl_find_object o;
	if (_dl_find_object((void *)pc, &o) != 0 || !o.dlfo_link_map)
		return 0;
	const char *base = strrchr(o.dlfo_link_map->l_name, '/');
	return base && !strncmp(base + 1, "liblatprof_", 11);
}

uint32_t lp_pre_site_stack(void *ra)
{
	uint64_t pc = (uint64_t)(uintptr_t)ra;
	return lp_intern_stack(&pc, 1);
}

/* Find the app's return address in our own backtrace and keep what lies
 * beyond it: exact whatever the compiler inlined or tail-called. */
uint32_t lp_pre_stack(void *ra)
{
	void *buf[LP_STACK_MAX];
	uint64_t pcs[LP_STACK_MAX];
	lp_core_warm_unwinder();
	int n = lp_core_backtrace(buf, LP_STACK_MAX);
	int i = 0;
	while (i < n && buf[i] != ra)
		i++;
	if (i == n) /* unwinder lost our frames: keep the app's call site */
		return lp_pre_site_stack(ra);
	unsigned k = 0;
	for (; i < n; i++)
		pcs[k++] = (uint64_t)(uintptr_t)buf[i];
	return lp_intern_stack(pcs, k);
}

static int lp_adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(uint64_t *)data = info->dlpi_adds;
	return 1; /* the counter is global: one object is enough */
}

void lp_pre_modules_refresh(void)
{
	uint64_t adds = 0;
	dl_iterate_phdr(lp_adds_cb, &adds);
	uint64_t old = __atomic_load_n(&lp_mod_adds, __ATOMIC_RELAXED);
	if (adds != old && __atomic_compare_exchange_n(&lp_mod_adds, &old, adds, 0,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		lp_core_record_modules();
}

void lp_pre_thread_name(uint32_t tid, const char *name)
{
	size_t len = strnlen(name, 64);
	while (len && name[len - 1] == '\n')
		len--;
	uint32_t id = lp_intern_string(name, len);
	struct lp_rec_thread_name *r = lp_rec_begin(LP_REC_THREAD_NAME, 0, sizeof(*r));
	if (!r)
		return;
	r->ts = lp_now();
	r->tid = tid;
	r->name = id;
	lp_rec_commit();
}

void lp_pre_thread_start(uint32_t parent)
{
	uint32_t tid = lp_tid();
	lp_pre_tid_put(pthread_self(), tid);
	struct lp_rec_thread_start *r = lp_rec_begin(LP_REC_THREAD_START, 0, sizeof(*r));
	if (r) {
		r->ts = lp_now();
		r->tid = tid;
		r->parent_tid = parent;
		lp_rec_commit();
	}
	char name[17] = {0};
	if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && name[0])
		lp_pre_thread_name(tid, name);
	/* Whole-thread counter totals must start with the thread, not at its
	 * first NVTX boundary. */
	lp_counters_thread_start();
}

/* The core created this process's log (its first record): the main
 * thread's start and name are in it, and the thread that records now gets
 * its counters. A process that never records never loads the counters'
 * set-up, nor opens a perf_event. */
static void lp_pre_log_opened(void)
{
	int guard = lp_pre_guard;
	lp_pre_guard = 1;
	lp_counters_thread_start();
	lp_pre_guard = guard;
}

__attribute__((constructor)) static void lp_pre_init(void)
{
	int saved = errno;
	lp_pre_guard = 1; /* lp_core_init takes a mutex: no hook recording */
	lp_pre_resolve_eager();
	pthread_atfork(lp_pre_atfork_prepare, NULL, NULL);
	lp_env_capture();
	lp_block_init();
	lp_core_on_log_open(lp_pre_log_opened); /* before a record can create the log */
	int ok = lp_core_init() == 0;
	if (ok) {
		uint64_t adds = 0;
		dl_iterate_phdr(lp_adds_cb, &adds);
		__atomic_store_n(&lp_mod_adds, adds, __ATOMIC_RELAXED);
		lp_py_probe();
		__atomic_store_n(&lp_pre_on, 1, __ATOMIC_RELEASE);
	}
	lp_pre_guard = 0;
	errno = saved;
}
