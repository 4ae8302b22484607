/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity records -> event-log records (lp_log_cuda.h). Runs on
 * CUPTI's buffer-completion thread (or the thread forcing a flush), never
 * on an app hot path; still allocation-free.
 */
#define _GNU_SOURCE
/* Only the latest struct versions: a CUDA release that moves one of the
 * structs below to cupti_activity_deprecated.h then fails this build
 * instead of misreading records. */
#define _CUPTI_ACTIVITY_DEPRECATED_H_
#include <cupti.h>

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lp_core.h"
#include "lp_cupti.h"
#include "lp_cupti_api.h"
#include "lp_log_cuda.h"

#if CUPTI_API_VERSION < 130000 || CUPTI_API_VERSION >= 140000
#error                                                                                             \
    "collector/cupti reads the CUDA 13 (CUPTI 13.x) activity structs; check them against this CUPTI"
#endif

/* The layouts this file reads, as in CUDA 13.0's cupti_activity.h. Any
 * change means a new struct version: update the translation and these. */
#define LP_AT(T, f, off) _Static_assert(offsetof(T, f) == (off), #T "." #f " moved")
#define LP_SIZE(T, n) _Static_assert(sizeof(T) == (n), #T " changed size")
LP_SIZE(CUpti_ActivityKernel10, 216);
LP_AT(CUpti_ActivityKernel10, registersPerThread, 6);
LP_AT(CUpti_ActivityKernel10, start, 16);
LP_AT(CUpti_ActivityKernel10, end, 24);
LP_AT(CUpti_ActivityKernel10, deviceId, 40);
LP_AT(CUpti_ActivityKernel10, streamId, 48);
LP_AT(CUpti_ActivityKernel10, gridX, 52);
LP_AT(CUpti_ActivityKernel10, blockZ, 72);
LP_AT(CUpti_ActivityKernel10, dynamicSharedMemory, 80);
LP_AT(CUpti_ActivityKernel10, correlationId, 92);
LP_AT(CUpti_ActivityKernel10, name, 104);
LP_AT(CUpti_ActivityKernel10, launchType, 136);
LP_AT(CUpti_ActivityKernel10, graphNodeId, 144);
LP_AT(CUpti_ActivityKernel10, graphId, 156);
LP_SIZE(CUpti_ActivityMemcpy6, 96);
LP_AT(CUpti_ActivityMemcpy6, copyKind, 4);
LP_AT(CUpti_ActivityMemcpy6, flags, 7);
LP_AT(CUpti_ActivityMemcpy6, bytes, 8);
LP_AT(CUpti_ActivityMemcpy6, correlationId, 44);
LP_AT(CUpti_ActivityMemcpy6, runtimeCorrelationId, 48);
LP_AT(CUpti_ActivityMemcpy6, graphId, 72);
LP_SIZE(CUpti_ActivityMemcpyPtoP4, 96);
LP_AT(CUpti_ActivityMemcpyPtoP4, srcDeviceId, 44);
LP_AT(CUpti_ActivityMemcpyPtoP4, dstDeviceId, 52);
LP_AT(CUpti_ActivityMemcpyPtoP4, correlationId, 60);
LP_AT(CUpti_ActivityMemcpyPtoP4, graphId, 80);
LP_SIZE(CUpti_ActivityMemset4, 88);
LP_AT(CUpti_ActivityMemset4, value, 4);
LP_AT(CUpti_ActivityMemset4, correlationId, 44);
LP_AT(CUpti_ActivityMemset4, flags, 48);
LP_AT(CUpti_ActivityMemset4, memoryKind, 50);
LP_AT(CUpti_ActivityMemset4, graphId, 72);
LP_SIZE(CUpti_ActivitySynchronization2, 56);
LP_AT(CUpti_ActivitySynchronization2, correlationId, 24);
LP_AT(CUpti_ActivitySynchronization2, cudaEventSyncId, 40);
LP_AT(CUpti_ActivitySynchronization2, returnValue, 48);
LP_SIZE(CUpti_ActivityAPI, 40);
LP_AT(CUpti_ActivityAPI, threadId, 28);
LP_AT(CUpti_ActivityAPI, returnValue, 36);
LP_SIZE(CUpti_ActivityOverhead3, 56);
LP_AT(CUpti_ActivityOverhead3, start, 24);
LP_AT(CUpti_ActivityOverhead3, correlationId, 40);
LP_SIZE(CUpti_ActivityMemory4, 128);
LP_AT(CUpti_ActivityMemory4, correlationId, 12);
LP_AT(CUpti_ActivityMemory4, timestamp, 32);
LP_AT(CUpti_ActivityMemory4, streamId, 60);
LP_AT(CUpti_ActivityMemory4, isAsync, 72);
LP_SIZE(CUpti_ActivityDevice5, 184);
LP_AT(CUpti_ActivityDevice5, numMultiprocessors, 44);
LP_AT(CUpti_ActivityDevice5, computeCapabilityMajor, 104);
LP_AT(CUpti_ActivityDevice5, name, 136);
LP_AT(CUpti_ActivityDevice5, uuid, 120);
LP_AT(CUpti_ActivityDevice5, isMigEnabled, 145);
LP_AT(CUpti_ActivityDevice5, migUuid, 160);

