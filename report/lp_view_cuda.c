/* SPDX-License-Identifier: MIT */
/* report --kernels, --memcpy, --sync, --cuda-api: the GPU views (analysis/lp_cuda.h). */
#include <stdlib.h>

#include "lp_cuda.h"
#include "lp_report_cuda.h"
#include "lp_view.h"

static void cuda_free(void *res)
{
	lp_cuda_report_free(res);
	free(res);
}

static void *cuda_analyze(sqlite3 *db, enum lp_cuda_view v, char *err, size_t errlen)
{
	struct lp_cuda_report *r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (lp_cuda_analyze(db, v, r, err, errlen)) {
		cuda_free(r);
		return NULL;
	}
	return r;
}

#define CUDA_VIEW(fn, which)                                                                       \
	static void *fn(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen)       \
	{                                                                                          \
		(void)o;                                                                           \
		return cuda_analyze(db, which, err, errlen);                                       \
	}
CUDA_VIEW(kernels_analyze, LP_CUDA_KERNELS)
CUDA_VIEW(memcpy_analyze, LP_CUDA_MEMCPY)
CUDA_VIEW(sync_analyze, LP_CUDA_SYNC)
CUDA_VIEW(api_analyze, LP_CUDA_API)

LP_VIEW_WRITER(cuda_text, lp_cuda_write_text)
LP_VIEW_WRITER(cuda_json, lp_cuda_write_json)
LP_VIEW_WRITER(cuda_csv, lp_cuda_write_csv)

/* All four share the writers and the schema ("view" tells them apart). */
#define CUDA_VIEW_ENTRY(name, fn, text)                                                            \
	{                                                                                          \
		.flag = name, .help = text, .schema = "cuda", .schema_version = 1, .analyze = fn,  \
		.free = cuda_free, .write = {cuda_text, cuda_json, cuda_csv},                      \
	}

const struct lp_view lp_view_kernels =
    CUDA_VIEW_ENTRY("kernels", kernels_analyze,
		    "GPU kernels by name: count, total/mean/p50/p99/max, share of\n"
		    "GPU time; launch delay, CUDA graph launches, GPU idle inside\n"
		    "requests, GPU work by launching stage");
const struct lp_view lp_view_memcpy =
    CUDA_VIEW_ENTRY("memcpy", memcpy_analyze,
		    "GPU copies by kind and memory kinds (HtoD, pageable -> device,\n"
		    "async or not): count, bytes, GB/s, durations, share");
const struct lp_view lp_view_sync =
    CUDA_VIEW_ENTRY("sync", sync_analyze,
		    "CPU waits for the GPU (device, stream, event synchronize) by\n"
		    "type: count, durations, share of wall time");
const struct lp_view lp_view_cuda_api = CUDA_VIEW_ENTRY(
    "cuda-api", api_analyze, "CUDA runtime and driver calls by name: count, durations, share");
