/* SPDX-License-Identifier: MIT */
/*
 * CUDA records (format/lp_log_cuda.h) -> kernels, memcpys, memsets,
 * syncs, cuda_api, gpu_devices, gpu_overhead, gpu_allocs, cuda_capture
 * (schemas/cuda.sql), and the meta rows every report reads:
 *   cuda.captured  1 when any GPU activity was recorded
 *   cuda.used      1 when a process used CUDA (records, or libcuda/libcudart loaded)
 *   cuda.status    one sentence: what was captured, or what was not and why
 * An app that loaded CUDA libraries without any capture is found through
 * the modules table, because then nothing ever loaded the CUPTI collector.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_cuda_kinds.h"
#include "lp_import.h"
#include "lp_import_sources.h"
#include "lp_log_cuda.h"
#include "lp_symbols.h"
#include "lp_util.h"

extern const char lp_schema_cuda_sql[];

struct cuda_proc {
	int have_status, started, failed;
	int32_t code;
	uint32_t driver_version;
	char message[512];
	char kinds_failed[256];
	struct lp_rec_cuda_stats stats;
	long long ops; /* kernels + memcpys + memsets + syncs + API calls */
};

struct cuda_state {
	sqlite3_stmt *ins_kernel, *ins_memcpy, *ins_memset, *ins_sync, *ins_api, *ins_dev, *ins_ovh,
	    *ins_alloc, *ins_capture, *get_string, *find_modules, *set_driver, *ins_api_count;
	struct lp_map demangled; /* strings.id (mangled) -> strings.id (demangled) */
	struct cuda_proc p;	 /* current process */
	/* whole import */
	long long kernels, memcpys, memsets, syncs, api, dropped, unknown_kinds;
	unsigned conflicts; /* LP_CUDA_CONFLICT_* of every process */
	int procs_captured, procs_used;
	char status[600]; /* first reason nothing was captured */
};

/* ---- enum names (CUPTI numbering, cupti_activity.h) ------------------- */

static const char *import_cuda_pick(const char *const *names, size_t n, uint32_t v)
{
	return v < n && names[v] ? names[v] : "unknown";
}
#define LP_PICK(tab, v) import_cuda_pick(tab, ARRAY_SIZE(tab), (v))

/* Copy and memory kinds and sync types: the CUPTI enums' names, shared
 * with the nsys and Kineto importers (lp_cuda_copy_kind and the others). */
static const char *const lp_obj_kinds[] = {"unknown", "process", "thread",
					   "device",  "context", "stream"};

static const char *overhead_kind(uint32_t k)
{
	static const char *const hi[] = {NULL,
					 "buffer_flush",
					 "instrumentation",
					 "resource",
					 "module_loading",
					 "lazy_function_loading",
					 "command_buffer_full",
					 "buffer_request",
					 "uvm_init"};
	if (k == 1)
		return "driver_compiler";
	return k & 0xffff ? "unknown" : LP_PICK(hi, k >> 16);
}

/* ---- rows --------------------------------------------------------------- */

static void bind_common(sqlite3_stmt *st, int64_t proc, uint32_t dev, uint32_t ctx, uint32_t stream,
			uint32_t corr, uint64_t start, uint64_t end)
{
	sqlite3_bind_int64(st, 1, proc);
	sqlite3_bind_int64(st, 2, dev);
	sqlite3_bind_int64(st, 3, ctx);
	sqlite3_bind_int64(st, 4, stream);
	sqlite3_bind_int64(st, 5, corr);
	sqlite3_bind_int64(st, 6, (int64_t)start);
	sqlite3_bind_int64(st, 7, (int64_t)(end >= start ? end : start));
}

struct demangle_ctx {
	struct lp_import *imp;
	uint64_t *id;
};

static int demangle_row(sqlite3_stmt *st, void *ctx)
{
	struct demangle_ctx *x = ctx;
	/* Kernel names are C++ symbols (lp_demangle, lp_symbols.h). */
	char *d = lp_demangle((const char *)sqlite3_column_text(st, 0));
	if (d)
		*x->id = (uint64_t)lp_import_intern(x->imp, d, strlen(d));
	free(d);
	return LP_DB_STOP;
}

/* Demangled name as strings.id; the mangled one when it does not demangle
 * (C kernels, extern "C"). */
