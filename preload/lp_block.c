/* SPDX-License-Identifier: MIT */
/*
 * Blocking-call hooks: the sleep family, descriptor I/O, poll/select/epoll
 * waits, fsync, raw futex waits, pthread_join, waits for a child or a
 * signal, name lookups and file locks. Each hook reads the clock before
 * the real call (lp_blk_clock.h: the TSC where it is invariant), and after
 * it when the call left the CPU; only
 * a call that lasted at least the threshold (LATPROF_BLOCK_THRESHOLD_NS,
 * default 10 us) and left the CPU meanwhile (lp_rseq.h: a call that ran
 * on its CPU throughout is on-CPU time, not a wait) is written, with the
 * kind of its descriptor and the caller's stack. A call that stayed on
 * the CPU costs one clock read, a store and a load in the thread's rseq
 * area, a few loads and branches, and nothing else (without rseq: a clock
 * read pair).
 *
 * Unlike the lock hooks, the guard is not held across the real call: these
 * are cancellation points, and a thread cancelled inside read() must not
 * leave its guard set. It is held only while a record is written.
 */
#define _GNU_SOURCE
/* We define read() and friends: the fortified inline wrappers must not. */
#undef _FORTIFY_SOURCE
#include "lp_preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lp_blk_clock.h"
#include "lp_core.h"
#include "lp_inflight.h"
#include "lp_py.h"
#include "lp_raw.h"
#include "lp_rseq.h"
#include "lp_runq.h"

#define LP_BLK_DEFAULT_NS 10000u
#define LP_BLK_SITES 4096u /* call-site cache slots (lp_blk_site) */

struct lp_blk_real {
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*usleep)(useconds_t);
	unsigned (*sleep)(unsigned);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	ssize_t (*pread64)(int, void *, size_t, off_t);
	ssize_t (*pwrite64)(int, const void *, size_t, off_t);
	ssize_t (*pread_chk)(int, void *, size_t, off_t, size_t);
	ssize_t (*pread64_chk)(int, void *, size_t, off_t, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	ssize_t (*sendfile64)(int, int, off_t *, size_t);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*poll_chk)(struct pollfd *, nfds_t, int, size_t);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*uring_enter)(unsigned, unsigned, unsigned, unsigned, sigset_t *, size_t);
	int (*uring_enter2)(unsigned, unsigned, unsigned, unsigned, sigset_t *, size_t);
	int (*fsync)(int);
	int (*fdatasync)(int);
	long (*syscall)(long, ...);
	int (*join)(pthread_t, void **);
	int (*timedjoin)(pthread_t, void **, const struct timespec *);
	int (*clockjoin)(pthread_t, void **, clockid_t, const struct timespec *);
	int (*fflush)(FILE *);
	int (*pause)(void);
	int (*sigsuspend)(const sigset_t *);
	int (*sigwait)(const sigset_t *, int *);
	int (*sigwaitinfo)(const sigset_t *, siginfo_t *);
	int (*sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
	int (*flock)(int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*lockf)(int, int, off_t);
	int (*lockf64)(int, int, off_t);
	int (*getaddrinfo)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
	int (*getnameinfo)(const struct sockaddr *, socklen_t, char *, socklen_t, char *, socklen_t,
			   int);
	struct hostent *(*gethostbyname)(const char *);
	struct hostent *(*gethostbyname2)(const char *, int);
	struct hostent *(*gethostbyaddr)(const void *, socklen_t, int);
	int (*gethostbyname_r)(const char *, struct hostent *, char *, size_t, struct hostent **,
			       int *);
	int (*gethostbyname2_r)(const char *, int, struct hostent *, char *, size_t,
				struct hostent **, int *);
	int (*gethostbyaddr_r)(const void *, socklen_t, int, struct hostent *, char *, size_t,
			       struct hostent **, int *);
};

static struct lp_blk_real lp_br;

#define LP_BSYM(f, name) LP_SYM_AT(lp_br.f, name, NULL)

/* Resolved at their first use, like lp_real's (lp_preload.c). */
static const struct lp_sym lp_blk_syms[] = {
    LP_BSYM(syscall, "syscall"),
    LP_BSYM(read, "read"),
    LP_BSYM(write, "write"),
    LP_BSYM(nanosleep, "nanosleep"),
    LP_BSYM(clock_nanosleep, "clock_nanosleep"),
    LP_BSYM(usleep, "usleep"),
    LP_BSYM(sleep, "sleep"),
    LP_BSYM(read_chk, "__read_chk"),
    LP_BSYM(pread, "pread"),
    LP_BSYM(pwrite, "pwrite"),
    LP_BSYM(pread64, "pread64"),
    LP_BSYM(pwrite64, "pwrite64"),
    LP_BSYM(pread_chk, "__pread_chk"),
    LP_BSYM(pread64_chk, "__pread64_chk"),
    LP_BSYM(readv, "readv"),
    LP_BSYM(writev, "writev"),
    LP_BSYM(recv, "recv"),
    LP_BSYM(recv_chk, "__recv_chk"),
    LP_BSYM(send, "send"),
    LP_BSYM(recvfrom, "recvfrom"),
    LP_BSYM(recvfrom_chk, "__recvfrom_chk"),
    LP_BSYM(sendto, "sendto"),
    LP_BSYM(recvmsg, "recvmsg"),
    LP_BSYM(sendmsg, "sendmsg"),
    LP_BSYM(accept, "accept"),
    LP_BSYM(accept4, "accept4"),
    LP_BSYM(connect, "connect"),
    LP_BSYM(sendfile, "sendfile"),
    LP_BSYM(sendfile64, "sendfile64"),
    LP_BSYM(poll, "poll"),
    LP_BSYM(poll_chk, "__poll_chk"),
    LP_BSYM(ppoll, "ppoll"),
    LP_BSYM(select, "select"),
    LP_BSYM(pselect, "pselect"),
    LP_BSYM(epoll_wait, "epoll_wait"),
    LP_BSYM(epoll_pwait, "epoll_pwait"),
    LP_BSYM(uring_enter, "io_uring_enter"),
    LP_BSYM(uring_enter2, "io_uring_enter2"),
    LP_BSYM(fsync, "fsync"),
    LP_BSYM(fdatasync, "fdatasync"),
    LP_BSYM(join, "pthread_join"),
    LP_BSYM(timedjoin, "pthread_timedjoin_np"),
    LP_BSYM(clockjoin, "pthread_clockjoin_np"),
    LP_BSYM(fflush, "fflush"),
    LP_BSYM(pause, "pause"),
    LP_BSYM(sigsuspend, "sigsuspend"),
    LP_BSYM(sigwait, "sigwait"),
    LP_BSYM(sigwaitinfo, "sigwaitinfo"),
    LP_BSYM(sigtimedwait, "sigtimedwait"),
    LP_BSYM(flock, "flock"),
    LP_BSYM(fcntl, "fcntl"),
    LP_BSYM(fcntl64, "fcntl64"),
    LP_BSYM(lockf, "lockf"),
    LP_BSYM(lockf64, "lockf64"),
    LP_BSYM(getaddrinfo, "getaddrinfo"),
    LP_BSYM(getnameinfo, "getnameinfo"),
    LP_BSYM(gethostbyname, "gethostbyname"),
    LP_BSYM(gethostbyname2, "gethostbyname2"),
    LP_BSYM(gethostbyaddr, "gethostbyaddr"),
    LP_BSYM(gethostbyname_r, "gethostbyname_r"),
    LP_BSYM(gethostbyname2_r, "gethostbyname2_r"),
    LP_BSYM(gethostbyaddr_r, "gethostbyaddr_r"),
};
#define LP_BLK_NSYMS (sizeof(lp_blk_syms) / sizeof(lp_blk_syms[0]))

