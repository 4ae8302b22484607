/* SPDX-License-Identifier: MIT */
/* The importer of PyTorch profiler (Kineto) traces (lp_import_kineto.c):
 * an ordinary latprof database. */
#ifndef LP_IMPORT_KINETO_H
#define LP_IMPORT_KINETO_H

#include <stddef.h>

#include "lp_import.h"

/* A Kineto Chrome trace, .json or .json.gz. 0, or -EINVAL (damaged,
 * foreign) / -errno with one sentence in err; out is written only on
 * success. */
int lp_import_kineto(const char *path, const char *out, const struct lp_import_opts *opts,
		     char *err, size_t errlen);

#endif
