/* SPDX-License-Identifier: MIT */
/* Kind names of schemas/cuda.sql for CUPTI's enums: the CUPTI source
 * stores them, and the nsys and Kineto importers (import/captures/) store
 * the same names for the same values. */
#ifndef LP_CUDA_KINDS_H
#define LP_CUDA_KINDS_H

#include <stdint.h>

const char *lp_cuda_copy_kind(int64_t v);
const char *lp_cuda_mem_kind(int64_t v);
const char *lp_cuda_sync_type(int64_t v);

#endif
