/* SPDX-License-Identifier: MIT */
/*
 * fnd_gpu: GPU findings without a GPU. Run under `latprof run`: real NVTX
 * "request"/"infer" ranges around a busy-wait window, and inside each
 * window the CUPTI activity records a CUDA pipeline would produce (real
 * cupti_activity.h structs, timestamps inside the window) pushed through
 * the collector's translator (lp_cupti_translate) into the event log, so
 * the real importer builds the CUDA tables.
 *
 * The healthy pipeline per request: one pinned async H2D copy on a copy
 * stream overlapping four kernels, a pinned async D2H, one stream sync, a
 * 4 KB synchronous H2D (exempt, as in nsys); the GPU is busy most of the
 * window; the buffer is allocated before serving. Each argument adds one
 * defect: sync-memcpy pageable-memcpy excessive-sync gpu-idle small-kernels
 * no-overlap alloc-in-path.   usage: fnd_gpu [--requests N] [DEFECT...]
 *
 * --pipeline slow|fixed instead emits what samples/cuda/cuda_pipeline
 * produces in its two modes (same ranges, API calls, copy and memory
 * kinds), so tests/gpu/check.py can be checked without a GPU.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lp_core.h"
#include "lp_cupti.h"
#include "lp_log_cuda.h"

struct buf {
	_Alignas(8) uint8_t b[1 << 16];
	size_t len;
};

static uint64_t base; /* window start, ns */
static double last;   /* end of the request's GPU and API work, µs */
static uint32_t corr;
static int d_sync, d_pageable, d_excess, d_idle, d_small, d_nooverlap, d_alloc;

static void *put(struct buf *b, size_t size, CUpti_ActivityKind kind)
{
	void *p = b->b + b->len;
	memset(p, 0, size);
	*(CUpti_ActivityKind *)p = kind;
	b->len += size;
	return p;
}
#define PUT(b, T, kind) ((T *)put(b, sizeof(T), kind))
#define US(x) (base + (uint64_t)((x)*1000.0))

static uint32_t api(struct buf *b, CUpti_CallbackId cbid, double s, double e)
{
	CUpti_ActivityAPI *a = PUT(b, CUpti_ActivityAPI, CUPTI_ACTIVITY_KIND_RUNTIME);
	a->cbid = cbid;
	a->start = US(s);
	a->end = US(e);
	a->processId = (uint32_t)getpid();
	a->threadId = (uint32_t)syscall(SYS_gettid);
	a->correlationId = ++corr;
	return corr;
}

