/* SPDX-License-Identifier: MIT */
/* Writers and report views for the CUDA summaries (analyze/lp_cuda.h):
 * --kernels, --memcpy, --sync, --cuda-api; text, JSON, CSV. Every output
 * starts by saying whether GPU data was captured. */
#ifndef LP_REPORT_CUDA_H
#define LP_REPORT_CUDA_H

#include <sqlite3.h>
#include <stdio.h>

#include "lp_cuda.h"

void lp_cuda_write_text(FILE *f, const struct lp_cuda_report *r);
void lp_cuda_write_json(FILE *f, const struct lp_cuda_report *r);
void lp_cuda_write_csv(FILE *f, const struct lp_cuda_report *r);

/* Adapters for cli/cmd_report.c's view table (opts unused). */
struct lp_report_opts;
void *lp_cuda_view_kernels(sqlite3 *db, const struct lp_report_opts *o, char *err, size_t errlen);
void *lp_cuda_view_memcpy(sqlite3 *db, const struct lp_report_opts *o, char *err, size_t errlen);
void *lp_cuda_view_sync(sqlite3 *db, const struct lp_report_opts *o, char *err, size_t errlen);
void *lp_cuda_view_api(sqlite3 *db, const struct lp_report_opts *o, char *err, size_t errlen);
void lp_cuda_view_free(void *r);
void lp_cuda_w_text(FILE *f, const void *r);
void lp_cuda_w_json(FILE *f, const void *r);
void lp_cuda_w_csv(FILE *f, const void *r);

#endif
