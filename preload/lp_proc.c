/* SPDX-License-Identifier: MIT */
/*
 * Process and thread lifetime hooks: thread creation and names, fork,
 * exec, exit, wait and dynamic loading.
 */
#define _GNU_SOURCE
#include "lp_preload.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lp_core.h"
#include "lp_counters.h"
#include "lp_inflight.h"
#include "lp_raw.h"

/* ---- threads ---------------------------------------------------------- */

struct lp_start {
	void *(*fn)(void *);
	void *arg;
	uint32_t parent;
};

/* The tid this thread put in lp_pre_tid_put's table (a forked child's
 * thread has a new tid under the same pthread_t). */
static __thread uint32_t lp_tid_put __attribute__((tls_model("initial-exec")));

static void *lp_thread_main(void *p)
{
	struct lp_start s = *(struct lp_start *)p;
	free(p);
	if (lp_pre_recording()) {
		int saved = errno;
		lp_pre_guard = 1;
		lp_pre_thread_start(s.parent);
		lp_pre_guard = 0;
		errno = saved;
	}
	return s.fn(s.arg);
}

LP_HOOK int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			   void *arg)
{
	if (!LP_REAL(create))
		return EAGAIN;
	if (!lp_pre_recording())
		return lp_real.create(th, attr, fn, arg);
	/* The creating thread's pthread_t -> tid, for a thread that names it
	 * (pthread_setname_np): put here, not at start-up, since only a thread
	 * it creates can, and a process with one thread (most exec'd images,
	 * most forked children) never writes the table's pages. */
	uint32_t self = lp_tid();
	if (lp_tid_put != self) {
		lp_pre_tid_put(pthread_self(), self);
		lp_tid_put = self;
	}
	lp_core_warm_unwinder(); /* before the first thread that can contend */
	/* A thread that creates threads records (their starts): its counters
	 * must count from now, as the new thread's will from its start. */
	lp_pre_guard = 1;
	lp_counters_thread_start();
	lp_pre_guard = 0;
	int saved = errno;
	struct lp_start *s = malloc(sizeof(*s));
	errno = saved;
	if (!s)
		return lp_real.create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->parent = lp_tid();
	int rc = lp_real.create(th, attr, lp_thread_main, s);
	if (rc != 0) {
		free(s);
		errno = saved;
	}
	return rc;
}

LP_HOOK int pthread_setname_np(pthread_t th, const char *name)
{
	if (!LP_REAL(setname))
		return ENOSYS;
	int rc = lp_real.setname(th, name);
	if (rc != 0 || !lp_pre_recording())
		return rc;
	int saved = errno;
	lp_pre_guard = 1;
	uint32_t tid = pthread_equal(th, pthread_self()) ? lp_tid() : lp_pre_tid_get(th);
	if (tid)
		lp_pre_thread_name(tid, name);
	lp_pre_guard = 0;
	errno = saved;
	return rc;
}

/*
 * prctl is variadic; like glibc's own wrapper, take four unsigned longs
 * (prctl(2): arg2..arg5) whatever the option and hand them all on. Without
 * the real one (only inside our own dlsym) make the syscall it would make.
 */
LP_HOOK int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long);
	unsigned long a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long);
	unsigned long a5 = va_arg(ap, unsigned long);
	va_end(ap);
	int (*fn)(int, ...) = LP_REAL(prctl);
	int rc = fn ? fn(option, a2, a3, a4, a5) : (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (option != PR_SET_NAME || rc != 0 || !lp_pre_recording())
		return rc;
	int saved = errno;
	lp_pre_guard = 1;
	/* PR_SET_NAME names the calling thread; the kernel keeps at most
	 * TASK_COMM_LEN - 1 = 15 bytes of the name and drops the rest. */
	char name[16];
	const char *arg = (const char *)a2;
	size_t len = strnlen(arg, sizeof(name) - 1);
	memcpy(name, arg, len);
	name[len] = 0;
	lp_pre_thread_name(lp_tid(), name);
	lp_pre_guard = 0;
	errno = saved;
	return rc;
}

/* ---- dropping root ----------------------------------------------------- */

/* A daemon started as root that becomes its own user (lp_core.c says why
 * the run's files go with it). Only the effective uid decides who may
 * create files; setreuid/setresuid with -1 leave it as it is. */
static void lp_uid_drop(uid_t to)
{
	if (to == (uid_t)-1 || !lp_pre_recording())
		return;
	lp_pre_guard = 1;
	lp_core_before_uid_drop(to);
	lp_pre_guard = 0;
}