/* Called by lp_pre_resolve*(), which guard against reentry from dlsym. */
void lp_block_resolve(void)
{
	lp_sym_resolve_all(lp_blk_syms, LP_BLK_NSYMS);
}

void lp_block_resolve_slot(void **slot)
{
	lp_sym_resolve_in(lp_blk_syms, LP_BLK_NSYMS, slot);
}

/* What a signal handler most often calls (write to a self-pipe, read):
 * resolved at start-up, never first inside a handler. */
void lp_block_resolve_eager(void)
{
	lp_pre_resolve_slot((void **)&lp_br.write);
	lp_pre_resolve_slot((void **)&lp_br.read);
}

static uint64_t lp_blk_sites_static[LP_BLK_SITES];
static uint64_t *lp_blk_sites = lp_blk_sites_static;
static int lp_blk_sites_mapped;
/* Set before the first slot is written: a forked child of a process that
 * never filled the cache skips the madvise (a syscall and a TLB flush in
 * every child of a pre-forking server that only forks). */
static int lp_blk_sites_dirty;

static void lp_blk_site_store(uint64_t *slot, uint64_t v)
{
	if (!__atomic_load_n(&lp_blk_sites_dirty, __ATOMIC_RELAXED))
		__atomic_store_n(&lp_blk_sites_dirty, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(slot, v, __ATOMIC_RELEASE);
}

/* Stack ids are interned per process: a forked child starts over, and so
 * must the call-site cache that holds them. The cache is a mapping of its
 * own, emptied with one madvise (its pages then read as zeros again):
 * clearing 32 KiB wrote 8 pages, 8 page faults in every forked child. */
static void lp_blk_atfork_child(void)
{
	size_t size = LP_BLK_SITES * sizeof(*lp_blk_sites);
	int saved = errno;
	if (__atomic_load_n(&lp_blk_sites_dirty, __ATOMIC_RELAXED)) {
		if (!lp_blk_sites_mapped || madvise(lp_blk_sites, size, MADV_DONTNEED) != 0)
			memset(lp_blk_sites, 0, size);
		lp_blk_sites_dirty = 0;
	}
	errno = saved;
	lp_blk_clk_after_fork_child();
}

/* Threshold from the environment, before any hook records (constructor). */
void lp_block_init(void)
{
	void *p = mmap(NULL, LP_BLK_SITES * sizeof(*lp_blk_sites), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		lp_blk_sites = p;
		lp_blk_sites_mapped = 1;
	}
	pthread_atfork(NULL, NULL, lp_blk_atfork_child);
	uint64_t thr = LP_BLK_DEFAULT_NS; /* UINT64_MAX: off (--block-threshold off) */
	const char *v = getenv("LATPROF_BLOCK_THRESHOLD_NS");
	char *end;
	if (v && !strcmp(v, "off"))
		thr = UINT64_MAX;
	else if (v && *v) {
		unsigned long long ns = strtoull(v, &end, 10);
		if (!*end)
			thr = ns;
	}
	v = getenv("LATPROF_BLOCK_CLOCK"); /* "monotonic": no TSC (tests) */
	lp_blk_clk_init(thr, !v || strcmp(v, "monotonic"));
	/* "rseq": latprof run found that this kernel clears an armed rseq
	 * area on a switch (lp_rseq_probe): calls that stay on the CPU are not
	 * waits. "off" or unset, or threshold 0 (every call): all are timed. */
	v = getenv("LATPROF_BLOCK_SWITCH");
	if (thr != UINT64_MAX && thr && v && !strcmp(v, "rseq"))
		lp_rseq_init();
}

static long lp_blk_nosys(void)
{
	errno = ENOSYS;
	return -1;
}

/* The real function, resolving all of them on first use; NULL only while
 * this thread is inside our dlsym. */
#define LP_BREAL(f)                                                                                \
	(__atomic_load_n(&lp_br.f, __ATOMIC_RELAXED)                                               \
	     ? __atomic_load_n(&lp_br.f, __ATOMIC_RELAXED)                                         \
	     : (lp_pre_resolve_slot((void **)&lp_br.f),                                            \
		__atomic_load_n(&lp_br.f, __ATOMIC_RELAXED)))

static inline int lp_blk_on(void)
{
	return __atomic_load_n(&lp_pre_on, __ATOMIC_ACQUIRE) && !lp_pre_guard &&
	       __atomic_load_n(&lp_blk_clk.thr_ns, __ATOMIC_RELAXED) != UINT64_MAX;
}

/* The major numbers of the kernel's tty drivers (Documentation/admin-guide/
 * devices.txt): virtual consoles and serial lines, /dev/tty, pseudo-ttys. */
static int lp_blk_is_tty(dev_t rdev)
{
	unsigned m = major(rdev);
	return m == 4 || m == 5 || (m >= 136 && m <= 143);
}

/* A perf_event descriptor: the counters' own (their read() reaches this
 * hook through a sanitizer's interceptor, whose return address hides that
 * the call is latprof's), or the app's; its read() never waits. Not a
 * schema value: such a call is not recorded. */
#define LP_BLK_FD_PERF 0xffffffffu

static uint32_t lp_blk_anon_kind(int fd)
{
	char path[40], link[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return LP_FD_OTHER;
	link[n] = 0;
	if (strstr(link, "[perf_event]"))
		return LP_BLK_FD_PERF;
	return strstr(link, "[eventfd]") ? LP_FD_EVENTFD : LP_FD_OTHER;
}

/* Only for calls being recorded: an fstat per record is cheaper than a
 * per-descriptor cache kept right across close() and dup2(). */
static uint32_t lp_blk_fd_kind(int fd)
{
	struct stat st;
	if (fd < 0)
		return LP_FD_NONE;
	if (fstat(fd, &st) != 0)
		return LP_FD_UNKNOWN;
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFBLK:
		return LP_FD_FILE;
	case S_IFSOCK:
		return LP_FD_SOCKET;
	case S_IFIFO:
		return LP_FD_PIPE;
	case S_IFCHR:
		return lp_blk_is_tty(st.st_rdev) ? LP_FD_TTY : LP_FD_OTHER;
	case 0: /* anonymous inode: eventfd, timerfd, epoll, signalfd */
		return lp_blk_anon_kind(fd);
	default:
		return LP_FD_OTHER;
	}
}

/* latprof's own libraries (the counters read() their perf descriptors)
 * must not record themselves. Only on a call-site cache miss: dladdr takes
 * a lock and compares strings. */
static int lp_blk_from_latprof(void *ra)
{
	Dl_info info;
	return dladdr(ra, &info) && info.dli_fname && strstr(info.dli_fname, "/liblatprof_");
}

/*
 * Call sites seen before: unwinding a stack costs microseconds (most of a
 * record), about the length of the shortest recorded call. A slot packs a
 * tag of the site's address, whether the site is latprof's own, and the
 * stack id first captured there, in one word, so racing threads never see
 * half an entry. A call shorter than LP_BLK_RESTACK_NS at a known site
 * reuses that stack: its innermost frame (the site) is exact, the callers
 * above it are those of the first capture.
 */
#define LP_BLK_RESTACK_NS 1000000u
#define LP_BLK_SELF (1ull << 32)

static uint64_t lp_blk_site_hash(void *ra)
{
	uint64_t h = (uint64_t)(uintptr_t)ra * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* What the cache holds for the site `ra`: its stack id or LP_BLK_SELF, 0
 * when the site is not in it; *slot and *tag are where and how to store
 * it. */
static uint64_t lp_blk_site_cached(void *ra, uint64_t **slot, uint64_t *tag)
{
	uint64_t h = lp_blk_site_hash(ra);
	*slot = &lp_blk_sites[h & (LP_BLK_SITES - 1)];
	*tag = (h >> 33) << 33; /* top 31 bits; bit 32 is LP_BLK_SELF */
	uint64_t cur = __atomic_load_n(*slot, __ATOMIC_RELAXED);
	if (!cur || (cur & ~(LP_BLK_SELF | 0xffffffffull)) != *tag)
		return 0;
	return cur & (LP_BLK_SELF | 0xffffffffull);
}

/* Stack id for a record at `ra`, LP_BLK_SELF for latprof's own calls. */
static uint64_t lp_blk_site(void *ra, uint64_t dur)
{
	uint64_t *slot, tag;
	uint64_t known = lp_blk_site_cached(ra, &slot, &tag);
	if (known && ((known & LP_BLK_SELF) || dur < LP_BLK_RESTACK_NS))
		return known;
	/* A known site is not latprof's (that returned above): a long call
	 * there only needs its stack again. dladdr() scans the object's
	 * symbols: with PostgreSQL's epoll_wait (most calls past 1 ms) it was
	 * the top symbol of the backends' profile, 4.9% of their CPU. */
	if (!known && lp_blk_from_latprof(ra)) {
		lp_blk_site_store(slot, tag | LP_BLK_SELF);
		return LP_BLK_SELF;
	}
	lp_pre_modules_refresh();
	uint32_t stack = lp_pre_stack(ra);
	if (stack)
		lp_blk_site_store(slot, tag | stack);
	return stack;
}

/* A call lp_blk_clk_past() flagged (t0, t1: lp_blk_clk_now(tsc)); stayed:
 * it never left the CPU (timed only to calibrate). */
__attribute__((noinline, cold)) static void lp_blk_record(uint32_t call, int fd, int tsc,
							  uint64_t t0, uint64_t t1, long rc,
							  void *ra, int mine, int stayed)
{
	if (lp_inf_end(mine))
		return; /* the exit sweep wrote it */
	int saved = errno;
	lp_pre_guard = 1;
	if (!lp_blk_clk_span(tsc, t0, t1, &t0, &t1) || stayed) {
		lp_pre_guard = 0;
		errno = saved;
		return;
	}
	uint64_t site = lp_blk_site(ra, t1 - t0);
	uint32_t kind = site & LP_BLK_SELF ? LP_BLK_FD_PERF : lp_blk_fd_kind(fd);
	if (kind != LP_BLK_FD_PERF) {
		uint64_t runq = lp_runq_take(t0, t1);
		struct lp_py_wait py = {0};
		lp_py_frames(&py);
		struct lp_rec_block *r = lp_rec_begin(LP_REC_BLOCK, call, sizeof(*r));
		if (r) {
			r->start = t0;
			r->end = t1;
			r->result = rc < 0 ? -(int64_t)saved : (int64_t)rc;
			r->fd = fd;
			r->stack = (uint32_t)site;
			r->fd_kind = kind;
			r->flags = 0;
			r->runq = runq;
			lp_rec_commit();
		}
		lp_py_write(&py, t0);
	}
	lp_pre_guard = 0;
	errno = saved;
}

/* After the real call: one clock read; a record only past the threshold. */
static inline void lp_blk_done(uint32_t call, int fd, int tsc, uint64_t t0, long rc, void *ra,
			       int mine, int armed)
{
	/* A call that never left the CPU is not a wait: in TSC mode it needs
	 * no second clock read; in CLOCK_MONOTONIC mode that read may still be
	 * due to calibrate the TSC (lp_blk_clk_span), but records nothing. */
	int stayed = armed && lp_rseq_stayed();
	if (stayed && __builtin_expect(tsc, 1)) {
		lp_inf_clear(mine);
		return;
	}
	uint64_t t1 = lp_blk_clk_now(tsc);
	if (__builtin_expect(lp_blk_clk_past(tsc, t0, t1), 0))
		lp_blk_record(call, fd, tsc, t0, t1, rc, ra, mine, stayed);
	else
		lp_inf_clear(mine);
}

/* Before the real call: the clock, the thread's wait slot filled for the
 * exit sweep (lp_inflight.h), and the rseq area armed to tell whether the
 * call left the CPU (lp_rseq.h). */
#define LP_BLK_BEGIN(call, fd, ra)                                                                 \
	int tsc = lp_blk_clk_tsc();                                                                \
	uint64_t t0 = lp_blk_clk_now(tsc);                                                         \
	int mine = lp_inf_begin((uint32_t)LP_REC_BLOCK << 8 | (call), (uint64_t)(int64_t)(fd), 0,  \
				(ra), 0, (uint32_t)tsc, t0);                                       \
	int armed = lp_rseq_arm()

/* EXPR, the call of the real function, timed as CALL on FD; its value.
 * Only in a hook's own body: the site is the hook's return address. */
#define LP_BLK_TIMED(call, fd, expr)                                                               \
	({                                                                                         \
		void *ra_ = __builtin_return_address(0);                                           \
		LP_BLK_BEGIN(call, fd, ra_);                                                       \
		__typeof__(expr) rc_ = (expr);                                                     \
		lp_blk_done(call, fd, tsc, t0, (long)rc_, ra_, mine, armed);                       \
		rc_;                                                                               \
	})

/* A call the exit sweep found in progress (lp_inflight.c): written like
 * lp_blk_record's, its end the exit, when it had lasted the threshold by
 * then. Its stack is the one its site's cache holds, else the site alone:
 * the sweep runs on another thread, whose stack is not this call's. */
void lp_blk_unfinished(const struct lp_inflight *w, uint32_t tid, uint64_t t0)
{
	int tsc = (int)w->tsc;
	uint64_t start, end;
	if (!lp_blk_clk_span(tsc, t0, lp_blk_clk_now(tsc), &start, &end))
		return;
	void *ra = (void *)(uintptr_t)w->ra;
	uint64_t *slot, tag;
	uint64_t stack = lp_blk_site_cached(ra, &slot, &tag);
	if (!stack)
		stack = lp_blk_from_latprof(ra) ? LP_BLK_SELF : lp_pre_site_stack(ra);
	int fd = (int)(int64_t)w->obj;
	uint32_t kind = stack & LP_BLK_SELF ? LP_BLK_FD_PERF : lp_blk_fd_kind(fd);
	if (kind == LP_BLK_FD_PERF)
		return;
	struct lp_rec_block *r = lp_rec_begin_for(tid, LP_REC_BLOCK, w->what & 0xff, sizeof(*r));
	if (!r)
		return;
	r->start = start;
	r->end = end;
	r->result = 0; /* none: it had not returned */
	r->fd = fd;
	r->stack = (uint32_t)stack;
	r->fd_kind = kind;
	r->flags = LP_WAITF_UNFINISHED;
	r->runq = LP_RUNQ_UNKNOWN; /* read on another thread */
	lp_rec_commit();
}

void lp_blk_span_begin(struct lp_blk_span *s, uint32_t call, void *ra)
{
	s->on = lp_blk_on();
	if (!s->on)
		return;
	LP_BLK_BEGIN(call, -1, ra);
	s->tsc = tsc;
	s->t0 = t0;
	s->mine = mine;
	s->armed = armed;
}

void lp_blk_span_end(const struct lp_blk_span *s, uint32_t call, long rc, void *ra)
{
	if (s->on)
		lp_blk_done(call, -1, s->tsc, s->t0, rc, ra, s->mine, s->armed);
}

/*
 * One hook: resolve, pass straight through when not recording, else time
 * the call. FALLBACK runs only inside our own dlsym. The path of a call
 * that stays on the CPU is the whole cost on calls that do not block: a
 * few loads and branches, one TSC read, the rseq store, the real call
 * through its pointer, the rseq load and store (no frame pointer: the
 * record's stack is unwound with CFI).
 */
#define LP_BLK_HOOK(ret, name, field, call, fdexpr, params, args, fallback)                        \
	LP_HOOK LP_HOT_NOFP ret name params                                                        \
	{                                                                                          \
		__typeof__(lp_br.field) fn = __atomic_load_n(&lp_br.field, __ATOMIC_RELAXED);      \
		if (__builtin_expect(!fn, 0)) {                                                    \
			lp_pre_resolve_slot((void **)&lp_br.field);                                \
			fn = __atomic_load_n(&lp_br.field, __ATOMIC_RELAXED);                      \
			if (!fn)                                                                   \
				return (ret)(fallback);                                            \
		}                                                                                  \
		if (!lp_blk_on())                                                                  \
			return fn args;                                                            \
		return LP_BLK_TIMED(call, fdexpr, fn args);                                        \
	}

/* ---- sleeping --------------------------------------------------------- */

LP_BLK_HOOK(int, nanosleep, nanosleep, LP_BLK_NANOSLEEP, -1,
	    (const struct timespec *req, struct timespec *rem), (req, rem),
	    LP_RAW(SYS_nanosleep, req, rem, 0, 0, 0, 0))
/* clock_nanosleep returns the error number; it never sets errno. */
LP_BLK_HOOK(int, clock_nanosleep, clock_nanosleep, LP_BLK_CLOCK_NANOSLEEP, -1,
	    (clockid_t clk, int flags, const struct timespec *req, struct timespec *rem),
	    (clk, flags, req, rem), ENOSYS)
LP_BLK_HOOK(int, usleep, usleep, LP_BLK_USLEEP, -1, (useconds_t us), (us), lp_blk_nosys())
LP_BLK_HOOK(unsigned, sleep, sleep, LP_BLK_SLEEP, -1, (unsigned s), (s), s)

/* ---- descriptor I/O --------------------------------------------------- */

LP_BLK_HOOK(ssize_t, read, read, LP_BLK_READ, fd, (int fd, void *buf, size_t n), (fd, buf, n),
	    LP_RAW(SYS_read, fd, buf, n, 0, 0, 0))
LP_BLK_HOOK(ssize_t, write, write, LP_BLK_WRITE, fd, (int fd, const void *buf, size_t n),
	    (fd, buf, n), LP_RAW(SYS_write, fd, buf, n, 0, 0, 0))
/* The _FORTIFY_SOURCE forms: the real one checks the size, then reads. */
LP_BLK_HOOK(ssize_t, __read_chk, read_chk, LP_BLK_READ, fd,
	    (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen),
	    LP_RAW(SYS_read, fd, buf, n, 0, 0, 0))
LP_BLK_HOOK(ssize_t, pread, pread, LP_BLK_PREAD, fd, (int fd, void *buf, size_t n, off_t off),
	    (fd, buf, n, off), LP_RAW(SYS_pread64, fd, buf, n, off, 0, 0))
LP_BLK_HOOK(ssize_t, pwrite, pwrite, LP_BLK_PWRITE, fd,
	    (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off),
	    LP_RAW(SYS_pwrite64, fd, buf, n, off, 0, 0))
LP_BLK_HOOK(ssize_t, pread64, pread64, LP_BLK_PREAD, fd, (int fd, void *buf, size_t n, off_t off),
	    (fd, buf, n, off), LP_RAW(SYS_pread64, fd, buf, n, off, 0, 0))
LP_BLK_HOOK(ssize_t, pwrite64, pwrite64, LP_BLK_PWRITE, fd,
	    (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off),
	    LP_RAW(SYS_pwrite64, fd, buf, n, off, 0, 0))
LP_BLK_HOOK(ssize_t, __pread_chk, pread_chk, LP_BLK_PREAD, fd,
	    (int fd, void *buf, size_t n, off_t off, size_t buflen), (fd, buf, n, off, buflen),
	    LP_RAW(SYS_pread64, fd, buf, n, off, 0, 0))
LP_BLK_HOOK(ssize_t, __pread64_chk, pread64_chk, LP_BLK_PREAD, fd,
	    (int fd, void *buf, size_t n, off_t off, size_t buflen), (fd, buf, n, off, buflen),
	    LP_RAW(SYS_pread64, fd, buf, n, off, 0, 0))
LP_BLK_HOOK(ssize_t, readv, readv, LP_BLK_READV, fd, (int fd, const struct iovec *iov, int n),
	    (fd, iov, n), LP_RAW(SYS_readv, fd, iov, n, 0, 0, 0))
LP_BLK_HOOK(ssize_t, writev, writev, LP_BLK_WRITEV, fd, (int fd, const struct iovec *iov, int n),
	    (fd, iov, n), LP_RAW(SYS_writev, fd, iov, n, 0, 0, 0))
LP_BLK_HOOK(int, fsync, fsync, LP_BLK_FSYNC, fd, (int fd), (fd),
	    LP_RAW(SYS_fsync, fd, 0, 0, 0, 0, 0))
LP_BLK_HOOK(int, fdatasync, fdatasync, LP_BLK_FDATASYNC, fd, (int fd), (fd),
	    LP_RAW(SYS_fdatasync, fd, 0, 0, 0, 0, 0))

/* ---- file locks: a request waiting for another process's lock --------- */

/* PHP's session files, a job queue's lock file, SQLite in another process:
 * flock, fcntl's waiting lock commands and lockf wait until another process
 * (or open file description) lets go. Only the calls that may wait are
 * timed: flock without LOCK_NB, fcntl F_SETLKW and F_OFD_SETLKW, lockf
 * F_LOCK; other fcntl commands (F_GETFL, F_SETFD, ... called often) pass
 * straight through. glibc's lockf locks through its internal fcntl, which
 * no hook sees, so it has a hook of its own. */
static inline int lp_blk_flock_waits(int op)
{
	return (op & (LOCK_SH | LOCK_EX)) && !(op & LOCK_NB);
}

LP_HOOK int flock(int fd, int op)
{
	int (*fn)(int, int) = LP_BREAL(flock);
	if (__builtin_expect(!fn, 0))
		return (int)LP_RAW(SYS_flock, fd, op, 0, 0, 0, 0);
	if (!lp_blk_flock_waits(op) || !lp_blk_on())
		return fn(fd, op);
	return LP_BLK_TIMED(LP_BLK_FLOCK, fd, fn(fd, op));
}

static inline int lp_blk_fcntl_waits(int cmd)
{
	return cmd == F_SETLKW || cmd == F_OFD_SETLKW;
}

/* The third argument is an int or a pointer as cmd says: passed on as a
 * pointer-sized word, as glibc's own fcntl reads it. */
#define LP_BLK_FCNTL(name)                                                                         \
	LP_HOOK int name(int fd, int cmd, ...)                                                     \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, cmd);                                                                 \
		void *arg = va_arg(ap, void *);                                                    \
		va_end(ap);                                                                        \
		int (*fn)(int, int, ...) = LP_BREAL(name);                                         \
		if (__builtin_expect(!fn, 0))                                                      \
			return (int)LP_RAW(SYS_fcntl, fd, cmd, arg, 0, 0, 0);                      \
		if (!lp_blk_fcntl_waits(cmd) || !lp_blk_on())                                      \
			return fn(fd, cmd, arg);                                                   \
		return LP_BLK_TIMED(LP_BLK_FCNTL, fd, fn(fd, cmd, arg));                           \
	}
