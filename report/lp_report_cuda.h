/* SPDX-License-Identifier: MIT */
/* Writers for the CUDA summaries (analysis/lp_cuda.h):
 * --kernels, --memcpy, --sync, --cuda-api; text, JSON, CSV. Every output
 * starts by saying whether GPU data was captured. */
#ifndef LP_REPORT_CUDA_H
#define LP_REPORT_CUDA_H

#include <stdio.h>

#include "lp_cuda.h"

void lp_cuda_write_text(FILE *f, const struct lp_cuda_report *r);
void lp_cuda_write_json(FILE *f, const struct lp_cuda_report *r);
void lp_cuda_write_csv(FILE *f, const struct lp_cuda_report *r);

#endif