#define LP_SETID_FAIL(f) (LP_REAL(f) ? 0 : (errno = ENOSYS, 1))

LP_HOOK int setuid(uid_t uid)
{
	if (LP_SETID_FAIL(setuid))
		return -1;
	lp_uid_drop(uid);
	return lp_real.setuid(uid);
}

LP_HOOK int seteuid(uid_t euid)
{
	if (LP_SETID_FAIL(seteuid))
		return -1;
	lp_uid_drop(euid);
	return lp_real.seteuid(euid);
}

LP_HOOK int setreuid(uid_t ruid, uid_t euid)
{
	if (LP_SETID_FAIL(setreuid))
		return -1;
	lp_uid_drop(euid);
	return lp_real.setreuid(ruid, euid);
}

LP_HOOK int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	if (LP_SETID_FAIL(setresuid))
		return -1;
	lp_uid_drop(euid);
	return lp_real.setresuid(ruid, euid, suid);
}

/* ---- fork ------------------------------------------------------------- */

/* The core's atfork handler has already entered the child in the process
 * table; its log, with its only thread's start, comes at its first record. */
static pid_t lp_fork(void)
{
	if (!LP_REAL(fork)) {
		errno = ENOSYS;
		return -1;
	}
	if (!lp_pre_recording())
		return lp_real.fork();
	lp_tid(); /* cached: the child's table entry names this thread its parent */
	return lp_real.fork();
}

LP_HOOK pid_t fork(void)
{
	return lp_fork();
}

/*
 * vfork: a shell (dash) runs each command through it, and turning it into a
 * real fork made every command copy and tear down the shell's address
 * space (half of a shell loop's cost under latprof). So it stays a vfork:
 * the child shares our memory, this thread's TLS included, until it execs
 * or exits, while this thread waits. In the child the hooks record nothing
 * (lp_pre_guard) but its start, exec and exit, which go to the process
 * table under its own pid (lp_core_vfork_child) and write nothing of ours
 * but this thread's vfork slots; the parent, resumed, restores them.
 *
 * The real vfork returns twice into the same frame, so it is called from a
 * trampoline with no frame of its own (as ASan's interceptor does): the
 * app's return address waits in TLS, which the child does not write, while
 * both processes return through the real vfork's own return address.
 */
struct lp_vfork_save {
	void *ra;
	int guard;
	int rec;
	uint32_t tid;
};
static __thread struct lp_vfork_save lp_vfs __attribute__((tls_model("initial-exec")));

/* The real vfork, with the app's return address kept; NULL: take a real
 * fork instead (not resolved, or called again inside a vfork child). */
__attribute__((used)) void *lp_vfork_pre(void *ra)
{
	if (lp_core_in_vfork())
		return NULL;
	lp_pre_resolve(); /* once: the child must not be the one to dlsym */
	void *fn = (void *)LP_REAL(vfork);
	if (!fn)
		return NULL;
	lp_vfs.ra = ra;
	lp_vfs.guard = lp_pre_guard;
	lp_vfs.rec = lp_pre_recording();
	if (lp_vfs.rec)
		lp_vfs.tid = lp_tid(); /* the child's table entry names it */
	return fn;
}

/* After it, in both processes (pid 0: the child); the app's return address. */
__attribute__((used)) void *lp_vfork_post(long pid)
{
	int saved = errno;
	if (pid == 0) {
		if (lp_vfs.rec) {
			lp_pre_guard = 1;
			lp_core_vfork_child(lp_vfs.tid);
		}
	} else {
		lp_core_vfork_parent();
		lp_pre_guard = lp_vfs.guard;
	}
	errno = saved;
	return lp_vfs.ra;
}

__attribute__((used)) pid_t lp_vfork_as_fork(void)
{
	return lp_fork();
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	".cfi_startproc\n"
	"	movq (%rsp), %rdi\n"
	"	subq $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call lp_vfork_pre\n"
	"	addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	jz lp_vfork_as_fork\n"
	"	popq %rdi\n" /* the return address is in lp_vfs now */
	".cfi_adjust_cfa_offset -8\n"
	".cfi_undefined rip\n"
	"	call *%rax\n"
	"	pushq %rax\n"
	"	subq $8, %rsp\n"
	"	movq %rax, %rdi\n"
	"	call lp_vfork_post\n"
	"	addq $8, %rsp\n"
	"	movq %rax, %rcx\n"
	"	popq %rax\n"
	"	jmp *%rcx\n"
	".cfi_endproc\n"
	".size vfork, .-vfork\n");
