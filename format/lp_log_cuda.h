/* SPDX-License-Identifier: MIT */
/*
 * CUDA/CUPTI records of the event log (types 64..127, see lp_log_format.h).
 * Written by collector/cupti from CUPTI activity buffers on CUPTI's buffer
 * thread, read by import/sources/lp_import_cuda.c. Timestamps are the recording
 * core's clock: CUPTI is given lp_now() through
 * cuptiActivityRegisterTimestampCallback before any kind is enabled.
 * Enum-valued fields keep CUPTI's numbering (cupti_activity.h), so the
 * importer maps them to names without linking CUPTI.
 * Bump LP_LOG_VERSION when a layout here changes.
 */
#ifndef LP_LOG_CUDA_H
#define LP_LOG_CUDA_H

#include <stdint.h>

#include "lp_log_format.h"

enum lp_rec_cuda_type {
	LP_REC_CUDA_STATUS = LP_REC_CUDA_FIRST, /* aux = message length */
	LP_REC_CUDA_KERNEL = 65,
	LP_REC_CUDA_MEMCPY = 66, /* aux = LP_CUDA_MEMCPY_* */
	LP_REC_CUDA_MEMSET = 67,
	LP_REC_CUDA_SYNC = 68,
	LP_REC_CUDA_API = 69, /* aux = LP_CUDA_API_RUNTIME or _DRIVER */
	LP_REC_CUDA_OVERHEAD = 70,
	LP_REC_CUDA_MEMORY = 71, /* MEMORY2: allocation or release */
	LP_REC_CUDA_DEVICE = 72,
	LP_REC_CUDA_STATS = 73,	    /* dropped and skipped records */
	LP_REC_CUDA_API_COUNT = 74, /* aux = LP_CUDA_API_*: a filtered API's calls */
};

/* lp_rec_cuda_status.phase */
enum lp_cuda_phase {
	LP_CUDA_STARTED = 1,	  /* capture runs; code 0 */
	LP_CUDA_START_FAILED = 2, /* nothing is captured; code/message say why */
	LP_CUDA_KIND_FAILED = 3,  /* one activity kind could not be enabled */
	LP_CUDA_FLUSHED = 4,	  /* forced flush done (exit, cudaDeviceReset) */
	LP_CUDA_NOTE = 5,	  /* capture goes on, with a limit the message names */
};

struct lp_rec_cuda_status {
	uint64_t ts;
	int32_t code;		 /* CUptiResult */
	uint32_t phase;		 /* lp_cuda_phase */
	uint32_t detail;	 /* activity kind for KIND_FAILED, enabled-kind count for STARTED */
	uint32_t driver_version; /* cuDriverGetVersion (e.g. 13000) with STARTED, else 0 */
	/* char message[aux]: the function that failed and cuptiGetResultString */
};

struct lp_rec_cuda_kernel {
	uint64_t start, end;
	uint64_t graph_node_id;
	uint32_t device, context, stream, correlation;
	int32_t grid[3], block[3];
	int32_t static_smem, dynamic_smem;
	uint32_t name; /* string id of the name as CUPTI gave it (mangled) */
	uint32_t graph_id;
	uint16_t registers;
	uint8_t launch_type;
	uint8_t pad[5];
};

#define LP_CUDA_MEMCPY_P2P 0x1u /* from CUPTI_ACTIVITY_KIND_MEMCPY2 */

struct lp_rec_cuda_memcpy {
	uint64_t start, end, bytes;
	uint32_t device, context, stream, correlation;
	uint32_t runtime_correlation;
	uint32_t graph_id;
	uint32_t src_device, dst_device; /* P2P only, else = device */
	uint8_t copy_kind;		 /* CUpti_ActivityMemcpyKind */
	uint8_t src_kind, dst_kind;	 /* CUpti_ActivityMemoryKind */
	uint8_t flags;			 /* CUpti_ActivityFlag: 1 = async */
	uint32_t pad;
};

struct lp_rec_cuda_memset {
	uint64_t start, end, bytes;
	uint32_t device, context, stream, correlation;
	uint32_t value;
	uint16_t flags;	      /* 1 = async */
	uint16_t memory_kind; /* CUpti_ActivityMemoryKind */
	uint32_t graph_id;
	uint32_t pad;
};

struct lp_rec_cuda_sync {
	uint64_t start, end;
	uint64_t event_sync_id;
	uint32_t type; /* CUpti_ActivitySynchronizationType */
	uint32_t context, stream, correlation;
	uint32_t event;
	uint32_t return_value;
};

