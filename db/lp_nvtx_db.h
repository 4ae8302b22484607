/* SPDX-License-Identifier: MIT */
/* Values the NVTX importer stores in the ranges table (schemas/nvtx.sql,
 * docs/schema.md "NVTX"), for code that reads them back. */
#ifndef LP_NVTX_DB_H
#define LP_NVTX_DB_H

/* ranges.flags */
#define LP_RANGEF_OPEN_AT_EXIT 0x1u /* never ended: end_ns is the process end */
#define LP_RANGEF_STARTEND 0x2u	    /* nvtxRangeStart/End: not nested, parent_id NULL */
#define LP_RANGEF_CROSS_THREAD 0x4u /* ended on another thread than it started on */

#endif
