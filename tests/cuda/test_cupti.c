/* SPDX-License-Identifier: MIT */
/*
 * CUPTI path without a GPU: activity buffers built from the real
 * cupti_activity.h structs go through the collector's translator
 * (lp_cupti_translate, the buffer-completed path) into a real event log,
 * which the real importer turns into SQLite; the rows and the CUDA
 * analysis are checked against what was put in.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lp_core.h"
#include "lp_cuda.h"
#include "lp_cupti.h"
#include "lp_locks.h"
#include "lp_log_cuda.h"
#include "lp_check.h"

/* A buffer of records laid out as CUPTI lays them: back to back, each the
 * size of its (latest) struct. */
struct buf {
	_Alignas(8) uint8_t b[1 << 14];
	size_t len;
};

static void *put(struct buf *b, size_t size, CUpti_ActivityKind kind)
{
	void *p = b->b + b->len;
	memset(p, 0, size);
	*(CUpti_ActivityKind *)p = kind;
	b->len += size;
	return p;
}
#define PUT(b, T, kind) ((T *)put(b, sizeof(T), kind))

static uint32_t tid_self(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

#define T0 1000000000ull /* base timestamp, ns */

static void api(struct buf *b, int driver, CUpti_CallbackId cbid, uint32_t corr, uint64_t s,
		uint64_t e)
{
	CUpti_ActivityAPI *a =
	    PUT(b, CUpti_ActivityAPI,
		driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME);
	a->cbid = cbid;
	a->start = T0 + s;
	a->end = T0 + e;
	a->processId = (uint32_t)getpid();
	a->threadId = tid_self();
	a->correlationId = corr;
}

static void kernel(struct buf *b, const char *name, uint32_t corr, uint64_t s, uint64_t e)
{
	CUpti_ActivityKernel10 *k =
	    PUT(b, CUpti_ActivityKernel10, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->start = T0 + s;
	k->end = T0 + e;
	k->deviceId = 0;
	k->contextId = 1;
	k->streamId = 7;
	k->gridX = 4096, k->gridY = 1, k->gridZ = 1;
	k->blockX = 256, k->blockY = 1, k->blockZ = 1;
	k->registersPerThread = 16;
	k->correlationId = corr;
	k->name = name;
}

static void memcpy_rec(struct buf *b, uint8_t kind, uint8_t src, uint8_t dst, int async,
		       uint64_t bytes, uint32_t corr, uint64_t s, uint64_t e)
{
	CUpti_ActivityMemcpy6 *m = PUT(b, CUpti_ActivityMemcpy6, CUPTI_ACTIVITY_KIND_MEMCPY);
	m->copyKind = kind;
	m->srcKind = src;
	m->dstKind = dst;
	m->flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m->bytes = bytes;
	m->start = T0 + s;
	m->end = T0 + e;
	m->contextId = 1;
	m->streamId = async ? 13 : 7;
	m->correlationId = corr;
	m->runtimeCorrelationId = corr;
	m->copyCount = 1;
}

/* The pipeline of one request, slow form: sync pageable copy, two kernel
 * launches, context sync, copy back. Plus one of everything else. */
static void fill(struct buf *b)
{
	CUpti_ActivityDevice5 *d = PUT(b, CUpti_ActivityDevice5, CUPTI_ACTIVITY_KIND_DEVICE);
	d->id = 0;
	d->name = "NVIDIA Test GPU";
	d->numMultiprocessors = 132;
	d->globalMemorySize = 80ull << 30;
	d->computeCapabilityMajor = 9;
	d->computeCapabilityMinor = 0;
	d->coreClockRate = 1980000;

	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 1, 0, 5000);
	api(b, 1, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, 1, 100, 4900);
	memcpy_rec(b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
		   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, 4 << 20, 1, 1000, 4800);
	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 2, 6000, 6500);
	kernel(b, "_Z5scalePfif", 2, 7000, 9000);
	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 3, 6600, 7000);
	kernel(b, "_Z5scalePfif", 3, 9100, 13100);
	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 4, 7100, 7300);
	kernel(b, "plain_c_kernel", 4, 13200, 13300);
	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 5, 7400, 13500);
	CUpti_ActivitySynchronization2 *y =
	    PUT(b, CUpti_ActivitySynchronization2, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
	y->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	y->start = T0 + 7450;
	y->end = T0 + 13450;
	y->contextId = 1;
	y->streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	y->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	y->correlationId = 5;
	/* the fixed form: pinned async copy */
	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 6, 14000, 14200);
	memcpy_rec(b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
		   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1, 4 << 20, 6, 14300, 14700);
	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 7, 15000, 16000);
	memcpy_rec(b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		   CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 0, 1 << 20, 7, 15100, 15900);
	CUpti_ActivityMemcpyPtoP4 *p =
	    PUT(b, CUpti_ActivityMemcpyPtoP4, CUPTI_ACTIVITY_KIND_MEMCPY2);
	p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p->srcKind = p->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p->bytes = 1 << 16;
	p->start = T0 + 16100;
	p->end = T0 + 16200;
	p->deviceId = 0;
	p->srcDeviceId = 0;
	p->dstDeviceId = 1;
	p->correlationId = 8;
	api(b, 0, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, 9, 16300, 16400);
	CUpti_ActivityMemset4 *ms = PUT(b, CUpti_ActivityMemset4, CUPTI_ACTIVITY_KIND_MEMSET);
	ms->value = 0xab;
	ms->bytes = 4096;
	ms->start = T0 + 16500;
	ms->end = T0 + 16600;
	ms->correlationId = 9;
	ms->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	CUpti_ActivityOverhead3 *o = PUT(b, CUpti_ActivityOverhead3, CUPTI_ACTIVITY_KIND_OVERHEAD);
	o->overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o->objectId.pt.processId = (uint32_t)getpid();
	o->objectId.pt.threadId = tid_self();
	o->start = T0 + 17000;
	o->end = T0 + 17250;
	CUpti_ActivityMemory4 *mem = PUT(b, CUpti_ActivityMemory4, CUPTI_ACTIVITY_KIND_MEMORY2);
	mem->memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mem->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mem->address = 0x7f0000000000ull;
	mem->bytes = 4 << 20;
	mem->timestamp = T0 + 50;
	mem->correlationId = 10;
	/* a kind the collector does not translate: skipped and counted */
	CUpti_ActivityName *n = PUT(b, CUpti_ActivityName, CUPTI_ACTIVITY_KIND_NAME);
	n->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	n->name = "worker";
}