LP_BLK_FCNTL(fcntl)
LP_BLK_FCNTL(fcntl64)

#define LP_BLK_LOCKF(name)                                                                         \
	LP_HOOK int name(int fd, int cmd, off_t len)                                               \
	{                                                                                          \
		int (*fn)(int, int, off_t) = LP_BREAL(name);                                       \
		if (__builtin_expect(!fn, 0)) {                                                    \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
		if (cmd != F_LOCK || !lp_blk_on())                                                 \
			return fn(fd, cmd, len);                                                   \
		return LP_BLK_TIMED(LP_BLK_LOCKF, fd, fn(fd, cmd, len));                           \
	}
LP_BLK_LOCKF(lockf)
LP_BLK_LOCKF(lockf64)

/* An explicit stdio flush writes the stream's buffer: a logger that
 * flushes every line blocks there when the disk or the reader is slow.
 * (Writes stdio makes on its own, when a buffer fills, go through glibc's
 * internal write and are not seen.) _fileno is the public FILE field that
 * fileno() returns, read without fileno()'s errno on a memory stream. */
LP_BLK_HOOK(int, fflush, fflush, LP_BLK_FFLUSH, fp ? fp->_fileno : -1, (FILE * fp), (fp),
	    fflush_unlocked(fp))

/* ---- sockets ---------------------------------------------------------- */

LP_BLK_HOOK(ssize_t, recv, recv, LP_BLK_RECV, fd, (int fd, void *buf, size_t n, int flags),
	    (fd, buf, n, flags), LP_RAW(SYS_recvfrom, fd, buf, n, flags, 0, 0))
LP_BLK_HOOK(ssize_t, __recv_chk, recv_chk, LP_BLK_RECV, fd,
	    (int fd, void *buf, size_t n, size_t buflen, int flags), (fd, buf, n, buflen, flags),
	    LP_RAW(SYS_recvfrom, fd, buf, n, flags, 0, 0))
LP_BLK_HOOK(ssize_t, send, send, LP_BLK_SEND, fd, (int fd, const void *buf, size_t n, int flags),
	    (fd, buf, n, flags), LP_RAW(SYS_sendto, fd, buf, n, flags, 0, 0))
LP_BLK_HOOK(ssize_t, recvfrom, recvfrom, LP_BLK_RECVFROM, fd,
	    (int fd, void *buf, size_t n, int flags, struct sockaddr *sa, socklen_t *sl),
	    (fd, buf, n, flags, sa, sl), LP_RAW(SYS_recvfrom, fd, buf, n, flags, sa, sl))
LP_BLK_HOOK(ssize_t, __recvfrom_chk, recvfrom_chk, LP_BLK_RECVFROM, fd,
	    (int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *sa,
	     socklen_t *sl),
	    (fd, buf, n, buflen, flags, sa, sl), LP_RAW(SYS_recvfrom, fd, buf, n, flags, sa, sl))
LP_BLK_HOOK(ssize_t, sendto, sendto, LP_BLK_SENDTO, fd,
	    (int fd, const void *buf, size_t n, int flags, const struct sockaddr *sa, socklen_t sl),
	    (fd, buf, n, flags, sa, sl), LP_RAW(SYS_sendto, fd, buf, n, flags, sa, sl))
LP_BLK_HOOK(ssize_t, recvmsg, recvmsg, LP_BLK_RECVMSG, fd, (int fd, struct msghdr *msg, int flags),
	    (fd, msg, flags), LP_RAW(SYS_recvmsg, fd, msg, flags, 0, 0, 0))
LP_BLK_HOOK(ssize_t, sendmsg, sendmsg, LP_BLK_SENDMSG, fd,
	    (int fd, const struct msghdr *msg, int flags), (fd, msg, flags),
	    LP_RAW(SYS_sendmsg, fd, msg, flags, 0, 0, 0))
LP_BLK_HOOK(int, accept, accept, LP_BLK_ACCEPT, fd, (int fd, struct sockaddr *sa, socklen_t *sl),
	    (fd, sa, sl), LP_RAW(SYS_accept4, fd, sa, sl, 0, 0, 0))
LP_BLK_HOOK(int, accept4, accept4, LP_BLK_ACCEPT, fd,
	    (int fd, struct sockaddr *sa, socklen_t *sl, int flags), (fd, sa, sl, flags),
	    LP_RAW(SYS_accept4, fd, sa, sl, flags, 0, 0))
LP_BLK_HOOK(int, connect, connect, LP_BLK_CONNECT, fd,
	    (int fd, const struct sockaddr *sa, socklen_t sl), (fd, sa, sl),
	    LP_RAW(SYS_connect, fd, sa, sl, 0, 0, 0))
LP_BLK_HOOK(ssize_t, sendfile, sendfile, LP_BLK_SENDFILE, out,
	    (int out, int in, off_t *off, size_t n), (out, in, off, n),
	    LP_RAW(SYS_sendfile, out, in, off, n, 0, 0))
LP_BLK_HOOK(ssize_t, sendfile64, sendfile64, LP_BLK_SENDFILE, out,
	    (int out, int in, off_t *off, size_t n), (out, in, off, n),
	    LP_RAW(SYS_sendfile, out, in, off, n, 0, 0))

/* ---- waiting for descriptors ------------------------------------------ */

LP_BLK_HOOK(int, poll, poll, LP_BLK_POLL, -1, (struct pollfd * p, nfds_t n, int ms), (p, n, ms),
	    lp_blk_nosys())
LP_BLK_HOOK(int, __poll_chk, poll_chk, LP_BLK_POLL, -1,
	    (struct pollfd * p, nfds_t n, int ms, size_t plen), (p, n, ms, plen), lp_blk_nosys())
LP_BLK_HOOK(int, ppoll, ppoll, LP_BLK_PPOLL, -1,
	    (struct pollfd * p, nfds_t n, const struct timespec *ts, const sigset_t *ss),
	    (p, n, ts, ss), lp_blk_nosys())
LP_BLK_HOOK(int, select, select, LP_BLK_SELECT, -1,
	    (int n, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv), (n, r, w, x, tv),
	    lp_blk_nosys())
LP_BLK_HOOK(int, pselect, pselect, LP_BLK_PSELECT, -1,
	    (int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *ts, const sigset_t *ss),
	    (n, r, w, x, ts, ss), lp_blk_nosys())
LP_BLK_HOOK(int, epoll_wait, epoll_wait, LP_BLK_EPOLL_WAIT, -1,
	    (int ep, struct epoll_event *ev, int n, int ms), (ep, ev, n, ms),
	    LP_RAW(SYS_epoll_pwait, ep, ev, n, ms, 0, 8))
LP_BLK_HOOK(int, epoll_pwait, epoll_pwait, LP_BLK_EPOLL_PWAIT, -1,
	    (int ep, struct epoll_event *ev, int n, int ms, const sigset_t *ss),
	    (ep, ev, n, ms, ss), LP_RAW(SYS_epoll_pwait, ep, ev, n, ms, ss, 8))

/* ---- waiting for io_uring completions ----------------------------------- */

/* io_uring_enter waits only with IORING_ENTER_GETEVENTS and a min_complete
 * above 0; a submission alone returns at once and is not timed. liburing
 * exports io_uring_enter/io_uring_enter2 (its own waits make the syscall
 * inline, which no hook sees); syscall(SYS_io_uring_enter, ...) is timed
 * by the syscall() hook below. */
#ifndef IORING_ENTER_GETEVENTS
#define IORING_ENTER_GETEVENTS 1u
#endif

static inline int lp_blk_uring_waits(unsigned long min_complete, unsigned long flags)
{
	return (flags & IORING_ENTER_GETEVENTS) && (unsigned)min_complete > 0;
}

/* The wrapper's own syscall(SYS_io_uring_enter) (a liburing built on
 * libc's syscall()) is this wait: the guard keeps it from a second record.
 * Not a cancellation point, so the guard cannot be left set. */
static int lp_blk_uring_once(int (*fn)(unsigned, unsigned, unsigned, unsigned, sigset_t *, size_t),
			     unsigned fd, unsigned submit, unsigned wait, unsigned flags,
			     sigset_t *sig, size_t sz)
{
	lp_pre_guard = 1;
	int rc = fn(fd, submit, wait, flags, sig, sz);
	lp_pre_guard = 0;
	return rc;
}

/* Both forward six arguments: a program's own io_uring_enter of another
 * arity (a hand-written wrapper that takes the sigset size) that a library
 * calls through the PLT gets every register it reads. */
#define LP_BLK_URING(name, field)                                                                  \
	LP_HOOK int name(unsigned fd, unsigned submit, unsigned wait, unsigned flags,              \
			 sigset_t *sig, size_t sz)                                                 \
	{                                                                                          \
		__typeof__(lp_br.field) fn = LP_BREAL(field);                                      \
		if (!fn) /* not loaded: the syscall liburing would make */                         \
			return (int)LP_RAW(SYS_io_uring_enter, fd, submit, wait, flags, sig, sz);  \
		if (!lp_blk_uring_waits(wait, flags) || !lp_blk_on())                              \
			return fn(fd, submit, wait, flags, sig, sz);                               \
		return LP_BLK_TIMED(LP_BLK_IO_URING_ENTER, (int)fd,                                \
				    lp_blk_uring_once(fn, fd, submit, wait, flags, sig, sz));      \
	}
LP_BLK_URING(io_uring_enter, uring_enter)
LP_BLK_URING(io_uring_enter2, uring_enter2)

/* ---- waiting for a thread: a main thread joining its workers is idle --- */

/* pthread_join returns the error number; it never sets errno. The timed
 * forms record as pthread_join too (a timeout's result is ETIMEDOUT, the
 * returned error number). */
LP_BLK_HOOK(int, pthread_join, join, LP_BLK_PTHREAD_JOIN, -1, (pthread_t th, void **res), (th, res),
	    ENOSYS)
LP_BLK_HOOK(int, pthread_timedjoin_np, timedjoin, LP_BLK_PTHREAD_JOIN, -1,
	    (pthread_t th, void **res, const struct timespec *at), (th, res, at), ENOSYS)
LP_BLK_HOOK(int, pthread_clockjoin_np, clockjoin, LP_BLK_PTHREAD_JOIN, -1,
	    (pthread_t th, void **res, clockid_t clk, const struct timespec *at),
	    (th, res, clk, at), ENOSYS)

/* ---- waiting for a signal: a server's signal thread, a shell's pause -- */

LP_BLK_HOOK(int, pause, pause, LP_BLK_PAUSE, -1, (void), (), lp_blk_nosys())
LP_BLK_HOOK(int, sigsuspend, sigsuspend, LP_BLK_SIGSUSPEND, -1, (const sigset_t *set), (set),
	    lp_blk_nosys())
/* sigwait returns the error number; it never sets errno. */
LP_BLK_HOOK(int, sigwait, sigwait, LP_BLK_SIGWAIT, -1, (const sigset_t *set, int *sig), (set, sig),
	    ENOSYS)
LP_BLK_HOOK(int, sigwaitinfo, sigwaitinfo, LP_BLK_SIGWAITINFO, -1,
	    (const sigset_t *set, siginfo_t *info), (set, info), lp_blk_nosys())
LP_BLK_HOOK(int, sigtimedwait, sigtimedwait, LP_BLK_SIGTIMEDWAIT, -1,
	    (const sigset_t *set, siginfo_t *info, const struct timespec *ts), (set, info, ts),
	    lp_blk_nosys())

/* ---- name lookups: a DNS query inside a request is a wait on the network */

/* glibc's resolver waits in its own internal poll/sendto/recvfrom, which no
 * hook sees, so the lookup is timed as one call (socket I/O). An NSS module
 * outside libc (mdns4_minimal talks to avahi over a Unix socket) calls the
 * public functions: the guard keeps their hooks out while the lookup runs,
 * so one lookup is one record. A lookup is a cancellation point: cancelled
 * inside it, the thread drops the guard on its way out. */
static void lp_blk_unguard(void *arg)
{
	(void)arg;
	lp_pre_guard = 0;
}

#define LP_BLK_LOOKUP(ret, name, call, params, args, result, fallback)                             \
	LP_HOOK ret name params                                                                    \
	{                                                                                          \
		__typeof__(lp_br.name) fn = LP_BREAL(name);                                        \
		if (__builtin_expect(!fn, 0))                                                      \
			return fallback;                                                           \
		if (!lp_blk_on())                                                                  \
			return fn args;                                                            \
		void *ra = __builtin_return_address(0);                                            \
		struct lp_blk_span sp;                                                             \
		ret rc;                                                                            \
		lp_blk_span_begin(&sp, call, ra);                                                  \
		lp_pre_guard = 1;                                                                  \
		pthread_cleanup_push(lp_blk_unguard, NULL);                                        \
		rc = fn args;                                                                      \
		pthread_cleanup_pop(0);                                                            \
		lp_pre_guard = 0;                                                                  \
		lp_blk_span_end(&sp, call, (long)(result), ra);                                    \
		return rc;                                                                         \
	}

/* result: the EAI_ code (0: found) */
LP_BLK_LOOKUP(int, getaddrinfo, LP_BLK_GETADDRINFO,
	      (const char *node, const char *service, const struct addrinfo *hints,
	       struct addrinfo **res),
	      (node, service, hints, res), rc, EAI_SYSTEM)
LP_BLK_LOOKUP(int, getnameinfo, LP_BLK_GETNAMEINFO,
	      (const struct sockaddr *sa, socklen_t salen, char *host, socklen_t hostlen,
	       char *serv, socklen_t servlen, int flags),
	      (sa, salen, host, hostlen, serv, servlen, flags), rc, EAI_SYSTEM)
/* result: 1 found, 0 not (h_errno says why) */
LP_BLK_LOOKUP(struct hostent *, gethostbyname, LP_BLK_GETHOSTBYNAME, (const char *name), (name),
	      rc != NULL, NULL)
LP_BLK_LOOKUP(struct hostent *, gethostbyname2, LP_BLK_GETHOSTBYNAME, (const char *name, int af),
	      (name, af), rc != NULL, NULL)
LP_BLK_LOOKUP(struct hostent *, gethostbyaddr, LP_BLK_GETHOSTBYADDR,
	      (const void *addr, socklen_t len, int type), (addr, len, type), rc != NULL, NULL)
/* result: the error number returned (0: the call worked; *res says if found) */
LP_BLK_LOOKUP(int, gethostbyname_r, LP_BLK_GETHOSTBYNAME,
	      (const char *name, struct hostent *ret, char *buf, size_t buflen,
	       struct hostent **res, int *herr),
	      (name, ret, buf, buflen, res, herr), rc, ENOSYS)
LP_BLK_LOOKUP(int, gethostbyname2_r, LP_BLK_GETHOSTBYNAME,
	      (const char *name, int af, struct hostent *ret, char *buf, size_t buflen,
	       struct hostent **res, int *herr),
	      (name, af, ret, buf, buflen, res, herr), rc, ENOSYS)
LP_BLK_LOOKUP(int, gethostbyaddr_r, LP_BLK_GETHOSTBYADDR,
	      (const void *addr, socklen_t len, int type, struct hostent *ret, char *buf,
	       size_t buflen, struct hostent **res, int *herr),
	      (addr, len, type, ret, buf, buflen, res, herr), rc, ENOSYS)

/* ---- syscall(SYS_futex, ...): libraries that bypass pthread ----------- */

static int lp_blk_futex_wait(long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_WAIT_REQUEUE_PI:
#ifdef FUTEX_LOCK_PI2
	case FUTEX_LOCK_PI2:
#endif
		return 1;
	default:
		return 0;
	}
}

