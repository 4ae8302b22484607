/* SPDX-License-Identifier: MIT */
/*
 * NVTX records of the event log (types 32..63, see lp_log_format.h).
 * Written by collector/nvtx (liblatprof_nvtx.so), read by
 * import/sources/lp_import_nvtx.c. Same rules as the core records: fixed layouts,
 * 8-byte aligned, little-endian; bump LP_LOG_VERSION on a layout change.
 *
 * Every event record carries its domain in the header's aux field (0 = the
 * NVTX default domain, else the id of an LP_REC_NVTX_DOMAIN record of the
 * same process), except PUSH_NAME. Names are string ids (LP_REC_STRING),
 * 0 = no name.
 *
 * Push/pop nesting is not tracked in-process: the importer rebuilds it per
 * thread and domain from each thread's write order, which is why a POP has
 * no name and no id. The common push (nvtxRangePushA: default domain, no
 * category, no attributes) is PUSH_NAME, with the name in aux, so the hot
 * pair costs 16 + 16 bytes: every byte written is a byte of fresh page the
 * kernel zeroes first.
 */
#ifndef LP_LOG_NVTX_H
#define LP_LOG_NVTX_H

#include <stdint.h>

#include "lp_log_format.h"

enum lp_nvtx_rec_type {
	LP_REC_NVTX_PUSH = 32,	    /* aux = domain; lp_rec_nvtx_push [+ lp_rec_nvtx_attr] */
	LP_REC_NVTX_POP = 33,	    /* aux = domain; lp_rec_nvtx_pop */
	LP_REC_NVTX_START = 34,	    /* aux = domain; lp_rec_nvtx_start [+ lp_rec_nvtx_attr] */
	LP_REC_NVTX_END = 35,	    /* aux = domain; lp_rec_nvtx_end */
	LP_REC_NVTX_MARK = 36,	    /* aux = domain; lp_rec_nvtx_push [+ lp_rec_nvtx_attr] */
	LP_REC_NVTX_DOMAIN = 37,    /* aux = domain id (> 0); lp_rec_nvtx_domain */
	LP_REC_NVTX_CATEGORY = 38,  /* aux = domain; lp_rec_nvtx_category */
	LP_REC_NVTX_PUSH_NAME = 39, /* aux = name; lp_rec_nvtx_pop (ts): a PUSH in the
				       default domain, category 0, no attributes */
};

/* lp_rec_nvtx_attr.flags */
#define LP_NVTX_ATTR_COLOR 0x1u /* color holds an ARGB value */

/* Optional tail of PUSH/START/MARK, present when the record's size says so
 * (the *Ex calls with a color or payload). */
struct lp_rec_nvtx_attr {
	uint32_t color;	       /* ARGB */
	uint16_t flags;	       /* LP_NVTX_ATTR_* */
	uint16_t payload_type; /* nvtxPayloadType_t: 0 none, 1 u64, 2 i64, 3 double, 4 u32,
				  5 i32, 6 float */
	uint64_t payload;      /* raw bits, 32-bit types in the low half */
};
_Static_assert(sizeof(struct lp_rec_nvtx_attr) == 16, "nvtx attr size");

/* PUSH and MARK. */
struct lp_rec_nvtx_push {
	uint64_t ts;
	uint32_t name;
	uint32_t category;
};
_Static_assert(sizeof(struct lp_rec_nvtx_push) == 16, "nvtx push size");

/* Closes the innermost open push of the writing thread in aux's domain. */
struct lp_rec_nvtx_pop {
	uint64_t ts;
};

struct lp_rec_nvtx_start {
	uint64_t ts;
	uint64_t id; /* nvtxRangeId_t: unique in the process */
	uint32_t name;
	uint32_t category;
};
_Static_assert(sizeof(struct lp_rec_nvtx_start) == 24, "nvtx start size");

/* May be written by another thread than the START. */
struct lp_rec_nvtx_end {
	uint64_t ts;
	uint64_t id;
};

struct lp_rec_nvtx_domain {
	uint64_t ts;
	uint32_t name; /* string id */
	uint32_t pad;
};

struct lp_rec_nvtx_category {
	uint32_t category;
	uint32_t name; /* string id */
};

#endif