#else
/* Elsewhere a real fork: no trampoline written for this architecture. */
LP_HOOK pid_t vfork(void)
{
	return lp_fork();
}
#endif

/* ---- raw clone ---------------------------------------------------------- */

/*
 * clone() called by the app itself (glibc's pthread_create, fork and
 * posix_spawn use an internal one that no hook sees): a task made outside
 * the hooks, which records nothing, so the parent counts it in the process
 * table (lp_core_raw_clone) for latprof run to name. A child without
 * CLONE_VM is a copy of our memory in which no fork handler ran: its
 * records would land in the parent's log, so it is detached before fn
 * runs. A child with CLONE_VM shares our memory, which it must not change.
 */
struct lp_clone_start {
	int (*fn)(void *);
	void *arg;
};

static int lp_clone_child(void *p)
{
	/* our own copy of the parent's stack frame, taken by the clone */
	struct lp_clone_start s = *(struct lp_clone_start *)p;
	__atomic_store_n(&lp_pre_on, 0, __ATOMIC_RELEASE);
	lp_core_detach_child();
	return s.fn(s.arg);
}

static void lp_clone_note(long rc, unsigned long flags)
{
	if (rc <= 0 || !lp_pre_recording())
		return;
	int saved = errno;
	lp_pre_guard = 1;
	lp_core_raw_clone(flags, (uint32_t)rc);
	lp_pre_guard = 0;
	errno = saved;
}

/* The three optional arguments are always passed on, as glibc's clone
 * reads them (the last from the caller's stack: not instrumented, as
 * syscall()). */
__attribute__((no_sanitize("address"))) LP_HOOK int clone(int (*fn)(void *), void *stack, int flags,
							  void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	int (*real)(int (*)(void *), void *, int, void *, ...) = LP_REAL(clone);
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!lp_pre_recording())
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	struct lp_clone_start s = {fn, arg};
	int own = !(flags & CLONE_VM) && fn;
	int rc =
	    real(own ? lp_clone_child : fn, stack, flags, own ? (void *)&s : arg, ptid, tls, ctid);
	lp_clone_note(rc, (unsigned long)(unsigned)flags);
	return rc;
}

/* syscall(SYS_clone / SYS_clone3, ...) from the app, after the real call
 * (lp_block.c's syscall hook): in the parent, count it; in a child that
 * has its own memory, detach it. A child with CLONE_VM returns here only
 * on the parent's stack (no new stack given), and writes nothing of ours. */
long lp_pre_raw_clone_after(long rc, unsigned long flags)
{
	if (rc == 0) {
		if (!(flags & CLONE_VM)) {
			int saved = errno;
			__atomic_store_n(&lp_pre_on, 0, __ATOMIC_RELEASE);
			lp_core_detach_child();
			errno = saved;
		}
		return rc;
	}
	lp_clone_note(rc, flags);
	return rc;
}

/* ---- the environment of exec'd children -------------------------------- */

/*
 * The variables latprof run gives the app. A child exec'd with an environment
 * that lacks them (env -i, subprocess with env={...}, clearenv) or whose
 * LD_PRELOAD no longer names our library (sh -c 'LD_PRELOAD=x exec app',
 * env -u LD_PRELOAD) would run untraced, where perf and nsys follow every
 * child: the hooks add back each variable the child's environment lacks and
 * put our LD_PRELOAD entries in front of the child's own (a child that set
 * its own values of the others keeps them). Kept at start-up in static
 * storage: the hooks neither read the environment later nor allocate.
 */
static const char *const lp_env_names[] = {
    "LATPROF_DIR",
    "LD_PRELOAD",
    "NVTX_INJECTION64_PATH",
    "CUDA_INJECTION64_PATH",
    "LATPROF_COUNTERS",
    "LATPROF_COUNTERS_INTERVAL_NS",
    "LATPROF_LOG_MB",
    "LATPROF_CUDA_BUFFER_MB",
    "LATPROF_CUDA_FLUSH_MS",
    "LATPROF_CUPTI",
    "LATPROF_NVTX_CLOCK",
    "ASAN_OPTIONS",
    "LATPROF_BLOCK_THRESHOLD_NS",
    "LATPROF_BLOCK_SWITCH",
};
#define LP_ENV_N (sizeof(lp_env_names) / sizeof(lp_env_names[0]))
#define LP_ENV_PRELOAD 1       /* index of LD_PRELOAD */
#define LP_ENV_MAX_CHILD 65536 /* entries; a larger environment passes as it is */
#define LP_PRELOAD_LIB "liblatprof_preload.so"
static char lp_env_store[16384];
static const char *lp_env_kept[LP_ENV_N]; /* "NAME=value" in lp_env_store, or NULL */
/* Our LD_PRELOAD entries: the kept value up to and including our library
 * (a sanitizer runtime may come first), without the user's own entries. */