/*
 * A futex wait is a wait on the lock (or condition, or parker) at its
 * address: Rust's std locks, parking_lot and InnoDB's latches wait on
 * futexes directly. It is written as a lock wait of kind LP_LOCK_FUTEX,
 * with the waiter's stack taken before it sleeps (as for a pthread mutex)
 * and when it lasted the blocking-call threshold; the importer classes it
 * by its frames (lock, condition, parker). The thread that woke it, read
 * from a small table the wake side fills, is its owner: the thread that
 * released the lock the waiter wanted.
 */
#define LP_FUTEX_WAKERS 1024u
#define LP_FUTEX_TID_BITS 22u /* pid_max is at most 2^22 */
static uint64_t lp_futex_wakers[LP_FUTEX_WAKERS];

static int lp_blk_futex_wakes(long op)
{
	int cmd = (int)(op & FUTEX_CMD_MASK);
	return cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET || cmd == FUTEX_WAKE_OP;
}

static uint64_t *lp_futex_slot(long addr, uint64_t *tag)
{
	uint64_t a = (uint64_t)addr >> 2;
	*tag = a << LP_FUTEX_TID_BITS;
	uint64_t h = a * 0x9e3779b97f4a7c15ull;
	return &lp_futex_wakers[(h >> 40) & (LP_FUTEX_WAKERS - 1)];
}

