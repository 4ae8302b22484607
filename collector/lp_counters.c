/* SPDX-License-Identifier: MIT */
/*
 * CPU counters at NVTX stage boundaries: one perf_event group per thread
 * (events encoded by libpfm4; with hardware events, a second one for the
 * clock events, see lp_cnt_group_of), read with one read() each and appended as an
 * LP_REC_CNT_SAMPLE (format/lp_log_counters.h).
 *
 * A read costs ~1 us, an NVTX push+pop ~40 ns: a thread reads at most once
 * per LATPROF_COUNTERS_INTERVAL_NS (default 20 us) and skips boundaries in
 * between. The totals are cumulative, so the importer pairs a boundary with
 * the thread's latest sample at or before it: a stage (ms) gets its delta
 * to within one interval, a tight loop of tiny ranges costs one compare per
 * boundary, and its ranges are left without a delta (counted at import).
 *
 * Process-wide set-up (parse LATPROF_COUNTERS, encode with libpfm4 once,
 * probe which events the machine can count) happens once per run: the
 * first process that needs it writes the result to LATPROF_DIR/counters.cache
 * and every later process of the run (exec'd children: a shell loop, make)
 * reads that instead. libpfm4 is dlopen'd only then, never linked: its
 * ~41,000 relocations cost every process about a millisecond at load.
 * Every later thread only opens its group with the cached perf_event_attr. With the default set,
 * a group opens at a thread's first NVTX event (before it stamps a time), never inside a range,
 * and only there: whole-thread totals come from the kernel's own accounting (lp_taskacct.h), so
 * a thread that marks no range costs no perf_event work at its context switches. With an event
 * that accounting lacks, groups open at thread start (preload's hook). Events that cannot be
 * counted are written to the CONFIG record with the reason, never counted as zero.
 *
 * Hot path (lp_counters_boundary): one TLS compare; when due, read() and one
 * record. No malloc, no locks; errno preserved.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif
#ifdef LATPROF_HAVE_LIBPFM
#include <dlfcn.h>
#include <perfmon/pfmlib_perf_event.h>
#endif

#include "lp_counters.h"
#include "lp_log_counters.h"
#include "lp_raw.h"
#include "lp_taskacct.h"

#define LP_CNT_DEFAULT "context-switches,cpu-migrations,minor-faults,major-faults,task-clock"
#define LP_CNT_HW "cycles,instructions,cache-references,cache-misses,branch-misses"
#define LP_CNT_FDREG 4096	    /* open counter fds, so a forked child can close them */
#define LP_CNT_INTERVAL_NS 20000ull /* default LATPROF_COUNTERS_INTERVAL_NS */
#define LP_CNT_NEVER UINT64_MAX	    /* lp_cnt_thread.next: this thread never reads */

struct lp_cnt_ev {
	char name[64];
	struct perf_event_attr attr;
	int err; /* 0 counted, > 0 errno, < 0 libpfm4 code */
	char reason[200];
};

static struct {
	pthread_mutex_t lock;
	int inited;
	int off; /* nothing to count */
	int n;
	struct lp_cnt_ev ev[LP_CNT_MAX_EVENTS];
	uint32_t avail; /* mask of events that probed fine */
	int paranoid;
	uint32_t flags; /* LP_CNTF_* */
	char note[320];
	int fd_base;
	uint32_t config_gen; /* generation whose log holds our CONFIG record */
	/* Every event counted is one the kernel's thread accounting also keeps
	 * (lp_cnt_acct_field): threads open a group only to mark boundaries,
	 * and whole-thread totals come from that accounting. */
	int acct_totals;
	pthread_key_t key;
	int key_ok;
	uint64_t interval; /* min ns between two reads on a thread */
	char env[256];	   /* LATPROF_COUNTERS as read at set-up */
} lp_cnt = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Bumped in a forked child: every thread state of the parent is stale. */
static uint32_t lp_cnt_gen = 1;
static int lp_cnt_fdreg[LP_CNT_FDREG]; /* fd + 1, 0 = free slot */
/* Slots below this were ever used: a forked child scans only those, not
 * 16 KiB of pages the parent never touched (a page fault each). */
static int lp_cnt_fdreg_hi;

struct lp_cnt_thread {
	uint64_t next; /* no read before this ts; 0 = not set up, LP_CNT_NEVER = off */
	uint32_t gen;  /* != lp_cnt_gen: not set up in this process yet */
	int grouped;   /* a group open was tried in this generation */
	int listed;    /* in lp_cnt_live, its key destructor set */
	int leader;    /* a group leader fd, -1 = not counting */
	uint32_t mask;
	int n;
	int grp[2];			  /* leaders: other events, clock events; -1 = empty */
	int ng[2];			  /* events in each group */
	uint8_t order[LP_CNT_MAX_EVENTS]; /* read position -> position in event-index order */
	uint64_t open_ns;
	uint64_t cpu_before_ns; /* the thread's CPU time when its counters opened */
	int fds[LP_CNT_MAX_EVENTS];
};

__thread struct lp_cnt_thread lp_cnt_self __attribute__((tls_model("initial-exec")));
_Static_assert(offsetof(struct lp_cnt_thread, next) == 0, "lp_counters_mark reads next first");

/* The calling thread's CPU time since it began (a forked child's since the
 * fork), read once per counter open: a forked child opens its counters at
 * its first record, and the CPU it used before that belongs in its
 * whole-thread task-clock total (a PostgreSQL backend's start-up was ~10%
 * of its CPU against /proc's utime+stime). */
static uint64_t lp_cnt_thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Adds the CPU time before the counters opened to task-clock in a total's
 * values (event-index order over t->mask). */
