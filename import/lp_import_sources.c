/* SPDX-License-Identifier: MIT */
#include "lp_import_sources.h"

extern const struct lp_import_source lp_src_core;
extern const struct lp_import_source lp_src_nvtx;
extern const struct lp_import_source lp_src_counters; /* after nvtx: pairs with ranges */
extern const struct lp_import_source lp_src_cuda;
extern const struct lp_import_source lp_src_python;
extern const struct lp_import_source lp_src_waits; /* last: classifies what the others stored */

/* One line per source; keep core first (it creates processes and threads). */
const struct lp_import_source *const lp_import_sources[] = {
    &lp_src_core, &lp_src_nvtx, &lp_src_counters, &lp_src_cuda, &lp_src_python, &lp_src_waits, NULL,
};
