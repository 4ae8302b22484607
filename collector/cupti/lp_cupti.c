/* SPDX-License-Identifier: MIT */
/*
 * CUPTI collector, loaded by the CUDA driver through CUDA_INJECTION64_PATH
 * (the driver calls InitializeInjection from cuInit). Activity buffers are
 * translated into the recording core's log when CUPTI completes them; the
 * importer is the only writer of SQLite. When CUPTI cannot start, one
 * status record says why and the app runs on unprofiled on the GPU side.
 */
#define _GNU_SOURCE
#define _CUPTI_ACTIVITY_DEPRECATED_H_
#include <cupti.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lp_core.h"
#include "lp_cupti.h"
#include "lp_cupti_api.h"
#include "lp_log_cuda.h"

#define LP_BUF_SIZE (4u << 20)	/* CUPTI's own default is 8 MB; smaller flushes sooner */
#define LP_DEFAULT_LIMIT_MB 64u /* at most 64 MB of buffers per process */
#define LP_DEFAULT_FLUSH_MS 200u
/* The final flush (exit, _exit, a fatal signal) waits this long in all,
 * of which at most LP_SYNC_MS for the GPU to finish what it runs. */
#define LP_EXIT_MS 3000
#define LP_SYNC_MS 1000

static pthread_once_t lp_once = PTHREAD_ONCE_INIT;
static CUpti_SubscriberHandle lp_sub;
static int lp_started;
static int lp_in_child; /* a fork child: CUPTI's state is the parent's, not ours */
static uint32_t lp_conflicts;
static uint32_t lp_max_buffers;
static uint32_t lp_outstanding;
static uint64_t lp_buffers, lp_denied, lp_dropped;
static uint64_t lp_records, lp_unknown, lp_log_drops, lp_bad_ts, lp_foreign_ts, lp_filtered;
static int lp_driver_traced; /* the DRIVER kind is enabled: the final flush can probe */

static uint64_t CUPTIAPI lp_cupti_clock(void)
{
	return lp_now(); /* the recording core's clock: one timeline for CPU and GPU */
}

static uint32_t lp_env_u32(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return def;
	unsigned long n = strtoul(v, &end, 10);
	return *end || n < lo || n > hi ? def : (uint32_t)n;
}

/* One set of buffers for the process (per-thread buffers are turned off in
 * lp_start), at most lp_max_buffers of them. */
static void CUPTIAPI lp_buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	int saved = errno;
	void *p = NULL;
	*max_records = 0;
	*buffer = NULL;
	*size = 0;
	/* Over the limit CUPTI drops records and counts them: we report that. */
	if (__atomic_add_fetch(&lp_outstanding, 1, __ATOMIC_RELAXED) > lp_max_buffers ||
	    posix_memalign(&p, 8, LP_BUF_SIZE)) {
		__atomic_sub_fetch(&lp_outstanding, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&lp_denied, 1, __ATOMIC_RELAXED);
		errno = saved;
		return;
	}
	*buffer = p;
	*size = LP_BUF_SIZE;
	errno = saved;
}

static void lp_add_dropped(CUcontext ctx, uint32_t stream)
{
	size_t dropped = 0;
	if (lp_cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
	    dropped)
		__atomic_add_fetch(&lp_dropped, dropped, __ATOMIC_RELAXED);
}

static void CUPTIAPI lp_buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	int saved = errno;
	struct lp_cupti_counts c = {0};
	(void)size;
	if (!__atomic_load_n(&lp_in_child, __ATOMIC_RELAXED))
		lp_cupti_translate(buffer, valid, &c);
	lp_add_dropped(ctx, stream);
	__atomic_add_fetch(&lp_records, c.records, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_unknown, c.unknown_kinds, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_log_drops, c.log_drops, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_bad_ts, c.bad_ts, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_foreign_ts, c.foreign_ts, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_filtered, c.filtered, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_buffers, 1, __ATOMIC_RELAXED);
	free(buffer);
	if (buffer)
		__atomic_sub_fetch(&lp_outstanding, 1, __ATOMIC_RELAXED);
	errno = saved;
}

/* with_names: also the filtered APIs' counts, whose names may need CUPTI
 * (cuptiGetCallbackName): not where CUPTI may be stuck holding its locks. */
