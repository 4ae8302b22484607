/* SPDX-License-Identifier: MIT */
/*
 * A stand-in libcupti.so.13 for a machine without a GPU, so that the
 * collector's own code (liblatprof_cupti.so: start-up order, the buffer
 * callbacks and limit, dropped counts, every flush) runs as it does under
 * the CUDA driver, against CUPTI 13's documented behaviour.
 *
 * The activity-control calls are played here; the record-walking and
 * naming calls (cuptiActivityGetNextRecord, cuptiGetResultString,
 * cuptiGetCallbackName) are the real library's, loaded from LP_REAL_CUPTI.
 * The app drives "the GPU" through the fake_cupti_* functions (dlsym).
 *
 * What it models, each as CUPTI's documentation says: the API reference
 * (cupti_activity.h, cupti_callbacks.h of CUDA 13.0; online "CUPTI Activity
 * API", docs.nvidia.com/cupti/api) and the User Guide ("CUPTI
 * Initialization", docs.nvidia.com/cupti/main):
 *  - cuptiActivityRegisterTimestampCallback after a kind is enabled:
 *    CUPTI_ERROR_INVALID_OPERATION (the callback must come first);
 *  - cuptiSubscribe: one subscriber per process (User Guide, "CUPTI
 *    Initialization": "If another CUPTI client is already subscribed,
 *    cuptiSubscribe() will return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_
 *    SUPPORTED"; CUDA 13.3 drivers lift the limit, 13.0 does not): a second
 *    one, or any when FAKE_CUPTI_SUBSCRIBED=1 (another tool holds it), is
 *    refused;
 *  - CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER: default 1, "activity
 *    buffers per-thread": every thread that records gets a buffer of its
 *    own from the buffer-request callback; set before the callbacks;
 *  - buffers reach the client asynchronously on CUPTI's worker thread
 *    ("cuptiActivityFlushPeriod": "CUPTI creates a worker thread ...
 *    delivery of the activity buffers"); "Periodic flush can return only
 *    those activity buffers which are full and have all the activity
 *    records completed";
 *  - cuptiActivityFlushAll(0) returns the buffers whose records are all
 *    completed, full or not; cuptiActivityFlushAll(FLUSH_FORCED) returns
 *    every buffer "including the ones which have one or more incomplete
 *    activity records": a kernel still running has end 0. FlushAll "doesn't
 *    issue any CUDA synchronization calls": only fake_cupti_sync (the
 *    app's cuCtxSynchronize) completes running kernels;
 *  - a buffer request answered with size 0 drops that buffer's records,
 *    reported once by cuptiActivityGetNumDroppedRecords;
 *  - CUDA graphs: every kernel node of a cudaGraphLaunch carries the
 *    launch's correlationId (CUpti_ActivityKernel10.correlationId "identical
 *    to the correlation ID in the driver or runtime API activity record
 *    that launched the kernel"; CUpti_ActivityGraphTrace2: "Each graph
 *    launch is assigned a unique correlation ID"), with graphId and
 *    graphNodeId;
 *  - a second client in the process (the PyTorch profiler) may disable the
 *    kinds, register its own timestamp callback and buffer callbacks: CUPTI
 *    keeps one set of callbacks, so from then on every buffer, including
 *    one the first client supplied, is completed to the second client.
 *  - fork: libcupti's threads do not exist in a fork child; a flush there
 *    never returns (the hang other tools reported).
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_SLOTS 256

struct fbuf {
	uint8_t *buf;
	size_t size, used;
	int incomplete; /* kernels in it still running */
	uint32_t tid;	/* owner thread (per-thread mode), 0 shared */
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc fake_req;
static CUpti_BuffersCallbackCompleteFunc fake_done;
static CUpti_TimestampCallbackFunc fake_clock;
static CUpti_CallbackFunc fake_cb;
static void *fake_cb_data;
static int fake_subscribed, fake_enabled, fake_reset_cb, fake_registered;
static unsigned char fake_kind_on[CUPTI_ACTIVITY_KIND_COUNT]; /* fake_enabled counts them */
static int fake_per_thread = 1, fake_hold;
static unsigned fake_period_ms = 100;
static size_t fake_dropped;
static uint32_t fake_corr, fake_graph_id;
static pid_t fake_pid;

