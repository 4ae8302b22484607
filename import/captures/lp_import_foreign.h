/* SPDX-License-Identifier: MIT */
/*
 * The row writer both foreign importers share (lp_import_nsys.c,
 * lp_import_kineto.c): processes, threads, domains, GPU operations, API
 * calls and ranges in the tables of schemas/ (core, cuda, nvtx), with the same layouts the
 * CUPTI and NVTX importers fill, then the passes a capture needs once every
 * row is in (range nesting, sync classification, cuda_capture, meta).
 */
#ifndef LP_IMPORT_FOREIGN_H
#define LP_IMPORT_FOREIGN_H

#include <stdint.h>

#include "lp_corrtally.h"
#include "lp_cuda_kinds.h" /* lp_cuda_copy_kind... */
#include "lp_import.h"
#include "lp_map.h"

/* One GPU operation's common columns (schemas/cuda.sql). */
struct lp_foreign_op {
	int64_t
	    proc; /* processes.id; 0 or lp_foreign.provisional = not known yet (lp_foreign_adopt) */
	int64_t device, context, stream, corr;
	int64_t start, end;
};

/* Copy and memset APIs by name (GLOB and fnmatch patterns): synchronous
 * unless the name says Async. */
#define LP_FOREIGN_COPY_CALLS "cu*Memcpy*"
#define LP_FOREIGN_SET_CALLS "cu*Memset*"

/* Kinds of records lp_foreign_bad_time counts, in the order the report names them. */
enum lp_foreign_kind {
	LP_FOREIGN_KERNEL,
	LP_FOREIGN_MEMCPY,
	LP_FOREIGN_MEMSET,
	LP_FOREIGN_SYNC,
	LP_FOREIGN_API,
	LP_FOREIGN_RANGE, /* ranges and marks */
	LP_FOREIGN_OSRT,  /* OS runtime calls (lock waits, blocking calls) */
	LP_FOREIGN_N
};

struct lp_foreign {
	struct lp_import *imp;
	sqlite3_stmt *ins_proc, *ins_thread, *ins_kernel, *ins_memcpy, *ins_memset, *ins_sync,
	    *ins_api, *ins_range, *ins_mark, *ins_domain, *ins_dev, *ins_alloc, *ins_lock,
	    *ins_wait, *ins_cond, *ins_block, *ins_nest;
	struct lp_map procs;   /* source pid + 1 -> processes.id */
	struct lp_map threads; /* (pid << 32 | tid) + 1 -> threads.id */
	struct lp_map domains; /* xxh64(process, name) -> domains.id */
	struct lp_map locks;   /* xxh64(process, function) -> locks.id */
	int64_t *lo, *hi;      /* per processes.id: first and last timestamp */
	long long *calls;      /* and API calls (lp_foreign_api_seen) */
	size_t nbounds;
	int calls_lost; /* a call not counted there (no memory) */
	/* rows written */
	long long kernels, memcpys, memsets, syncs, api, ranges, marks, lock_waits, cond_waits,
	    allocs, devices, blocking;
	long long unattributed;		  /* GPU work whose launching call is not in the capture */
	long long bad_time[LP_FOREIGN_N]; /* records dropped by lp_foreign_bad_time, per kind */
	/* Set by an importer whose correlation ids are final as rows are
	 * written (nsys; Kineto unless flows rewrite them): unattributed is
	 * then tallied as rows come (lp_corrtally.h), not looked up per row by
	 * SQL at the end, which lp_foreign_finish does when the tally turned itself
	 * off. tally_per_process: ids count from 1 in each process (nsys, by
	 * processes.id); else one set of ids for the capture (Kineto). */
	int count_unattributed, tally_per_process;
	struct lp_corrtally tally;
	/* GPU work whose process is decided by lp_foreign_adopt may be written with
	 * this process id instead of 0 (Kineto: the first host process): when
	 * it is the one process, no row needs rewriting. unowned counts the
	 * rows written with 0. */
	int64_t provisional;
	long long unowned;
	long long syncs_by_name; /* syncs whose type the API name corrected */
	/* Set by an importer that wrote memcpys.async and memsets.async from
	 * the calls' names itself (LP_FOREIGN_*_CALLS without "Async"), every call
	 * having come before the work (nsys); else lp_foreign_finish does by SQL. */
	int async_from_calls;
	/* what the source is (meta import.*) */
	const char *source;   /* "nsys", "kineto" */
	const char *producer; /* "Nsight Systems", "PyTorch profiler (Kineto)" */
	char producer_version[64];
	char schema_version[64];
	char sha256[65];
	char file[256];
	char wall_start[64];
	char host[128];
	char default_request[128]; /* meta import.default_request, "" = none */
	const char *not_recorded;  /* what the format does not carry */
};

int lp_foreign_begin(struct lp_foreign *fx, struct lp_import *imp);
void lp_foreign_end(struct lp_foreign *fx);