static char lp_env_ours[4096];
static size_t lp_env_ours_len;
/* The path of our library in it: a program exec'd where that path does not
 * lead to it (a chroot) cannot load it. */
static char lp_env_lib[4096];

static void lp_env_capture_ours(const char *kv)
{
	const char *v = strchr(kv, '=') + 1, *lib = strstr(v, LP_PRELOAD_LIB);
	if (!lib)
		return;
	size_t n = (size_t)(lib - v) + strlen(LP_PRELOAD_LIB);
	if (n >= sizeof(lp_env_ours))
		return;
	memcpy(lp_env_ours, v, n);
	lp_env_ours[n] = 0;
	lp_env_ours_len = n;
	const char *start = lib;
	while (start > v && start[-1] != ':' && start[-1] != ' ')
		start--;
	if (*start == '/') /* absolute: the same file wherever the exec happens */
		memcpy(lp_env_lib, start, (size_t)(lib - start) + strlen(LP_PRELOAD_LIB));
}

void lp_env_capture(void)
{
	size_t used = 0;
	for (size_t i = 0; i < LP_ENV_N; i++) {
		const char *v = getenv(lp_env_names[i]);
		size_t nl = strlen(lp_env_names[i]), vl = v ? strlen(v) : 0;
		if (!v || used + nl + vl + 2 > sizeof(lp_env_store))
			continue;
		char *kv = lp_env_store + used;
		memcpy(kv, lp_env_names[i], nl);
		kv[nl] = '=';
		memcpy(kv + nl + 1, v, vl + 1);
		lp_env_kept[i] = kv;
		used += nl + vl + 2;
	}
	if (lp_env_kept[LP_ENV_PRELOAD])
		lp_env_capture_ours(lp_env_kept[LP_ENV_PRELOAD]);
}

/* Index in envp of "NAME=...", or -1. */
static long lp_env_find(char *const envp[], const char *kv)
{
	size_t nl = (size_t)(strchr(kv, '=') - kv) + 1;
	for (long i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], kv, nl))
			return i;
	return -1;
}

/* The child's LD_PRELOAD entry lacks our library. */
static int lp_env_preload_lost(char *const envp[], long at)
{
	return lp_env_ours_len && !strstr(envp[at], LP_PRELOAD_LIB);
}

/* Entries the fixed environment needs (0: leave envp as it is). */
static size_t lp_env_need(char *const envp[])
{
	if ((!lp_pre_recording() && !lp_core_in_vfork()) || !lp_env_kept[0])
		return 0;
	int fix = 0;
	for (size_t i = 0; i < LP_ENV_N && !fix; i++) {
		if (!lp_env_kept[i])
			continue;
		long at = lp_env_find(envp, lp_env_kept[i]);
		fix = at < 0 || (i == LP_ENV_PRELOAD && lp_env_preload_lost(envp, at));
	}
	if (!fix)
		return 0;
	size_t n = 0;
	while (envp && envp[n] && n < LP_ENV_MAX_CHILD)
		n++;
	return n < LP_ENV_MAX_CHILD ? n + LP_ENV_N + 1 : 0;
}

/* "LD_PRELOAD=<ours>:<theirs>" into pre[len]; NULL when it does not fit. */
static char *lp_env_join_preload(const char *theirs, char *pre, size_t len)
{
	static const char name[] = "LD_PRELOAD=";
	size_t a = sizeof(name) - 1, b = strlen(theirs);
	if (a + lp_env_ours_len + 1 + b + 1 > len)
		return NULL;
	memcpy(pre, name, a);
	memcpy(pre + a, lp_env_ours, lp_env_ours_len);
	pre[a + lp_env_ours_len] = b ? ':' : 0;
	memcpy(pre + a + lp_env_ours_len + 1, theirs, b + 1);
	return pre;
}

/* envp plus what it lacks, into out[cap]; pre (len) holds a combined
 * LD_PRELOAD when the child has its own without our library. */
