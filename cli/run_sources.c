/* SPDX-License-Identifier: MIT */
/* Per-source options of `latprof run`. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_cmd_run.h"

int lp_run_source_option(struct lp_run_opts *o, int opt, const char *arg)
{
	if (opt == 'C') {
		if (!strcmp(arg, "auto"))
			o->cuda = LP_CUDA_AUTO;
		else if (!strcmp(arg, "on"))
			o->cuda = LP_CUDA_ON;
		else if (!strcmp(arg, "off"))
			o->cuda = LP_CUDA_OFF;
		else
			return lp_cli_usage_error("run", "--cuda takes auto, on or off, not '%s'", arg),
			       -1;
		return 0;
	}
	o->counters = arg;
	return 0;
}

void lp_run_env_sources(const struct lp_run_opts *o)
{
	(void)o;
	/* NVTX3 loads its tool from this variable only (not LD_PRELOAD). */
	char *nvtx = xasprintf("%s/liblatprof_nvtx.so", lp_cli_libdir());
	if (access(nvtx, R_OK) == 0)
		setenv("NVTX_INJECTION64_PATH", nvtx, 1);
	free(nvtx);
}

int lp_run_check_sources(const struct lp_run_opts *o)
{
	(void)o;
	return 0;
}