/* Interned API names, per domain and callback id (ids are small, dense). */
#define LP_CBID_CACHE 2048
static uint32_t lp_api_names[2][LP_CBID_CACHE];

static uint32_t lp_api_name(int driver, uint32_t cbid)
{
	uint32_t *slot = cbid < LP_CBID_CACHE ? &lp_api_names[driver][cbid] : NULL;
	uint32_t id = slot ? __atomic_load_n(slot, __ATOMIC_RELAXED) : 0;
	if (id)
		return id;
	const char *name = NULL;
	CUpti_CallbackDomain dom =
	    driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	if (lp_cupti.GetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
		return 0;
	id = lp_intern_string(name, strlen(name));
	if (slot)
		__atomic_store_n(slot, id, __ATOMIC_RELAXED);
	return id;
}

static uint32_t lp_str(const char *s)
{
	return s ? lp_intern_string(s, strnlen(s, 4000)) : 0;
}

/* Each tr_* returns 0, or -ENOSPC when the log refused the record. */
#define LP_BEGIN(var, type, aux)                                                                   \
	struct type *var = lp_rec_begin(LP_##type##_ID, (aux), sizeof(struct type));               \
	if (!var)                                                                                  \
		return -ENOSPC;                                                                    \
	memset(var, 0, sizeof(*var))

#define LP_lp_rec_cuda_kernel_ID LP_REC_CUDA_KERNEL
#define LP_lp_rec_cuda_memcpy_ID LP_REC_CUDA_MEMCPY
#define LP_lp_rec_cuda_memset_ID LP_REC_CUDA_MEMSET
#define LP_lp_rec_cuda_sync_ID LP_REC_CUDA_SYNC
#define LP_lp_rec_cuda_api_ID LP_REC_CUDA_API
#define LP_lp_rec_cuda_overhead_ID LP_REC_CUDA_OVERHEAD
#define LP_lp_rec_cuda_memory_ID LP_REC_CUDA_MEMORY
#define LP_lp_rec_cuda_device_ID LP_REC_CUDA_DEVICE

static int lp_tr_kernel(const CUpti_ActivityKernel10 *k)
{
	uint32_t name = lp_str(k->name); /* before begin: interning writes a record */
	LP_BEGIN(r, lp_rec_cuda_kernel, 0);
	r->start = k->start;
	r->end = k->end;
	r->graph_node_id = k->graphNodeId;
	r->device = k->deviceId;
	r->context = k->contextId;
	r->stream = k->streamId;
	r->correlation = k->correlationId;
	r->grid[0] = k->gridX, r->grid[1] = k->gridY, r->grid[2] = k->gridZ;
	r->block[0] = k->blockX, r->block[1] = k->blockY, r->block[2] = k->blockZ;
	r->static_smem = k->staticSharedMemory;
	r->dynamic_smem = k->dynamicSharedMemory;
	r->name = name;
	r->graph_id = k->graphId;
	r->registers = k->registersPerThread;
	r->launch_type = k->launchType;
	lp_rec_commit();
	return 0;
}

static int lp_tr_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	LP_BEGIN(r, lp_rec_cuda_memcpy, 0);
	r->start = m->start;
	r->end = m->end;
	r->bytes = m->bytes;
	r->device = r->src_device = r->dst_device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->correlation = m->correlationId;
	r->runtime_correlation = m->runtimeCorrelationId;
	r->graph_id = m->graphId;
	r->copy_kind = m->copyKind;
	r->src_kind = m->srcKind;
	r->dst_kind = m->dstKind;
	r->flags = m->flags;
	lp_rec_commit();
	return 0;
}

static int lp_tr_p2p(const CUpti_ActivityMemcpyPtoP4 *m)
{
	LP_BEGIN(r, lp_rec_cuda_memcpy, LP_CUDA_MEMCPY_P2P);
	r->start = m->start;
	r->end = m->end;
	r->bytes = m->bytes;
	r->device = m->deviceId;
	r->src_device = m->srcDeviceId;
	r->dst_device = m->dstDeviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->correlation = m->correlationId;
	r->graph_id = m->graphId;
	r->copy_kind = m->copyKind;
	r->src_kind = m->srcKind;
	r->dst_kind = m->dstKind;
	r->flags = m->flags;
	lp_rec_commit();
	return 0;
}

static int lp_tr_memset(const CUpti_ActivityMemset4 *m)
{
	LP_BEGIN(r, lp_rec_cuda_memset, 0);
	r->start = m->start;
	r->end = m->end;
	r->bytes = m->bytes;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->correlation = m->correlationId;
	r->value = m->value;
	r->flags = m->flags;
	r->memory_kind = m->memoryKind;
	r->graph_id = m->graphId;
	lp_rec_commit();
	return 0;
}

static int lp_tr_sync(const CUpti_ActivitySynchronization2 *s)
{
	LP_BEGIN(r, lp_rec_cuda_sync, 0);
	r->start = s->start;
	r->end = s->end;
	r->event_sync_id = s->cudaEventSyncId;
	r->type = (uint32_t)s->type;
	r->context = s->contextId;
	r->stream = s->streamId;
	r->correlation = s->correlationId;
	r->event = s->cudaEventId;
	r->return_value = s->returnValue;
	lp_rec_commit();
	return 0;
}

/* Calls a program makes by the thousand per request to ask what it already
 * knows (the current device or context, the last error), each cheaper than
 * the record that would describe it: counted per API, not recorded one by
 * one, as Kineto leaves them out. Their time still shows in the calling
 * thread's on-CPU time. */
static const struct {
	uint8_t driver;
	uint16_t cbid;
} lp_filtered_apis[] = {
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000},
    {1, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent},
    {1, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice},
    {1, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing},
    {1, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress},
    {1, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2},
};
#define LP_NFILTERED (sizeof(lp_filtered_apis) / sizeof(lp_filtered_apis[0]))
static uint64_t lp_filtered_calls[LP_NFILTERED], lp_filtered_ns[LP_NFILTERED];