static char *const *lp_env_fix(char *const envp[], char **out, size_t cap, char *pre, size_t len)
{
	size_t n = 0;
	for (; envp && envp[n]; n++)
		out[n] = envp[n];
	for (size_t i = 0; i < LP_ENV_N && n + 1 < cap; i++) {
		const char *kv = lp_env_kept[i];
		if (!kv)
			continue;
		long at = lp_env_find(envp, kv);
		if (at < 0) {
			out[n++] = (char *)kv;
		} else if (i == LP_ENV_PRELOAD && lp_env_preload_lost(envp, at)) {
			char *joined = lp_env_join_preload(strchr(envp[at], '=') + 1, pre, len);
			if (joined)
				out[at] = joined;
		}
	}
	out[n] = NULL;
	return out;
}

/* ---- programs that cannot load the interposer ---------------------------- */

/*
 * ld.so prints "ERROR: ld.so: object ... cannot be preloaded" on the
 * program's stderr, which is the app's, for each LD_PRELOAD entry it cannot
 * load: a 32-bit program from a 64-bit run (wrong ELF class), or one exec'd
 * in a chroot where our library's path leads nowhere. Such a program is
 * exec'd without our entries in its LD_PRELOAD (the user's own stay), and
 * the exec record says why, for latprof run to name it. A name that exec
 * searches in PATH (execvp) is not looked up: checked only with a '/'.
 */
#if __SIZEOF_POINTER__ == 8
#define LP_ELF_CLASS ELFCLASS64
#else
#define LP_ELF_CLASS ELFCLASS32
#endif