/* The waker's side: one store, only while recording. */
static void lp_blk_futex_woke(long addr)
{
	if (!__atomic_load_n(&lp_pre_on, __ATOMIC_RELAXED))
		return;
	uint64_t tag;
	uint64_t *slot = lp_futex_slot(addr, &tag);
	__atomic_store_n(slot, tag | lp_tid(), __ATOMIC_RELAXED);
}

/* The last thread that woke a waiter of addr, 0 if unknown. */
static uint32_t lp_futex_waker(long addr)
{
	uint64_t tag;
	uint64_t v = __atomic_load_n(lp_futex_slot(addr, &tag), __ATOMIC_RELAXED);
	uint64_t mask = (1ull << LP_FUTEX_TID_BITS) - 1;
	return (v & ~mask) == tag ? (uint32_t)(v & mask) : 0;
}

__attribute__((noinline)) static long lp_blk_futex(long (*fn)(long, ...), long a, long b, long c,
						   long d, long e, long f, void *ra)
{
	if (lp_pre_own_pc(ra))
		return fn(SYS_futex, a, b, c, d, e, f);
	int saved = errno;
	lp_pre_guard = 1;
	if (!(b & FUTEX_PRIVATE_FLAG))
		lp_lock_shared_note((const void *)a);
	lp_pre_modules_refresh();
	uint32_t stack = lp_pre_stack(ra);
	uint64_t t0 = lp_now();
	int mine = lp_inf_begin((uint32_t)LP_REC_LOCK_WAIT << 8 | LP_LOCK_FUTEX, (uint64_t)a, 0, ra,
				stack, 0, t0);
	errno = saved;
	long rc = fn(SYS_futex, a, b, c, d, e, f);
	int err = errno;
	uint64_t t1 = lp_now();
	if (!lp_inf_end(mine) && t1 - t0 >= __atomic_load_n(&lp_blk_clk.thr_ns, __ATOMIC_RELAXED)) {
		/* EAGAIN (the word changed first) and EINTR end a wait the
		 * caller retries: neither is a failure of the lock. */
		uint32_t flags = rc == 0 || err == EAGAIN || err == EINTR ? 0
				 : err == ETIMEDOUT			  ? LP_WAITF_TIMEDOUT
									  : LP_WAITF_FAILED;
		uint32_t owner = rc == 0 ? lp_futex_waker(a) : 0;
		lp_lock_write(lp_tid(), LP_LOCK_FUTEX, (uint64_t)a, t0, t1, owner, flags, stack,
			      lp_runq_take(t0, t1));
	}
	lp_pre_guard = 0;
	errno = err;
	return rc;
}

