/* SPDX-License-Identifier: MIT */
/*
 * PyTorch profiler (Kineto) traces -> a latprof database, streamed: every
 * event becomes its row as it is parsed (lp_json_stream.h), so memory does
 * not grow with the trace. Mapping (categories compared without case: the
 * 2021 format wrote Kernel, Runtime, Memcpy, Memset, Operator; thread ids
 * may be text, "1890023232" or "stream 7"):
 *   kernel, gpu_memcpy, gpu_memset, cuda_sync   -> kernels, memcpys, memsets, syncs
 *   cuda_runtime, cuda_driver                   -> cuda_api (runtime, driver)
 *   user_annotation, cpu_op, python_function,
 *   gpu_user_annotation                         -> ranges, one domain each
 *   deviceProperties                            -> gpu_devices
 * GPU events carry pid = device and tid = stream; they belong to the
 * process whose API call has their args.correlation (or, in traces without
 * it, whose ac2g flow ends on them). Timestamps are microseconds whatever
 * displayTimeUnit says: per the Chrome trace format that key only chooses
 * how a viewer shows them (the "ns" trace in the test data has kernels of
 * 4.9 "units", impossible in ns).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lp_db.h"
#include "lp_import_foreign.h"
#include "lp_captures.h"
#include "lp_import_kineto.h"
#include "lp_json_stream.h"
#include "lp_nvtx_db.h"
#include "lp_util.h"

enum lp_kcat {
	LP_K_OTHER,
	LP_K_KERNEL,
	LP_K_MEMCPY,
	LP_K_MEMSET,
	LP_K_SYNC,
	LP_K_RUNTIME,
	LP_K_DRIVER,
	LP_K_USER,
	LP_K_CPU_OP,
	LP_K_PYTHON,
	LP_K_GPU_USER,
};

static const struct {
	const char *cat;
	enum lp_kcat k;
} lp_kcats[] = {
    {"kernel", LP_K_KERNEL},
    {"gpu_memcpy", LP_K_MEMCPY},
    {"memcpy", LP_K_MEMCPY},
    {"gpu_memset", LP_K_MEMSET},
    {"memset", LP_K_MEMSET},
    {"cuda_sync", LP_K_SYNC},
    {"cuda_runtime", LP_K_RUNTIME},
    {"runtime", LP_K_RUNTIME},
    {"cuda_driver", LP_K_DRIVER},
    {"driver", LP_K_DRIVER},
    {"user_annotation", LP_K_USER},
    {"cpu_op", LP_K_CPU_OP},
    {"operator", LP_K_CPU_OP},
    {"python_function", LP_K_PYTHON},
    {"gpu_user_annotation", LP_K_GPU_USER},
};

/* The fields every event is asked for, prepared once (lp_jkey). */
enum lp_kkey {
	KK_PH,
	KK_PID,
	KK_TID,
	KK_CAT,
	KK_NAME,
	KK_TS,
	KK_DUR,
	KK_ID,
	KK_ARGS_NAME,
	KK_DEVICE,
	KK_CONTEXT,
	KK_STREAM,
	KK_CORR,
	KK_BYTES,
	KK_GRID,		/* 3: [0] [1] [2] */
	KK_BLOCK = KK_GRID + 3, /* 3 */
	KK_SMEM = KK_BLOCK + 3,
	KK_REGS,
	KK_CBID,
	KK_SYNC_KIND,
	KK_EVENT,
	KK_N
};

static const char *const lp_kkey_paths[KK_N] = {
    [KK_PH] = "ph",
    [KK_PID] = "pid",
    [KK_TID] = "tid",
    [KK_CAT] = "cat",
    [KK_NAME] = "name",
    [KK_TS] = "ts",
    [KK_DUR] = "dur",
    [KK_ID] = "id",
    [KK_ARGS_NAME] = "args.name",
    [KK_DEVICE] = "args.device",
    [KK_CONTEXT] = "args.context",
    [KK_STREAM] = "args.stream",
    [KK_CORR] = "args.correlation",
    [KK_BYTES] = "args.bytes",
    [KK_GRID] = "args.grid[0]",
    [KK_GRID + 1] = "args.grid[1]",
    [KK_GRID + 2] = "args.grid[2]",
    [KK_BLOCK] = "args.block[0]",
    [KK_BLOCK + 1] = "args.block[1]",
    [KK_BLOCK + 2] = "args.block[2]",
    [KK_SMEM] = "args.shared memory",
    [KK_REGS] = "args.registers per thread",
    [KK_CBID] = "args.cbid",
    [KK_SYNC_KIND] = "args.cuda_sync_kind",
    [KK_EVENT] = "args.event",
};