static void lp_cnt_total_fixup(const struct lp_cnt_thread *t, uint64_t *vals)
{
	int pos = 0;
	for (int e = 0; e < LP_CNT_MAX_EVENTS; e++) {
		if (!(t->mask & (1u << e)))
			continue;
		if (lp_cnt.ev[e].attr.type == PERF_TYPE_SOFTWARE &&
		    lp_cnt.ev[e].attr.config == PERF_COUNT_SW_TASK_CLOCK)
			vals[pos] += t->cpu_before_ns;
		pos++;
	}
}

static void lp_cnt_thread_open(struct lp_cnt_thread *t, int want_group);

/* Threads whose groups are open, so that the thread that exits the process
 * can read the totals of those still running then (their key destructors
 * never run). Under lp_cnt.lock; a thread leaves before it closes its fds,
 * so the exit sweep never reads a closed descriptor. Full: not swept. */
#define LP_CNT_LIVE 1024
static struct {
	struct lp_cnt_thread *t;
	uint32_t tid;
} lp_cnt_live[LP_CNT_LIVE];
static int lp_cnt_nlive;

static void lp_cnt_live_add(struct lp_cnt_thread *t)
{
	pthread_mutex_lock(&lp_cnt.lock);
	if (lp_cnt_nlive < LP_CNT_LIVE)
		lp_cnt_live[lp_cnt_nlive++] = (typeof(lp_cnt_live[0])){t, lp_tid()};
	pthread_mutex_unlock(&lp_cnt.lock);
}

static void lp_cnt_live_remove(struct lp_cnt_thread *t)
{
	pthread_mutex_lock(&lp_cnt.lock);
	for (int i = 0; i < lp_cnt_nlive; i++)
		if (lp_cnt_live[i].t == t) {
			lp_cnt_live[i] = lp_cnt_live[--lp_cnt_nlive];
			break;
		}
	pthread_mutex_unlock(&lp_cnt.lock);
}

/* The groups' values into out (nr, enabled, running, values) in event-index
 * order, as the log's mask implies; enabled/running of the first group (the
 * one that holds hardware events, which may be multiplexed). A read() of
 * each group; task-clock is read from its group, not with
 * clock_gettime(CLOCK_THREAD_CPUTIME_ID) instead saved ~0.3 us a boundary
 * but made CPython threads that release the GIL around NumPy calls wait for
 * it 5-10x as often (tests/real/test_py_gil.py: 13-52 ms -> 190-330 ms of
 * GIL wait), so it was taken out. */
static int lp_cnt_read_group(const struct lp_cnt_thread *t, uint64_t *out)
{
	uint64_t buf[3 + LP_CNT_MAX_EVENTS];
	int pos = 0;
	for (int g = 0; g < 2; g++) {
		if (t->grp[g] < 0)
			continue;
		size_t want = (3 + (size_t)t->ng[g]) * sizeof(uint64_t);
		/* raw: through libc's read() the interposer's hook would time it */
		if (LP_RAW(SYS_read, t->grp[g], buf, want, 0, 0, 0) != (long)want)
			return -1;
		if (pos == 0)
			memcpy(out, buf, 3 * sizeof(uint64_t));
		for (int k = 0; k < t->ng[g]; k++)
			out[3 + t->order[pos++]] = buf[3 + k];
	}
	out[0] = (uint64_t)t->n;
	return 0;
}

static __attribute__((noinline)) void lp_cnt_read(struct lp_cnt_thread *t, uint64_t ts)
{
	if (t->gen != lp_cnt_gen || !t->grouped)
		lp_cnt_thread_open(t, 1);
	if (t->leader < 0)
		return;
	t->next = ts + lp_cnt.interval;
	int saved = errno;
	/* PERF_FORMAT_GROUP layout: nr, time_enabled, time_running, values[nr]. */
	uint64_t buf[3 + LP_CNT_MAX_EVENTS];
	if (lp_cnt_read_group(t, buf) == 0) {
		size_t vals = (size_t)t->n * sizeof(uint64_t);
		struct lp_rec_cnt_sample *r =
		    lp_rec_begin(LP_REC_CNT_SAMPLE, t->mask, sizeof(*r) + vals);
		if (r) {
			r->ts = ts;
			r->enabled = buf[1];
			r->running = buf[2];
			memcpy(r + 1, buf + 3, vals);
			lp_rec_commit();
		}
	}
	errno = saved;
}

void lp_counters_boundary(uint64_t ts)
{
	if (__builtin_expect(ts < lp_cnt_self.next, 1))
		return;
	lp_cnt_read(&lp_cnt_self, ts);
}

/* ---- fds: high numbers, close-on-exec, closed in a forked child ---- */

static int lp_cnt_highfd(int fd)
{
	if (lp_cnt.fd_base <= fd)
		return fd;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, lp_cnt.fd_base);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