static const char *lp_exec_why(const char *path, int searched)
{
	if (!lp_env_ours_len || !lp_env_lib[0] || !path ||
	    (!lp_pre_recording() && !lp_core_in_vfork()))
		return NULL;
	/* Raw calls: no hook, no libc text a vfork child would fault in. */
	int saved = errno;
	const char *why = NULL;
	if (LP_RAW(SYS_faccessat, AT_FDCWD, lp_env_lib, F_OK, 0, 0, 0) != 0 &&
	    (errno == ENOENT || errno == ENOTDIR)) {
		why = "chroot";
	} else if (!searched || strchr(path, '/')) {
		long fd = LP_RAW(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
		unsigned char id[EI_NIDENT];
		if (fd >= 0) {
			if (LP_RAW(SYS_pread64, fd, id, sizeof(id), 0, 0, 0) == (long)sizeof(id) &&
			    !memcmp(id, ELFMAG, SELFMAG) && id[EI_CLASS] != LP_ELF_CLASS)
				why = "elf-class";
			LP_RAW(SYS_close, fd, 0, 0, 0, 0, 0);
		}
	}
	errno = saved;
	return why;
}

/* tok (n bytes) is one of our LD_PRELOAD entries. */
static int lp_env_is_ours(const char *tok, size_t n)
{
	for (const char *p = lp_env_ours; *p;) {
		size_t k = strcspn(p, ": ");
		if (k == n && !memcmp(p, tok, n))
			return 1;
		p += k + (p[k] != 0);
	}
	return 0;
}

/* Entries envp needs for a program that cannot load us: 0 when its
 * LD_PRELOAD names none of ours. */
static size_t lp_env_strip_need(char *const envp[])
{
	long at = lp_env_find(envp, "LD_PRELOAD=");
	if (at < 0 || !strstr(envp[at], LP_PRELOAD_LIB))
		return 0;
	size_t n = 0;
	while (envp[n] && n < LP_ENV_MAX_CHILD)
		n++;
	return n < LP_ENV_MAX_CHILD ? n + 1 : 0;
}

/* envp with our entries out of LD_PRELOAD (the variable left out when
 * nothing of the user's remains), into out[cap]; pre (len) holds it. */
static char *const *lp_env_strip(char *const envp[], char **out, size_t cap, char *pre, size_t len)
{
	static const char name[] = "LD_PRELOAD=";
	size_t n = 0, used = sizeof(name) - 1;
	long at = lp_env_find(envp, name);
	memcpy(pre, name, used);
	for (const char *p = envp[at] + used; *p;) {
		size_t k = strcspn(p, ": ");
		if (k && !lp_env_is_ours(p, k) && used + k + 2 <= len) {
			if (used > sizeof(name) - 1)
				pre[used++] = ':';
			memcpy(pre + used, p, k);
			used += k;
		}
		p += k + (p[k] != 0);
	}
	pre[used] = 0;
	for (long i = 0; envp[i] && n + 1 < cap; i++)
		if (i != at)
			out[n++] = envp[i];
		else if (used > sizeof(name) - 1)
			out[n++] = pre;
	out[n] = NULL;
	return out;
}

/* In a hook with an envp: a fixed copy on this frame's stack when needed;
 * why (lp_exec_why): the program cannot load us, so ours go. */
#define LP_ENV_FIX(envp, why)                                                                      \
	size_t env_cap_ = (why) ? lp_env_strip_need(envp) : lp_env_need(envp);                     \
	char *env_out_[env_cap_ ? env_cap_ : 1];                                                   \
	char env_pre_[env_cap_ ? 8192 : 1];                                                        \
	if (env_cap_)                                                                              \
	envp = (why) ? lp_env_strip(envp, env_out_, env_cap_, env_pre_, sizeof(env_pre_))          \
		     : lp_env_fix(envp, env_out_, env_cap_, env_pre_, sizeof(env_pre_))

/* ---- exec ------------------------------------------------------------- */

static void lp_exec_note(const char *path, const char *why)
{
	if (lp_core_in_vfork()) { /* guarded already; to the table */
		lp_core_before_exec(path, why);
		return;
	}
	if (!lp_pre_recording())
		return;
	lp_pre_guard = 1;
	lp_core_before_exec(path, why); /* keeps errno */
	lp_inf_before_exec();
	lp_pre_guard = 0;
}

#define LP_NOSYS_IF_NULL(f)                                                                        \
	do {                                                                                       \
		if (!LP_REAL(f)) {                                                                 \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

LP_HOOK int execve(const char *path, char *const argv[], char *const envp[])
{
	LP_NOSYS_IF_NULL(execve);
	const char *why = lp_exec_why(path, 0);
	lp_exec_note(path, why);
	LP_ENV_FIX(envp, why);
	return lp_real.execve(path, argv, envp);
}

/* execv and execvp pass environ: after clearenv() it lacks ours too. */
LP_HOOK int execv(const char *path, char *const argv[])
{
	LP_NOSYS_IF_NULL(execv);
	const char *why = lp_exec_why(path, 0);
	lp_exec_note(path, why);
	char *const *envp = environ;
	LP_ENV_FIX(envp, why);
	if (envp != environ && LP_REAL(execve))
		return lp_real.execve(path, argv, envp);
	return lp_real.execv(path, argv);
}

LP_HOOK int execvp(const char *file, char *const argv[])
{
	LP_NOSYS_IF_NULL(execvp);
	const char *why = lp_exec_why(file, 1);
	lp_exec_note(file, why);
	char *const *envp = environ;
	LP_ENV_FIX(envp, why);
	if (envp != environ && LP_REAL(execvpe))
		return lp_real.execvpe(file, argv, envp);
	return lp_real.execvp(file, argv);
}

LP_HOOK int execvpe(const char *file, char *const argv[], char *const envp[])
{
	LP_NOSYS_IF_NULL(execvpe);
	const char *why = lp_exec_why(file, 1);
	lp_exec_note(file, why);
	LP_ENV_FIX(envp, why);
	return lp_real.execvpe(file, argv, envp);
}

/* posix_spawn execs in a child of its own (glibc: clone with CLONE_VFORK,
 * so the fixed environment on this stack outlives the child's execve). */
LP_HOOK int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!LP_REAL(posix_spawn))
		return ENOSYS;
	const char *why = lp_exec_why(path, 0);
	LP_ENV_FIX(envp, why);
	return lp_real.posix_spawn(pid, path, fa, attr, argv, envp);
}

LP_HOOK int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!LP_REAL(posix_spawnp))
		return ENOSYS;
	const char *why = lp_exec_why(file, 1);
	LP_ENV_FIX(envp, why);
	return lp_real.posix_spawnp(pid, file, fa, attr, argv, envp);
}

LP_HOOK int fexecve(int fd, char *const argv[], char *const envp[])
{
	LP_NOSYS_IF_NULL(fexecve);
	const char *why = NULL;
	if (lp_pre_recording() || lp_core_in_vfork()) {
		/* "/proc/self/fd/<fd>" built by hand: no printf in a hook. */
		char link[32] = "/proc/self/fd/", digits[12], path[4096];
		int n = 0, len = 14;
		unsigned v = (unsigned)fd;
		do
			digits[n++] = (char)('0' + v % 10);
		while ((v /= 10) && n < 11);
		while (n)
			link[len++] = digits[--n];
		link[len] = 0;
		int saved = errno;
		ssize_t got = readlink(link, path, sizeof(path) - 1);
		errno = saved;
		path[got > 0 ? got : 0] = 0;
		why = lp_exec_why(link, 0);
		lp_exec_note(got > 0 ? path : link, why);
	}
	LP_ENV_FIX(envp, why);
	return lp_real.fexecve(fd, argv, envp);
}

