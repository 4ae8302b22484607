/* SPDX-License-Identifier: MIT */
/*
 * libcupti, opened with dlopen when capture starts instead of linked. A
 * missing or misplaced libcupti (a PyTorch wheel's copy, a toolkit elsewhere)
 * must not stop the CUDA driver from loading the injection library: that
 * would fail the app's cuInit. Instead the status record says what was not
 * found, and LATPROF_CUPTI names the library to use.
 */
#ifndef LP_CUPTI_API_H
#define LP_CUPTI_API_H

#include <cupti.h>
#include <stddef.h>

struct lp_cupti_api {
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
	CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute, size_t *, void *);
	CUptiResult (*ActivityFlushPeriod)(uint32_t);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
	CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
};

/* Filled by lp_cupti_api_load; all NULL until it succeeds. */
extern struct lp_cupti_api lp_cupti;

/* Opens libcupti once (later calls return the first outcome): the path in
 * LATPROF_CUPTI when set, else the soname the build used through the usual
 * search (LD_LIBRARY_PATH, ld.so.cache), else the build's CUPTI directory.
 * 0, or -1 with the reason in err. Not async-signal-safe (dlopen). */
int lp_cupti_api_load(char *err, size_t len);

#endif
