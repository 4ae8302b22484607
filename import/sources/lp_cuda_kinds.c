/* SPDX-License-Identifier: MIT */
#include "lp_cuda_kinds.h"

#include <stddef.h>

static const char *const lp_copy_kinds[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					    "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
static const char *const lp_mem_kinds[] = {"unknown",	    "pageable",	     "pinned",
					   "device",	    "array",	     "managed",
					   "device_static", "managed_static"};
static const char *const lp_sync_types[] = {"unknown", "event_synchronize", "stream_wait_event",
					    "stream_synchronize", "context_synchronize"};
#define LP_PICK(tab, v)                                                                            \
	((v) >= 0 && (size_t)(v) < sizeof(tab) / sizeof(tab[0]) ? tab[v] : "unknown")

const char *lp_cuda_copy_kind(int64_t v)
{
	return LP_PICK(lp_copy_kinds, v);
}

const char *lp_cuda_mem_kind(int64_t v)
{
	return LP_PICK(lp_mem_kinds, v);
}

const char *lp_cuda_sync_type(int64_t v)
{
	return LP_PICK(lp_sync_types, v);
}