static int64_t q(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		printf("SQL error: %s: %s\n", sql, sqlite3_errmsg(db));
		lp_check_failures++;
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static const char *qs(sqlite3 *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st;
	buf[0] = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(buf, len, "%s", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	} else {
		printf("SQL error: %s: %s\n", sql, sqlite3_errmsg(db));
		lp_check_failures++;
	}
	return buf;
}

static int import(const char *dir, const char *out)
{
	const char *lp = getenv("LATPROF");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' import '%s' -o '%s' --force", lp ? lp : "latprof", dir,
		 out);
	int rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

/* Child process: write the log, exit. */
static int record(const char *dir, uint64_t *seen, struct lp_cupti_counts *c)
{
	static struct buf b1, b2;
	setenv("LATPROF_DIR", dir, 1);
	if (lp_core_init())
		return -1;
	fill(&b1);
	*seen = lp_cupti_translate(b1.b, b1.len, c);
	/* a second buffer, like a later flush, with one more launch */
	api(&b2, 0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, 20000, 20100);
	kernel(&b2, "_Z5scalePfif", 11, 20500, 21500);
	*seen += lp_cupti_translate(b2.b, b2.len, c);
	/* a forced flush's buffer: a kernel still running (end 0), one whose
	 * end precedes its start, a call stamped by another client's clock (an
	 * hour past now), and a query API that is counted, not recorded */
	static struct buf b3;
	kernel(&b3, "_Z5scalePfif", 12, 22000, 0);
	((CUpti_ActivityKernel10 *)b3.b)->end = 0;
	kernel(&b3, "_Z5scalePfif", 13, 23000, 22500);
	api(&b3, 0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 14, 0, 100);
	((CUpti_ActivityAPI *)(b3.b + 2 * sizeof(CUpti_ActivityKernel10)))->start =
	    lp_now() + 3600ull * 1000000000ull;
	((CUpti_ActivityAPI *)(b3.b + 2 * sizeof(CUpti_ActivityKernel10)))->end =
	    lp_now() + 3600ull * 1000000000ull + 100;
	api(&b3, 0, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 15, 24000, 24250);
	*seen += lp_cupti_translate(b3.b, b3.len, c);
	lp_cupti_api_counts();
	lp_cupti_status(LP_CUDA_STARTED, 0, 10, 13000, "CUPTI activity capture started");
	lp_cupti_stats(c, 7 /* as cuptiActivityGetNumDroppedRecords would report */, 2, 0, 0);
	lp_core_exit(0, LP_EXIT_RETURN);
	return 0;
}

static void test_rows(sqlite3 *db)
{
	char s[512];
	CHECK(q(db, "SELECT count(*) FROM kernels") == 4, "4 kernels");
	CHECK(!strcmp(qs(db,
			 "SELECT s.value FROM kernels k JOIN strings s ON s.id = k.name_id "
			 "WHERE correlation_id = 2",
			 s, sizeof(s)),
		      "scale(float*, int, float)"),
	      "kernel name demangled: %s", s);
	CHECK(!strcmp(qs(db,
			 "SELECT s.value FROM kernels k JOIN strings s ON s.id = k.mangled_id "
			 "WHERE correlation_id = 2",
			 s, sizeof(s)),
		      "_Z5scalePfif"),
	      "mangled name kept: %s", s);
	CHECK(!strcmp(qs(db,
			 "SELECT s.value FROM kernels k JOIN strings s ON s.id = k.name_id "
			 "WHERE correlation_id = 4",
			 s, sizeof(s)),
		      "plain_c_kernel"),
	      "C kernel name as is: %s", s);
	CHECK(q(db, "SELECT grid_x * block_x + stream * 1000000 + registers FROM kernels WHERE "
		    "correlation_id = 3") == 4096 * 256 + 7000000 + 16,
	      "grid, block, stream, registers");
	CHECK(q(db, "SELECT dur_ns FROM kernels WHERE correlation_id = 3") == 4000,
	      "kernel duration");
	CHECK(q(db, "SELECT start_ns FROM kernels WHERE correlation_id = 2") == (int64_t)T0 + 7000,
	      "timestamps kept (one clock with the CPU side)");

	CHECK(q(db, "SELECT count(*) FROM memcpys") == 4, "4 memcpys (incl. peer-to-peer)");
	CHECK(q(db, "SELECT count(*) FROM memcpys WHERE copy_kind = 'HtoD' AND src_kind = "
		    "'pageable' AND dst_kind = 'device' AND async = 0 AND bytes = 4194304") == 1,
	      "sync pageable HtoD");
	CHECK(q(db, "SELECT count(*) FROM memcpys WHERE copy_kind = 'HtoD' AND src_kind = "
		    "'pinned' AND async = 1 AND stream = 13") == 1,
	      "async pinned HtoD");
	CHECK(q(db, "SELECT count(*) FROM memcpys WHERE copy_kind = 'DtoH' AND dst_kind = "
		    "'pageable' AND async = 0") == 1,
	      "sync DtoH into pageable");
	CHECK(q(db, "SELECT src_device * 10 + dst_device FROM memcpys WHERE copy_kind = 'PtoP'") ==
		  1,
	      "P2P source and destination devices");
	CHECK(q(db, "SELECT value FROM memsets WHERE bytes = 4096 AND memory_kind = 'device'") ==
		  0xab,
	      "memset");
	CHECK(q(db, "SELECT count(*) FROM syncs WHERE type = 'context_synchronize' AND stream IS "
		    "NULL AND event IS NULL AND dur_ns = 6000") == 1,
	      "context synchronization, no stream/event");

	CHECK(q(db, "SELECT count(*) FROM cuda_api WHERE domain = 'runtime'") == 9,
	      "9 runtime calls");
	CHECK(q(db, "SELECT count(*) FROM cuda_api WHERE domain = 'driver'") == 1, "1 driver call");
	CHECK(!strcmp(qs(db,
			 "SELECT s.value FROM cuda_api a JOIN strings s ON s.id = a.name_id "
			 "WHERE correlation_id = 2",
			 s, sizeof(s)),
		      "cudaLaunchKernel_v7000"),
	      "API name from cuptiGetCallbackName: %s", s);
	/* the recording child called from its main thread: tid = pid */
	CHECK(q(db, "SELECT count(*) FROM cuda_api a JOIN threads t ON t.id = a.thread_id JOIN "
		    "processes p ON p.id = t.process_id WHERE t.tid = p.pid") == 10,
	      "API calls belong to the calling thread (threads.tid)");

	CHECK(q(db, "SELECT count(*) FROM gpu_launches") == 8,
	      "every GPU op with a launch call "
	      "joins its API call by correlation id");
	CHECK(q(db, "SELECT api_name = 'cudaMemcpy_v3020' FROM gpu_launches WHERE correlation_id = "
		    "1") == 1,
	      "a copy joins the runtime call, not the nested driver call");
	CHECK(q(db, "SELECT launch_delay_ns FROM gpu_launches WHERE correlation_id = 2") == 500,
	      "launch delay = GPU start - API end");
	CHECK(q(db, "SELECT count(*) FROM gpu_launches WHERE start_ns < api_start_ns") == 0,
	      "no GPU op starts before its launching call");

	CHECK(!strcmp(qs(db,
			 "SELECT name || '/' || sm_count || '/' || cc_major || '/' || "
			 "driver_version FROM gpu_devices",
			 s, sizeof(s)),
		      "NVIDIA Test GPU/132/9/13.0"),
	      "device: %s", s);
	CHECK(q(db, "SELECT count(*) FROM gpu_overhead WHERE kind = 'buffer_flush' AND "
		    "object_kind = 'thread' AND dur_ns = 250") == 1,
	      "overhead record");
	CHECK(q(db, "SELECT count(*) FROM gpu_allocs WHERE op = 'alloc' AND bytes = 4194304") == 1,
	      "allocation record (MEMORY2)");
	CHECK(q(db, "SELECT dropped FROM cuda_capture") == 7, "dropped records stored");
	CHECK(q(db, "SELECT unknown_kinds FROM cuda_capture") == 1, "unknown kind counted");
	CHECK(q(db, "SELECT started FROM cuda_capture") == 1, "capture marked started");
	CHECK(q(db, "SELECT value FROM meta WHERE key = 'cuda.captured'") == 1,
	      "meta cuda.captured");
	CHECK(q(db, "SELECT value FROM meta WHERE key = 'cuda.dropped_records'") == 7 + 2 + 1,
	      "meta cuda.dropped_records: CUPTI's 7, 2 bad spans, 1 foreign clock");
	CHECK(q(db, "SELECT bad_timestamps * 100 + foreign_timestamps * 10 + filtered_api FROM "
		    "cuda_capture") == 211,
	      "cuda_capture: bad_timestamps 2, foreign_timestamps 1, filtered_api 1");
	CHECK(q(db, "SELECT calls * 1000 + total_ns FROM cuda_api_counts a JOIN strings s ON s.id "
		    "= a.name_id WHERE s.value = 'cudaGetDevice_v3020' AND a.domain = 'runtime'") ==
		  1250,
	      "cuda_api_counts: 1 cudaGetDevice call of 250 ns");
	CHECK(q(db, "SELECT count(*) FROM kernels WHERE end_ns <= start_ns OR start_ns = 0") == 0,
	      "no kernel without a span");
}

static void test_analysis(sqlite3 *db)
{
	struct lp_cuda_report r;
	char err[256] = "";
	CHECK(lp_cuda_analyze(db, LP_CUDA_KERNELS, &r, err, sizeof(err)) == 0, "kernels view %s",
	      err);
	CHECK(r.cap.captured == 1, "report knows GPU data was captured");
	CHECK(r.n == 2 && !strcmp(r.rows.kern[0].name, "scale(float*, int, float)"),
	      "kernels grouped by name, largest first");
	if (r.n == 2) {
		const struct lp_cuda_stat *st = &r.rows.kern[0].st;
		/* instances 2000, 4000, 1000 ns */
		CHECK(st->n == 3 && st->total == 7000 && st->min == 1000 && st->max == 4000 &&
			  st->med == 2000,
		      "kernel stats n=%lld total=%lld min=%lld med=%lld max=%lld", (long long)st->n,
		      (long long)st->total, (long long)st->min, (long long)st->med,
		      (long long)st->max);
		CHECK(fabs(st->stddev - 1527.525) < 0.01, "sample stddev %.3f", st->stddev);
		CHECK(fabs(r.rows.kern[0].share - 7000.0 / 7100.0) < 1e-9, "time share");
	}
	CHECK(r.launch_delay.n == 4 && r.launch_delay.min == 400 && r.launch_delay.max == 5900,
	      "kernel launch delay over 4 kernels: 500, 2100, 5900, 400 ns");
	CHECK(r.nstages == 1 && r.stages[0].launches == 8 && r.stages[0].kernel_ns == 7100,
	      "GPU work per launching stage (no NVTX ranges: one row)");
	lp_cuda_report_free(&r);

	CHECK(lp_cuda_analyze(db, LP_CUDA_MEMCPY, &r, err, sizeof(err)) == 0, "memcpy view");
	int seen = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct lp_cuda_memcpy_row *m = &r.rows.memcpy[i];
		if (!strcmp(m->copy_kind, "HtoD") && !strcmp(m->src_kind, "pageable")) {
			seen |= 1;
			CHECK(fabs(m->gbps - 4194304.0 / 3800.0) < 1e-6,
			      "pageable HtoD bandwidth %.3f GB/s", m->gbps);
		}
		if (!strcmp(m->copy_kind, "HtoD") && !strcmp(m->src_kind, "pinned")) {
			seen |= 2;
			CHECK(m->async == 1 && fabs(m->gbps - 4194304.0 / 400.0) < 1e-6,
			      "pinned async HtoD bandwidth %.3f GB/s", m->gbps);
		}
	}
	CHECK(r.n == 4 && seen == 3, "memcpy rows by kind and memory kind (%zu)", r.n);
	lp_cuda_report_free(&r);

	CHECK(lp_cuda_analyze(db, LP_CUDA_SYNC, &r, err, sizeof(err)) == 0, "sync view");
	int64_t ctx = -1, smc = -1;
	for (size_t i = 0; i < r.n; i++) {
		if (!strcmp(r.rows.sync[i].type, "context_synchronize"))
			ctx = r.rows.sync[i].st.total;
		if (!strcmp(r.rows.sync[i].type, "synchronous memcpy"))
			smc = r.rows.sync[i].st.total;
	}
	CHECK(ctx == 6000 && smc == 5000 + 1000,
	      "sync wait: context sync 6000 ns, synchronous cudaMemcpy 6000 ns (%lld, %lld)",
	      (long long)ctx, (long long)smc);
	lp_cuda_report_free(&r);

	/* Wait class sync: the host's context sync, never a lock. */
	struct lp_lock_report lr;
	CHECK(lp_locks_analyze(db, 10, &lr, err, sizeof(err)) == 0, "locks view");
	CHECK(lr.class_n[LP_WAIT_SYNC] == 1 && lr.class_ns[LP_WAIT_SYNC] == 6000 && lr.n == 0 &&
		  lr.class_n[LP_WAIT_CONTENTION] == 0,
	      "class sync: the context sync, 6000 ns, not ranked (%lld, %lld ns, %zu rows)",
	      lr.class_n[LP_WAIT_SYNC], (long long)lr.class_ns[LP_WAIT_SYNC], lr.n);
	lp_lock_report_free(&lr);

	CHECK(lp_cuda_analyze(db, LP_CUDA_API, &r, err, sizeof(err)) == 0, "API view");
	int64_t launches = -1;
	for (size_t i = 0; i < r.n; i++)
		if (!strcmp(r.rows.api[i].name, "cudaLaunchKernel_v7000"))
			launches = r.rows.api[i].st.n;
	CHECK(launches == 4, "4 cudaLaunchKernel calls");
	CHECK(r.total_ns == 5000 + 500 + 400 + 200 + 6100 + 200 + 1000 + 100 + 100 /* 2nd buffer */,
	      "API total counts runtime calls only, not the nested driver call (%lld)",
	      (long long)r.total_ns);
	lp_cuda_report_free(&r);
}