/* The variadic forms: collect the arguments on the stack (glibc does the
 * same) and go through the real vector form. */
#define LP_COLLECT_ARGS(argv, arg0, ap, extra)                                                     \
	size_t argc_ = 1;                                                                          \
	va_start(ap, arg0);                                                                        \
	while (va_arg(ap, char *))                                                                 \
		argc_++;                                                                           \
	va_end(ap);                                                                                \
	char *argv[argc_ + 1];                                                                     \
	argv[0] = (char *)arg0;                                                                    \
	va_start(ap, arg0);                                                                        \
	for (size_t i_ = 1; i_ <= argc_; i_++)                                                     \
		argv[i_] = va_arg(ap, char *);                                                     \
	extra;                                                                                     \
	va_end(ap)

LP_HOOK int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	LP_COLLECT_ARGS(argv, arg0, ap, (void)0);
	return execv(path, argv);
}

LP_HOOK int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	LP_COLLECT_ARGS(argv, arg0, ap, (void)0);
	return execvp(file, argv);
}

LP_HOOK int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	char *const *envp;
	LP_COLLECT_ARGS(argv, arg0, ap, envp = va_arg(ap, char *const *));
	return execve(path, argv, envp);
}

/* ---- exit ------------------------------------------------------------- */

static void lp_exit_note(int status, unsigned how)
{
	if (lp_core_in_vfork()) {
		lp_core_exit(status, how);
		return;
	}
	if (!lp_pre_recording())
		return;
	lp_pre_guard = 1;
	lp_inf_sweep();
	lp_core_exit(status, how);
	lp_pre_guard = 0;
}

