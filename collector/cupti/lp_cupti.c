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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_core.h"
#include "lp_cupti.h"
#include "lp_cupti_api.h"
#include "lp_log_cuda.h"

#define LP_BUF_SIZE (4u << 20)	/* CUPTI's own default is 8 MB; smaller flushes sooner */
#define LP_DEFAULT_LIMIT_MB 64u /* issue 4: at most 64 MB of buffers per process */
#define LP_DEFAULT_FLUSH_MS 200u

static pthread_once_t lp_once = PTHREAD_ONCE_INIT;
static CUpti_SubscriberHandle lp_sub;
static int lp_started;
static uint32_t lp_max_buffers;
static uint32_t lp_outstanding;
static uint64_t lp_buffers, lp_denied, lp_dropped;
static uint64_t lp_records, lp_unknown, lp_log_drops;

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

static void CUPTIAPI lp_buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	int saved = errno;
	struct lp_cupti_counts c = {0};
	size_t dropped = 0;
	lp_cupti_translate(buffer, valid, &c);
	if (lp_cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
	    dropped)
		__atomic_add_fetch(&lp_dropped, dropped, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_records, c.records, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_unknown, c.unknown_kinds, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_log_drops, c.log_drops, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lp_buffers, 1, __ATOMIC_RELAXED);
	free(buffer);
	if (buffer)
		__atomic_sub_fetch(&lp_outstanding, 1, __ATOMIC_RELAXED);
	errno = saved;
}

/* Forced flush: hands over partly filled buffers too, then one stats
 * record with the totals (the importer keeps the last one). */
static void lp_flush(void)
{
	if (!__atomic_load_n(&lp_started, __ATOMIC_ACQUIRE))
		return;
	int saved = errno;
	lp_cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	struct lp_cupti_counts c = {
	    .records = __atomic_load_n(&lp_records, __ATOMIC_RELAXED),
	    .unknown_kinds = __atomic_load_n(&lp_unknown, __ATOMIC_RELAXED),
	    .log_drops = __atomic_load_n(&lp_log_drops, __ATOMIC_RELAXED),
	};
	lp_cupti_stats(&c, __atomic_load_n(&lp_dropped, __ATOMIC_RELAXED),
		       __atomic_load_n(&lp_buffers, __ATOMIC_RELAXED),
		       __atomic_load_n(&lp_denied, __ATOMIC_RELAXED));
	errno = saved;
}

static void lp_atexit(void)
{
	lp_flush();
	lp_cupti_status(LP_CUDA_FLUSHED, 0, 0, 0, "exit");
}

/* cudaDeviceReset destroys the context and with it unflushed records. */
static void CUPTIAPI lp_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cb = data;
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
	CUresult (*fn)(int *) = (CUresult(*)(int *))dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
	return fn && fn(&v) == CUDA_SUCCESS ? v : 0;
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
	if ((r = lp_cupti.Subscribe(&lp_sub, lp_callback, NULL)) != CUPTI_SUCCESS) {
		lp_report(LP_CUDA_START_FAILED, r, 0, "cuptiSubscribe");
		goto out;
	}
	lp_cupti.EnableCallback(1, lp_sub, CUPTI_CB_DOMAIN_RUNTIME_API,
				CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
	/* threadId = gettid(), so API calls join the threads table. */
	lp_cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
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
	__atomic_store_n(&lp_started, 1, __ATOMIC_RELEASE);
	atexit(lp_atexit);
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