/* The real injection entry point on this machine: without a driver CUPTI
 * cannot start, and that must be recorded, not silently empty. */
static void test_injection(const char *dir, const char *lib)
{
	char out[600];
	snprintf(out, sizeof(out), "%s/inj.db", dir);
	pid_t p = fork();
	if (p == 0) {
		setenv("LATPROF_DIR", dir, 1);
		void *h = dlopen(lib, RTLD_NOW);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		_exit(init && init() == 1 ? 0 : 9);
	}
	int st;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "InitializeInjection returned 1 (%s)", lib);
	CHECK(import(dir, out) == 0, "import of the injection run");
	sqlite3 *db;
	if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return;
	char s[600];
	int64_t started = q(db, "SELECT started FROM cuda_capture");
	if (started == 1) {
		printf("note: CUPTI started here (a GPU machine)\n");
	} else {
		qs(db, "SELECT message FROM cuda_capture", s, sizeof(s));
		CHECK(started == 0 && strstr(s, "(CUPTI: CUPTI_ERROR_"),
		      "failed start recorded with the CUPTI error: %s", s);
		CHECK(q(db, "SELECT value FROM meta WHERE key = 'cuda.captured'") == 0,
		      "meta cuda.captured = 0");
		qs(db, "SELECT value FROM meta WHERE key = 'cuda.status'", s, sizeof(s));
		CHECK(!strncmp(s, "not captured: ", 14) && strstr(s, "CUPTI_ERROR_"),
		      "meta cuda.status: %s", s);
	}
	sqlite3_close(db);
}