static void lp_cnt_fd_register(int fd)
{
	for (int i = 0; i < LP_CNT_FDREG; i++) {
		int free_slot = 0;
		if (__atomic_compare_exchange_n(&lp_cnt_fdreg[i], &free_slot, fd + 1, 0,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			int hi = __atomic_load_n(&lp_cnt_fdreg_hi, __ATOMIC_RELAXED);
			while (hi <= i &&
			       !__atomic_compare_exchange_n(&lp_cnt_fdreg_hi, &hi, i + 1, 0,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
			return;
		}
	}
}

static void lp_cnt_fd_close(int fd)
{
	for (int i = 0; i < LP_CNT_FDREG; i++) {
		int mine = fd + 1;
		if (__atomic_compare_exchange_n(&lp_cnt_fdreg[i], &mine, 0, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	close(fd);
}

/* Close lo..hi, all of them ours: one close_range(2) (a thread's group is
 * opened in a row, 5 descriptors for the default set), else one by one.
 * Raw calls: in a forked child, each libc function's text the child first
 * touches is a page fault of its own (fork copies no page-table entries of
 * file mappings), and syscall() would also go through the interposer's
 * hook: 3 of the 14 faults latprof added to each forked child. */
static void lp_cnt_close_run(int lo, int hi)
{
	if (lo < 0)
		return;
	int saved = errno;
	if (hi == lo || LP_RAW(SYS_close_range, lo, hi, 0, 0, 0, 0) != 0)
		for (int fd = lo; fd <= hi; fd++)
			LP_RAW(SYS_close, fd, 0, 0, 0, 0, 0);
	errno = saved;
}

/* The child inherits the parent's counter fds, which count the parent's
 * threads: close them all; threads of the child reopen on first use. */
static void lp_cnt_atfork_child(void)
{
	/* Each variable is written only when the parent changed it: a page
	 * written here is a copy-on-write fault in every child, and a parent
	 * that never counted (a pre-forking server's master) changed none. */
	int lo = -1, hi = -1; /* a run of consecutive fds, closed in one call */
	for (int i = 0; i < lp_cnt_fdreg_hi; i++)
		if (lp_cnt_fdreg[i]) {
			int fd = lp_cnt_fdreg[i] - 1;
			lp_cnt_fdreg[i] = 0;
			if (lo >= 0 && fd == hi + 1) {
				hi = fd;
				continue;
			}
			lp_cnt_close_run(lo, hi);
			lo = hi = fd;
		}
	lp_cnt_close_run(lo, hi);
	if (lp_cnt_fdreg_hi)
		lp_cnt_fdreg_hi = 0;
	static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	if (memcmp(&lp_cnt.lock, &fresh, sizeof(fresh)))
		memcpy(&lp_cnt.lock, &fresh, sizeof(fresh));
	/* A new generation only when this one set something up (the config
	 * record, a thread's counters) that the child must redo. */
	if (lp_cnt.config_gen == lp_cnt_gen || lp_cnt_self.gen == lp_cnt_gen || lp_cnt_nlive)
		lp_cnt_gen++;
	if (lp_cnt_nlive)
		lp_cnt_nlive = 0; /* the parent's threads are not ours */
	if (lp_cnt_self.next)
		lp_cnt_self.next = 0; /* the forking thread, the child's only one: reopen */
}

/* ---- process-wide set-up ---- */

static int lp_cnt_read_paranoid(void)
{
	int v = INT32_MIN;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = INT32_MIN;
		fclose(f);
	}
	return v;
}

static void lp_cnt_add(const char *name, size_t len)
{
	if (!len || len >= sizeof(lp_cnt.ev[0].name))
		return;
	for (int i = 0; i < lp_cnt.n; i++)
		if (strlen(lp_cnt.ev[i].name) == len && !memcmp(lp_cnt.ev[i].name, name, len))
			return;
	if (lp_cnt.n == LP_CNT_MAX_EVENTS)
		return;
	struct lp_cnt_ev *e = &lp_cnt.ev[lp_cnt.n++];
	memset(e, 0, sizeof(*e));
	memcpy(e->name, name, len);
}

static void lp_cnt_add_list(const char *list)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ", ");
		if (len == 7 && !memcmp(p, "default", 7))
			lp_cnt_add_list(LP_CNT_DEFAULT);
		else if (len == 2 && !memcmp(p, "hw", 2))
			lp_cnt_add_list(LP_CNT_HW);
		else
			lp_cnt_add(p, len);
		p += len;
		p += strspn(p, ", ");
	}
}

/* Returns 0 when counting was requested (the event list is filled). */
static int lp_cnt_parse_env(void)
{
	const char *iv = getenv("LATPROF_COUNTERS_INTERVAL_NS");
	char *end = NULL;
	unsigned long long ns = iv && *iv ? strtoull(iv, &end, 10) : LP_CNT_INTERVAL_NS;
	lp_cnt.interval = end && *end ? LP_CNT_INTERVAL_NS : ns; /* 0: read every boundary */
	const char *env = getenv("LATPROF_COUNTERS");
	if (!env || !*env)
		env = "default";
	if (!strcmp(env, "none") || !strcmp(env, "off"))
		return -1;
	/* The run's cache is keyed on it; a longer list is never cached. */
	if (strlen(env) < sizeof(lp_cnt.env))
		strcpy(lp_cnt.env, env);
	lp_cnt_add_list(env);
	return lp_cnt.n ? 0 : -1;
}

static int lp_cnt_fd_base(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	rlim_t base = rl.rlim_cur / 2;
	return base > 1000 ? 1000 : (int)base;
}

#ifdef LATPROF_HAVE_LIBPFM
static int lp_cnt_open_one(struct perf_event_attr *a, int group)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static void lp_cnt_attr(struct perf_event_attr *a, const struct lp_cnt_ev *e)
{
	*a = e->attr;
	a->size = sizeof(*a);
	a->read_format =
	    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->disabled = 0;
	a->inherit = 0;
	a->exclude_kernel = !!(lp_cnt.flags & LP_CNTF_EXCLUDE_KERNEL);
	a->exclude_hv = 1;
	a->sample_period = 0;
	a->sample_type = 0;
}

/* Context switches and migrations are counted from scheduler code, i.e. in
 * kernel mode: with exclude_kernel they would always read 0. */
static int lp_cnt_kernel_only(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
		a->config == PERF_COUNT_SW_CPU_MIGRATIONS ||
		a->config == 11 /* PERF_COUNT_SW_CGROUP_SWITCHES */);
}

static void lp_cnt_reason(struct lp_cnt_ev *e, int err)
{
	e->err = err;
	const char *why = "";
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		why = ": the machine has no counter for this event (no hardware PMU, e.g. in a VM)";
	else if (err == EACCES || err == EPERM)
		why = ": not permitted (kernel.perf_event_paranoid, or missing CAP_PERFMON)";
	else if (err == EMFILE || err == ENFILE)
		why = ": out of file descriptors";
	snprintf(e->reason, sizeof(e->reason), "perf_event_open failed: %s (%s)%s", strerror(err),
		 strerrorname_np(err) ? strerrorname_np(err) : "?", why);
}

/* Open each event alone once, so every thread later opens only what works. */
static void lp_cnt_probe(void)
{
	int denied = 0, tried = 0;
	for (int i = 0; i < lp_cnt.n; i++) {
		struct lp_cnt_ev *e = &lp_cnt.ev[i];
		if (e->err)
			continue;
		struct perf_event_attr a;
		lp_cnt_attr(&a, e);
		tried++;
		if ((lp_cnt.flags & LP_CNTF_EXCLUDE_KERNEL) && lp_cnt_kernel_only(&a)) {
			e->err = EACCES;
			snprintf(e->reason, sizeof(e->reason),
				 "kernel.perf_event_paranoid=%d allows user-mode counting only, "
				 "and this event is counted in kernel mode",
				 lp_cnt.paranoid);
			continue;
		}
		int fd = lp_cnt_open_one(&a, -1);
		if (fd >= 0) {
			close(fd);
			lp_cnt.avail |= 1u << i;
			continue;
		}
		int err = errno;
		if ((err == EACCES || err == EPERM) && !(lp_cnt.flags & LP_CNTF_EXCLUDE_KERNEL)) {
			/* paranoid >= 2 refuses kernel-mode counting: retry user-only */
			lp_cnt.flags |= LP_CNTF_EXCLUDE_KERNEL;
			lp_cnt.avail = 0;
			i = -1;
			denied = tried = 0;
			continue;
		}
		denied += err == EACCES || err == EPERM;
		lp_cnt_reason(e, err);
	}
	if (tried && denied == tried)
		lp_cnt.flags |= LP_CNTF_DENIED;
}

static struct {
	void *handle;
	int (*initialize)(void);
	int (*encode)(const char *, int, pfm_os_t, void *);
	const char *(*strerror)(int);
	void (*terminate)(void);
	int ok; /* pfm_initialize() succeeded: pfm_terminate() before dlclose */
} lp_pfm;

static const char *lp_pfm_strerror(int code)
{
	return lp_pfm.strerror ? lp_pfm.strerror(code)
			       : "libpfm4 (" LATPROF_LIBPFM_SONAME ") could not be loaded";
}

/* PFM_SUCCESS, or PFM_ERR_NOTSUPP when the library cannot be loaded. */
static int lp_pfm_initialize(void)
{
	void *h = dlopen(LATPROF_LIBPFM_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return PFM_ERR_NOTSUPP;
	lp_pfm.handle = h;
	*(void **)&lp_pfm.initialize = dlsym(h, "pfm_initialize");
	*(void **)&lp_pfm.encode = dlsym(h, "pfm_get_os_event_encoding");
	*(void **)&lp_pfm.strerror = dlsym(h, "pfm_strerror");
	*(void **)&lp_pfm.terminate = dlsym(h, "pfm_terminate");
	if (!lp_pfm.initialize || !lp_pfm.encode || !lp_pfm.strerror) {
		lp_pfm.strerror = NULL;
		return PFM_ERR_NOTSUPP;
	}
	int rc = lp_pfm.initialize();
	lp_pfm.ok = rc == PFM_SUCCESS;
	return rc;
}

/* The encodings are made (and their error texts copied): unload libpfm4.
 * Its relocated data (~1 MiB of private pages) stayed mapped in the run's
 * first process, and every fork of that process copied its page tables
 * (copy_page_range: +20 us per fork of a fork loop, most of its overhead). */
static void lp_pfm_unload(void)
{
	if (!lp_pfm.handle)
		return;
	if (lp_pfm.terminate && lp_pfm.ok)
		lp_pfm.terminate();
	dlclose(lp_pfm.handle);
	memset(&lp_pfm, 0, sizeof(lp_pfm));
}

static void lp_cnt_encode(void)
{
	int rc = lp_pfm_initialize();
	for (int i = 0; i < lp_cnt.n; i++) {
		struct lp_cnt_ev *e = &lp_cnt.ev[i];
		if (rc != PFM_SUCCESS) {
			e->err = rc < 0 ? rc : -1;
			snprintf(e->reason, sizeof(e->reason), "libpfm4 failed to initialize: %s",
				 lp_pfm_strerror(rc));
			continue;
		}
		pfm_perf_encode_arg_t arg;
		memset(&arg, 0, sizeof(arg));
		memset(&e->attr, 0, sizeof(e->attr));
		arg.attr = &e->attr;
		arg.size = sizeof(arg);
		/* pfm_get_os_event_encoding(3): PFM_OS_PERF_EVENT_EXT fills a
		 * perf_event_attr, accepting perf's names (cycles, cs...). */
		int r = lp_pfm.encode(e->name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
		if (r != PFM_SUCCESS) {
			e->err = r < 0 ? r : -1;
			snprintf(e->reason, sizeof(e->reason), "libpfm4 cannot encode '%s': %s",
				 e->name, lp_pfm_strerror(r));
		}
	}
	lp_pfm_unload();
}
#endif

/* ---- the run's cache of the process-wide set-up ---- */

#define LP_CNT_CACHE_MAGIC "LPCNTC1"

/* Written by one process, read by the others of the same run (same host,
 * same user, same library): a plain copy of what lp_cnt_setup computes. */
struct lp_cnt_cache {
	char magic[8];
	uint32_t size; /* sizeof(struct lp_cnt_cache): a rebuilt library differs */
	int n;
	uint32_t avail;
	uint32_t flags;
	int paranoid;
	int pad;
	char env[256]; /* the LATPROF_COUNTERS it was made for */
	char note[320];
	struct lp_cnt_ev ev[LP_CNT_MAX_EVENTS];
};

static int lp_cnt_cache_path(char *buf, size_t len, const char *name)
{
	const char *dir = lp_core_dir();
	if (!dir)
		return -1;
	int n = snprintf(buf, len, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* 0 when the cache held the set-up for `env` (lp_cnt filled in). */
static int lp_cnt_cache_read(const char *env)
{
	char path[PATH_MAX];
	static struct lp_cnt_cache c; /* under lp_cnt.lock; 7 KiB off the stack */
	if (!*env || lp_cnt_cache_path(path, sizeof(path), LP_CNT_CACHE_FILE))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, &c, sizeof(c));
	close(fd);
	if (got != (ssize_t)sizeof(c) || memcmp(c.magic, LP_CNT_CACHE_MAGIC, 8) ||
	    c.size != sizeof(c) || c.n < 0 || c.n > LP_CNT_MAX_EVENTS ||
	    strncmp(c.env, env, sizeof(c.env)) || strlen(env) >= sizeof(c.env))
		return -1;
	lp_cnt.n = c.n;
	lp_cnt.avail = c.avail;
	lp_cnt.flags = c.flags;
	lp_cnt.paranoid = c.paranoid;
	memcpy(lp_cnt.note, c.note, sizeof(lp_cnt.note));
	memcpy(lp_cnt.ev, c.ev, sizeof(lp_cnt.ev));
	lp_cnt.note[sizeof(lp_cnt.note) - 1] = 0;
	for (int i = 0; i < lp_cnt.n; i++) {
		lp_cnt.ev[i].name[sizeof(lp_cnt.ev[i].name) - 1] = 0;
		lp_cnt.ev[i].reason[sizeof(lp_cnt.ev[i].reason) - 1] = 0;
	}
	return 0;
}

/* Published with rename(): a reader sees a whole file or none. */
static void lp_cnt_cache_write(const char *env)
{
	char path[PATH_MAX], tmp[PATH_MAX], name[64];
	static struct lp_cnt_cache c;
	if (!*env || strlen(env) >= sizeof(c.env))
		return;
	snprintf(name, sizeof(name), ".counters.cache.%d", (int)getpid());
	if (lp_cnt_cache_path(path, sizeof(path), LP_CNT_CACHE_FILE) ||
	    lp_cnt_cache_path(tmp, sizeof(tmp), name))
		return;
	memset(&c, 0, sizeof(c));
	memcpy(c.magic, LP_CNT_CACHE_MAGIC, 8);
	c.size = sizeof(c);
	c.n = lp_cnt.n;
	c.avail = lp_cnt.avail;
	c.flags = lp_cnt.flags;
	c.paranoid = lp_cnt.paranoid;
	strcpy(c.env, env);
	memcpy(c.note, lp_cnt.note, sizeof(c.note));
	memcpy(c.ev, lp_cnt.ev, sizeof(c.ev));
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	int ok = write(fd, &c, sizeof(c)) == (ssize_t)sizeof(c);
	close(fd);
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}

/* The kernel's thread accounting field that counts what event a counts,
 * over the thread's life; -1 for events only a perf_event counts. */
static int lp_cnt_acct_field(const struct perf_event_attr *a)
{
	if (a->type != PERF_TYPE_SOFTWARE)
		return -1;
	switch (a->config) {
	case PERF_COUNT_SW_TASK_CLOCK:
	case PERF_COUNT_SW_CPU_CLOCK:
		return LP_ACCT_CPU_NS;
	case PERF_COUNT_SW_CONTEXT_SWITCHES:
		return LP_ACCT_SWITCHES;
	case PERF_COUNT_SW_CPU_MIGRATIONS:
		return LP_ACCT_MIGRATIONS;
	case PERF_COUNT_SW_PAGE_FAULTS_MIN:
		return LP_ACCT_MINFLT;
	case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
		return LP_ACCT_MAJFLT;
	default: /* page-faults (both kinds) would need two fields: keep it simple */
		return -1;
	}
}

/* Whether whole-thread totals can come from the kernel's accounting: every
 * event counted has a field there. Also when perf_event_paranoid limits the
 * groups to user mode: the accounting of its own threads is the process's
 * to read, and a thread's CPU time with its system calls is what the
 * breakdown's whole-thread rows need (docs/schema.md, "Counters"). */
static int lp_cnt_decide_acct(void)
{
	for (int i = 0; i < lp_cnt.n; i++) {
		if (!(lp_cnt.avail & (1u << i)))
			continue;
		if (lp_cnt_acct_field(&lp_cnt.ev[i].attr) < 0)
			return 0;
	}
	return 1;
}

static void lp_cnt_setup(void)
{
	lp_cnt.fd_base = lp_cnt_fd_base();
	if (lp_cnt_parse_env()) {
		lp_cnt.off = 1;
		return;
	}
	const char *env = lp_cnt.env;
	if (lp_cnt_cache_read(env) == 0)
		return;
	lp_cnt.paranoid = lp_cnt_read_paranoid();
#ifdef LATPROF_HAVE_LIBPFM
	lp_cnt_encode();
	lp_cnt_probe();
#else
	lp_cnt.flags |= LP_CNTF_NO_LIBPFM;
	for (int i = 0; i < lp_cnt.n; i++) {
		lp_cnt.ev[i].err = ENOSYS;
		snprintf(lp_cnt.ev[i].reason, sizeof(lp_cnt.ev[i].reason),
			 "latprof was built without libpfm4: CPU counters are off");
	}
#endif
	if (lp_cnt.flags & LP_CNTF_DENIED)
		snprintf(lp_cnt.note, sizeof(lp_cnt.note),
			 "kernel.perf_event_paranoid=%d forbids CPU counters for this user: none "
			 "recorded (sysctl kernel.perf_event_paranoid=1, or run with CAP_PERFMON)",
			 lp_cnt.paranoid);
	else if (lp_cnt.flags & LP_CNTF_EXCLUDE_KERNEL)
		snprintf(lp_cnt.note, sizeof(lp_cnt.note),
			 "kernel.perf_event_paranoid=%d: CPU counters count user mode only%s; "
			 "context switches and migrations are unavailable "
			 "(sysctl kernel.perf_event_paranoid=1, or run with CAP_PERFMON)",
			 lp_cnt.paranoid,
			 lp_cnt_decide_acct() ? " in stages (whole-thread totals count both)" : "");
	lp_cnt_cache_write(env);
}

static uint32_t lp_cnt_str(const char *s)
{
	return *s ? lp_intern_string(s, strlen(s)) : 0;
}

static void lp_cnt_write_config(void)
{
	size_t n = (size_t)lp_cnt.n;
	uint32_t names[LP_CNT_MAX_EVENTS], reasons[LP_CNT_MAX_EVENTS];
	/* Intern first: lp_intern_string writes records of its own. */
	for (size_t i = 0; i < n; i++) {
		names[i] = lp_cnt_str(lp_cnt.ev[i].name);
		reasons[i] = lp_cnt.ev[i].err ? lp_cnt_str(lp_cnt.ev[i].reason) : 0;
	}
	uint32_t note = lp_cnt_str(lp_cnt.note);
	struct lp_rec_cnt_config *c = lp_rec_begin(
	    LP_REC_CNT_CONFIG, (uint32_t)n, sizeof(*c) + n * sizeof(struct lp_cnt_event_def));
	if (!c)
		return;
	c->paranoid = lp_cnt.paranoid;
	c->flags = lp_cnt.flags;
	c->note = note;
	c->pad = 0;
	struct lp_cnt_event_def *d = (struct lp_cnt_event_def *)(c + 1);
	for (size_t i = 0; i < n; i++) {
		d[i].name = names[i];
		d[i].err = lp_cnt.ev[i].err;
		d[i].reason = reasons[i];
		d[i].pad = 0;
	}
	lp_rec_commit();
}

/* Returns 0 when this process counts something. */
static int lp_cnt_process_ready(void)
{
	pthread_mutex_lock(&lp_cnt.lock);
	if (!lp_cnt.inited) {
		lp_cnt_setup();
		lp_cnt.acct_totals = lp_cnt_decide_acct();
		lp_cnt.inited = 1;
	}
	if (!lp_cnt.off && lp_cnt.config_gen != lp_cnt_gen) {
		lp_cnt_write_config();
		lp_cnt.config_gen = lp_cnt_gen;
	}
	pthread_mutex_unlock(&lp_cnt.lock);
	return lp_cnt.off || !lp_cnt.avail ? -1 : 0;
}

/* ---- per thread ---- */

static int lp_cnt_is_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

/* Which of a thread's two groups an event joins. With hardware events in
 * the set, clock events get a group of their own: the hardware group may be
 * multiplexed, and a clock inside it would stop while it is off the PMU.
 * Without them everything is one group, one read() a sample (a read costs
 * ~1.1 us on this project's VMs, a boundary that reads two groups ~2.2 us).
 * Mixing task-clock with the other software events in one group is right
 * only because the leader is opened disabled and enabled once its members
 * are in (lp_cnt_group_enable). */
static int lp_cnt_group_of(const struct perf_event_attr *a, int has_hw)
{
	return lp_cnt_is_clock(a) && has_hw ? 1 : 0;
}

/* Whether an event that will be counted is not a software one. */
static int lp_cnt_has_hw(void)
{
	for (int i = 0; i < lp_cnt.n; i++)
		if ((lp_cnt.avail & (1u << i)) && lp_cnt.ev[i].attr.type != PERF_TYPE_SOFTWARE)
			return 1;
	return 0;
}

/* Starts a group whose members are all in. A member added to a running
 * leader stays off until the thread is next scheduled in, since the kernel
 * reschedules only the member's own PMU, and task-clock and the other
 * software events are two PMUs (seen on Linux 6.18: a task-clock member
 * kept its value from the thread's last deschedule, the members of a
 * task-clock leader missed the first context switch and every fault before
 * it). Enabling the leader schedules the whole group in at once, as perf
 * stat does. Raw: the interposer does not time ioctl(), but stays out. */
static void lp_cnt_group_enable(int leader)
{
	LP_RAW(SYS_ioctl, leader, PERF_EVENT_IOC_ENABLE, 0, 0, 0, 0);
}

/* Lists t for the exit sweep and sets the key whose destructor writes its
 * totals (the main thread's: lp_cnt_dtor). */
static void lp_cnt_list(struct lp_cnt_thread *t)
{
	if (t->listed || !lp_cnt.key_ok)
		return;
	pthread_setspecific(lp_cnt.key, (void *)1);
	lp_cnt_live_add(t);
	t->listed = 1;
}

#ifdef LATPROF_HAVE_LIBPFM
static void lp_cnt_record_nofd(int err)
{
	uint64_t *r = lp_rec_begin(LP_REC_CNT_NOFD, (uint32_t)err, sizeof(*r));
	if (r) {
		*r = lp_now();
		lp_rec_commit();
	}
}

/* Opens t's groups with every event of the set that opens. */
static void lp_cnt_group_open(struct lp_cnt_thread *t)
{
	int seq[LP_CNT_MAX_EVENTS];
	int has_hw = lp_cnt_has_hw();
	int nofd = 0; /* EMFILE/ENFILE from an open */
	t->mask = 0;
	t->n = 0;
	for (int g = 0; g < 2; g++) {
		t->grp[g] = -1;
		t->ng[g] = 0;
		for (int i = 0; i < lp_cnt.n; i++) {
			struct perf_event_attr a;
			lp_cnt_attr(&a, &lp_cnt.ev[i]);
			if (!(lp_cnt.avail & (1u << i)) || lp_cnt_group_of(&a, has_hw) != g)
				continue;
			a.disabled = t->grp[g] < 0; /* the leader: enabled below */
			int fd = lp_cnt_open_one(&a, t->grp[g]);
			if (fd < 0 && (errno == EMFILE || errno == ENFILE))
				nofd = errno;
			if (fd < 0)
				continue; /* the thread's mask says it is missing */
			fd = lp_cnt_highfd(fd);
			lp_cnt_fd_register(fd);
			if (t->grp[g] < 0)
				t->grp[g] = fd;
			seq[t->n] = i;
			t->fds[t->n++] = fd;
			t->ng[g]++;
			t->mask |= 1u << i;
		}
		if (t->grp[g] >= 0)
			lp_cnt_group_enable(t->grp[g]);
	}
	for (int k = 0; k < t->n; k++)
		t->order[k] = (uint8_t)__builtin_popcount(t->mask & ((1u << seq[k]) - 1));
	t->leader = t->grp[0] >= 0 ? t->grp[0] : t->grp[1];
	t->cpu_before_ns = lp_cnt_thread_cpu();
	if (t->leader < 0 && nofd) /* latprof run says why this thread has none */
		lp_cnt_record_nofd(nofd);
}
#endif

/*
 * Sets t up in this process: from then on its whole-thread totals are
 * written at its exit. A group is opened when the thread marks boundaries
 * (want_group) or when totals need one (!lp_cnt.acct_totals). A thread with
 * perf events costs the kernel work at every context switch (pgbench's
 * backends, which mark no boundary: ~10% of their throughput for the
 * default set), so with the default set only threads that read samples pay.
 */
static void lp_cnt_thread_open(struct lp_cnt_thread *t, int want_group)
{
	if (!lp_core_active())
		return; /* retried at the next boundary */
	int saved = errno;
	if (t->gen != lp_cnt_gen) {
		t->gen = lp_cnt_gen;
		t->grouped = t->listed = 0;
		t->leader = -1;
		t->mask = 0;
		t->n = 0;
		t->open_ns = lp_now();
	}
	if (lp_cnt_process_ready()) {
		t->grouped = 1; /* nothing to count: never again */
		goto out;
	}
	if (!want_group && lp_cnt.acct_totals) {
		lp_cnt_list(t);
		t->next = 0; /* the first boundary opens the group */
		errno = saved;
		return;
	}
	t->grouped = 1;
#ifdef LATPROF_HAVE_LIBPFM
	lp_cnt_group_open(t);
	if (t->leader >= 0 || lp_cnt.acct_totals)
		lp_cnt_list(t);
#endif
out:
	t->next = t->leader >= 0 ? 0 : LP_CNT_NEVER;
	errno = saved;
}

void lp_counters_thread_start(void)
{
	struct lp_cnt_thread *t = &lp_cnt_self;
	if (t->gen != lp_cnt_gen)
		lp_cnt_thread_open(t, 0);
}

void lp_counters_thread_ranges(void)
{
	struct lp_cnt_thread *t = &lp_cnt_self;
	if (t->gen != lp_cnt_gen || !t->grouped)
		lp_cnt_thread_open(t, 1);
}

/* Values (event-index order over the returned mask) of the events in the
 * set that thread tid's accounting has; 0 when it has none. */
static uint32_t lp_cnt_acct_values(uint32_t tid, int self, uint64_t *vals)
{
	struct lp_task_acct acct;
	lp_task_acct_read(tid, self, &acct);
	uint32_t mask = 0;
	int pos = 0;
	for (int i = 0; i < lp_cnt.n; i++) {
		if (!(lp_cnt.avail & (1u << i)))
			continue;
		int f = lp_cnt_acct_field(&lp_cnt.ev[i].attr);
		if (f < 0 || !(acct.have & (1u << f)))
			continue;
		vals[pos++] = acct.v[f];
		mask |= 1u << i;
	}
	return mask;
}

/* t's totals into buf (nr, enabled, running, values): from its accounting
 * or from its groups. The mask of the values, 0 when there are none. */
static uint32_t lp_cnt_totals(const struct lp_cnt_thread *t, uint32_t tid, int self, uint64_t *buf)
{
	if (lp_cnt.acct_totals) {
		uint32_t mask = lp_cnt_acct_values(tid, self, buf + 3);
		uint64_t now = lp_now();
		buf[0] = (uint64_t)__builtin_popcount(mask);
		buf[1] = buf[2] = now > t->open_ns ? now - t->open_ns : 0; /* never scaled */
		return mask;
	}
	if (t->leader < 0 || lp_cnt_read_group(t, buf))
		return 0;
	lp_cnt_total_fixup(t, buf + 3);
	return t->mask;
}

/* Thread tid's CPU affinity: its count (0: unread), *mask its CPUs 0..63
 * (0 when it holds a higher one). */
static uint32_t lp_cnt_affinity(uint32_t tid, uint64_t *mask)
{
	cpu_set_t set;
	*mask = 0;
	long n = LP_RAW(SYS_sched_getaffinity, tid, sizeof(set), &set, 0, 0, 0);
	if (n <= 0)
		return 0;
	uint32_t cpus = 0;
	int wide = 0;
	for (int c = 0; c < (int)(n * 8) && c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		cpus++;
		if (c < 64)
			*mask |= 1ull << c;
		else
			wide = 1;
	}
	if (wide)
		*mask = 0;
	return cpus;
}

/* Thread tid's run_delay and affinity beside the totals just written for
 * it. */
static void lp_cnt_write_runq(uint32_t tid)
{
	int saved = errno;
	uint64_t delay, mask;
	if (lp_task_run_delay(tid, &delay))
		return;
	uint32_t cpus = lp_cnt_affinity(tid, &mask);
	struct lp_rec_cnt_runq *r = lp_rec_begin(LP_REC_CNT_RUNQ, 0, sizeof(*r));
	if (r) {
		r->tid = tid;
		r->cpus = cpus;
		r->ts = lp_now();
		r->run_delay = delay;
		r->cpu_mask = mask;
		lp_rec_commit();
	}
	errno = saved;
}

/* Closes t's groups: members first, closing the leader first would detach
 * them. */
static void lp_cnt_group_close(struct lp_cnt_thread *t)
{
	for (int i = t->n - 1; i >= 0; i--)
		lp_cnt_fd_close(t->fds[i]);
	t->leader = -1;
	t->n = 0;
}

#if defined(__SANITIZE_ADDRESS__)
/* A thread ended by pthread_cancel was unwound by glibc without ASan's
 * knowing: the poison of the sanitized frames it unwound is still in the
 * shadow of the stack below, where this thread's key destructors put their
 * frames, and GCC's instrumented frames set the shadow of their redzones
 * only (CI's ASan tier: a read of a /proc buffer in lp_taskacct.c was taken
 * for an overflow). Clear what the totals' frames use, 16 KiB below. */
static __attribute__((noinline)) void lp_cnt_unpoison_below(void)
{
	char here;
	uintptr_t top = (uintptr_t)&here & ~(uintptr_t)7;
	ASAN_UNPOISON_MEMORY_REGION((void *)(top - 16384), 16384);
}
#else
static void lp_cnt_unpoison_below(void)
{
}
#endif

void lp_counters_thread_exit(void)
{
	struct lp_cnt_thread *t = &lp_cnt_self;
	if (t->gen != lp_cnt_gen || !t->listed)
		return;
	int saved = errno;
	lp_cnt_unpoison_below();
	lp_cnt_live_remove(t);
	t->listed = 0;
	uint64_t buf[3 + LP_CNT_MAX_EVENTS];
	uint32_t mask = lp_cnt_totals(t, lp_tid(), 1, buf);
	if (mask) {
		size_t vals = (size_t)__builtin_popcount(mask) * sizeof(uint64_t);
		struct lp_rec_cnt_total *r =
		    lp_rec_begin(LP_REC_CNT_TOTAL, mask, sizeof(*r) + vals);
		if (r) {
			r->ts = lp_now();
			r->open_ns = t->open_ns;
			r->enabled = buf[1];
			r->running = buf[2];
			memcpy(r + 1, buf + 3, vals);
			lp_rec_commit();
		}
		lp_cnt_write_runq(lp_tid());
	}
	lp_cnt_group_close(t);
	t->next = LP_CNT_NEVER;
	errno = saved;
}

static void lp_cnt_key_dtor(void *arg)
{
	(void)arg;
	lp_counters_thread_exit();
}

/*
 * Our key is created before liblatprof_core's own (lp_core_init runs later,
 * from the sources' constructors), and glibc runs key destructors in key
 * order, so the thread's TOTAL record precedes its THREAD_END record.
 */
__attribute__((constructor)) static void lp_cnt_ctor(void)
{
	lp_cnt.key_ok = pthread_key_create(&lp_cnt.key, lp_cnt_key_dtor) == 0;
	pthread_atfork(NULL, NULL, lp_cnt_atfork_child);
}

/* The totals of every other thread still counting, read from here (a
 * perf_event fd reads from any thread of the process). */
static void lp_cnt_sweep_live(void)
{
	int saved = errno;
	uint64_t buf[3 + LP_CNT_MAX_EVENTS];
	/* trylock: exit() may run in a signal handler that interrupted this
	 * very thread inside the lock; then the others' totals are lost. */
	if (pthread_mutex_trylock(&lp_cnt.lock)) {
		errno = saved;
		return;
	}
	for (int i = 0; i < lp_cnt_nlive; i++) {
		const struct lp_cnt_thread *t = lp_cnt_live[i].t;
		if (t == &lp_cnt_self || t->gen != lp_cnt_gen)
			continue;
		uint32_t mask = lp_cnt_totals(t, lp_cnt_live[i].tid, 0, buf);
		if (!mask)
			continue;
		size_t vals = (size_t)__builtin_popcount(mask) * sizeof(uint64_t);
		struct lp_rec_cnt_total_of *r =
		    lp_rec_begin(LP_REC_CNT_TOTAL_OF, mask, sizeof(*r) + vals);
		if (!r)
			continue;
		r->tid = lp_cnt_live[i].tid;
		r->pad = 0;
		r->total.ts = lp_now();
		r->total.open_ns = t->open_ns;
		r->total.enabled = buf[1];
		r->total.running = buf[2];
		memcpy(r + 1, buf + 3, vals);
		lp_rec_commit();
		lp_cnt_write_runq(lp_cnt_live[i].tid);
	}
	pthread_mutex_unlock(&lp_cnt.lock);
	errno = saved;
}

/* The main thread runs no key destructors: write its totals at exit, and
 * those of the threads still running. */
__attribute__((destructor)) static void lp_cnt_dtor(void)
{
	lp_cnt_sweep_live();
	lp_counters_thread_exit();
}
