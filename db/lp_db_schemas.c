/* SPDX-License-Identifier: MIT */
/* The schema texts (schemas/<source>.sql, embedded at build time), in the order
 * the import sources create them: core first (processes and threads). */
#include "lp_db.h"

extern const char lp_schema_core_sql[];
extern const char lp_schema_nvtx_sql[];
extern const char lp_schema_counters_sql[];
extern const char lp_schema_cuda_sql[];
extern const char lp_schema_python_sql[];

const char *const lp_db_schemas[] = {
    lp_schema_core_sql, lp_schema_nvtx_sql,   lp_schema_counters_sql,
    lp_schema_cuda_sql, lp_schema_python_sql, NULL,
};
