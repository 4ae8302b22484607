/* SPDX-License-Identifier: MIT */
/* The importer of Nsight Systems SQLite exports (lp_import_nsys.c): an
 * ordinary latprof database. */
#ifndef LP_IMPORT_NSYS_H
#define LP_IMPORT_NSYS_H

#include <stddef.h>

#include "lp_import.h"

/* An Nsight Systems SQLite export. 0, or -EINVAL (damaged, foreign, a
 * needed column missing) / -errno with one sentence in err; out is written
 * only on success. */
int lp_import_nsys(const char *path, const char *out, const struct lp_import_opts *opts, char *err,
		   size_t errlen);

#endif