static struct fbuf *fake_cur[FAKE_SLOTS]; /* buffers being filled */
static struct fbuf *fake_full[8192];	  /* full, not yet delivered */
static int fake_nfull;
static struct {
	CUpti_ActivityKernel10 *k;
	uint64_t end;
	struct fbuf *owner;
} fake_running[4096];
static int fake_nrunning;

static void *fake_real(const char *name)
{
	static void *h;
	if (!h)
		h = dlopen(LP_REAL_CUPTI, RTLD_NOW | RTLD_LOCAL);
	return h ? dlsym(h, name) : NULL;
}

static uint32_t fake_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* In a fork child libcupti's worker is gone: block, as reported. */
static void fake_child_hang(void)
{
	if (fake_pid && getpid() != fake_pid)
		for (;;)
			pause();
}

FAKE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
	const char *other = getenv("FAKE_CUPTI_SUBSCRIBED");
	if ((other && *other == '1') || fake_subscribed)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	fake_subscribed = 1;
	*sub = (CUpti_SubscriberHandle)&fake_cb;
	fake_cb = cb;
	fake_cb_data = ud;
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
					    CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	(void)sub;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)
		fake_reset_cb = (int)enable;
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	(void)type;
	return CUPTI_SUCCESS;
}

/* "should be set before registering the buffer callbacks ... and before
 * any of the CUPTI activity kinds are enabled". */
FAKE_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size,
						  void *value)
{
	if (attr != CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER)
		return CUPTI_SUCCESS;
	if (!size || *size != 1 || !value)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (fake_registered || fake_enabled)
		return CUPTI_ERROR_INVALID_OPERATION;
	fake_per_thread = *(uint8_t *)value != 0;
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	if (fake_enabled)
		return CUPTI_ERROR_INVALID_OPERATION;
	fake_clock = fn;
	return CUPTI_SUCCESS;
}

static int fake_complete(const struct fbuf *b)
{
	return b->incomplete == 0 && b->used > 0;
}

/* Takes the buffers to deliver out of the lists (under fake_lock). */
static int fake_take(struct fbuf **out, int max, int forced, int full_only)
{
	int n = 0, keep = 0;
	for (int i = 0; i < fake_nfull; i++) {
		if (n < max && (forced || (!fake_hold && !fake_full[i]->incomplete)))
			out[n++] = fake_full[i];
		else
			fake_full[keep++] = fake_full[i];
	}
	fake_nfull = keep;
	for (int i = 0; !full_only && i < FAKE_SLOTS && n < max; i++) {
		struct fbuf *b = fake_cur[i];
		if (b && (forced || fake_complete(b))) {
			out[n++] = b;
			fake_cur[i] = NULL;
		}
	}
	/* running kernels in a delivered buffer can no longer be completed */
	for (int i = 0; i < fake_nrunning; i++)
		for (int j = 0; j < n; j++)
			if (fake_running[i].owner == out[j])
				fake_running[i].owner = NULL, fake_running[i].k = NULL;
	return n;
}

static void fake_deliver(struct fbuf **v, int n)
{
	for (int i = 0; i < n; i++) {
		fake_done(NULL, 0, v[i]->buf, v[i]->size, v[i]->used);
		free(v[i]);
	}
}