static void lp_write_stats(int with_names)
{
	struct lp_cupti_counts c = {
	    .records = __atomic_load_n(&lp_records, __ATOMIC_RELAXED),
	    .unknown_kinds = __atomic_load_n(&lp_unknown, __ATOMIC_RELAXED),
	    .log_drops = __atomic_load_n(&lp_log_drops, __ATOMIC_RELAXED),
	    .bad_ts = __atomic_load_n(&lp_bad_ts, __ATOMIC_RELAXED),
	    .foreign_ts = __atomic_load_n(&lp_foreign_ts, __ATOMIC_RELAXED),
	    .filtered = __atomic_load_n(&lp_filtered, __ATOMIC_RELAXED),
	};
	if (with_names)
		lp_cupti_api_counts();
	lp_cupti_stats(&c, __atomic_load_n(&lp_dropped, __ATOMIC_RELAXED),
		       __atomic_load_n(&lp_buffers, __ATOMIC_RELAXED),
		       __atomic_load_n(&lp_denied, __ATOMIC_RELAXED),
		       __atomic_load_n(&lp_conflicts, __ATOMIC_RELAXED));
}

/* Forced flush: hands over partly filled buffers too, then one stats
 * record with the totals (the importer keeps the last one). Records lost
 * to a refused buffer are counted against the global buffer (context NULL)
 * as well as per stream. A buffer still out after a forced flush was not
 * returned to our callback: another client (the PyTorch profiler) has
 * registered its own buffer callbacks since, and what CUPTI records now
 * goes to it; the stats say so instead of claiming nothing was lost. */
static void lp_flush_ex(int probe)
{
	if (!__atomic_load_n(&lp_started, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&lp_in_child, __ATOMIC_ACQUIRE))
		return;
	int saved = errno;
	/* The probe: one driver call of our own, whose record must come back
	 * in this flush while our kinds and callbacks are still CUPTI's. A
	 * client that disabled the kinds (the PyTorch profiler at its stop) or
	 * took the callbacks leaves no other trace. Not under buffer pressure:
	 * a refused buffer would lose the probe too (and that loss is said). */
	CUresult (*cur)(CUcontext *) =
	    probe && lp_driver_traced && !__atomic_load_n(&lp_denied, __ATOMIC_RELAXED)
		? (CUresult(*)(CUcontext *))lp_cupti_driver_sym("cuCtxGetCurrent")
		: NULL;
	uint64_t seen = lp_cupti_probe_seen();
	CUcontext ctx;
	if (cur && cur(&ctx) != CUDA_SUCCESS)
		cur = NULL;
	lp_cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (cur && lp_cupti_probe_seen() == seen)
		__atomic_or_fetch(&lp_conflicts, LP_CUDA_CONFLICT_STOPPED, __ATOMIC_RELAXED);
	lp_add_dropped(NULL, 0);
	if (__atomic_load_n(&lp_outstanding, __ATOMIC_RELAXED))
		__atomic_or_fetch(&lp_conflicts, LP_CUDA_CONFLICT_CALLBACKS, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lp_foreign_ts, __ATOMIC_RELAXED))
		__atomic_or_fetch(&lp_conflicts, LP_CUDA_CONFLICT_CLOCK, __ATOMIC_RELAXED);
	lp_write_stats(1);
	errno = saved;
}

static void lp_flush(void)
{
	lp_flush_ex(0);
}

/* ---- the final flush: every exit path latprof sees -------------------
 *
 * A forced flush returns records of work still running with end 0: the GPU
 * should finish first. No CUDA synchronize takes a timeout, and an exiting
 * process must not hang on a kernel that never ends (or on a lock the
 * thread a signal interrupted holds). So the bound is by design: the
 * synchronize runs on a throwaway thread that the flush thread waits for
 * at most LP_SYNC_MS; the flush thread then flushes; whoever asked for the
 * final flush (exit path or signal handler) waits for the flush thread at
 * most LP_EXIT_MS, then lets the process go. A hung synchronize costs
 * only its bound: the flush then returns the kernels still running with
 * end 0, dropped and counted. What a hung flush held back is lost; the
 * waiting thread then writes a stats record with
 * LP_CUDA_CONFLICT_FLUSH_TIMEOUT, so the loss is said, not hidden.
 */