LP_HOOK void exit(int status)
{
	lp_exit_note(status, LP_EXIT_RETURN);
	if (LP_REAL(exit))
		lp_real.exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

LP_HOOK void _exit(int status)
{
	lp_exit_note(status, LP_EXIT_UNDERSCORE);
	if (LP_REAL(uexit))
		lp_real.uexit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

LP_HOOK void _Exit(int status)
{
	lp_exit_note(status, LP_EXIT_UNDERSCORE);
	if (LP_REAL(uExit))
		lp_real.uExit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* Returning from main reaches exit() inside libc, past our hook: wrap main
 * so that status is recorded too. */
typedef int (*lp_main_fn)(int, char **, char **);
static lp_main_fn lp_app_main;

static int lp_main(int argc, char **argv, char **envp)
{
	int rc = lp_app_main(argc, argv, envp);
	lp_exit_note(rc, LP_EXIT_RETURN);
	return rc;
}

LP_HOOK int __libc_start_main(lp_main_fn main_fn, int argc, char **argv, void (*init)(void),
			      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(lp_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
		    void *) = dlsym(RTLD_NEXT, "__libc_start_main");
	if (!real)
		syscall(SYS_exit_group, 127);
	lp_app_main = main_fn;
	return real(lp_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- wait ------------------------------------------------------------- */

static void lp_child_status(pid_t pid, int status)
{
	if (pid <= 0 || !(WIFEXITED(status) || WIFSIGNALED(status)) || !lp_pre_recording())
		return;
	lp_pre_guard = 1;
	struct lp_rec_child_status *r = lp_rec_begin(LP_REC_CHILD_STATUS, 0, sizeof(*r));
	if (r) {
		r->ts = lp_now();
		r->pid = (uint32_t)pid;
		r->status = status;
		lp_rec_commit();
	}
	lp_pre_guard = 0;
}

/* A NULL status pointer still gets the status, into our own variable. */
LP_HOOK pid_t wait(int *status)
{
	int st = 0;
	LP_NOSYS_IF_NULL(wait);
	struct lp_blk_span sp;
	void *ra = __builtin_return_address(0);
	lp_blk_span_begin(&sp, LP_BLK_WAIT, ra);
	pid_t pid = lp_real.wait(&st);
	lp_blk_span_end(&sp, LP_BLK_WAIT, pid, ra);
	if (status && pid > 0)
		*status = st;
	lp_child_status(pid, st);
	return pid;
}

LP_HOOK pid_t waitpid(pid_t p, int *status, int options)
{
	int st = 0;
	LP_NOSYS_IF_NULL(waitpid);
	struct lp_blk_span sp;
	void *ra = __builtin_return_address(0);
	lp_blk_span_begin(&sp, LP_BLK_WAITPID, ra);
	pid_t pid = lp_real.waitpid(p, &st, options);
	lp_blk_span_end(&sp, LP_BLK_WAITPID, pid, ra);
	if (status && pid > 0)
		*status = st;
	lp_child_status(pid, st);
	return pid;
}

LP_HOOK pid_t wait3(int *status, int options, struct rusage *ru)
{
	int st = 0;
	LP_NOSYS_IF_NULL(wait3);
	struct lp_blk_span sp;
	void *ra = __builtin_return_address(0);
	lp_blk_span_begin(&sp, LP_BLK_WAIT3, ra);
	pid_t pid = lp_real.wait3(&st, options, ru);
	lp_blk_span_end(&sp, LP_BLK_WAIT3, pid, ra);
	if (status && pid > 0)
		*status = st;
	lp_child_status(pid, st);
	return pid;
}

LP_HOOK pid_t wait4(pid_t p, int *status, int options, struct rusage *ru)
{
	int st = 0;
	LP_NOSYS_IF_NULL(wait4);
	struct lp_blk_span sp;
	void *ra = __builtin_return_address(0);
	lp_blk_span_begin(&sp, LP_BLK_WAIT4, ra);
	pid_t pid = lp_real.wait4(p, &st, options, ru);
	lp_blk_span_end(&sp, LP_BLK_WAIT4, pid, ra);
	if (status && pid > 0)
		*status = st;
	lp_child_status(pid, st);
	return pid;
}

LP_HOOK int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
	siginfo_t local;
	LP_NOSYS_IF_NULL(waitid);
	if (!info) {
		memset(&local, 0, sizeof(local));
		info = &local;
	}
	struct lp_blk_span sp;
	void *ra = __builtin_return_address(0);
	lp_blk_span_begin(&sp, LP_BLK_WAITID, ra);
	int rc = lp_real.waitid(type, id, info, options);
	lp_blk_span_end(&sp, LP_BLK_WAITID, rc, ra);
	if (rc != 0 || (options & WNOWAIT) || info->si_pid == 0)
		return rc;
	int st;
	if (info->si_code == CLD_EXITED)
		st = (info->si_status & 0xff) << 8;
	else if (info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED)
		st = (info->si_status & 0x7f) | (info->si_code == CLD_DUMPED ? 0x80 : 0);
	else
		return rc;
	int saved = errno;
	lp_child_status(info->si_pid, st);
	errno = saved;
	return rc;
}

/* ---- dynamic loading -------------------------------------------------- */

/*
 * glibc's dlopen resolves a bare name against the RUNPATH (and $ORIGIN) of
 * the object that called it, found from its return address. A wrapper that
 * calls it would make that object us and break e.g. libraries that dlopen
 * their siblings. So dlopen jumps straight to the real one; new modules are
 * noticed through dl_iterate_phdr's load counter wherever we record a stack
 * (lp_pre_modules_refresh), before a dlclose, and by the core at exit.
 */
void *lp_dlopen_next;
void *lp_real_dlopen_slow(void);

static void *lp_dlopen_failed(const char *file, int mode)
{
	return NULL;
}

__attribute__((used)) void *lp_real_dlopen_slow(void)
{
	void *fn = (void *)LP_REAL(dlopen);
	if (!fn)
		return (void *)lp_dlopen_failed;
	__atomic_store_n(&lp_dlopen_next, fn, __ATOMIC_RELAXED);
	return fn;
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	"dlopen:\n"
	".cfi_startproc\n"
	"	movq lp_dlopen_next(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call lp_real_dlopen_slow\n"
	"	addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *%rax\n"
	".cfi_endproc\n"
	".size dlopen, .-dlopen\n");
#else
/* Elsewhere rely on the compiler's sibling call (-O2). */
LP_HOOK void *dlopen(const char *file, int mode)
{
	return ((void *(*)(const char *, int))lp_real_dlopen_slow())(file, mode);
}
#endif

LP_HOOK int dlclose(void *handle)
{
	LP_NOSYS_IF_NULL(dlclose);
	if (lp_pre_recording()) {
		int saved = errno;
		lp_pre_guard = 1;
		lp_pre_modules_refresh(); /* record it while it is still mapped */
		lp_pre_guard = 0;
		errno = saved;
	}
	return lp_real.dlclose(handle);
}