/* CUPTI's worker thread: periodic flush, full and completed buffers only. */
static void *fake_worker(void *arg)
{
	static struct fbuf *v[8192];
	(void)arg;
	for (;;) {
		struct timespec ts = {fake_period_ms / 1000,
				      (long)(fake_period_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&fake_lock);
		int n = fake_take(v, 8192, 0, 1);
		pthread_mutex_unlock(&fake_lock);
		fake_deliver(v, n);
	}
	return NULL;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						       CUpti_BuffersCallbackCompleteFunc done)
{
	pthread_mutex_lock(&fake_lock);
	fake_req = req;
	fake_done = done;
	if (!fake_registered++) {
		pthread_t t;
		fake_pid = getpid();
		pthread_create(&t, NULL, fake_worker, NULL);
		pthread_detach(t);
	}
	pthread_mutex_unlock(&fake_lock);
	return CUPTI_SUCCESS;
}

/* FAKE_CUPTI_REFUSE_MEMCPY2=1: that kind is not supported, as on some
 * devices, so the collector's "kind failed" path runs too. */
FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	const char *refuse = getenv("FAKE_CUPTI_REFUSE_MEMCPY2");
	if (kind == CUPTI_ACTIVITY_KIND_MEMCPY2 && refuse && *refuse == '1')
		return CUPTI_ERROR_NOT_SUPPORTED;
	if ((unsigned)kind < CUPTI_ACTIVITY_KIND_COUNT && !fake_kind_on[kind]) {
		fake_kind_on[kind] = 1;
		fake_enabled++;
	}
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind < CUPTI_ACTIVITY_KIND_COUNT && fake_kind_on[kind]) {
		fake_kind_on[kind] = 0;
		fake_enabled--;
	}
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	fake_period_ms = ms ? ms : 100;
	return CUPTI_SUCCESS;
}

/* FAKE_CUPTI_FLUSH_HANGS=1: a forced flush never returns (a driver stuck
 * on a dead device), so the collector's bound on its exit is tested. */
FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	static struct fbuf *v[8192 + FAKE_SLOTS];
	const char *hang = getenv("FAKE_CUPTI_FLUSH_HANGS");
	fake_child_hang();
	if (hang && *hang == '1' && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))
		for (;;)
			pause();
	pthread_mutex_lock(&fake_lock);
	int n = fake_take(v, 8192 + FAKE_SLOTS, flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, 0);
	pthread_mutex_unlock(&fake_lock);
	fake_deliver(v, n);
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
							  size_t *dropped)
{
	(void)ctx;
	(void)stream;
	pthread_mutex_lock(&fake_lock);
	*dropped = fake_dropped; /* reported once, then reset, as CUPTI does */
	fake_dropped = 0;
	pthread_mutex_unlock(&fake_lock);
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	CUptiResult (*fn)(uint8_t *, size_t, CUpti_Activity **) = (CUptiResult(*)(
	    uint8_t *, size_t, CUpti_Activity **))fake_real("cuptiActivityGetNextRecord");
	return fn ? fn(buf, valid, rec) : CUPTI_ERROR_UNKNOWN;
}

FAKE_EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	CUptiResult (*fn)(CUptiResult, const char **) =
	    (CUptiResult(*)(CUptiResult, const char **))fake_real("cuptiGetResultString");
	return fn ? fn(r, s) : CUPTI_ERROR_UNKNOWN;
}

FAKE_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain dom, uint32_t cbid,
					     const char **name)
{
	CUptiResult (*fn)(CUpti_CallbackDomain, uint32_t, const char **) = (CUptiResult(*)(
	    CUpti_CallbackDomain, uint32_t, const char **))fake_real("cuptiGetCallbackName");
	return fn ? fn(dom, cbid, name) : CUPTI_ERROR_UNKNOWN;
}

/* Room for size bytes in the calling thread's buffer (or the shared one),
 * asking the client for a new one when it is full; NULL (record dropped
 * and counted) when it says no. Under fake_lock. */
