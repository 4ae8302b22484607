/* SPDX-License-Identifier: MIT */
/*
 * latprof run's LATPROF_* settings, checked before the app starts. The
 * collectors inside the app read them with strtoul and clamp what they
 * get, where a typo cannot be reported (2G read as 2 MB, abc as 1 MB, -5
 * as 64 GB). Here each value is parsed with its unit, refused with one
 * line and exit 2 when it is not a number of that kind or out of the
 * range the collector accepts, and handed on in the collector's own unit
 * (plain decimal), so what the app records with is what the user meant.
 * LATPROF_CUPTI, a path, is left to the CUDA collector, whose one-line
 * verdict already names a library it cannot load.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_cmd_run.h"

struct unit {
	const char *name;
	uint64_t mult;
};

/* Sizes in MiB; "MB" is read as MiB, as the variable names always did. */
static const struct unit lp_size_units[] = {
    {"", 1},	   {"m", 1},	   {"mb", 1},	    {"mib", 1},	      {"g", 1024}, {"gb", 1024},
    {"gib", 1024}, {"t", 1 << 20}, {"tb", 1 << 20}, {"tib", 1 << 20}, {NULL, 0},
};
static const struct unit lp_ms_units[] = {
    {"", 1},
    {"ms", 1},
    {"s", 1000},
    {NULL, 0},
};
static const struct unit lp_ns_units[] = {
    {"", 1}, {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {NULL, 0},
};

struct num_var {
	const char *name;
	const struct unit *units;
	uint64_t lo, hi;
	const char *what; /* the collector's unit, for the message */
	const char *example;
};

/* Ranges: the clamps in collector/lp_core.c, collector/cupti/lp_cupti.c. */
static const struct num_var lp_num_vars[] = {
    {"LATPROF_LOG_MB", lp_size_units, 1, 65536, "MB", "512, 512M, 2G"},
    {"LATPROF_CUDA_BUFFER_MB", lp_size_units, 8, 4096, "MB", "64, 1G"},
    {"LATPROF_CUDA_FLUSH_MS", lp_ms_units, 1, 60000, "ms", "100, 100ms, 2s"},
    {"LATPROF_COUNTERS_INTERVAL_NS", lp_ns_units, 0, UINT64_MAX / 1000000000, "ns",
     "20000, 20us, 0"},
};

/* "2G" -> 2048 in the units' base; -1 when not a whole number with one of
 * the units, or on overflow. */
static int parse_num(const char *s, const struct unit *units, uint64_t *out)
{
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return -1; /* also refuses "-5": strtoull would wrap it */
	errno = 0;
	char *end;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	for (const struct unit *u = units; u->name; u++) {
		if (strcasecmp(end, u->name))
			continue;
		if (v > UINT64_MAX / u->mult)
			return -1;
		*out = (uint64_t)v * u->mult;
		return 0;
	}
	return -1;
}

static int check_num(const struct num_var *var)
{
	const char *s = getenv(var->name);
	uint64_t v;
	if (!s || !*s)
		return 0;
	if (parse_num(s, var->units, &v)) {
		lp_cli_error("%s=%s is not a whole number of %s (e.g. %s)", var->name, s, var->what,
			     var->example);
		return -1;
	}
	if (v < var->lo || v > var->hi) {
		lp_cli_error("%s=%s is %" PRIu64 " %s; it must be %" PRIu64 " to %" PRIu64 " %s",
			     var->name, s, v, var->what, var->lo, var->hi, var->what);
		return -1;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	setenv(var->name, buf, 1);
	return 0;
}

int lp_run_check_env(void)
{
	for (size_t i = 0; i < sizeof(lp_num_vars) / sizeof(lp_num_vars[0]); i++)
		if (check_num(&lp_num_vars[i]))
			return -1;
	const char *clk = getenv("LATPROF_NVTX_CLOCK");
	if (clk && *clk && strcmp(clk, "monotonic") && strcmp(clk, "tsc")) {
		lp_cli_error("LATPROF_NVTX_CLOCK=%s: the clock is 'tsc' (default where the TSC is "
			     "constant) or 'monotonic'",
			     clk);
		return -1;
	}
	return 0;
}