/* The collector's own threads (the flush thread, the synchronize threads):
 * their driver calls are latprof's, not the app's. */
#define LP_OWN_MAX 8
static uint32_t lp_own_tids[LP_OWN_MAX];
static uint64_t lp_probe_seen;

void lp_cupti_own_thread(uint32_t tid)
{
	for (size_t i = 0; i < LP_OWN_MAX; i++) {
		uint32_t none = 0;
		if (__atomic_compare_exchange_n(&lp_own_tids[i], &none, tid, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) ||
		    none == tid)
			return;
	}
}

uint64_t lp_cupti_probe_seen(void)
{
	return __atomic_load_n(&lp_probe_seen, __ATOMIC_ACQUIRE);
}

/* 1: a filtered call (counted), 2: one of the collector's own (the final
 * flush's probe counted apart), 0: an app call to record. */
static int lp_filtered(const CUpti_ActivityAPI *a, int driver)
{
	for (size_t i = 0; i < LP_OWN_MAX; i++) {
		uint32_t own = __atomic_load_n(&lp_own_tids[i], __ATOMIC_ACQUIRE);
		if (!own)
			break;
		if (a->threadId != own)
			continue;
		if (driver && a->cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent)
			__atomic_add_fetch(&lp_probe_seen, 1, __ATOMIC_RELEASE);
		return 2; /* neither recorded nor counted as the app's */
	}
	for (size_t i = 0; i < LP_NFILTERED; i++)
		if (lp_filtered_apis[i].driver == driver && lp_filtered_apis[i].cbid == a->cbid) {
			__atomic_add_fetch(&lp_filtered_calls[i], 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&lp_filtered_ns[i], a->end - a->start, __ATOMIC_RELAXED);
			return 1;
		}
	return 0;
}