/* A log as collectors before the UUID and timestamp counts wrote it: the
 * DEVICE and STATS records end at their first 40 and 56 bytes. It still
 * imports, the new columns unknown (NULL) or 0. */
static void test_old_log(void)
{
	char dir[] = "/tmp/lp-cupti-old-XXXXXX", out[600];
	if (!mkdtemp(dir))
		return;
	pid_t p = fork();
	if (p == 0) {
		setenv("LATPROF_DIR", dir, 1);
		if (lp_core_init())
			_exit(1);
		uint32_t name = lp_intern_string("NVIDIA Old GPU", 14);
		struct lp_rec_cuda_device *d =
		    lp_rec_begin(LP_REC_CUDA_DEVICE, 0, LP_CUDA_DEVICE_V1_SIZE);
		if (d) {
			memset(d, 0, LP_CUDA_DEVICE_V1_SIZE);
			d->sm_count = 80, d->cc_major = 7, d->name = name;
			lp_rec_commit();
		}
		struct lp_rec_cuda_kernel *k = lp_rec_begin(LP_REC_CUDA_KERNEL, 0, sizeof(*k));
		if (k) {
			memset(k, 0, sizeof(*k));
			k->start = T0, k->end = T0 + 500, k->correlation = 1, k->name = name;
			lp_rec_commit();
		}
		lp_cupti_status(LP_CUDA_STARTED, 0, 10, 12000, "CUPTI activity capture started");
		struct lp_rec_cuda_stats *st =
		    lp_rec_begin(LP_REC_CUDA_STATS, 0, LP_CUDA_STATS_V1_SIZE);
		if (st) {
			memset(st, 0, LP_CUDA_STATS_V1_SIZE);
			st->ts = lp_now(), st->records = 2, st->dropped = 3, st->buffers = 1;
			lp_rec_commit();
		}
		lp_core_exit(0, LP_EXIT_RETURN);
		_exit(0);
	}
	int wst;
	waitpid(p, &wst, 0);
	snprintf(out, sizeof(out), "%s/old.db", dir);
	CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && import(dir, out) == 0,
	      "a log with the older DEVICE and STATS layouts imports");
	sqlite3 *db;
	if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return;
	CHECK(q(db, "SELECT count(*) FROM gpu_devices WHERE sm_count = 80 AND uuid IS NULL AND "
		    "pci_bus_id IS NULL") == 1,
	      "old device record: row kept, uuid and PCI id unknown");
	CHECK(q(db, "SELECT dropped * 100 + bad_timestamps * 10 + (conflicts IS NULL) FROM "
		    "cuda_capture") == 301,
	      "old stats record: dropped 3, new counts 0, no conflict");
	CHECK(q(db, "SELECT count(*) FROM kernels") == 1, "old log's kernel imported");
	sqlite3_close(db);
	if (!lp_check_failures) { /* kept for inspection when a check failed */
		char cmd[700];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("note: %s not removed\n", dir);
	}
}

