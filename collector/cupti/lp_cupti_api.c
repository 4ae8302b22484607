/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_cupti_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lp_cupti_api lp_cupti;

static pthread_once_t lp_api_once = PTHREAD_ONCE_INIT;
static int lp_api_rc = -1;
static char lp_api_err[400];

static void *lp_api_open(void)
{
	const char *env = getenv("LATPROF_CUPTI"); /* read once, at capture start */
	void *h;
	if (env && *env) {
		if (!(h = dlopen(env, RTLD_NOW | RTLD_LOCAL)))
			snprintf(lp_api_err, sizeof(lp_api_err), "LATPROF_CUPTI: %s", dlerror());
		return h;
	}
	if ((h = dlopen(LP_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL)))
		return h;
	snprintf(lp_api_err, sizeof(lp_api_err), "%s", dlerror());
	if ((h = dlopen(LP_CUPTI_DIR "/" LP_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL)))
		return h;
	snprintf(lp_api_err, sizeof(lp_api_err),
		 "%s not found (searched the library path and " LP_CUPTI_DIR
		 "); set LATPROF_CUPTI to its path",
		 LP_CUPTI_SONAME);
	return NULL;
}

static void lp_api_do_load(void)
{
	static const struct {
		size_t off;
		const char *name;
	} syms[] = {
#define LP_SYM(f) {offsetof(struct lp_cupti_api, f), "cupti" #f}
	    LP_SYM(Subscribe),
	    LP_SYM(EnableCallback),
	    LP_SYM(SetThreadIdType),
	    LP_SYM(ActivityRegisterTimestampCallback),
	    LP_SYM(ActivityRegisterCallbacks),
	    LP_SYM(ActivityEnable),
	    LP_SYM(ActivitySetAttribute),
	    LP_SYM(ActivityFlushPeriod),
	    LP_SYM(ActivityFlushAll),
	    LP_SYM(ActivityGetNumDroppedRecords),
	    LP_SYM(ActivityGetNextRecord),
	    LP_SYM(GetResultString),
	    LP_SYM(GetCallbackName),
#undef LP_SYM
	};
	struct lp_cupti_api api;
	void *h = lp_api_open();
	if (!h)
		return;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *fn = dlsym(h, syms[i].name);
		if (!fn) { /* an older CUPTI: misreading it would be worse than nothing */
			snprintf(lp_api_err, sizeof(lp_api_err), "%s has no %s", LP_CUPTI_SONAME,
				 syms[i].name);
			return;
		}
		memcpy((char *)&api + syms[i].off, &fn, sizeof(fn));
	}
	lp_cupti = api;
	lp_api_rc = 0;
}

int lp_cupti_api_load(char *err, size_t len)
{
	pthread_once(&lp_api_once, lp_api_do_load);
	if (lp_api_rc && err && len)
		snprintf(err, len, "%s", lp_api_err);
	return lp_api_rc;
}