void lp_cupti_api_counts(void)
{
	for (size_t i = 0; i < LP_NFILTERED; i++) {
		uint64_t n = __atomic_load_n(&lp_filtered_calls[i], __ATOMIC_RELAXED);
		if (!n)
			continue;
		int driver = lp_filtered_apis[i].driver;
		uint32_t name = lp_api_name(driver, lp_filtered_apis[i].cbid);
		struct lp_rec_cuda_api_count *r =
		    lp_rec_begin(LP_REC_CUDA_API_COUNT,
				 driver ? LP_CUDA_API_DRIVER : LP_CUDA_API_RUNTIME, sizeof(*r));
		if (!r)
			return;
		r->calls = n;
		r->total_ns = __atomic_load_n(&lp_filtered_ns[i], __ATOMIC_RELAXED);
		r->cbid = lp_filtered_apis[i].cbid;
		r->name = name;
		lp_rec_commit();
	}
}

static int lp_tr_api(const CUpti_ActivityAPI *a, int driver)
{
	uint32_t name = lp_api_name(driver, (uint32_t)a->cbid);
	LP_BEGIN(r, lp_rec_cuda_api, driver ? LP_CUDA_API_DRIVER : LP_CUDA_API_RUNTIME);
	r->start = a->start;
	r->end = a->end;
	r->cbid = (uint32_t)a->cbid;
	r->name = name;
	r->tid = a->threadId;
	r->pid = a->processId;
	r->correlation = a->correlationId;
	r->return_value = a->returnValue;
	lp_rec_commit();
	return 0;
}

static int lp_tr_overhead(const CUpti_ActivityOverhead3 *o)
{
	LP_BEGIN(r, lp_rec_cuda_overhead, 0);
	r->start = o->start;
	r->end = o->end;
	r->kind = (uint32_t)o->overheadKind;
	r->object_kind = (uint32_t)o->objectKind;
	r->object_id = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
			       o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
			   ? o->objectId.pt.threadId
			   : o->objectId.dcs.deviceId;
	r->correlation = o->correlationId;
	lp_rec_commit();
	return 0;
}

static int lp_tr_memory(const CUpti_ActivityMemory4 *m)
{
	LP_BEGIN(r, lp_rec_cuda_memory, 0);
	r->ts = m->timestamp;
	r->address = m->address;
	r->bytes = m->bytes;
	r->op = (uint32_t)m->memoryOperationType;
	r->memory_kind = (uint32_t)m->memoryKind;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->correlation = m->correlationId;
	r->is_async = m->isAsync;
	lp_rec_commit();
	return 0;
}