/* Rows: 0 on a write error (imp->err set). name may be NULL. */
int64_t lp_foreign_process(struct lp_foreign *fx, int64_t pid, const char *name);
int64_t lp_foreign_thread(struct lp_foreign *fx, int64_t proc, int64_t pid, int64_t tid);
int lp_foreign_thread_name(struct lp_foreign *fx, int64_t thread, const char *name);
int64_t lp_foreign_domain(struct lp_foreign *fx, int64_t proc, const char *name);
/* Ranges of domains in one group nest in each other (per thread). */
int lp_foreign_nest_group(struct lp_foreign *fx, int64_t domain, int64_t group);
void lp_foreign_seen(struct lp_foreign *fx, int64_t proc, int64_t start, int64_t end);

int lp_foreign_kernel(struct lp_foreign *fx, const struct lp_foreign_op *o, int64_t name_id,
		      int64_t mangled_id, const int64_t grid[3], const int64_t block[3],
		      int64_t static_smem, int64_t dyn_smem, int64_t regs, int64_t graph_id);
int lp_foreign_memcpy(struct lp_foreign *fx, const struct lp_foreign_op *o, int64_t bytes,
		      const char *kind, const char *src, const char *dst, int async);
int lp_foreign_memset(struct lp_foreign *fx, const struct lp_foreign_op *o, int64_t bytes,
		      int64_t value, const char *mem_kind, int async);
int lp_foreign_sync(struct lp_foreign *fx, const struct lp_foreign_op *o, const char *type,
		    int64_t event);
int lp_foreign_api(struct lp_foreign *fx, int64_t proc, int64_t thread, const char *domain,
		   int64_t cbid, int64_t name_id, int64_t corr, int64_t start, int64_t end,
		   int64_t ret);
/* The bookkeeping of lp_foreign_api and of the GPU rows without their insert, for
 * an importer that moves the rows itself (nsys: INSERT ... SELECT): bounds,
 * counts and (attribute) whether the work's launching call was seen. */
int lp_foreign_api_seen(struct lp_foreign *fx, int64_t proc, int64_t corr, int64_t start,
			int64_t end);
void lp_foreign_op_seen(struct lp_foreign *fx, const struct lp_foreign_op *o, int attribute);
/* flags: LP_RANGEF_* (lp_nvtx_db.h); payload < 0 = none. */
int lp_foreign_range(struct lp_foreign *fx, int64_t proc, int64_t domain, int64_t name_id,
		     int64_t category, int64_t start, int64_t end, int64_t thread,
		     int64_t end_thread, int64_t payload, int64_t color, unsigned flags);
int lp_foreign_mark(struct lp_foreign *fx, int64_t proc, int64_t domain, int64_t name_id,
		    int64_t category, int64_t ts, int64_t thread);
int lp_foreign_device(struct lp_foreign *fx, int64_t proc, int64_t device, const char *name,
		      int64_t sm_count, int64_t cc_major, int64_t cc_minor, int64_t mem_bytes,
		      int64_t clock_khz, int64_t bw_kbs);
int lp_foreign_alloc(struct lp_foreign *fx, int64_t proc, int free_op, int64_t ts, int64_t address,
		     int64_t bytes, const char *mem_kind, int64_t device, int64_t context,
		     int64_t corr);
/* A blocking pthread/semaphore call the source recorded without the lock's
 * address: one lock row per process and function. cond = condition wait. */
int lp_foreign_lock_call(struct lp_foreign *fx, int64_t proc, int64_t thread, const char *function,
			 int64_t start, int64_t end, int cond);
/* A blocking call (sleep, descriptor I/O, poll, join) -> blocking_calls:
 * category and fd_kind as docs/schema.md defines them (fd_kind NULL for calls
 * without a descriptor); the source recorded no descriptor, so fd is NULL. */
int lp_foreign_block_call(struct lp_foreign *fx, int64_t proc, int64_t thread, const char *call,
			  const char *category, const char *fd_kind, int64_t start, int64_t end,
			  int64_t result);

/* A record with a zero or inverted timestamp (start or end at or before 0
 * on the source's clock, or end before start): a record the source flushed
 * before it was complete (CUPTI's forced flush returns kernels still running
 * with start or end 0). 1 when it is to be dropped, counted by kind; the
 * importer writes nothing of it. */
int lp_foreign_bad_time(struct lp_foreign *fx, enum lp_foreign_kind kind, int64_t start,
			int64_t end);

/* GPU rows written with proc 0 go to the process whose API call has their
 * correlation id, else to fallback. */
int lp_foreign_adopt(struct lp_foreign *fx, int64_t fallback);
/* After every row: nesting, process bounds, syncs by API name, cuda_capture. */
int lp_foreign_finish(struct lp_foreign *fx);
/* Meta keys (import.*, cuda.*, nvtx.*, host, wall_start, clock). */
int lp_foreign_meta(struct lp_foreign *fx);

/* SHA-256 of a whole file as hex; 0 or -errno. */
int lp_foreign_sha256_file(const char *path, char hex[65]);
void lp_foreign_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif
