/* SPDX-License-Identifier: MIT */
/*
 * --cuda=auto|on|off of `latprof run`: point the CUDA driver at the CUPTI
 * collector, and after import say in one line when GPU activity was not
 * recorded (the importer put the reason in meta cuda.status).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_cmd_run.h"
#include "lp_db.h"

/* Another tool's injection library, kept (NULL: none). */
static const char *lp_other_injection;

/* The driver loads one injection library (CUDA_INJECTION64_PATH names one
 * path) and a second CUPTI client in the process would fight ours for the
 * activity buffers: a path someone else set (nsys, a framework's tracer)
 * is kept, not overwritten, and the user is told once why latprof records
 * no GPU activity; unset it to record with latprof. */
void lp_run_cuda_env(const struct lp_run_opts *o)
{
	if (o->cuda == LP_CUDA_OFF)
		return;
	/* The driver dlopens this during cuInit and calls InitializeInjection. */
	char *lib = xasprintf("%s/liblatprof_cupti.so", lp_cli_libdir());
	const char *cur = getenv("CUDA_INJECTION64_PATH");
	if (cur && *cur && strcmp(cur, lib)) {
		lp_other_injection = cur;
		fprintf(stderr,
			"latprof: CUDA_INJECTION64_PATH is set to %s (another tool's CUDA "
			"injection): kept, so latprof does not record GPU activity; unset it to "
			"record it\n",
			cur);
	} else if (access(lib, R_OK) == 0) {
		setenv("CUDA_INJECTION64_PATH", lib, 1);
	}
	free(lib);
}

/* Returns LP_EXIT_USAGE for --cuda=on without a capture, else 0. */
int lp_run_cuda_check(const struct lp_run_opts *o, sqlite3 *db)
{
	char err[256], buf[800];
	int captured = 0, used = 0;
	const char *why = "the database could not be read";
	if (o->cuda == LP_CUDA_OFF)
		return 0;
	if (db) {
		const char *v = lp_db_meta(db, "cuda.captured", buf, sizeof(buf));
		captured = v && atoi(v) > 0;
		v = lp_db_meta(db, "cuda.used", buf, sizeof(buf));
		used = v && atoi(v) > 0;
		why = lp_db_meta(db, "cuda.status", buf, sizeof(buf));
		why = why ? why : "this latprof was built without CUDA support";
		if (!strncmp(why, "not captured: ", 14))
			why += 14;
		if (lp_db_fault(db, err, sizeof(err))) /* a read error is not "no capture" */
			why = err;
	}
	char *lib = xasprintf("%s/liblatprof_cupti.so", lp_cli_libdir());
	if (!captured && access(lib, R_OK) != 0)
		why = "this latprof was built without CUPTI (CUDA toolkit not found at build time)";
	if (!captured && lp_other_injection)
		why = "CUDA_INJECTION64_PATH named another tool's library, which was kept";
	free(lib);
	if (!captured && (used || o->cuda == LP_CUDA_ON))
		fprintf(stderr,
			"latprof: GPU activity not recorded: %s; CPU recording is complete\n", why);
	return !captured && o->cuda == LP_CUDA_ON ? LP_EXIT_USAGE : 0;
}