static int lp_req_fd = -1, lp_done_fd = -1; /* eventfds: ask, answered */
static int lp_final_once, lp_final_ok;
static pthread_mutex_t lp_sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lp_sync_cond = PTHREAD_COND_INITIALIZER;
static int lp_sync_done;

/* Every device whose primary context is active (what the runtime API,
 * PyTorch included, runs on): push it, synchronize, pop. */
static void *lp_sync_devices(void *arg)
{
	(void)arg;
	lp_cupti_own_thread(lp_tid());
	CUresult (*count)(int *) = (CUresult(*)(int *))lp_cupti_driver_sym("cuDeviceGetCount");
	CUresult (*get)(CUdevice *, int) =
	    (CUresult(*)(CUdevice *, int))lp_cupti_driver_sym("cuDeviceGet");
	CUresult (*state)(CUdevice, unsigned *, int *) = (CUresult(*)(
	    CUdevice, unsigned *, int *))lp_cupti_driver_sym("cuDevicePrimaryCtxGetState");
	CUresult (*retain)(CUcontext *, CUdevice) =
	    (CUresult(*)(CUcontext *, CUdevice))lp_cupti_driver_sym("cuDevicePrimaryCtxRetain");
	CUresult (*release)(CUdevice) =
	    (CUresult(*)(CUdevice))lp_cupti_driver_sym("cuDevicePrimaryCtxRelease_v2");
	CUresult (*push)(CUcontext) =
	    (CUresult(*)(CUcontext))lp_cupti_driver_sym("cuCtxPushCurrent_v2");
	CUresult (*pop)(CUcontext *) =
	    (CUresult(*)(CUcontext *))lp_cupti_driver_sym("cuCtxPopCurrent_v2");
	CUresult (*sync)(void) = (CUresult(*)(void))lp_cupti_driver_sym("cuCtxSynchronize");
	int n = 0;
	if (count && get && state && retain && release && push && pop && sync &&
	    count(&n) == CUDA_SUCCESS) {
		for (int i = 0; i < n; i++) {
			CUdevice dev;
			CUcontext ctx;
			unsigned flags;
			int active = 0;
			if (get(&dev, i) != CUDA_SUCCESS ||
			    state(dev, &flags, &active) != CUDA_SUCCESS || !active ||
			    retain(&ctx, dev) != CUDA_SUCCESS)
				continue;
			if (push(ctx) == CUDA_SUCCESS) {
				sync();
				pop(&ctx);
			}
			release(dev);
		}
	}
	pthread_mutex_lock(&lp_sync_lock);
	lp_sync_done = 1;
	pthread_cond_signal(&lp_sync_cond);
	pthread_mutex_unlock(&lp_sync_lock);
	return NULL;
}

static void lp_sync_bounded(void)
{
	pthread_t t;
	pthread_attr_t a;
	struct timespec until;
	if (pthread_attr_init(&a))
		return;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	lp_sync_done = 0;
	if (pthread_create(&t, &a, lp_sync_devices, NULL) == 0) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += LP_SYNC_MS / 1000;
		until.tv_nsec += (LP_SYNC_MS % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
		pthread_mutex_lock(&lp_sync_lock);
		while (!lp_sync_done &&
		       pthread_cond_timedwait(&lp_sync_cond, &lp_sync_lock, &until) == 0)
			;
		pthread_mutex_unlock(&lp_sync_lock);
	}
	pthread_attr_destroy(&a);
}

/* probe: on the flush thread only, whose driver calls are told apart. */
static void lp_sync_and_flush(int probe)
{
	lp_sync_bounded();
	lp_flush_ex(probe);
}

/* The flush thread: blocks every signal (the app's signals are the app's
 * threads' to take) and waits for a request. */
static void *lp_flusher(void *arg)
{
	sigset_t all;
	uint64_t v;
	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	lp_cupti_own_thread(lp_tid());
	for (;;) {
		if (read(lp_req_fd, &v, sizeof(v)) != sizeof(v)) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return NULL;
		}
		lp_sync_and_flush(1);
		v = 1;
		if (write(lp_done_fd, &v, sizeof(v)) < 0)
			return NULL;
	}
}

