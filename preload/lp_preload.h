/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the preload hooks (not installed). Every hook:
 *  - passes straight through until lp_pre_on is set, and while the calling
 *    thread is already inside one of our hooks (lp_pre_guard);
 *  - preserves errno and returns exactly what the real function returned.
 */
#ifndef LP_PRELOAD_H
#define LP_PRELOAD_H

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#define LP_HOOK __attribute__((visibility("default")))
/* The hottest hooks skip the frame-pointer prologue (gcc; clang has no
 * per-function optimize attribute and keeps the build's setting). */
#if defined(__clang__)
#define LP_HOT_NOFP
#else
#define LP_HOT_NOFP __attribute__((optimize("omit-frame-pointer")))
#endif

struct lp_real {
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*rw_rdlock)(pthread_rwlock_t *);
	int (*rw_wrlock)(pthread_rwlock_t *);
	int (*rw_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rw_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rw_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rw_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rw_unlock)(pthread_rwlock_t *);
	int (*spin_lock)(pthread_spinlock_t *);
	int (*sem_wait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	int (*setname)(pthread_t, const char *);
	int (*prctl)(int, ...);
	pid_t (*fork)(void);
	pid_t (*vfork)(void);
	int (*clone)(int (*)(void *), void *, int, void *, ...);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[], char *const[]);
	void (*exit)(int) __attribute__((noreturn));
	void (*uexit)(int) __attribute__((noreturn));
	void (*uExit)(int) __attribute__((noreturn));
	pid_t (*wait)(int *);
	pid_t (*waitpid)(pid_t, int *, int);
	pid_t (*wait3)(int *, int, struct rusage *);
	pid_t (*wait4)(pid_t, int *, int, struct rusage *);
	int (*waitid)(idtype_t, id_t, siginfo_t *, int);
	int (*setuid)(uid_t);
	int (*seteuid)(uid_t);
	int (*setreuid)(uid_t, uid_t);
	int (*setresuid)(uid_t, uid_t, uid_t);
	void *(*dlopen)(const char *, int);
	int (*dlclose)(void *);
};

extern struct lp_real lp_real;
extern int lp_pre_on; /* core log open and hooks set up */
extern __thread int lp_pre_guard __attribute__((tls_model("initial-exec")));

/* At start-up: keep latprof's variables for exec'd children (lp_proc.c). */
void lp_env_capture(void);

/* The real function, resolved at its first use. NULL only while this very
 * thread is inside dlsym (it may call back into a hook). */
#define LP_REAL(f)                                                                                 \
	(__atomic_load_n(&lp_real.f, __ATOMIC_RELAXED)                                             \
	     ? __atomic_load_n(&lp_real.f, __ATOMIC_RELAXED)                                       \
	     : (lp_pre_resolve_slot((void **)&lp_real.f),                                          \
		__atomic_load_n(&lp_real.f, __ATOMIC_RELAXED)))

/* A real function: its slot, its name, the symbol version or NULL. */
struct lp_sym {
	void **slot;
	const char *name;
	const char *ver;
};
/* Resolve the one real function whose pointer lives at slot (lp_real's or
 * lp_block.c's), unless this thread is inside our own dlsym. Keeps errno. */
void lp_pre_resolve_slot(void **slot);
/* Resolve every real function not resolved yet (before a fork or vfork:
 * the child must not call dlsym). */
void lp_pre_resolve(void);
/* syscall(SYS_clone or SYS_clone3) made by the app returned rc with these
 * clone flags (lp_proc.c): counted in the parent, a child detached. */
long lp_pre_raw_clone_after(long rc, unsigned long flags);
/* A table entry: the slot that holds the real function, its name, version. */
#define LP_SYM_AT(slot_, name_, ver_)                                                              \
	{                                                                                          \
		(void **)&(slot_), name_, ver_                                                     \
	}
int lp_sym_resolve_in(const struct lp_sym *tab, size_t n, void **slot);
/* Every entry of tab[n] not resolved yet. */
void lp_sym_resolve_all(const struct lp_sym *tab, size_t n);
/* Blocking-call hooks (lp_block.c): their real functions (all, the one at
 * slot, or those resolved at start-up); the threshold, read once by the
 * constructor. */
void lp_block_resolve(void);
void lp_block_resolve_slot(void **slot);
void lp_block_resolve_eager(void);
void lp_block_init(void);
/* A hook of another file timed as a blocking call (the wait family,
 * lp_proc.c): begin before the real call, end after it, same `call`. */
struct lp_blk_span {
	int on, tsc, mine, armed;
	uint64_t t0;
};
void lp_blk_span_begin(struct lp_blk_span *s, uint32_t call, void *ra);
void lp_blk_span_end(const struct lp_blk_span *s, uint32_t call, long rc, void *ra);
/* True when a hook should record: set up, and not nested in a hook. */
static inline int lp_pre_recording(void)
{
	return __atomic_load_n(&lp_pre_on, __ATOMIC_ACQUIRE) && !lp_pre_guard;
}
/* True when pc lies in latprof's own code (a liblatprof_*.so): the locks
 * that code takes (the counters' registry at thread exit, init locks) are
 * latprof's, not the app's, and a hook does not record them. For the lock
 * hooks' contended paths only: a lock-free lookup (_dl_find_object), then
 * the module's file name. */
int lp_pre_own_pc(const void *pc);
/* Stack from the app's call site `ra` outwards, interned; 0 if none. */
uint32_t lp_pre_stack(void *ra);
/* The call site alone as a stack, interned: where the caller's stack
 * cannot be unwound (the unwinder lost it; another thread's call, written
 * by the exit sweep). */
uint32_t lp_pre_site_stack(void *ra);
/* Record module maps again if a library was loaded since we last looked. */
void lp_pre_modules_refresh(void);
/* THREAD_START (+ THREAD_NAME from the kernel's comm) for this thread. */
void lp_pre_thread_start(uint32_t parent);
void lp_pre_thread_name(uint32_t tid, const char *name);
/* pthread_t -> kernel tid, for naming threads other than the caller. */
void lp_pre_tid_put(pthread_t th, uint32_t tid);
uint32_t lp_pre_tid_get(pthread_t th);

#endif