static int64_t cuda_demangle(struct lp_import *imp, struct cuda_state *s, int64_t mangled)
{
	uint64_t id;
	if (!mangled)
		return 0;
	if (lp_map_get(&s->demangled, (uint64_t)mangled, &id))
		return (int64_t)id;
	id = (uint64_t)mangled;
	struct demangle_ctx x = {imp, &id};
	char e[160];
	sqlite3_bind_int64(s->get_string, 1, mangled);
	/* a read error keeps the mangled name, which is still the kernel's */
	lp_db_step_all(s->get_string, demangle_row, &x, e, sizeof(e));
	sqlite3_reset(s->get_string);
	lp_map_put(&s->demangled, (uint64_t)mangled, id ? id : (uint64_t)mangled);
	return (int64_t)id;
}

static int cuda_kernel(struct lp_import *imp, struct cuda_state *s,
		       const struct lp_rec_cuda_kernel *k)
{
	sqlite3_stmt *st = s->ins_kernel;
	int64_t mangled = lp_import_string(imp, k->name);
	bind_common(st, imp->proc->id, k->device, k->context, k->stream, k->correlation, k->start,
		    k->end);
	sqlite3_bind_int64(st, 8, cuda_demangle(imp, s, mangled));
	sqlite3_bind_int64(st, 9, mangled);
	for (int i = 0; i < 3; i++) {
		sqlite3_bind_int(st, 10 + i, k->grid[i]);
		sqlite3_bind_int(st, 13 + i, k->block[i]);
	}
	sqlite3_bind_int(st, 16, k->static_smem);
	sqlite3_bind_int(st, 17, k->dynamic_smem);
	sqlite3_bind_int(st, 18, k->registers);
	sqlite3_bind_int64(st, 19, k->graph_id);
	sqlite3_bind_int64(st, 20, (int64_t)k->graph_node_id);
	s->kernels++;
	return lp_import_step(imp, st);
}