static void *fake_room(size_t size, struct fbuf **owner)
{
	uint32_t tid = fake_per_thread ? fake_tid() : 0;
	int slot = -1;
	for (int i = 0; i < FAKE_SLOTS; i++)
		if (fake_cur[i] && fake_cur[i]->tid == tid)
			slot = i;
	struct fbuf *b = slot >= 0 ? fake_cur[slot] : NULL;
	if (b && b->used + size > b->size) {
		if (fake_nfull < 8192)
			fake_full[fake_nfull++] = b;
		else
			free(b); /* not reached by the tests */
		fake_cur[slot] = b = NULL;
	}
	if (!b) {
		uint8_t *p = NULL;
		size_t sz = 0, max = 0;
		fake_req(&p, &sz, &max);
		if (!p || sz < size) {
			fake_dropped++;
			return NULL;
		}
		b = calloc(1, sizeof(*b));
		b->buf = p, b->size = sz, b->tid = tid;
		for (slot = 0; slot < FAKE_SLOTS && fake_cur[slot]; slot++)
			;
		fake_cur[slot] = b;
	}
	void *r = b->buf + b->used;
	memset(r, 0, size);
	b->used += size;
	*owner = b;
	return r;
}

static void fake_api(uint32_t cbid, uint32_t corr, uint64_t t, uint64_t dur)
{
	struct fbuf *o;
	CUpti_ActivityAPI *a = fake_room(sizeof(*a), &o);
	if (!a)
		return;
	a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a->cbid = cbid;
	a->start = t;
	a->end = t + dur;
	a->processId = (uint32_t)getpid();
	a->threadId = fake_tid();
	a->correlationId = corr;
}

/* running: the kernel has not ended when its record is written: end 0
 * until fake_cupti_sync. */
static int fake_kernel(uint32_t corr, uint64_t start, uint64_t end, uint32_t graph, uint64_t node,
		       int running)
{
	struct fbuf *o;
	CUpti_ActivityKernel10 *k = fake_room(sizeof(*k), &o);
	if (!k)
		return 0;
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = start;
	k->end = end;
	k->deviceId = 0;
	k->contextId = 1;
	k->streamId = 7;
	k->gridX = k->gridY = k->gridZ = 1;
	k->blockX = 32, k->blockY = k->blockZ = 1;
	k->correlationId = corr;
	k->graphId = graph;
	k->graphNodeId = node;
	k->name = graph ? "_Z4nodei" : "_Z4tinyx";
	if (running && fake_nrunning < 4096) {
		k->end = 0;
		fake_running[fake_nrunning].k = k;
		fake_running[fake_nrunning].end = end;
		fake_running[fake_nrunning++].owner = o;
		o->incomplete++;
	}
	return 1;
}

/* The DEVICE record CUPTI writes once the kind is enabled and the device
 * is used (CUpti_ActivityDevice5: uuid as the driver reports it). */
static int fake_device(void)
{
	static int done;
	struct fbuf *o;
	if (done++)
		return 0;
	CUpti_ActivityDevice5 *d = fake_room(sizeof(*d), &o);
	if (!d)
		return 0;
	d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d->id = 0;
	d->name = "NVIDIA Fake GPU";
	d->numMultiprocessors = 132;
	d->computeCapabilityMajor = 9;
	for (int i = 0; i < 16; i++)
		d->uuid.bytes[i] = (char)(0xa0 + i);
	return 1;
}

/*
 * One cudaLaunchKernel and its kernel, n times, stamped with the client's
 * clock: the API call takes 1 us, the kernel runs 2-3 us after its start.
 * hold: buffers that fill up stay on "the device" until a forced flush (a
 * busy device), so the collector's buffer limit is reached. running: the
 * last `running` kernels are still running (end 0 until fake_cupti_sync).
 * Returns the records written.
 */
