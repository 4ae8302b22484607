/* SPDX-License-Identifier: MIT */
/*
 * CUDA analyses over schemas/cuda.sql: the nsys-stats-like summaries
 * (kernels, memcpy, sync, CUDA API), launch delay, GPU idle inside
 * requests, and GPU work per launching NVTX stage. Each result is a
 * struct; report/lp_report_cuda.c renders it (text, JSON, CSV).
 */
#ifndef LP_CUDA_H
#define LP_CUDA_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct lp_cuda_stat {
	int64_t n, total, min, max, med;
	double mean, stddev;
};

/* What every CUDA report starts with: was GPU data captured at all. */
struct lp_cuda_capture {
	int captured;	  /* meta cuda.captured */
	char status[800]; /* meta cuda.status */
	int64_t dropped;  /* records CUPTI dropped */
	/* more were lost, in a number nobody knows: another CUPTI client took
	 * the capture, or the flush at exit hung (meta cuda.conflicts) */
	int missing_unknown;
};

/* device: the CUDA device ordinal of the row's work; -1 when the capture
 * has one device (rows are not split) or the row has none (docs/schema.md,
 * "Per-device views"). */
struct lp_cuda_kern_row {
	char *name;
	int64_t device;
	struct lp_cuda_stat st;
	double share; /* of all kernel time, 0..1 */
};

struct lp_cuda_memcpy_row {
	char *copy_kind, *src_kind, *dst_kind;
	int async;
	int64_t device;
	int64_t bytes;
	struct lp_cuda_stat st;
	double gbps;  /* bytes / total time */
	double share; /* of all memcpy time */
};

struct lp_cuda_sync_row {
	char *type; /* syncs.type, or "synchronous memcpy" (host blocked in cudaMemcpy) */
	int64_t device;
	struct lp_cuda_stat st;
	double share; /* of the recorded processes' wall time */
};

struct lp_cuda_api_row {
	char *name;
	int64_t device;
	struct lp_cuda_stat st;
	double share; /* of all API time */
};

/* GPU work per launching stage: the innermost NVTX range open on the
 * launching thread when the API call started. */
struct lp_cuda_stage_row {
	char *stage; /* "(no range)" when none */
	int64_t launches;
	int64_t kernel_ns, memcpy_ns, memset_ns;
	int64_t api_ns, sync_ns;	  /* host side inside ranges of that name */
	struct lp_cuda_stat launch_delay; /* kernels: API end -> GPU start */
};

enum lp_cuda_view { LP_CUDA_KERNELS, LP_CUDA_MEMCPY, LP_CUDA_SYNC, LP_CUDA_API };

struct lp_cuda_report {
	enum lp_cuda_view view;
	struct lp_cuda_capture cap;
	size_t n;
	union {
		struct lp_cuda_kern_row *kern;
		struct lp_cuda_memcpy_row *memcpy;
		struct lp_cuda_sync_row *sync;
		struct lp_cuda_api_row *api;
	} rows;
	int64_t total_ns; /* of the listed rows */
	int64_t wall_ns;  /* processes' wall time (sync share denominator) */
	int64_t devices;  /* distinct devices of the GPU work; > 1: rows per device */
	/* --kernels and --sync also carry these */
	struct lp_cuda_stat launch_delay; /* per launch: API call end -> its first kernel's start */
	int64_t graph_launches, graph_kernels; /* CUDA graph launches and their kernel nodes */
	int64_t requests;		       /* outermost NVTX ranges with GPU work */
	int64_t request_ns;		       /* their total wall time */
	int64_t gpu_idle_ns;		       /* inside them, GPU busy with nothing */
	size_t nstages;
	struct lp_cuda_stage_row *stages;
};

/* Reads meta; 0 even for databases without CUDA tables. */
int lp_cuda_capture_read(sqlite3 *db, struct lp_cuda_capture *c);
/* Computes one view; 0 or -errno with err. A database without GPU data
 * gives an empty report whose cap says why. */
int lp_cuda_analyze(sqlite3 *db, enum lp_cuda_view view, struct lp_cuda_report *r, char *err,
		    size_t errlen);
void lp_cuda_report_free(struct lp_cuda_report *r);

/* Category providers for the stage breakdown (struct lp_breakdown_category.load):
 * per-thread intervals; -ENOENT without CUDA tables. In precedence order:
 * sync wait, CUDA API, GPU kernel, GPU memcpy/memset. */
struct lp_ivec;
int lp_cuda_load_sync_wait(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen);
int lp_cuda_load_api(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen);
int lp_cuda_load_gpu_kernel(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen);
int lp_cuda_load_gpu_memcpy(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen);

#endif