/* Names kept until the end: M events may come after the events they name. */
struct kname {
	int64_t pid, tid; /* tid < 0: a process name */
	char *name;
};

struct kdev {
	int64_t id, sms, major, minor, mem;
	char *name;
};

struct kineto {
	const char *path;
	struct lp_foreign fx;
	struct lp_import *imp;
	sqlite3_stmt *ins_flow;
	struct kname *names;
	size_t nnames, capnames;
	struct kdev *devs;
	size_t ndevs;
	int64_t min_ts, base_ns;
	long long events, skipped, flows, truncated;
	long long strings_cut; /* to LP_JSTR_KEEP bytes by the reader */
	/* Counted as rows are written, for kfinish: rows whose correlation id
	 * is 0 (flows may give them one), API calls per processes.id. */
	long long no_corr;
	long long *api_calls;
	size_t napi_calls;
	char unit[16];
	int gpu_corr; /* GPU events carry args.correlation: flows are not kept */
	int rc;
	struct lp_jkey keys[KK_N]; /* lp_kkey_paths */
};

static const struct lp_jfield *kfield(const struct kineto *k, const struct lp_jobj *o,
				      enum lp_kkey key)
{
	return lp_jobj_find(o, &k->keys[key]);
}

static int64_t kint(const struct kineto *k, const struct lp_jobj *o, enum lp_kkey key, int64_t dflt)
{
	return lp_jfield_int(kfield(k, o, key), dflt);
}

/* cat compared without case, a space as '_' ("Python function"). */
static int kcat_is(const char *cat, const char *name)
{
	for (; *cat && *name; cat++, name++)
		if (tolower((unsigned char)*cat) != *name && !(*cat == ' ' && *name == '_'))
			return 0;
	return !*cat && !*name;
}

static enum lp_kcat kineto_cat(const char *cat)
{
	/* every event asks: the first letter rules out most names */
	int c0 = cat ? tolower((unsigned char)cat[0]) : 0;
	for (size_t i = 0; c0 && i < sizeof(lp_kcats) / sizeof(lp_kcats[0]); i++)
		if (lp_kcats[i].cat[0] == c0 && kcat_is(cat, lp_kcats[i].cat))
			return lp_kcats[i].k;
	return LP_K_OTHER;
}

static const char *kstr(const struct kineto *k, const struct lp_jobj *o, enum lp_kkey key)
{
	const struct lp_jfield *f = kfield(k, o, key);
	return f && (f->type == LP_JSTR || f->type == LP_JNUM) ? f->val : NULL;
}

/* "1890023232" or "stream 7" (a GPU row): the number; -1 for other text. */
static int64_t kid_text(const char *s)
{
	if (!strncasecmp(s, "stream ", 7))
		s += 7;
	int64_t v = 0;
	int nd = 0;
	for (; *s >= '0' && *s <= '9' && nd < 18; s++, nd++)
		v = v * 10 + (*s - '0');
	return nd && !*s ? v : -1;
}

/* pid/tid: numbers for real processes and threads, or their decimal text
 * (schemaVersion 1 traces wrote "tid": "1890023232" for host threads and
 * "stream 7" for GPU streams); other text ("Spans", "Traces", the viewer's
 * own rows) is no process or thread. */
static int kid(const struct kineto *k, const struct lp_jobj *o, enum lp_kkey key, int64_t *v)
{
	const struct lp_jfield *f = kfield(k, o, key);
	if (f && f->type == LP_JSTR) {
		*v = kid_text(f->val);
		return *v >= 0;
	}
	if (!f || f->type != LP_JNUM)
		return 0;
	*v = lp_jfield_int(f, 0);
	return 1;
}