void *lp_cupti_driver_sym(const char *name)
{
	static void *drv;
	if (!drv)
		drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = drv ? dlsym(drv, name) : NULL;
	return fn ? fn : dlsym(RTLD_DEFAULT, name);
}

/* "0000:17:00.0" from the driver: with the UUID, what tells apart two
 * ranks that each see their GPU as device 0 (CUDA_VISIBLE_DEVICES). */
static void lp_device_pci(uint32_t ordinal, struct lp_rec_cuda_device *r)
{
	CUresult (*get)(CUdevice *, int) =
	    (CUresult(*)(CUdevice *, int))lp_cupti_driver_sym("cuDeviceGet");
	CUresult (*bus)(char *, int, CUdevice) =
	    (CUresult(*)(char *, int, CUdevice))lp_cupti_driver_sym("cuDeviceGetPCIBusId");
	CUdevice dev;
	char id[32] = "";
	unsigned dom, b, d;
	if (get && bus && get(&dev, (int)ordinal) == CUDA_SUCCESS &&
	    bus(id, (int)sizeof(id), dev) == CUDA_SUCCESS &&
	    sscanf(id, "%x:%x:%x", &dom, &b, &d) == 3) {
		r->pci_domain = dom, r->pci_bus = b, r->pci_device = d;
		r->flags |= LP_CUDA_DEVICE_PCI;
	}
}

static int lp_tr_device(const CUpti_ActivityDevice5 *d)
{
	uint32_t name = lp_str(d->name);
	struct lp_rec_cuda_device pci = {0};
	lp_device_pci(d->id, &pci); /* before begin: no driver call inside a record */
	LP_BEGIN(r, lp_rec_cuda_device, 0);
	r->global_memory = d->globalMemorySize;
	r->memory_bandwidth = d->globalMemoryBandwidth;
	r->id = d->id;
	r->sm_count = d->numMultiprocessors;
	r->cc_major = d->computeCapabilityMajor;
	r->cc_minor = d->computeCapabilityMinor;
	r->core_clock_khz = d->coreClockRate;
	r->name = name;
	r->flags = pci.flags;
	r->pci_domain = pci.pci_domain, r->pci_bus = pci.pci_bus, r->pci_device = pci.pci_device;
	if (d->isMigEnabled) {
		memcpy(r->uuid, d->migUuid.bytes, sizeof(r->uuid));
		r->flags |= LP_CUDA_DEVICE_MIG;
	} else {
		memcpy(r->uuid, d->uuid.bytes, sizeof(r->uuid));
	}
	lp_rec_commit();
	return 0;
}

/* A forced flush hands over records still being filled: a kernel still
 * running comes back with end (or start) 0 (cuptiActivityFlushAll, "forced
 * flush"). Such a record, or one whose end precedes its start, has no
 * duration to give; it is dropped here and counted, never imported as a
 * kernel that ran from 0 to now. A timestamp past `limit` (the time the
 * buffer was read plus a minute) came from another client's timestamp
 * callback, not from latprof's clock: dropped and counted too. */
static int lp_ts_check(uint64_t start, uint64_t end, uint64_t limit, struct lp_cupti_counts *c)
{
	if (!start || !end || end < start) {
		c->bad_ts++;
		return 1;
	}
	if (end > limit) {
		c->foreign_ts++;
		return 1;
	}
	return 0;
}

#define LP_TS(T, a, s, e) lp_ts_check(((const T *)(a))->s, ((const T *)(a))->e, limit, c)