FAKE_EXPORT int fake_cupti_emit_ex(int n, int hold, int running)
{
	if (!fake_enabled || !fake_clock)
		return -1;
	int written = 0;
	pthread_mutex_lock(&fake_lock);
	fake_hold = hold;
	written += fake_device();
	for (int i = 0; i < n; i++) {
		uint64_t t = fake_clock();
		uint32_t c = ++fake_corr;
		size_t before = fake_dropped;
		fake_api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, c, t, 1000);
		written += fake_dropped == before;
		written += fake_kernel(c, t + 2000, t + 3000, 0, 0, i >= n - running);
	}
	pthread_mutex_unlock(&fake_lock);
	return written;
}

FAKE_EXPORT int fake_cupti_emit(int n, int hold)
{
	return fake_cupti_emit_ex(n, hold, 0);
}

/* One cudaGraphLaunch (3 us) of `nodes` one-microsecond kernels back to
 * back, the first 1 us after the call returns, all with its correlation id. */
FAKE_EXPORT int fake_cupti_graph(int nodes)
{
	if (!fake_enabled || !fake_clock)
		return -1;
	pthread_mutex_lock(&fake_lock);
	uint64_t t = fake_clock();
	uint32_t c = ++fake_corr, g = ++fake_graph_id;
	int written = fake_device() + 1;
	fake_api(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, c, t, 3000);
	for (int i = 0; i < nodes; i++) {
		uint64_t s = t + 4000 + (uint64_t)i * 1000;
		written += fake_kernel(c, s, s + 1000, g, (uint64_t)i + 1, 0);
	}
	pthread_mutex_unlock(&fake_lock);
	return written;
}

/* n calls of a noisy query API (cudaGetDevice) of 100 ns each. */
FAKE_EXPORT int fake_cupti_queries(int n)
{
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < n; i++)
		fake_api(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, ++fake_corr, fake_clock(),
			 100);
	pthread_mutex_unlock(&fake_lock);
	return n;
}

/* A driver API call (the app's cuCtxGetCurrent): a DRIVER record of 100 ns
 * when that kind is enabled, as CUPTI traces every driver call. */
FAKE_EXPORT void fake_cupti_driver_call(uint32_t cbid)
{
	struct fbuf *o;
	pthread_mutex_lock(&fake_lock);
	if (fake_kind_on[CUPTI_ACTIVITY_KIND_DRIVER] && fake_clock && fake_req) {
		CUpti_ActivityAPI *a = fake_room(sizeof(*a), &o);
		if (a) {
			uint64_t t = fake_clock();
			a->kind = CUPTI_ACTIVITY_KIND_DRIVER;
			a->cbid = cbid;
			a->start = t;
			a->end = t + 100;
			a->processId = (uint32_t)getpid();
			a->threadId = fake_tid();
			a->correlationId = ++fake_corr;
		}
	}
	pthread_mutex_unlock(&fake_lock);
}

/* What the device does when the host synchronizes: running kernels end. */
FAKE_EXPORT void fake_cupti_sync(void)
{
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < fake_nrunning; i++)
		if (fake_running[i].k) {
			fake_running[i].k->end = fake_running[i].end;
			fake_running[i].owner->incomplete--;
		}
	fake_nrunning = 0;
	pthread_mutex_unlock(&fake_lock);
}

/* What the runtime does on cudaDeviceReset: the subscriber hears of it
 * first (API enter), then the context and its unflushed records go. */
FAKE_EXPORT void fake_cupti_device_reset(void)
{
	CUpti_CallbackData d;
	memset(&d, 0, sizeof(d));
	d.callbackSite = CUPTI_API_ENTER;
	d.functionName = "cudaDeviceReset";
	if (fake_cb && fake_reset_cb)
		fake_cb(fake_cb_data, CUPTI_CB_DOMAIN_RUNTIME_API,
			CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, &d);
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_SLOTS; i++) /* lost, as on a GPU */
		if (fake_cur[i])
			free(fake_cur[i]), fake_cur[i] = NULL;
	for (int i = 0; i < fake_nfull; i++)
		free(fake_full[i]);
	fake_nfull = 0;
	fake_nrunning = 0;
	pthread_mutex_unlock(&fake_lock);
}