/* start and end in ns; end before start where dur is negative. */
static int kts(struct kineto *k, const struct lp_jobj *o, int64_t *start, int64_t *end)
{
	const char *ts = kstr(k, o, KK_TS), *dur = kstr(k, o, KK_DUR);
	int64_t d = 0;
	if (!ts || lp_json_us_to_ns(ts, start) || (dur && lp_json_us_to_ns(dur, &d)))
		return 0;
	*end = *start + d;
	return 1;
}

/* The kind lp_foreign_bad_time counts an event of category c as. */
static enum lp_foreign_kind kkind(enum lp_kcat c)
{
	switch (c) {
	case LP_K_KERNEL:
		return LP_FOREIGN_KERNEL;
	case LP_K_MEMCPY:
		return LP_FOREIGN_MEMCPY;
	case LP_K_MEMSET:
		return LP_FOREIGN_MEMSET;
	case LP_K_SYNC:
		return LP_FOREIGN_SYNC;
	case LP_K_RUNTIME:
	case LP_K_DRIVER:
		return LP_FOREIGN_API;
	default:
		return LP_FOREIGN_RANGE;
	}
}

/* ---- GPU events ------------------------------------------------------------------------ */

static void kop(struct kineto *k, const struct lp_jobj *o, int64_t pid, int64_t tid,
		struct lp_foreign_op *op)
{
	/* lp_foreign_adopt: the process of the launching call; written with the
	 * first host process's id, which is right when it is the only one. */
	op->proc = k->fx.provisional;
	op->device = kint(k, o, KK_DEVICE, pid);
	op->context = kint(k, o, KK_CONTEXT, 0);
	op->stream = kint(k, o, KK_STREAM, tid);
	op->corr = kint(k, o, KK_CORR, 0);
	if (op->corr && !k->gpu_corr) {
		k->gpu_corr = 1;
		lp_db_exec(k->imp->db, "DELETE FROM temp.lp_flow", k->imp->err, k->imp->errlen);
	}
}

/* "Memcpy HtoD (Pageable -> Device)" -> HtoD, pageable, device */
static int kmemcpy(struct kineto *k, const struct lp_jobj *o, const struct lp_foreign_op *op)
{
	const char *name = kstr(k, o, KK_NAME);
	char kind[16] = "unknown", src[32] = "unknown", dst[32] = "unknown";
	if (name) {
		sscanf(name, "Memcpy %15s (%31[^ ] -> %31[^)])", kind, src, dst);
		for (char *c = src; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		for (char *c = dst; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	return lp_foreign_memcpy(&k->fx, op, kint(k, o, KK_BYTES, 0), kind, src, dst, 1);
}

static int kmemset(struct kineto *k, const struct lp_jobj *o, const struct lp_foreign_op *op)
{
	const char *name = kstr(k, o, KK_NAME);
	char kind[32] = "unknown";
	if (name && sscanf(name, "Memset (%31[^)])", kind) == 1)
		for (char *c = kind; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	return lp_foreign_memset(&k->fx, op, kint(k, o, KK_BYTES, 0), 0, kind, 1);
}

static const char *ksync_type(const char *s)
{
	if (!s)
		return "unknown";
	if (!strcasecmp(s, "Stream Sync"))
		return "stream_synchronize";
	if (!strcasecmp(s, "Event Sync"))
		return "event_synchronize";
	if (!strcasecmp(s, "Context Sync"))
		return "context_synchronize";
	if (!strcasecmp(s, "Stream Wait Event"))
		return "stream_wait_event";
	return "unknown";
}

static int kkernel(struct kineto *k, const struct lp_jobj *o, const struct lp_foreign_op *op)
{
	int64_t grid[3], block[3];
	for (int i = 0; i < 3; i++) {
		grid[i] = kint(k, o, KK_GRID + i, 0);
		block[i] = kint(k, o, KK_BLOCK + i, 0);
	}
	const char *name = kstr(k, o, KK_NAME);
	int64_t nid = name ? lp_import_intern(k->imp, name, strlen(name)) : 0;
	/* Kineto writes static + dynamic shared memory as one figure. */
	return lp_foreign_kernel(&k->fx, op, nid, 0, grid, block, kint(k, o, KK_SMEM, 0), 0,
				 kint(k, o, KK_REGS, 0), 0);
}

/* ---- host events ------------------------------------------------------------------------- */

static int64_t kthread(struct kineto *k, int64_t pid, int64_t tid, int64_t *proc)
{
	*proc = lp_foreign_process(&k->fx, pid, NULL);
	if (!k->fx.provisional)
		k->fx.provisional = *proc;
	return *proc ? lp_foreign_thread(&k->fx, *proc, pid, tid) : 0;
}

static const char *const lp_kdomain_names[] = {
    [LP_K_USER] = "user_annotation",
    [LP_K_CPU_OP] = "cpu_op",
    [LP_K_PYTHON] = "python_function",
    [LP_K_GPU_USER] = "gpu_user_annotation",
};

static int64_t kdomain(struct kineto *k, int64_t proc, enum lp_kcat c)
{
	size_t before = k->fx.domains.len;
	int64_t dom = lp_foreign_domain(&k->fx, proc, lp_kdomain_names[c]);
	/* Annotations and operators of a thread nest in each other (a
	 * ProfilerStep holds its aten:: ops); Python frames and GPU annotations
	 * nest among themselves. */
	if (dom && k->fx.domains.len != before && (c == LP_K_USER || c == LP_K_CPU_OP) &&
	    lp_foreign_nest_group(&k->fx, dom, 1000000000000LL + proc))
		return 0;
	return dom;
}

static int krange(struct kineto *k, const struct lp_jobj *o, enum lp_kcat c, int64_t pid,
		  int64_t tid, int64_t start, int64_t end)
{
	int64_t proc, thread;
	if (c == LP_K_GPU_USER) {
		/* On a stream's timeline: a thread row of the GPU, tid = stream,
		 * adopted by the launching process at the end. */
		size_t before = k->fx.threads.len;
		char tname[64];
		proc = 0;
		thread = lp_foreign_thread(&k->fx, 0, 0x40000000 | pid, tid);
		snprintf(tname, sizeof(tname), "GPU %lld stream %lld", (long long)pid,
			 (long long)tid);
		if (thread && k->fx.threads.len != before &&
		    lp_foreign_thread_name(&k->fx, thread, tname))
			return -EIO;
	} else {
		thread = kthread(k, pid, tid, &proc);
	}
	int64_t dom = thread ? kdomain(k, proc, c) : 0;
	if (!dom)
		return -EIO;
	const char *name = kstr(k, o, KK_NAME);
	int64_t payload = -1;
	size_t len = name ? strlen(name) : 0;
	/* ProfilerStep#N on the host: one request name for every step, N as
	 * payload. The GPU's copy keeps its name, so requests stay the host's. */
	if (name && !strncmp(name, "ProfilerStep#", 13) && c != LP_K_GPU_USER) {
		payload = strtoll(name + 13, NULL, 10);
		len = 12;
		snprintf(k->fx.default_request, sizeof(k->fx.default_request), "ProfilerStep");
	}
	int64_t nid = name ? lp_import_intern(k->imp, name, len) : 0;
	return lp_foreign_range(&k->fx, proc, dom, nid, 0, start, end, thread, thread, payload, -1,
				0);
}

/* One more API call of process proc (processes.id, small and dense). */
static int kapi_count(struct kineto *k, int64_t proc)
{
	if ((size_t)proc >= k->napi_calls) {
		size_t n = (size_t)proc * 2 + 8;
		long long *v = realloc(k->api_calls, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + k->napi_calls, 0, (n - k->napi_calls) * sizeof(*v));
		k->api_calls = v;
		k->napi_calls = n;
	}
	k->api_calls[proc]++;
	return 0;
}

static int kapi(struct kineto *k, const struct lp_jobj *o, enum lp_kcat c, int64_t pid, int64_t tid,
		int64_t start, int64_t end)
{
	int64_t proc, thread = kthread(k, pid, tid, &proc);
	const char *name = kstr(k, o, KK_NAME);
	if (!thread)
		return -EIO;
	int64_t nid = name ? lp_import_intern(k->imp, name, strlen(name)) : 0;
	int64_t corr = kint(k, o, KK_CORR, 0);
	k->no_corr += corr == 0;
	int rc = kapi_count(k, proc);
	return rc ? rc
		  : lp_foreign_api(&k->fx, proc, thread, c == LP_K_DRIVER ? "driver" : "runtime",
				   kint(k, o, KK_CBID, 0), nid, corr, start, end, 0);
}

/* ---- metadata, flows ---------------------------------------------------------------------- */

static int kname_add(struct kineto *k, int64_t pid, int64_t tid, const char *name)
{
	if (k->nnames == k->capnames) {
		size_t cap = k->capnames ? k->capnames * 2 : 32;
		void *v = realloc(k->names, cap * sizeof(*k->names));
		if (!v)
			return -ENOMEM;
		k->names = v;
		k->capnames = cap;
	}
	char *s = strdup(name);
	if (!s)
		return -ENOMEM;
	k->names[k->nnames++] = (struct kname){pid, tid, s};
	return 0;
}

static int kmeta(struct kineto *k, const struct lp_jobj *o, int64_t pid, int64_t tid)
{
	const char *what = kstr(k, o, KK_NAME), *name = kstr(k, o, KK_ARGS_NAME);
	if (!what || !name)
		return 0;
	if (!strcmp(what, "process_name"))
		return kname_add(k, pid, -1, name);
	if (!strcmp(what, "thread_name"))
		return kname_add(k, pid, tid, name);
	return 0;
}

/* Launch flows: "ac2g", or "async" named "launch" (schemaVersion 1). */
static int kflow_cat(const struct kineto *k, const struct lp_jobj *o, const char *cat)
{
	const char *name = cat && !strcasecmp(cat, "async") ? kstr(k, o, KK_NAME) : NULL;
	return cat && (!strcasecmp(cat, "ac2g") || (name && !strcmp(name, "launch")));
}

static int kflow(struct kineto *k, const struct lp_jobj *o, const char *ph, int64_t pid,
		 int64_t tid)
{
	const char *ts = kstr(k, o, KK_TS);
	int64_t t;
	k->flows++;
	/* Flows only link what args.correlation does not: once GPU events are
	 * seen to carry it, the trace needs none of them kept. */
	if (k->gpu_corr || !ts || lp_json_us_to_ns(ts, &t))
		return 0;
	sqlite3_bind_text(k->ins_flow, 1, ph, 1, SQLITE_STATIC);
	sqlite3_bind_int64(k->ins_flow, 2, pid);
	sqlite3_bind_int64(k->ins_flow, 3, tid);
	sqlite3_bind_int64(k->ins_flow, 4, t);
	sqlite3_bind_int64(k->ins_flow, 5, kint(k, o, KK_ID, 0));
	return lp_import_step(k->imp, k->ins_flow);
}

static int kdevice(struct kineto *k, const struct lp_jobj *o)
{
	if (k->ndevs >= 256)
		return 0;
	struct kdev *v = realloc(k->devs, (k->ndevs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	k->devs = v;
	const char *name = kstr(k, o, KK_NAME);
	v[k->ndevs++] = (struct kdev){
	    lp_jobj_int(o, "id", (int64_t)k->ndevs), lp_jobj_int(o, "numSms", -1),
	    lp_jobj_int(o, "computeMajor", -1),	     lp_jobj_int(o, "computeMinor", -1),
	    lp_jobj_int(o, "totalGlobalMem", -1),    name ? strdup(name) : NULL};
	return 0;
}

/* ---- events ------------------------------------------------------------------------------- */

static int kevent(struct kineto *k, const struct lp_jobj *o)
{
	const char *ph = kstr(k, o, KK_PH);
	int64_t pid, tid, start, end;
	k->events++;
	k->truncated += o->truncated;
	if (!ph || !kid(k, o, KK_PID, &pid) || !kid(k, o, KK_TID, &tid)) {
		k->skipped++;
		return 0;
	}
	if (!strcmp(ph, "M"))
		return kmeta(k, o, pid, tid);
	const char *cat = kstr(k, o, KK_CAT);
	if ((!strcmp(ph, "s") || !strcmp(ph, "f")) && kflow_cat(k, o, cat))
		return kflow(k, o, ph, pid, tid);
	enum lp_kcat c = kineto_cat(cat);
	if (strcmp(ph, "X") || c == LP_K_OTHER || !kts(k, o, &start, &end)) {
		k->skipped++;
		return 0;
	}
	/* A zero CUPTI timestamp is ts 0 (epoch clock) or -baseTimeNanoseconds. */
	if (lp_foreign_bad_time(&k->fx, kkind(c), k->base_ns + start, k->base_ns + end))
		return 0;
	if (start < k->min_ts)
		k->min_ts = start;
	struct lp_foreign_op op;
	const char *sync;
	switch (c) {
	case LP_K_KERNEL:
	case LP_K_MEMCPY:
	case LP_K_MEMSET:
	case LP_K_SYNC:
		kop(k, o, pid, tid, &op);
		k->no_corr += op.corr == 0;
		op.start = start;
		op.end = end;
		if (c == LP_K_KERNEL)
			return kkernel(k, o, &op);
		if (c == LP_K_MEMCPY)
			return kmemcpy(k, o, &op);
		if (c == LP_K_MEMSET)
			return kmemset(k, o, &op);
		sync = kstr(k, o, KK_SYNC_KIND);
		return lp_foreign_sync(&k->fx, &op, ksync_type(sync ? sync : kstr(k, o, KK_NAME)),
				       kint(k, o, KK_EVENT, -1));
	case LP_K_RUNTIME:
	case LP_K_DRIVER:
		return kapi(k, o, c, pid, tid, start, end);
	default:
		return krange(k, o, c, pid, tid, start, end);
	}
}

static int kelement(void *ctx, int which, const struct lp_jobj *o)
{
	struct kineto *k = ctx;
	return which == 1 ? kdevice(k, o) : kevent(k, o);
}

static void kcut(void *ctx, uint64_t strings)
{
	((struct kineto *)ctx)->strings_cut = (long long)strings;
}

static int ktop(void *ctx, const char *key, const char *val, enum lp_jtype type)
{
	struct kineto *k = ctx;
	if (!strcmp(key, "schemaVersion"))
		snprintf(k->fx.schema_version, sizeof(k->fx.schema_version), "%s", val);
	else if (!strcmp(key, "displayTimeUnit"))
		snprintf(k->unit, sizeof(k->unit), "%s", val);
	else if (!strcmp(key, "baseTimeNanoseconds") && type == LP_JNUM)
		k->base_ns = strtoll(val, NULL, 10);
	else if (!strcmp(key, "host_name") && type == LP_JSTR)
		snprintf(k->fx.host, sizeof(k->fx.host), "%s", val);
	return 0;
}

/* ---- after the last event --------------------------------------------------------------- */

/* GPU work without args.correlation: the ac2g flow that ends on it (same
 * device row, stream and start) names the call that launched it. */
static const char lp_kflows_sql[] =
    "CREATE INDEX temp.lp_flow_at ON lp_flow(ph, pid, tid, ts);"
    "UPDATE kernels SET correlation_id = coalesce((SELECT f.id FROM temp.lp_flow f WHERE "
    "f.ph = 'f' AND f.pid = kernels.device AND f.tid = kernels.stream AND f.ts = "
    "kernels.start_ns), 0) WHERE correlation_id = 0;"
    "UPDATE memcpys SET correlation_id = coalesce((SELECT f.id FROM temp.lp_flow f WHERE "
    "f.ph = 'f' AND f.pid = memcpys.device AND f.tid = memcpys.stream AND f.ts = "
    "memcpys.start_ns), 0) WHERE correlation_id = 0;"
    "UPDATE memsets SET correlation_id = coalesce((SELECT f.id FROM temp.lp_flow f WHERE "
    "f.ph = 'f' AND f.pid = memsets.device AND f.tid = memsets.stream AND f.ts = "
    "memsets.start_ns), 0) WHERE correlation_id = 0;"
    "UPDATE syncs SET correlation_id = coalesce((SELECT f.id FROM temp.lp_flow f WHERE "
    "f.ph = 'f' AND f.tid = syncs.stream AND f.ts = syncs.start_ns), 0) WHERE "
    "correlation_id = 0;"
    "UPDATE cuda_api SET correlation_id = coalesce((SELECT f.id FROM temp.lp_flow f JOIN "
    "threads t ON t.id = cuda_api.thread_id JOIN processes p ON p.id = t.process_id WHERE "
    "f.ph = 's' AND f.pid = p.pid AND f.tid = t.tid AND f.ts = cuda_api.start_ns), 0) WHERE "
    "correlation_id = 0;";

static int knames(struct kineto *k)
{
	sqlite3_stmt *st = lp_import_prepare(
	    k->imp, "UPDATE processes SET cmdline = ?1, exe = ?1 WHERE pid = ?2 AND id > 0");
	int rc = st ? 0 : -EIO;
	for (size_t i = 0; rc == 0 && i < k->nnames; i++) {
		struct kname *n = &k->names[i];
		uint64_t key = ((uint64_t)n->pid << 32 | (uint32_t)n->tid) + 1, id;
		if (n->tid >= 0) {
			if (lp_map_get(&k->fx.threads, key, &id))
				rc = lp_foreign_thread_name(&k->fx, (int64_t)id, n->name);
			continue;
		}
		sqlite3_bind_text(st, 1, n->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, n->pid);
		rc = lp_import_step(k->imp, st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* The host process GPU work without a launching call belongs to: the one
 * with the most API calls, the last made of equals (what SQLite's GROUP BY
 * ... ORDER BY count(*) DESC LIMIT 1 over cuda_api returned, without the
 * sort of every call); with no calls, the first. */
static int64_t kmain_proc(struct kineto *k)
{
	int64_t p = 0;
	for (size_t i = 1; i < k->napi_calls; i++)
		if (k->api_calls[i] && (!p || k->api_calls[i] >= k->api_calls[p]))
			p = (int64_t)i;
	return p ? p : lp_db_int(k->imp->db, "SELECT min(id) FROM processes", 0);
}

static int kfinish(struct kineto *k)
{
	int rc = 0;
	if (k->no_corr)
		rc = lp_db_exec(k->imp->db, lp_kflows_sql, k->imp->err, k->imp->errlen);
	int64_t main_proc = rc ? 0 : kmain_proc(k);
	if (rc == 0 && !main_proc) {
		snprintf(k->imp->err, k->imp->errlen,
			 "%s: the trace holds no host or GPU events latprof can import", k->path);
		return -EINVAL;
	}
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "UPDATE ranges SET process_id = %lld WHERE process_id = 0;"
		 "UPDATE threads SET process_id = %lld WHERE process_id = 0;"
		 "UPDATE domains SET process_id = %lld WHERE process_id = 0;",
		 (long long)main_proc, (long long)main_proc, (long long)main_proc);
	rc = rc ? rc : lp_foreign_adopt(&k->fx, main_proc);
	rc = rc ? rc : lp_db_exec(k->imp->db, sql, k->imp->err, k->imp->errlen);
	for (size_t i = 0; rc == 0 && i < k->ndevs; i++)
		rc = lp_foreign_device(&k->fx, main_proc, k->devs[i].id, k->devs[i].name,
				       k->devs[i].sms, k->devs[i].major, k->devs[i].minor,
				       k->devs[i].mem, -1, -1);
	rc = rc ? rc : knames(k);
	/* Flows gave rows other ids at the end: the tally of the ids they came
	 * with is void, and lp_foreign_finish counts by SQL. Every GPU row is now
	 * with the process of the API call of its id, or main_proc when none
	 * has it: unattributed exactly when no call has its id. */
	if (k->no_corr)
		lp_corrtally_free(&k->fx.tally);
	return rc ? rc : lp_foreign_finish(&k->fx);
}

static int kineto_fill(struct lp_import *imp, void *ctx)
{
	struct kineto *k = ctx;
	static const struct lp_jstream_ops ops = {.element = kelement, .top = ktop, .cut = kcut};
	k->imp = imp;
	for (int i = 0; i < KK_N; i++)
		lp_jkey_init(&k->keys[i], lp_kkey_paths[i]);
	int rc = lp_foreign_begin(&k->fx, imp);
	/* A trace may list work before its call: the tally takes either order;
	 * one set of ids for the whole trace (kfinish). */
	k->fx.count_unattributed = 1;
	rc = rc ? rc
		: lp_db_exec(imp->db, "CREATE TEMP TABLE lp_flow(ph, pid, tid, ts, id)", imp->err,
			     imp->errlen);
	if (rc == 0 &&
	    !(k->ins_flow = lp_import_prepare(imp, "INSERT INTO temp.lp_flow VALUES (?,?,?,?,?)")))
		rc = -EIO;
	if (rc)
		return rc;
	char err[512];
	uint64_t bytes = 0;
	rc = lp_jstream_read(k->path, &ops, k, k->fx.sha256, &bytes, err, sizeof(err));
	if (rc && !imp->err[0])
		snprintf(imp->err, imp->errlen, "%s: %s", k->path, err);
	if (rc)
		return rc;
	if (!k->events) {
		snprintf(imp->err, imp->errlen, "%s: JSON without trace events (no traceEvents)",
			 k->path);
		return -EINVAL;
	}
	return kfinish(k);
}

static int kineto_meta(struct lp_import *imp, void *ctx)
{
	struct kineto *k = ctx;
	if (k->min_ts != INT64_MAX) {
		/* Kineto's clock is the epoch (older traces) or an offset from
		 * baseTimeNanoseconds (newer ones). */
		int64_t wall = k->base_ns + k->min_ts;
		if (wall > 946684800LL * 1000000000LL) { /* after 2000: a wall clock */
			time_t secs = (time_t)(wall / 1000000000LL);
			struct tm tm;
			gmtime_r(&secs, &tm);
			strftime(k->fx.wall_start, sizeof(k->fx.wall_start), "%Y-%m-%dT%H:%M:%SZ",
				 &tm);
		}
	}
	int rc = lp_foreign_meta(&k->fx);
	rc = rc ? rc : lp_import_meta(imp, "import.events", NULL, k->events);
	rc = rc ? rc : lp_import_meta(imp, "import.skipped_events", NULL, k->skipped);
	rc = rc ? rc : lp_import_meta(imp, "import.flows", NULL, k->flows);
	rc = rc ? rc : lp_import_meta(imp, "import.truncated_events", NULL, k->truncated);
	rc = rc ? rc : lp_import_meta(imp, "import.truncated_strings", NULL, k->strings_cut);
	if (rc == 0 && k->unit[0])
		rc = lp_import_meta(imp, "import.display_time_unit", k->unit, 0);
	return rc;
}

static void kineto_end(struct lp_import *imp, void *ctx)
{
	struct kineto *k = ctx;
	(void)imp;
	sqlite3_finalize(k->ins_flow);
	k->ins_flow = NULL;
	lp_foreign_end(&k->fx);
}

int lp_import_kineto(const char *path, const char *out, const struct lp_import_opts *opts,
		     char *err, size_t errlen)
{
	static const struct lp_import_foreign_ops ops = {kineto_fill, kineto_meta, kineto_end};
	struct kineto k = {.path = path, .min_ts = INT64_MAX};
	k.fx.source = "kineto";
	k.fx.producer = "PyTorch profiler (Kineto)";
	k.fx.not_recorded = "lock waits, condition variables, CPU counters, process exit status";
	char *base = strdup(path);
	snprintf(k.fx.file, sizeof(k.fx.file), "%s", base ? basename(base) : path);
	free(base);
	int rc = lp_import_foreign(out, opts, lp_file_bytes(path), &ops, &k, err, errlen);
	for (size_t i = 0; i < k.nnames; i++)
		free(k.names[i].name);
	free(k.names);
	for (size_t i = 0; i < k.ndevs; i++)
		free(k.devs[i].name);
	free(k.devs);
	free(k.api_calls);
	return rc;
}

/* gzip's magic, or JSON's opening brace or bracket after white space. */
static int kineto_probe(const unsigned char *head, size_t n)
{
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return 1;
	size_t i = 0;
	while (i < n && strchr(" \t\r\n", head[i]))
		i++;
	return i < n && (head[i] == '{' || head[i] == '[');
}

const struct lp_capture_format lp_capture_kineto = {
    .name = "kineto",
    .what = "Kineto trace",
    .noun = "a Kineto trace (.json, .json.gz)",
    .probe = kineto_probe,
    .import = lp_import_kineto,
};