/* 0 translated, 1 skipped (counted in c), -ENOSPC the log refused it. */
static int lp_tr_one(const CUpti_Activity *a, uint64_t limit, struct lp_cupti_counts *c)
{
	int bad = 0;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		bad = LP_TS(CUpti_ActivityKernel10, a, start, end);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		bad = LP_TS(CUpti_ActivityMemcpy6, a, start, end);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		bad = LP_TS(CUpti_ActivityMemcpyPtoP4, a, start, end);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		bad = LP_TS(CUpti_ActivityMemset4, a, start, end);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		bad = LP_TS(CUpti_ActivitySynchronization2, a, start, end);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		bad = LP_TS(CUpti_ActivityAPI, a, start, end);
		if (!bad) {
			int f = lp_filtered((const CUpti_ActivityAPI *)a,
					    a->kind == CUPTI_ACTIVITY_KIND_DRIVER);
			c->filtered += f == 1;
			if (f)
				return 1;
		}
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		bad = LP_TS(CUpti_ActivityOverhead3, a, start, end);
		break;
	default:
		break;
	}
	if (bad)
		return 1;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return lp_tr_kernel((const CUpti_ActivityKernel10 *)a);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return lp_tr_memcpy((const CUpti_ActivityMemcpy6 *)a);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return lp_tr_p2p((const CUpti_ActivityMemcpyPtoP4 *)a);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return lp_tr_memset((const CUpti_ActivityMemset4 *)a);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return lp_tr_sync((const CUpti_ActivitySynchronization2 *)a);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return lp_tr_api((const CUpti_ActivityAPI *)a, 0);
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return lp_tr_api((const CUpti_ActivityAPI *)a, 1);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return lp_tr_overhead((const CUpti_ActivityOverhead3 *)a);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return lp_tr_memory((const CUpti_ActivityMemory4 *)a);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return lp_tr_device((const CUpti_ActivityDevice5 *)a);
	default:
		c->unknown_kinds++;
		return 1;
	}
}

uint64_t lp_cupti_translate(uint8_t *buf, size_t valid, struct lp_cupti_counts *c)
{
	CUpti_Activity *a = NULL;
	uint64_t seen = 0, limit = lp_now() + 60ull * 1000000000ull;
	if (!buf || !valid || lp_cupti_api_load(NULL, 0))
		return 0;
	while (lp_cupti.ActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS) {
		int rc = lp_tr_one(a, limit, c);
		seen++;
		if (rc == 0)
			c->records++;
		else if (rc < 0)
			c->log_drops++;
	}
	return seen;
}

void lp_cupti_status(unsigned phase, int code, unsigned detail, unsigned driver_version,
		     const char *msg)
{
	size_t len = msg ? strnlen(msg, 1000) : 0;
	struct lp_rec_cuda_status *r =
	    lp_rec_begin(LP_REC_CUDA_STATUS, (uint32_t)len, sizeof(*r) + len);
	if (!r)
		return;
	memset(r, 0, sizeof(*r));
	r->ts = lp_now();
	r->code = code;
	r->phase = phase;
	r->detail = detail;
	r->driver_version = driver_version;
	if (len)
		memcpy(r + 1, msg, len);
	lp_rec_commit();
}

void lp_cupti_stats(const struct lp_cupti_counts *c, uint64_t dropped, uint64_t buffers,
		    uint64_t denied, uint32_t conflicts)
{
	struct lp_rec_cuda_stats *r = lp_rec_begin(LP_REC_CUDA_STATS, 0, sizeof(*r));
	if (!r)
		return;
	r->ts = lp_now();
	r->records = c->records;
	r->dropped = dropped;
	r->unknown_kinds = c->unknown_kinds;
	r->log_drops = c->log_drops;
	r->buffers = buffers;
	r->buffer_denied = denied;
	r->bad_ts = c->bad_ts;
	r->foreign_ts = c->foreign_ts;
	r->filtered = c->filtered;
	r->conflicts = conflicts | (denied ? LP_CUDA_CONFLICT_BUFFERS : 0);
	r->pad = 0;
	lp_rec_commit();
}