static void kernel(struct buf *b, const char *name, uint32_t c, double s, double e)
{
	CUpti_ActivityKernel10 *k =
	    PUT(b, CUpti_ActivityKernel10, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->start = US(s);
	k->end = US(e);
	k->contextId = 1;
	k->streamId = 7;
	k->gridX = k->gridY = k->gridZ = 1;
	k->blockX = 256, k->blockY = k->blockZ = 1;
	k->correlationId = c;
	k->name = name;
}

static void copy(struct buf *b, uint8_t kind, uint8_t src, uint8_t dst, int async, uint64_t bytes,
		 uint32_t c, double s, double e)
{
	CUpti_ActivityMemcpy6 *m = PUT(b, CUpti_ActivityMemcpy6, CUPTI_ACTIVITY_KIND_MEMCPY);
	m->copyKind = kind;
	m->srcKind = src;
	m->dstKind = dst;
	m->flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m->bytes = bytes;
	m->start = US(s);
	m->end = US(e);
	m->contextId = 1;
	m->streamId = async ? 13 : 7;
	m->correlationId = c;
	m->runtimeCorrelationId = c;
	m->copyCount = 1;
}

static void sync_typed(struct buf *b, CUpti_ActivitySynchronizationType type, uint32_t c, double s,
		       double e)
{
	CUpti_ActivitySynchronization2 *y =
	    PUT(b, CUpti_ActivitySynchronization2, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
	y->type = type;
	y->start = US(s);
	y->end = US(e);
	y->contextId = 1;
	y->streamId = 7;
	y->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	y->correlationId = c;
}

static void sync_rec(struct buf *b, uint32_t c, double s, double e)
{
	sync_typed(b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, c, s, e);
}

static void alloc(struct buf *b, double s)
{
	api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, s, s + 50);
}

enum { H2D = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, D2H = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH };
enum {
	PINNED = CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
	PAGEABLE = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
	DEV = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
};

/* One request's records; offsets in µs from the window start. */
static void request(struct buf *b)
{
	uint32_t c;
	if (d_alloc)
		alloc(b, 10);
	/* input copy: [120, 420] on the GPU */
	if (d_sync)
		c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 100, 430);
	else
		c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 100,
			d_pageable ? 430 : 110);
	copy(b, H2D, d_pageable ? PAGEABLE : PINNED, DEV, !d_sync, 1 << 20, c, 120, 420);
	/* four kernels of 470 µs: overlapping the copy unless no-overlap */
	double k0 = d_nooverlap ? 430 : 130;
	for (int k = 0; k < 4; k++) {
		c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 111 + 4 * k,
			114 + 4 * k);
		kernel(b, "_Z6conv2dPKfPfi", c, k0 + 480 * k, k0 + 480 * k + 470);
	}
	if (d_excess)
		for (int k = 0; k < 4; k++) {
			c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
				200 + 40 * k, 230 + 40 * k);
			sync_rec(b, c, 201 + 40 * k, 229 + 40 * k);
		}
	if (d_small)
		for (int k = 0; k < 40; k++) {
			c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 440 + 8 * k,
				446 + 8 * k);
			kernel(b, "_Z4reluPf", c, k0 + 1920 + 3 * k, k0 + 1922 + 3 * k);
		}
	double end = k0 + 1930 + (d_small ? 125 : 0);
	c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 770, 775);
	copy(b, D2H, DEV, PINNED, 1, 1 << 16, c, end, end + 20);
	c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 776, end + 25);
	sync_rec(b, c, 777, end + 24);
	/* a 4 KB synchronous H2D: exempt from sync-memcpy, like nsys */
	c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, end + 30, end + 40);
	copy(b, H2D, PAGEABLE, DEV, 0, 4096, c, end + 32, end + 38);
	if (d_alloc)
		api(b, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, end + 45, end + 60);
	last = end + 60;
}

static void spin_until(uint64_t t)
{
	while (lp_now() < t)
		;
}

/* cuda_pipeline's three kernels, launched at +a µs, run on the GPU from +g. */
static void pipeline_kernels(struct buf *b, double a, double g)
{
	static const char *const names[] = {"_Z5scalePfif", "_Z8add_biasPfif", "_Z6smoothPfii"};
	for (int k = 0; k < 3; k++) {
		uint32_t c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, a + 4 * k,
				 a + 4 * k + 3);
		kernel(b, names[k], c, g + 40 * k, g + 40 * k + 35);
	}
}

/* An NVTX stage from now to +end µs of the request's window. */
static void stage_end(double end)
{
	spin_until(US(end));
	nvtxRangePop();
}

/* Default mode: pageable cudaMemcpy both ways, cudaDeviceSynchronize. */
static void pipeline_slow(struct buf *b)
{
	nvtxRangePushA("h2d");
	uint32_t c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 1, 300);
	copy(b, H2D, PAGEABLE, DEV, 0, 4 << 20, c, 20, 290);
	stage_end(301);
	nvtxRangePushA("compute");
	pipeline_kernels(b, 302, 320);
	stage_end(316);
	nvtxRangePushA("sync");
	c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 317, 440);
	sync_typed(b, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, c, 318, 439);
	stage_end(441);
	nvtxRangePushA("d2h");
	c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 442, 740);
	copy(b, D2H, DEV, PAGEABLE, 0, 4 << 20, c, 460, 730);
	stage_end(741);
}

/* --fixed: pinned cudaMemcpyAsync both ways; the host does not wait. */
static void pipeline_fixed(struct buf *b)
{
	nvtxRangePushA("h2d");
	uint32_t c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 1, 6);
	copy(b, H2D, PINNED, DEV, 1, 4 << 20, c, 10, 90);
	stage_end(7);
	nvtxRangePushA("compute");
	pipeline_kernels(b, 8, 95);
	stage_end(21);
	nvtxRangePushA("d2h");
	c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 22, 27);
	copy(b, D2H, DEV, PINNED, 1, 4 << 20, c, 220, 300);
	stage_end(28);
}