#define LP_CUDA_API_RUNTIME 1u
#define LP_CUDA_API_DRIVER 2u

struct lp_rec_cuda_api {
	uint64_t start, end;
	uint32_t cbid; /* CUPTI callback id in its domain */
	uint32_t name; /* string id of cuptiGetCallbackName, 0 if unknown */
	uint32_t tid;  /* the calling thread (CUPTI's SYSTEM thread id = gettid) */
	uint32_t pid;
	uint32_t correlation;
	uint32_t return_value;
};

struct lp_rec_cuda_overhead {
	uint64_t start, end;
	uint32_t kind;	      /* CUpti_ActivityOverheadKind */
	uint32_t object_kind; /* CUpti_ActivityObjectKind */
	uint32_t object_id;   /* thread id for a thread object, device id for a device */
	uint32_t correlation;
};

struct lp_rec_cuda_memory {
	uint64_t ts, address, bytes;
	uint32_t op;	      /* CUpti_ActivityMemoryOperationType: 1 alloc, 2 release */
	uint32_t memory_kind; /* CUpti_ActivityMemoryKind */
	uint32_t device, context, stream, correlation;
	uint32_t is_async;
	uint32_t pad;
};

#define LP_CUDA_DEVICE_PCI 0x1u /* pci_* are valid */
#define LP_CUDA_DEVICE_MIG 0x2u /* uuid is the MIG instance's */

struct lp_rec_cuda_device {
	uint64_t global_memory;	   /* bytes */
	uint64_t memory_bandwidth; /* KB/s as CUPTI reports it */
	uint32_t id;
	uint32_t sm_count;
	uint32_t cc_major, cc_minor;
	uint32_t core_clock_khz;
	uint32_t name; /* string id */
	/* From here on: absent in older logs (payload LP_CUDA_DEVICE_V1_SIZE). */
	uint8_t uuid[16]; /* CUpti_ActivityDevice5.uuid (migUuid under MIG); all 0 unknown */
	uint32_t pci_domain, pci_bus, pci_device; /* cuDeviceGetPCIBusId */
	uint32_t flags;				  /* LP_CUDA_DEVICE_* */
};
#define LP_CUDA_DEVICE_V1_SIZE 40u

struct lp_rec_cuda_stats {
	uint64_t ts;
	uint64_t records;	/* activity records translated */
	uint64_t dropped;	/* cuptiActivityGetNumDroppedRecords, summed */
	uint64_t unknown_kinds; /* records of kinds we do not translate: skipped */
	uint64_t log_drops;	/* records the core log refused */
	uint64_t buffers;	/* completed buffers */
	uint64_t buffer_denied; /* buffer requests refused (memory limit) */
	/* From here on: absent in older logs (payload LP_CUDA_STATS_V1_SIZE). */
	uint64_t bad_ts;     /* dropped: start or end 0, or end < start (forced flush) */
	uint64_t foreign_ts; /* dropped: stamped by another client's clock */
	uint64_t filtered;   /* API calls kept as counts (LP_REC_CUDA_API_COUNT) */
	uint32_t conflicts;  /* LP_CUDA_CONFLICT_* */
	uint32_t pad;
};
#define LP_CUDA_STATS_V1_SIZE 56u

/* lp_rec_cuda_stats.conflicts: what another CUPTI client or the exit did. */
#define LP_CUDA_CONFLICT_SUBSCRIBER 0x1u    /* cuptiSubscribe refused: no reset flush */
#define LP_CUDA_CONFLICT_CALLBACKS 0x2u	    /* our buffers never came back: re-registered */
#define LP_CUDA_CONFLICT_CLOCK 0x4u	    /* records not on latprof's clock */
#define LP_CUDA_CONFLICT_FLUSH_TIMEOUT 0x8u /* the final flush did not finish in time */
#define LP_CUDA_CONFLICT_BUFFERS 0x10u	    /* buffer requests refused: records lost */
#define LP_CUDA_CONFLICT_STOPPED                                                                   \
	0x20u /* capture ended before the exit: kinds off or buffers taken */

/* A runtime or driver API that is counted, not recorded call by call
 * (cudaGetDevice, cuCtxGetCurrent...): totals so far, the latest wins. */
struct lp_rec_cuda_api_count {
	uint64_t calls;
	uint64_t total_ns;
	uint32_t cbid;
	uint32_t name; /* string id of cuptiGetCallbackName, 0 if unknown */
};

#endif