static int cuda_memcpy(struct lp_import *imp, struct cuda_state *s,
		       const struct lp_rec_cuda_memcpy *m)
{
	sqlite3_stmt *st = s->ins_memcpy;
	bind_common(st, imp->proc->id, m->device, m->context, m->stream, m->correlation, m->start,
		    m->end);
	sqlite3_bind_int64(st, 8, (int64_t)m->bytes);
	sqlite3_bind_text(st, 9, lp_cuda_copy_kind(m->copy_kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, lp_cuda_mem_kind(m->src_kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 11, lp_cuda_mem_kind(m->dst_kind), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 12, m->flags & 1); /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC */
	sqlite3_bind_int64(st, 13, m->src_device);
	sqlite3_bind_int64(st, 14, m->dst_device);
	sqlite3_bind_int64(st, 15, m->graph_id);
	sqlite3_bind_int64(st, 16, m->runtime_correlation);
	s->memcpys++;
	return lp_import_step(imp, st);
}

static int cuda_memset(struct lp_import *imp, struct cuda_state *s,
		       const struct lp_rec_cuda_memset *m)
{
	sqlite3_stmt *st = s->ins_memset;
	bind_common(st, imp->proc->id, m->device, m->context, m->stream, m->correlation, m->start,
		    m->end);
	sqlite3_bind_int64(st, 8, (int64_t)m->bytes);
	sqlite3_bind_int64(st, 9, m->value);
	sqlite3_bind_text(st, 10, lp_cuda_mem_kind(m->memory_kind), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 11, m->flags & 1); /* CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC */
	sqlite3_bind_int64(st, 12, m->graph_id);
	s->memsets++;
	return lp_import_step(imp, st);
}

static int cuda_sync(struct lp_import *imp, struct cuda_state *s, const struct lp_rec_cuda_sync *y)
{
	sqlite3_stmt *st = s->ins_sync;
	sqlite3_bind_int64(st, 1, imp->proc->id);
	sqlite3_bind_text(st, 2, lp_cuda_sync_type(y->type), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, y->context);
	/* CUPTI sets stream/event to CUPTI_SYNCHRONIZATION_INVALID_VALUE when n/a */
	if (y->stream != UINT32_MAX)
		sqlite3_bind_int64(st, 4, y->stream);
	else
		sqlite3_bind_null(st, 4);
	if (y->event != UINT32_MAX)
		sqlite3_bind_int64(st, 5, y->event);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_int64(st, 6, y->correlation);
	sqlite3_bind_int64(st, 7, (int64_t)y->start);
	sqlite3_bind_int64(st, 8, (int64_t)(y->end >= y->start ? y->end : y->start));
	sqlite3_bind_int64(st, 9, y->return_value);
	s->syncs++;
	return lp_import_step(imp, st);
}

static int import_cuda_cuda_api(struct lp_import *imp, struct cuda_state *s, uint32_t aux,
				const struct lp_rec_cuda_api *a)
{
	sqlite3_stmt *st = s->ins_api;
	int64_t thread = lp_import_thread(imp, a->tid);
	if (!thread)
		return -EIO;
	sqlite3_bind_int64(st, 1, imp->proc->id);
	sqlite3_bind_int64(st, 2, thread);
	sqlite3_bind_text(st, 3, aux == LP_CUDA_API_DRIVER ? "driver" : "runtime", -1,
			  SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, a->cbid);
	int64_t name = lp_import_string(imp, a->name);
	if (name)
		sqlite3_bind_int64(st, 5, name);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_int64(st, 6, a->correlation);
	sqlite3_bind_int64(st, 7, (int64_t)a->start);
	sqlite3_bind_int64(st, 8, (int64_t)(a->end >= a->start ? a->end : a->start));
	sqlite3_bind_int64(st, 9, a->return_value);
	s->api++;
	return lp_import_step(imp, st);
}

static int cuda_overhead(struct lp_import *imp, struct cuda_state *s,
			 const struct lp_rec_cuda_overhead *o)
{
	sqlite3_stmt *st = s->ins_ovh;
	sqlite3_bind_int64(st, 1, imp->proc->id);
	sqlite3_bind_text(st, 2, overhead_kind(o->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, LP_PICK(lp_obj_kinds, o->object_kind), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, o->object_id);
	sqlite3_bind_int64(st, 5, o->correlation);
	sqlite3_bind_int64(st, 6, (int64_t)o->start);
	sqlite3_bind_int64(st, 7, (int64_t)(o->end >= o->start ? o->end : o->start));
	return lp_import_step(imp, st);
}

static int cuda_memory(struct lp_import *imp, struct cuda_state *s,
		       const struct lp_rec_cuda_memory *m)
{
	sqlite3_stmt *st = s->ins_alloc;
	sqlite3_bind_int64(st, 1, imp->proc->id);
	sqlite3_bind_text(st, 2,
			  m->op == 1   ? "alloc"
			  : m->op == 2 ? "free"
				       : "unknown",
			  -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)m->ts);
	sqlite3_bind_int64(st, 4, (int64_t)m->address);
	sqlite3_bind_int64(st, 5, (int64_t)m->bytes);
	sqlite3_bind_text(st, 6, lp_cuda_mem_kind(m->memory_kind), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, m->device);
	sqlite3_bind_int64(st, 8, m->context);
	sqlite3_bind_int64(st, 9, m->stream);
	sqlite3_bind_int64(st, 10, m->correlation);
	sqlite3_bind_int(st, 11, !!m->is_async);
	return lp_import_step(imp, st);
}

/* Older logs end the record before uuid: those fields stay 0 (unknown). */
static int cuda_device(struct lp_import *imp, struct cuda_state *s, const void *payload, size_t len)
{
	struct lp_rec_cuda_device dv = {0};
	const struct lp_rec_cuda_device *d = &dv;
	memcpy(&dv, payload, len < sizeof(dv) ? len : sizeof(dv));
	sqlite3_stmt *st = s->ins_dev;
	char uuid[48], pci[24];
	const uint8_t *u = d->uuid;
	int known = 0;
	for (size_t i = 0; i < sizeof(d->uuid); i++)
		known |= u[i];
	if (known) {
		snprintf(uuid, sizeof(uuid),
			 "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 d->flags & LP_CUDA_DEVICE_MIG ? "MIG" : "GPU", u[0], u[1], u[2], u[3],
			 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
			 u[15]);
		sqlite3_bind_text(st, 10, uuid, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(st, 10);
	}
	if (d->flags & LP_CUDA_DEVICE_PCI) {
		snprintf(pci, sizeof(pci), "%04x:%02x:%02x.0", d->pci_domain, d->pci_bus,
			 d->pci_device);
		sqlite3_bind_text(st, 11, pci, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(st, 11);
	}
	sqlite3_bind_int64(st, 1, imp->proc->id);
	sqlite3_bind_int64(st, 2, d->id);
	int64_t name = lp_import_string(imp, d->name);
	if (name)
		sqlite3_bind_int64(st, 3, name);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int64(st, 4, d->sm_count);
	sqlite3_bind_int64(st, 5, d->cc_major);
	sqlite3_bind_int64(st, 6, d->cc_minor);
	sqlite3_bind_int64(st, 7, (int64_t)d->global_memory);
	sqlite3_bind_int64(st, 8, d->core_clock_khz);
	sqlite3_bind_int64(st, 9, (int64_t)d->memory_bandwidth);
	return lp_import_step(imp, st);
}

static void cuda_status(struct cuda_state *s, uint32_t aux, const struct lp_rec_cuda_status *r,
			size_t len)
{
	struct cuda_proc *p = &s->p;
	size_t n = aux <= len - sizeof(*r) ? aux : len - sizeof(*r);
	char msg[512];
	if (n >= sizeof(msg))
		n = sizeof(msg) - 1;
	memcpy(msg, r + 1, n);
	msg[n] = 0;
	p->have_status = 1;
	if (r->phase == LP_CUDA_STARTED) {
		p->started = 1;
		p->driver_version = r->driver_version;
	} else if (r->phase == LP_CUDA_START_FAILED) {
		p->failed = 1;
		p->code = r->code;
		snprintf(p->message, sizeof(p->message), "%s", msg);
	} else if (r->phase == LP_CUDA_KIND_FAILED) {
		/* "... (CUPTI: <error> in cuptiActivityEnable(KIND))": keep KIND. */
		const char *k = strstr(msg, "cuptiActivityEnable(");
		k = k ? strchr(k, '(') : NULL;
		const char *e = k ? strchr(k, ')') : NULL;
		size_t l = strlen(p->kinds_failed);
		if (k && e && l + (size_t)(e - k) + 2 < sizeof(p->kinds_failed))
			snprintf(p->kinds_failed + l, sizeof(p->kinds_failed) - l, "%s%.*s",
				 l ? "," : "", (int)(e - k - 1), k + 1);
	}
}

#define LP_PAYLOAD(T)                                                                              \
	if (len < sizeof(T))                                                                       \
	return 0
static int cuda_record(struct lp_import *imp, void *state, uint32_t tid,
		       const struct lp_rec_header *h, const void *payload, size_t len)
{
	struct cuda_state *s = state;
	(void)tid; /* the CUPTI buffer thread; API records carry the caller's tid */
	switch (h->type) {
	case LP_REC_CUDA_STATUS:
		LP_PAYLOAD(struct lp_rec_cuda_status);
		cuda_status(s, h->aux, payload, len);
		return 0;
	case LP_REC_CUDA_KERNEL:
		LP_PAYLOAD(struct lp_rec_cuda_kernel);
		s->p.ops++;
		return cuda_kernel(imp, s, payload);
	case LP_REC_CUDA_MEMCPY:
		LP_PAYLOAD(struct lp_rec_cuda_memcpy);
		s->p.ops++;
		return cuda_memcpy(imp, s, payload);
	case LP_REC_CUDA_MEMSET:
		LP_PAYLOAD(struct lp_rec_cuda_memset);
		s->p.ops++;
		return cuda_memset(imp, s, payload);
	case LP_REC_CUDA_SYNC:
		LP_PAYLOAD(struct lp_rec_cuda_sync);
		s->p.ops++;
		return cuda_sync(imp, s, payload);
	case LP_REC_CUDA_API:
		LP_PAYLOAD(struct lp_rec_cuda_api);
		s->p.ops++;
		return import_cuda_cuda_api(imp, s, h->aux, payload);
	case LP_REC_CUDA_OVERHEAD:
		LP_PAYLOAD(struct lp_rec_cuda_overhead);
		return cuda_overhead(imp, s, payload);
	case LP_REC_CUDA_MEMORY:
		LP_PAYLOAD(struct lp_rec_cuda_memory);
		return cuda_memory(imp, s, payload);
	case LP_REC_CUDA_DEVICE:
		if (len < LP_CUDA_DEVICE_V1_SIZE)
			return 0;
		return cuda_device(imp, s, payload, len);
	case LP_REC_CUDA_STATS: {
		/* Older logs end the record before bad_ts: those counts are 0. */
		struct lp_rec_cuda_stats st = {0};
		if (len < LP_CUDA_STATS_V1_SIZE)
			return 0;
		memcpy(&st, payload, len < sizeof(st) ? len : sizeof(st));
		if (st.ts >= s->p.stats.ts) /* totals grow: keep the latest */
			s->p.stats = st;
		return 0;
	}
	case LP_REC_CUDA_API_COUNT: {
		LP_PAYLOAD(struct lp_rec_cuda_api_count);
		const struct lp_rec_cuda_api_count *c = payload;
		sqlite3_stmt *st = s->ins_api_count;
		int64_t name = lp_import_string(imp, c->name);
		sqlite3_bind_int64(st, 1, imp->proc->id);
		sqlite3_bind_text(st, 2, h->aux == LP_CUDA_API_DRIVER ? "driver" : "runtime", -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, c->cbid);
		if (name)
			sqlite3_bind_int64(st, 4, name);
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, (int64_t)c->calls);
		sqlite3_bind_int64(st, 6, (int64_t)c->total_ns);
		return lp_import_step(imp, st);
	}
	default:
		imp->unknown_records++;
		return 0;
	}
}

/* ---- per process: the capture row and the honest-failure sentence ------- */

struct modules_ctx {
	char *cudart;
	size_t rlen;
	int *has_driver;
};

static int module_row(sqlite3_stmt *st, void *ctx)
{
	struct modules_ctx *x = ctx;
	const char *path = (const char *)sqlite3_column_text(st, 0);
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	if (!base)
		return 0;
	if (!strncmp(base, "libcuda.so", 10))
		*x->has_driver = 1;
	else if (!x->cudart[0])
		snprintf(x->cudart, x->rlen, "%s", base);
	return 0;
}

/* CUDA libraries the process had mapped (modules are in from pass 1). */
static void cuda_modules(struct lp_import *imp, struct cuda_state *s, char *cudart, size_t rlen,
			 int *has_driver)
{
	sqlite3_stmt *st = s->find_modules;
	*has_driver = 0;
	cudart[0] = 0;
	struct modules_ctx x = {cudart, rlen, has_driver};
	char e[160];
	sqlite3_bind_int64(st, 1, imp->proc->id);
	/* a read error leaves the libraries unknown: the sentence then says
	 * less, the recorded data is untouched */
	lp_db_step_all(st, module_row, &x, e, sizeof(e));
	sqlite3_reset(st);
}

/* Whether this machine can load the driver at all (the importer usually
 * runs right after the app, on the same machine). */
static int driver_installed(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		dlclose(h);
	return h != NULL;
}

static void cuda_why_not(struct lp_import *imp, struct cuda_state *s, char *out, size_t len,
			 int *used)
{
	struct cuda_proc *p = &s->p;
	char lib[256];
	int driver;
	*used = 1;
	if (p->failed) {
		snprintf(out, len, "%s", p->message);
		return;
	}
	if (p->started && p->stats.conflicts & LP_CUDA_CONFLICT_CALLBACKS) {
		snprintf(out, len,
			 "another CUPTI client (the PyTorch profiler?) registered its own activity "
			 "buffer callbacks: the GPU records went to it, their number unknown");
		return;
	}
	if (p->started && p->stats.conflicts & LP_CUDA_CONFLICT_FLUSH_TIMEOUT) {
		snprintf(out, len,
			 "the flush at exit did not finish in time (CUPTI did not return): the "
			 "GPU records are missing, their number unknown");
		return;
	}
	if (p->started) {
		snprintf(out, len, "CUPTI ran but the app launched no GPU work");
		return;
	}
	cuda_modules(imp, s, lib, sizeof(lib), &driver);
	if (driver)
		snprintf(out, len,
			 "the CUDA driver was loaded but the latprof CUPTI collector never started "
			 "(CUDA_INJECTION64_PATH unset, --cuda=off, or replaced by another tool)");
	else if (lib[0] && !driver_installed())
		snprintf(out, len,
			 "no CUDA driver on this machine (the app loaded %s; libcuda.so.1 "
			 "is not installed)",
			 lib);
	else if (lib[0])
		snprintf(out, len, "the app loaded %s but never initialized the CUDA driver", lib);
	else
		*used = 0;
}

/* "subscriber,callbacks": the names of LP_CUDA_CONFLICT_* bits; 0 none. */
static int cuda_conflicts(unsigned m, char *out, size_t len)
{
	static const char *const names[] = {"subscriber",    "callbacks", "clock",
					    "flush_timeout", "buffers",	  "stopped"};
	size_t l = 0;
	out[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (m & (1u << i) && l + strlen(names[i]) + 2 < len)
			l += (size_t)snprintf(out + l, len - l, "%s%s", l ? "," : "", names[i]);
	return l > 0;
}

/* What a conflict means for the numbers, said once in cuda.status. */
static const char *cuda_conflict_note(unsigned m)
{
	if (m & LP_CUDA_CONFLICT_CALLBACKS)
		return "; another CUPTI client (the PyTorch profiler?) took the activity buffers "
		       "during the run: records after that are missing, their number unknown";
	if (m & LP_CUDA_CONFLICT_STOPPED)
		return "; the capture stopped before the exit (another CUPTI client disabled the "
		       "activity kinds or took the buffers): records after that are missing, their "
		       "number unknown";
	if (m & LP_CUDA_CONFLICT_FLUSH_TIMEOUT)
		return "; the flush at exit did not finish in time: the last records are "
		       "missing, their number unknown";
	if (m & LP_CUDA_CONFLICT_BUFFERS)
		return "; buffer requests were refused (LATPROF_CUDA_BUFFER_MB): records lost";
	if (m & LP_CUDA_CONFLICT_CLOCK)
		return "; records stamped by another client's clock were dropped";
	return "";
}

static int cuda_end_process(struct lp_import *imp, void *state)
{
	struct cuda_state *s = state;
	struct cuda_proc *p = &s->p;
	char why[512] = "";
	int used = 1, rc = 0;
	int captured = p->started && p->ops > 0;
	if (!captured)
		cuda_why_not(imp, s, why, sizeof(why), &used);
	if (captured || used || p->have_status) {
		sqlite3_stmt *st = s->ins_capture;
		sqlite3_bind_int64(st, 1, imp->proc->id);
		sqlite3_bind_int(st, 2, p->started);
		sqlite3_bind_int(st, 3, p->code);
		if (why[0])
			sqlite3_bind_text(st, 4, why, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, (int64_t)p->stats.records);
		sqlite3_bind_int64(st, 6, (int64_t)p->stats.dropped);
		sqlite3_bind_int64(st, 7, (int64_t)p->stats.unknown_kinds);
		sqlite3_bind_int64(st, 8, (int64_t)p->stats.log_drops);
		sqlite3_bind_int64(st, 9, (int64_t)p->stats.buffers);
		sqlite3_bind_int64(st, 10, (int64_t)p->stats.buffer_denied);
		if (p->kinds_failed[0])
			sqlite3_bind_text(st, 11, p->kinds_failed, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 11);
		sqlite3_bind_int64(st, 12, (int64_t)p->stats.bad_ts);
		sqlite3_bind_int64(st, 13, (int64_t)p->stats.foreign_ts);
		sqlite3_bind_int64(st, 14, (int64_t)p->stats.filtered);
		char conf[128];
		if (cuda_conflicts(p->stats.conflicts, conf, sizeof(conf)))
			sqlite3_bind_text(st, 15, conf, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 15);
		rc = lp_import_step(imp, st);
	}
	if (rc == 0 && p->driver_version) {
		sqlite3_stmt *st = s->set_driver;
		char v[32];
		snprintf(v, sizeof(v), "%u.%u", p->driver_version / 1000,
			 p->driver_version % 1000 / 10);
		sqlite3_bind_text(st, 1, v, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, imp->proc->id);
		rc = lp_import_step(imp, st);
	}
	s->procs_captured += captured;
	s->procs_used += captured || used;
	/* Every record lost counts as dropped: CUPTI's, and the collector's
	 * for timestamps it could not use. */
	s->dropped += (long long)(p->stats.dropped + p->stats.bad_ts + p->stats.foreign_ts);
	s->conflicts |= p->stats.conflicts;
	s->unknown_kinds += (long long)p->stats.unknown_kinds;
	if (!captured && used && why[0] && !s->status[0])
		snprintf(s->status, sizeof(s->status), "%s", why);
	memset(p, 0, sizeof(*p));
	return rc;
}

static int cuda_finish(struct lp_import *imp, void *state)
{
	struct cuda_state *s = state;
	char status[1600];
	if (s->procs_captured)
		snprintf(status, sizeof(status),
			 "captured: %lld kernels, %lld memcpys, %lld memsets, %lld syncs, %lld API "
			 "calls in %d process%s; %s%lld records dropped by CUPTI%s%s%s",
			 s->kernels, s->memcpys, s->memsets, s->syncs, s->api, s->procs_captured,
			 s->procs_captured == 1 ? "" : "es",
			 s->conflicts & (LP_CUDA_CONFLICT_CALLBACKS |
					 LP_CUDA_CONFLICT_FLUSH_TIMEOUT | LP_CUDA_CONFLICT_STOPPED)
			     ? "at least "
			     : "",
			 s->dropped, cuda_conflict_note(s->conflicts),
			 s->status[0] ? "; other processes: " : "", s->status);
	else if (s->procs_used)
		snprintf(status, sizeof(status), "not captured: %s", s->status);
	else
		snprintf(status, sizeof(status), "not captured: the app did not use CUDA");
	int rc = lp_import_meta(imp, "cuda.captured", NULL, s->procs_captured > 0);
	rc = rc ? rc : lp_import_meta(imp, "cuda.used", NULL, s->procs_used > 0);
	rc = rc ? rc : lp_import_meta(imp, "cuda.status", status, 0);
	rc = rc ? rc : lp_import_meta(imp, "cuda.dropped_records", NULL, s->dropped);
	rc = rc ? rc : lp_import_meta(imp, "cuda.unknown_kinds", NULL, s->unknown_kinds);
	char conf[128];
	if (cuda_conflicts(s->conflicts, conf, sizeof(conf)))
		rc = rc ? rc : lp_import_meta(imp, "cuda.conflicts", conf, 0);
	return rc;
}

static int cuda_begin(struct lp_import *imp, void **state)
{
	struct cuda_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*state = s;
#define LP_COMMON "process_id, device, context, stream, correlation_id, start_ns, end_ns"
	s->ins_kernel = lp_import_prepare(
	    imp, "INSERT INTO kernels(" LP_COMMON ", name_id, mangled_id, grid_x, grid_y, "
		 "grid_z, block_x, block_y, block_z, static_smem, dynamic_smem, registers, "
		 "graph_id, graph_node_id) VALUES (?,?,?,?,?,?,?,nullif(?8,0),nullif(?9,0),?,?,?,"
		 "?,?,?,?,?,?,?,?)");
	s->ins_memcpy = lp_import_prepare(
	    imp, "INSERT INTO memcpys(" LP_COMMON ", bytes, copy_kind, src_kind, dst_kind, "
		 "async, src_device, dst_device, graph_id, runtime_correlation_id) VALUES "
		 "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,nullif(?16,0))");
	s->ins_memset = lp_import_prepare(imp, "INSERT INTO memsets(" LP_COMMON
					       ", bytes, value, memory_kind, async, "
					       "graph_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
	s->ins_sync = lp_import_prepare(
	    imp, "INSERT INTO syncs(process_id, type, context, stream, event, correlation_id, "
		 "start_ns, end_ns, return_value) VALUES (?,?,?,?,?,?,?,?,?)");
	s->ins_api = lp_import_prepare(
	    imp, "INSERT INTO cuda_api(process_id, thread_id, domain, cbid, name_id, "
		 "correlation_id, start_ns, end_ns, return_value) VALUES (?,?,?,?,?,?,?,?,?)");
	s->ins_dev = lp_import_prepare(
	    imp, "INSERT INTO gpu_devices(process_id, device, name, sm_count, cc_major, cc_minor, "
		 "memory_bytes, core_clock_khz, mem_bandwidth_kbs, uuid, pci_bus_id) VALUES "
		 "(?1,?2,(SELECT value FROM strings WHERE id = ?3),?4,?5,?6,?7,?8,?9,?10,?11)");
	s->ins_ovh = lp_import_prepare(
	    imp, "INSERT INTO gpu_overhead(process_id, kind, object_kind, object_id, "
		 "correlation_id, start_ns, end_ns) VALUES (?,?,?,?,?,?,?)");
	s->ins_alloc = lp_import_prepare(
	    imp, "INSERT INTO gpu_allocs(process_id, op, ts_ns, address, bytes, memory_kind, "
		 "device, context, stream, correlation_id, async) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
	s->ins_capture = lp_import_prepare(
	    imp,
	    "INSERT INTO cuda_capture(process_id, started, code, message, records, dropped, "
	    "unknown_kinds, log_drops, buffers, buffer_denied, kinds_failed, bad_timestamps, "
	    "foreign_timestamps, filtered_api, conflicts) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	s->ins_api_count = lp_import_prepare(
	    imp, "INSERT OR REPLACE INTO cuda_api_counts(process_id, domain, cbid, name_id, "
		 "calls, total_ns) VALUES (?,?,?,?,?,?)");
	s->get_string = lp_import_prepare(imp, "SELECT value FROM strings WHERE id = ?");
	s->find_modules = lp_import_prepare(
	    imp, "SELECT path FROM modules WHERE process_id = ? AND (path LIKE '%/libcuda.so%' "
		 "OR path LIKE '%/libcudart.so%') ORDER BY path LIKE '%/libcuda.so%' DESC");
	s->set_driver = lp_import_prepare(
	    imp, "UPDATE gpu_devices SET driver_version = ? WHERE process_id = ?");
	if (!s->ins_kernel || !s->ins_memcpy || !s->ins_memset || !s->ins_sync || !s->ins_api ||
	    !s->ins_dev || !s->ins_ovh || !s->ins_alloc || !s->ins_capture || !s->get_string ||
	    !s->find_modules || !s->set_driver || !s->ins_api_count)
		return -EIO;
	return 0;
}

static void cuda_destroy(void *state)
{
	struct cuda_state *s = state;
	if (!s)
		return;
	sqlite3_stmt *v[] = {s->ins_kernel,   s->ins_memcpy, s->ins_memset,   s->ins_sync,
			     s->ins_api,      s->ins_dev,    s->ins_ovh,      s->ins_alloc,
			     s->ins_capture,  s->get_string, s->find_modules, s->set_driver,
			     s->ins_api_count};
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		sqlite3_finalize(v[i]);
	lp_map_free(&s->demangled);
	free(s);
}

/* IF NOT EXISTS: a foreign import builds them before its last passes,
 * which look rows up by correlation id (lp_foreign_finish). Only indexes a
 * reader uses: every statement that report (each view, --html), export,
 * plot, check and diff prepared on the three nsys captures of
 * ../shared/realdata, put through EXPLAIN QUERY PLAN, used kernels(start_ns)
 * only to count the table and syncs(start_ns) never, and no reader has a
 * condition on either column; so neither is made: the nsys bench's
 * database is 10% smaller (77.9 MB -> 70.0 MB), its import as fast (the
 * keys came in order, so the index only appended). */
static const char lp_cuda_indexes[] =
    "CREATE INDEX IF NOT EXISTS cuda_api_corr ON cuda_api(process_id, correlation_id);"
    "CREATE INDEX IF NOT EXISTS cuda_api_start ON cuda_api(start_ns);"
    "CREATE INDEX IF NOT EXISTS kernels_corr ON kernels(process_id, correlation_id);"
    "CREATE INDEX IF NOT EXISTS memcpys_corr ON memcpys(process_id, correlation_id);"
    "CREATE INDEX IF NOT EXISTS memsets_corr ON memsets(process_id, correlation_id);";

const struct lp_import_source lp_src_cuda = {
    .name = "cuda",
    .first_type = LP_REC_CUDA_FIRST,
    .last_type = LP_REC_CUDA_LAST,
    .schema = lp_schema_cuda_sql,
    .indexes = lp_cuda_indexes,
    .begin = cuda_begin,
    .record = cuda_record,
    .end_process = cuda_end_process,
    .finish = cuda_finish,
    .destroy = cuda_destroy,
};