static void lp_flusher_start(void)
{
	pthread_t t;
	pthread_attr_t a;
	lp_req_fd = eventfd(0, EFD_CLOEXEC);
	lp_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lp_req_fd < 0 || lp_done_fd < 0 || pthread_attr_init(&a))
		goto fail;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &a, lp_flusher, NULL);
	pthread_attr_destroy(&a);
	if (rc == 0) {
		pthread_setname_np(t, "latprof-cupti");
		return;
	}
fail:
	if (lp_req_fd >= 0)
		close(lp_req_fd);
	if (lp_done_fd >= 0)
		close(lp_done_fd);
	lp_req_fd = lp_done_fd = -1;
}

/* Async-signal-safe when in_signal (eventfd write, poll, the core's record
 * path); from a normal exit path without the flush thread, flushes inline. */
static void lp_final_flush(const char *why, int in_signal)
{
	if (!__atomic_load_n(&lp_started, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&lp_in_child, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&lp_final_once, 1, __ATOMIC_ACQ_REL))
		return;
	int saved = errno;
	uint64_t v = 1;
	if (lp_req_fd >= 0 && write(lp_req_fd, &v, sizeof(v)) == sizeof(v)) {
		struct pollfd p = {.fd = lp_done_fd, .events = POLLIN};
		int n;
		while ((n = poll(&p, 1, LP_EXIT_MS)) < 0 && errno == EINTR)
			;
		if (n <= 0) {
			__atomic_or_fetch(&lp_conflicts, LP_CUDA_CONFLICT_FLUSH_TIMEOUT,
					  __ATOMIC_RELAXED);
			lp_write_stats(0);
		} else {
			__atomic_store_n(&lp_final_ok, 1, __ATOMIC_RELEASE);
		}
	} else if (!in_signal) {
		lp_sync_and_flush(0);
		__atomic_store_n(&lp_final_ok, 1, __ATOMIC_RELEASE);
	}
	lp_cupti_status(LP_CUDA_FLUSHED, 0, 0, 0, why);
	errno = saved;
}

/* After the recorder's exit (the interposer's exit hook) come the app's
 * own exit handlers and destructors, which may still launch GPU work: one
 * more forced flush hands that over, unless the final flush hung (CUPTI
 * may still hold its locks then). */
static void lp_atexit(void)
{
	if (__atomic_load_n(&lp_final_ok, __ATOMIC_ACQUIRE))
		lp_flush();
	else
		lp_final_flush("exit", 0);
}

/* The recording core's exit (exit, _exit, _Exit, return from main). */
static void lp_core_exiting(void)
{
	lp_final_flush("exit", 0);
}

/* Fatal signals whose default action ends the process: taken only where
 * the app left the default, handed back at once (SA_RESETHAND), and
 * re-raised after the flush, so the process still dies of that signal. A
 * fault the kernel raised re-faults on return. */
static const int lp_fatal[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT,
			       SIGSEGV, SIGBUS, SIGFPE, SIGILL,	 SIGXCPU};

static void lp_on_fatal(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	int saved = errno;
	lp_final_flush("fatal signal", 1);
	if (info->si_code <= 0) /* sent by a process (kill, raise, abort) */
		raise(sig);
	errno = saved;
}

static void lp_fatal_install(void)
{
	for (size_t i = 0; i < sizeof(lp_fatal) / sizeof(lp_fatal[0]); i++) {
		struct sigaction old, sa;
		if (sigaction(lp_fatal[i], NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = lp_on_fatal;
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		sigaction(lp_fatal[i], &sa, NULL);
	}
}

/* fork without exec after CUDA started: the child shares none of CUPTI's
 * threads or device state, and flushing or finalizing the inherited CUPTI
 * at its exit can hang inside libcupti. The child leaves CUPTI alone: no
 * flush, no stats, its inherited fatal-signal handlers just re-raise. */
static void lp_atfork_child(void)
{
	__atomic_store_n(&lp_in_child, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&lp_started, 0, __ATOMIC_RELEASE);
	if (lp_req_fd >= 0)
		close(lp_req_fd);
	if (lp_done_fd >= 0)
		close(lp_done_fd);
	lp_req_fd = lp_done_fd = -1;
}

/* cudaDeviceReset destroys the context and with it unflushed records. */
static void CUPTIAPI lp_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cb = data;
	(void)ud;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
	    cb->callbackSite == CUPTI_API_ENTER) {
		lp_flush();
		lp_cupti_status(LP_CUDA_FLUSHED, 0, 0, 0, "cudaDeviceReset");
	}
}