int main(void)
{
	/* The injection library as latprof run uses it (LP_BUILD from ctest). */
	const char *build = getenv("LP_BUILD");
	char lib[512];
	snprintf(lib, sizeof(lib), "%s/lib/latprof/liblatprof_cupti.so", build ? build : ".");
	char dir[] = "/tmp/lp-cupti-XXXXXX", out[600], dir2[64];
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	int pfd[2];
	if (pipe(pfd))
		return 1;
	pid_t p = fork();
	if (p == 0) {
		uint64_t seen = 0;
		struct lp_cupti_counts c = {0};
		int rc = record(dir, &seen, &c);
		uint64_t v[7] = {seen,	   c.records,	 c.unknown_kinds, c.log_drops,
				 c.bad_ts, c.foreign_ts, c.filtered};
		if (write(pfd[1], v, sizeof(v)) != sizeof(v))
			rc = -1;
		_exit(rc ? 1 : 0);
	}
	uint64_t v[7] = {0};
	int st;
	if (read(pfd[0], v, sizeof(v)) != sizeof(v))
		lp_check_failures++;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "recording process");
	CHECK(v[0] == 28 && v[1] == 23 && v[2] == 1 && v[3] == 0,
	      "translator walked %llu records: %llu translated, %llu unknown, %llu log drops",
	      (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
	      (unsigned long long)v[3]);
	CHECK(v[4] == 2 && v[5] == 1 && v[6] == 1,
	      "dropped at record time: %llu with a zero or inverted span, %llu on a foreign clock; "
	      "%llu query call counted",
	      (unsigned long long)v[4], (unsigned long long)v[5], (unsigned long long)v[6]);
	snprintf(out, sizeof(out), "%s/x.db", dir);
	CHECK(import(dir, out) == 0, "latprof import");
	sqlite3 *db;
	if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		test_rows(db);
		test_analysis(db);
		sqlite3_close(db);
	}
	test_old_log();
	snprintf(dir2, sizeof(dir2), "/tmp/lp-cupti-inj-XXXXXX");
	if (mkdtemp(dir2))
		test_injection(dir2, lib);
	if (lp_check_failures)
		printf("%d check(s) failed; logs in %s\n", lp_check_failures, dir);
	return lp_check_failures ? 1 : 0;
}