/* One "sync" range per batch of two requests: a stream sync each. */
static void pipeline_batch_sync(struct buf *b)
{
	nvtxRangePushA("sync");
	base = lp_now();
	for (int k = 0; k < 2; k++) {
		uint32_t c = api(b, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
				 1 + 150 * k, 150 + 150 * k);
		sync_rec(b, c, 2 + 150 * k, 149 + 150 * k);
	}
	stage_end(301);
}

static void pipeline(int requests, int fixed, struct lp_cupti_counts *cnt)
{
	static struct buf b;
	for (int i = 0; i < requests; i++) {
		b.len = 0;
		nvtxRangePushA("request");
		base = lp_now();
		fixed ? pipeline_fixed(&b) : pipeline_slow(&b);
		nvtxRangePop();
		if (fixed && (i % 2 == 1 || i == requests - 1))
			pipeline_batch_sync(&b);
		lp_cupti_translate(b.b, b.len, cnt);
	}
}

int main(int argc, char **argv)
{
	int requests = 40, mode = -1; /* --pipeline: 0 slow, 1 fixed */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--requests") && i + 1 < argc)
			requests = atoi(argv[++i]);
		else if (!strcmp(a, "--pipeline") && i + 1 < argc)
			mode = !strcmp(argv[++i], "fixed") ? 1 : !strcmp(argv[i], "slow") ? 0 : -2;
		else if (!strcmp(a, "sync-memcpy"))
			d_sync = 1;
		else if (!strcmp(a, "pageable-memcpy"))
			d_pageable = 1;
		else if (!strcmp(a, "excessive-sync"))
			d_excess = 1;
		else if (!strcmp(a, "gpu-idle"))
			d_idle = 1;
		else if (!strcmp(a, "small-kernels"))
			d_small = 1;
		else if (!strcmp(a, "no-overlap"))
			d_nooverlap = 1;
		else if (!strcmp(a, "alloc-in-path"))
			d_alloc = 1;
		else
			return fprintf(stderr, "fnd_gpu: unknown argument '%s'\n", a), 2;
	}
	if (mode == -2)
		return fprintf(stderr, "fnd_gpu: --pipeline takes slow or fixed\n"), 2;
	if (lp_core_init())
		return fprintf(stderr, "fnd_gpu: run me under latprof run\n"), 2;
	static struct buf b;
	struct lp_cupti_counts cnt = {0};
	lp_cupti_status(LP_CUDA_STARTED, 0, 10, 13000, "CUPTI activity capture started");
	CUpti_ActivityDevice5 *d = PUT(&b, CUpti_ActivityDevice5, CUPTI_ACTIVITY_KIND_DEVICE);
	d->name = "Synthetic GPU";
	d->numMultiprocessors = 132;
	d->computeCapabilityMajor = 9;
	base = lp_now();
	alloc(&b, 0); /* at start-up, outside requests */
	spin_until(US(100));
	lp_cupti_translate(b.b, b.len, &cnt);
	for (int i = 0; mode < 0 && i < requests; i++) {
		b.len = 0;
		nvtxRangePushA("request");
		nvtxRangePushA("infer");
		base = lp_now();
		request(&b);
		/* the GPU is busy ~90% of the window; gpu-idle: the host takes 8 ms */
		spin_until(US(d_idle ? 8000 : last + 100));
		nvtxRangePop();
		nvtxRangePop();
		lp_cupti_translate(b.b, b.len, &cnt);
	}
	if (mode >= 0)
		pipeline(requests, mode, &cnt);
	lp_cupti_stats(&cnt, 0, (uint64_t)requests + 1, 0, 0);
	printf("records %llu, log drops %llu\n", (unsigned long long)cnt.records,
	       (unsigned long long)cnt.log_drops);
	return cnt.log_drops ? 1 : 0;
}