/* Six arguments are always passed on, as glibc's own syscall() reads them:
 * the ones the caller did not pass are whatever the registers held, and the
 * sixth is read from the caller's stack, past what a shorter call pushed
 * (glibc's assembly does the same). ASan would call that read an overflow of
 * the caller's frame (syscall(SYS_gettid) from a new thread did), so this
 * one function is not instrumented. */
__attribute__((no_sanitize("address"))) LP_HOOK long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
	long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
	va_end(ap);
	long (*fn)(long, ...) = LP_BREAL(syscall);
	if (__builtin_expect(!fn, 0))
		return lp_raw_syscall(nr, a, b, c, d, e, f);
	if (nr == SYS_futex && lp_blk_futex_wait(b) && lp_blk_on())
		return lp_blk_futex(fn, a, b, c, d, e, f, __builtin_return_address(0));
	if (nr == SYS_futex && lp_blk_futex_wakes(b))
		lp_blk_futex_woke(a);
	if (nr == SYS_io_uring_enter && lp_blk_uring_waits(c, d) && lp_blk_on())
		return LP_BLK_TIMED(LP_BLK_IO_URING_ENTER, (int)a, fn(nr, a, b, c, d, e, f));
	if ((nr == SYS_clone || nr == SYS_clone3) && lp_pre_recording()) {
		long rc = fn(nr, a, b, c, d, e, f);
		/* clone3's flags: the kernel read its struct, so it is there */
		if (rc >= 0)
			rc = lp_pre_raw_clone_after(rc, nr == SYS_clone
							    ? (unsigned long)a
							    : (unsigned long)*(const uint64_t *)a);
		return rc;
	}
	return fn(nr, a, b, c, d, e, f);
}