/* One sentence a user can act on, then the raw CUPTI facts. */
static const char *lp_why(CUptiResult r)
{
	switch (r) {
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		return "another profiler (nsys, ncu, a framework profiler) already holds CUPTI";
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		return "GPU profiling is restricted to admin users "
		       "(NVreg_RestrictProfilingToAdminUsers)";
	case CUPTI_ERROR_NOT_INITIALIZED:
	case CUPTI_ERROR_UNKNOWN:
	case CUPTI_ERROR_INVALID_DEVICE:
		return "no usable GPU or CUDA driver";
	case CUPTI_ERROR_NOT_COMPATIBLE:
	case CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE:
		return "this CUPTI does not match the CUDA driver";
	default:
		return "CUPTI could not start";
	}
}

static void lp_report(unsigned phase, CUptiResult r, unsigned detail, const char *what)
{
	const char *s = NULL;
	char msg[512];
	if (lp_cupti.GetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	snprintf(msg, sizeof(msg), "%s (CUPTI: %s in %s)", lp_why(r), s, what);
	lp_cupti_status(phase, (int)r, detail, 0, msg);
}

static const struct {
	CUpti_ActivityKind kind;
	const char *name;
	int required;
} lp_kinds[] = {
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", 0},
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", 1},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", 0},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", 0},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", 0},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", 0},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", 0},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", 0},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD", 0},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2", 0},
};

static int lp_enable_kinds(void)
{
	unsigned n = 0;
	char what[96];
	for (size_t i = 0; i < sizeof(lp_kinds) / sizeof(lp_kinds[0]); i++) {
		CUptiResult r = lp_cupti.ActivityEnable(lp_kinds[i].kind);
		snprintf(what, sizeof(what), "cuptiActivityEnable(%s)", lp_kinds[i].name);
		if (r == CUPTI_SUCCESS) {
			n++;
			if (lp_kinds[i].kind == CUPTI_ACTIVITY_KIND_DRIVER)
				lp_driver_traced = 1;
		} else if (lp_kinds[i].required) {
			lp_report(LP_CUDA_START_FAILED, r, lp_kinds[i].kind, what);
			return -1;
		} else {
			lp_report(LP_CUDA_KIND_FAILED, r, lp_kinds[i].kind, what);
		}
	}
	return (int)n;
}

/* The driver is loaded (it is calling us); no symbol needed at link time. */
static int lp_driver_version(void)
{
	int v = 0;
	CUresult (*fn)(int *) = (CUresult(*)(int *))lp_cupti_driver_sym("cuDriverGetVersion");
	return fn && fn(&v) == CUDA_SUCCESS ? v : 0;
}

static int lp_kineto_module(struct dl_phdr_info *info, size_t size, void *found)
{
	(void)size;
	if (info->dlpi_name &&
	    (strstr(info->dlpi_name, "libtorch_cuda") || strstr(info->dlpi_name, "kineto")))
		*(int *)found = 1;
	return *(int *)found;
}

/* CUPTI has one subscriber per process. latprof needs it only to flush at
 * cudaDeviceReset; the PyTorch profiler (Kineto) needs it for its own
 * callbacks and loses GPU events without it. So latprof leaves it free in
 * a process that carries Kineto (libtorch_cuda is loaded by the time CUDA
 * starts), and takes it elsewhere only if nobody holds it; activity
 * capture never depends on it. LATPROF_CUDA_SUBSCRIBE=0/1 overrides. */
