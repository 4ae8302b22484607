/* SPDX-License-Identifier: MIT */
/* Per-source options of `latprof run`. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_cmd_run.h"
#include "lp_db.h"
#include "lp_rseq.h"

LP_RSEQ_DEFINE;

/* --counters LIST: comma-separated perf/libpfm4 event names, 'default',
 * 'hw', or 'none' alone. Names are checked by libpfm4 in the app, which
 * records the ones it cannot encode as unavailable. */
static int run_counters_option(struct lp_run_opts *o, const char *arg)
{
	int n = 0, none = 0;
	for (const char *p = arg;; p++) {
		size_t len = strcspn(p, ",");
		if (!len || len > 63)
			return lp_cli_usage_error("run", "--counters: bad event list '%s'", arg),
			       -1;
		for (size_t i = 0; i < len; i++)
			if (!isalnum((unsigned char)p[i]) && !strchr(":_-.=", p[i]))
				return lp_cli_usage_error(
					   "run", "--counters: bad event name in '%s'", arg),
				       -1;
		none |= len == 4 && !memcmp(p, "none", 4);
		n += len == 7 && !memcmp(p, "default", 7) ? 5
		     : len == 2 && !memcmp(p, "hw", 2)	  ? 5
							  : 1;
		p += len;
		if (!*p)
			break;
	}
	if (none && n > 1)
		return lp_cli_usage_error("run", "--counters none cannot be combined with events"),
		       -1;
	if (n > 16)
		return lp_cli_usage_error("run", "--counters: at most 16 events per thread"), -1;
	o->counters = arg;
	return 0;
}

/* After import: say which counters the machine could not count, once. */
static void run_counters_note(const struct lp_run_opts *o, sqlite3 *db)
{
	char err[256], buf[2048];
	if (!db || (o->counters && !strcmp(o->counters, "none")))
		return;
	const char *note = lp_db_meta(db, "counters_note", buf, sizeof(buf));
	if (note)
		fprintf(stderr, "latprof: %s\n", note);
	const char *un = lp_db_meta(db, "counters_unavailable", buf, sizeof(buf));
	if (un)
		fprintf(stderr, "latprof: unavailable counters: %s\n", un);
	if (lp_db_fault(db, err, sizeof(err)))
		fprintf(stderr, "latprof: cannot read the counters' notes from %s: %s\n", o->output,
			err);
}

/* --block-threshold DUR: a number with ns, us, ms or s, 0 or 'off'; a bare
 * number other than 0 is refused, as every duration latprof takes (check's
 * limits): 5 could be any unit. The interposer reads it in ns from
 * LATPROF_BLOCK_THRESHOLD_NS. */
static int run_block_option(struct lp_run_opts *o, const char *arg)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	if (!strcmp(arg, "off")) {
		snprintf(o->block_ns, sizeof(o->block_ns), "off");
		return 0;
	}
	char *end;
	double v = strtod(arg, &end);
	if (end != arg && !*end && v == 0 && isdigit((unsigned char)*arg)) {
		snprintf(o->block_ns, sizeof(o->block_ns), "0");
		return 0;
	}
	if (end != arg && !*end && isdigit((unsigned char)*arg))
		return lp_cli_usage_error(
			   "run",
			   "--block-threshold %s needs a unit: %sus or %sms (ns, us, "
			   "ms, s; a number without one is refused)",
			   arg, arg, arg),
		       -1;
	for (size_t i = 0; end != arg && isdigit((unsigned char)*arg) && v >= 0 && v < 1e6 &&
			   i < sizeof(units) / sizeof(units[0]);
	     i++)
		if (!strcmp(end, units[i].unit)) {
			snprintf(o->block_ns, sizeof(o->block_ns), "%.0f", v * units[i].ns);
			return 0;
		}
	return lp_cli_usage_error(
		   "run", "--block-threshold wants a duration (10us, 1ms, 0) or off, not '%s'",
		   arg),
	       -1;
}

int lp_run_source_option(struct lp_run_opts *o, int opt, const char *arg)
{
	if (opt == 'B')
		return run_block_option(o, arg);
	if (opt == 'C') {
		if (!strcmp(arg, "auto"))
			o->cuda = LP_CUDA_AUTO;
		else if (!strcmp(arg, "on"))
			o->cuda = LP_CUDA_ON;
		else if (!strcmp(arg, "off"))
			o->cuda = LP_CUDA_OFF;
		else
			return lp_cli_usage_error("run", "--cuda takes auto, on or off, not '%s'",
						  arg),
			       -1;
		return 0;
	}
	return run_counters_option(o, arg);
}

void lp_run_env_sources(const struct lp_run_opts *o)
{
	(void)o;
	/* NVTX3 loads its tool from this variable only (not LD_PRELOAD). */
	char *nvtx = xasprintf("%s/liblatprof_nvtx.so", lp_cli_libdir());
	if (access(nvtx, R_OK) == 0)
		setenv("NVTX_INJECTION64_PATH", nvtx, 1);
	free(nvtx);
	setenv("LATPROF_COUNTERS", o->counters ? o->counters : "default", 1);
	if (o->block_ns[0])
		setenv("LATPROF_BLOCK_THRESHOLD_NS", o->block_ns, 1);
	/* Whether the interposer may tell a call that stayed on the CPU by its
	 * rseq area, without a second clock read (lp_rseq.h): once per run,
	 * on a 1 ms sleep here, not in every process the app starts; not at
	 * all when blocking calls are off. A value the user set ("off")
	 * stands. */
	if (!getenv("LATPROF_BLOCK_SWITCH") && strcmp(o->block_ns, "off"))
		setenv("LATPROF_BLOCK_SWITCH", lp_rseq_probe() ? "rseq" : "off", 1);
	lp_run_cuda_env(o);
}

int lp_run_check_sources(const struct lp_run_opts *o, sqlite3 *db)
{
	run_counters_note(o, db);
	return lp_run_cuda_check(o, db);
}
