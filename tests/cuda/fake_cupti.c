/* SPDX-License-Identifier: MIT */
/*
 * A stand-in libcupti.so.13 for a machine without a GPU, so that the
 * collector's own code (liblatprof_cupti.so: start-up order, the buffer
 * callbacks, the buffer limit, dropped counts, the flushes at
 * cudaDeviceReset and at exit) runs as it does under the CUDA driver.
 *
 * The activity-control calls are played here with CUPTI's documented
 * rules; the record-walking and naming calls (cuptiActivityGetNextRecord,
 * cuptiGetResultString, cuptiGetCallbackName) are the real library's,
 * loaded from LP_REAL_CUPTI. The app drives the "GPU" through
 * fake_cupti_emit() and fake_cupti_device_reset(), found with dlsym.
 *
 * Rules it enforces, each failing the way CUPTI does:
 *  - cuptiActivityRegisterTimestampCallback after a kind is enabled:
 *    CUPTI_ERROR_INVALID_OPERATION (the callback must come first);
 *  - a second cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
 * A buffer request answered with size 0 drops that buffer's records; they
 * are reported by cuptiActivityGetNumDroppedRecords, as CUPTI does.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

static CUpti_BuffersCallbackRequestFunc fake_req;
static CUpti_BuffersCallbackCompleteFunc fake_done;
static CUpti_TimestampCallbackFunc fake_clock;
static CUpti_CallbackFunc fake_cb;
static void *fake_cb_data;
static int fake_subscribed, fake_enabled, fake_reset_cb;
static size_t fake_dropped;
static uint32_t fake_corr;

/* The buffer being filled, and full ones "the device" still holds. */
static uint8_t *fake_buf;
static size_t fake_size, fake_used;
static struct {
	uint8_t *buf;
	size_t size, used;
} fake_held[64];
static int fake_nheld;

static void *fake_real(const char *name)
{
	static void *h;
	if (!h)
		h = dlopen(LP_REAL_CUPTI, RTLD_NOW | RTLD_LOCAL);
	return h ? dlsym(h, name) : NULL;
}

FAKE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
	if (fake_subscribed++)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
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

FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	if (fake_enabled)
		return CUPTI_ERROR_INVALID_OPERATION;
	fake_clock = fn;
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						       CUpti_BuffersCallbackCompleteFunc done)
{
	fake_req = req;
	fake_done = done;
	return CUPTI_SUCCESS;
}

/* FAKE_CUPTI_REFUSE_MEMCPY2=1: that kind is not supported, as on some
 * devices, so the collector's "kind failed" path runs too. */
FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	const char *refuse = getenv("FAKE_CUPTI_REFUSE_MEMCPY2");
	if (kind == CUPTI_ACTIVITY_KIND_MEMCPY2 && refuse && *refuse == '1')
		return CUPTI_ERROR_NOT_SUPPORTED;
	fake_enabled++;
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	(void)ms;
	return CUPTI_SUCCESS;
}

static void fake_complete(void)
{
	if (fake_buf)
		fake_done(NULL, 0, fake_buf, fake_size, fake_used);
	fake_buf = NULL;
	fake_size = fake_used = 0;
}

/* A forced flush returns every buffer, held ones first (oldest records). */
FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	for (int i = 0; i < fake_nheld; i++)
		fake_done(NULL, 0, fake_held[i].buf, fake_held[i].size, fake_held[i].used);
	fake_nheld = 0;
	fake_complete();
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
							  size_t *dropped)
{
	(void)ctx;
	(void)stream;
	*dropped = fake_dropped; /* reported once, then reset, as CUPTI does */
	fake_dropped = 0;
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

/* Room for size bytes in the current buffer, asking the collector for a new
 * one when it is full; NULL (record dropped and counted) when it says no. */
static void *fake_room(size_t size, int hold)
{
	if (fake_buf && fake_used + size > fake_size) {
		if (hold && fake_nheld < 64) { /* kept by "the device" until a flush */
			fake_held[fake_nheld].buf = fake_buf;
			fake_held[fake_nheld].size = fake_size;
			fake_held[fake_nheld++].used = fake_used;
			fake_buf = NULL;
		} else {
			fake_complete();
		}
	}
	if (!fake_buf) {
		size_t max = 0;
		fake_req(&fake_buf, &fake_size, &max);
		fake_used = 0;
		if (!fake_buf || fake_size < size) {
			fake_buf = NULL;
			fake_dropped++;
			return NULL;
		}
	}
	void *p = fake_buf + fake_used;
	memset(p, 0, size);
	fake_used += size;
	return p;
}

/*
 * One cudaLaunchKernel and its kernel, n times, stamped with the collector's
 * clock: the API call takes ~1 us, the kernel runs 2-3 us after it. hold:
 * buffers that fill up are held until the next forced flush (a busy device),
 * so the collector's buffer limit is reached. Returns the records written.
 */
FAKE_EXPORT int fake_cupti_emit(int n, int hold)
{
	if (!fake_enabled || !fake_clock)
		return -1;
	int written = 0;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	for (int i = 0; i < n; i++) {
		uint64_t t = fake_clock();
		CUpti_ActivityAPI *a = fake_room(sizeof(*a), hold);
		CUpti_ActivityKernel10 *k = fake_room(sizeof(*k), hold);
		uint32_t c = ++fake_corr;
		if (a) {
			a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
			a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
			a->start = t;
			a->end = t + 1000;
			a->processId = (uint32_t)getpid();
			a->threadId = tid;
			a->correlationId = c;
			written++;
		}
		if (k) {
			k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			k->start = t + 2000;
			k->end = t + 3000;
			k->deviceId = 0;
			k->contextId = 1;
			k->streamId = 7;
			k->gridX = k->gridY = k->gridZ = 1;
			k->blockX = 32, k->blockY = k->blockZ = 1;
			k->correlationId = c;
			k->name = "_Z4tinyx";
			written++;
		}
	}
	return written;
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
	fake_buf = NULL; /* whatever was not flushed is lost, as on a GPU */
	fake_size = fake_used = 0;
	fake_nheld = 0;
}