static void lp_subscribe(void)
{
	/* 0: leave it free, 1: take it if free, else (unset) decide here */
	uint32_t mode = lp_env_u32("LATPROF_CUDA_SUBSCRIBE", 2, 0, 1);
	int kineto = mode == 0;
	CUptiResult r;
	if (mode == 2)
		dl_iterate_phdr(lp_kineto_module, &kineto);
	if (kineto) {
		lp_cupti_status(LP_CUDA_NOTE, 0, 0, 0,
				"CUPTI's subscriber left to the PyTorch profiler: no flush at "
				"cudaDeviceReset");
		return;
	}
	if ((r = lp_cupti.Subscribe(&lp_sub, lp_callback, NULL)) != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			__atomic_or_fetch(&lp_conflicts, LP_CUDA_CONFLICT_SUBSCRIBER,
					  __ATOMIC_RELAXED);
		lp_report(LP_CUDA_NOTE, r, 0,
			  "cuptiSubscribe; capture goes on without the flush at "
			  "cudaDeviceReset");
		return;
	}
	lp_cupti.EnableCallback(1, lp_sub, CUPTI_CB_DOMAIN_RUNTIME_API,
				CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
}

static void lp_start(void)
{
	CUptiResult r;
	int saved = errno;
	lp_core_init(); /* no-op without LATPROF_DIR: then nothing is recorded */
	lp_max_buffers = lp_env_u32("LATPROF_CUDA_BUFFER_MB", LP_DEFAULT_LIMIT_MB, 8, 4096) /
			 (LP_BUF_SIZE >> 20);
	char err[400], msg[480];
	if (lp_cupti_api_load(err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "the CUPTI library could not be loaded: %s", err);
		lp_cupti_status(LP_CUDA_START_FAILED, -1, 0, 0, msg);
		goto out;
	}
	lp_subscribe();
	/* threadId = gettid(), so API calls join the threads table. */
	lp_cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	/* Per-thread buffers (CUPTI's default since 12.x) give every thread
	 * that touches CUDA buffers of its own, each held partly filled until a
	 * flush: 16 such threads reach the 64 MB cap with few records, and the
	 * 17th is refused buffers and loses its records. One set of buffers
	 * shared by the process keeps the cap a bound on memory and on nothing
	 * else; the cost is CUPTI's lock between threads that record at once.
	 * Set before the callbacks and kinds, as cupti_activity.h requires. */
	uint8_t per_thread = 0;
	size_t one = sizeof(per_thread);
	if ((r = lp_cupti.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &one,
					       &per_thread)) != CUPTI_SUCCESS)
		lp_report(LP_CUDA_NOTE, r, 0,
			  "cuptiActivitySetAttribute(PER_THREAD_ACTIVITY_BUFFER); each thread "
			  "holds buffers of its own");
	/* Before any kind is enabled, so every record uses our clock. */
	if ((r = lp_cupti.ActivityRegisterTimestampCallback(lp_cupti_clock)) != CUPTI_SUCCESS) {
		lp_report(LP_CUDA_START_FAILED, r, 0, "cuptiActivityRegisterTimestampCallback");
		goto out;
	}
	if ((r = lp_cupti.ActivityRegisterCallbacks(lp_buf_requested, lp_buf_completed)) !=
	    CUPTI_SUCCESS) {
		lp_report(LP_CUDA_START_FAILED, r, 0, "cuptiActivityRegisterCallbacks");
		goto out;
	}
	int n = lp_enable_kinds();
	if (n < 0)
		goto out;
	lp_cupti.ActivityFlushPeriod(
	    lp_env_u32("LATPROF_CUDA_FLUSH_MS", LP_DEFAULT_FLUSH_MS, 1, 60000));
	lp_flusher_start();
	pthread_atfork(NULL, NULL, lp_atfork_child);
	__atomic_store_n(&lp_started, 1, __ATOMIC_RELEASE);
	atexit(lp_atexit);
	lp_core_on_exit(lp_core_exiting);
	lp_fatal_install();
	lp_cupti_status(LP_CUDA_STARTED, 0, (unsigned)n, (unsigned)lp_driver_version(),
			"CUPTI activity capture started");
out:
	errno = saved;
}

/* Called by the CUDA driver during cuInit; 1 = success (never fail the app). */
LP_EXPORT int InitializeInjection(void)
{
	pthread_once(&lp_once, lp_start);
	return 1;
}
