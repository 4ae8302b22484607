/* SPDX-License-Identifier: MIT */
/* Output naming for `latprof run`: never overwrite without --force. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_cmd_run.h"
#include "lp_import_sources.h"
#include "lp_logread.h"

/* Expand %q{VAR} (and %% ); leave %p for later when pid is 0. */
static int run_output_expand(const char *pat, pid_t pid, char *out, size_t len, int *has_pid)
{
	size_t o = 0;
	for (const char *p = pat; *p; p++) {
		char piece[PATH_MAX];
		const char *add = piece;
		if (p[0] == '%' && p[1] == 'p') {
			*has_pid = 1;
			if (pid)
				snprintf(piece, sizeof(piece), "%d", (int)pid);
			else
				add = "%p";
			p++;
		} else if (p[0] == '%' && p[1] == 'q' && p[2] == '{') {
			const char *end = strchr(p + 3, '}');
			if (!end)
				return lp_cli_error("unterminated %%q{ in output name '%s'", pat),
				       -1;
			snprintf(piece, sizeof(piece), "%.*s", (int)(end - p - 3), p + 3);
			const char *v = getenv(piece);
			if (!v)
				return lp_cli_error(
					   "output name '%s' uses %%q{%s} but %s is not set", pat,
					   piece, piece),
				       -1;
			add = v;
			p = end;
		} else if (p[0] == '%' && p[1] == '%') {
			add = "%";
			p++;
		} else {
			piece[0] = *p;
			piece[1] = 0;
		}
		size_t l = strlen(add);
		if (o + l >= len)
			return lp_cli_error("output name too long"), -1;
		memcpy(out + o, add, l);
		o += l;
	}
	out[o] = 0;
	return 0;
}

int lp_run_prepare_output(struct lp_run_opts *o)
{
	char err[1024];
	if (!o->output_pattern) {
		for (int n = 1; n < 100000; n++) {
			char logs[64];
			struct stat st;
			snprintf(o->output, sizeof(o->output), "latprof-%d.db", n);
			snprintf(logs, sizeof(logs), "latprof-%d.db.logs", n); /* a killed run's */
			if (access(o->output, F_OK) != 0 && lstat(logs, &st) != 0)
				break;
		}
	} else if (run_output_expand(o->output_pattern, 0, o->output, sizeof(o->output),
				     &o->output_has_pid)) {
		return -1;
	}
	if (o->output_has_pid) {
		/* Check the directory now; the name itself after fork. */
		char probe[PATH_MAX + 8];
		snprintf(probe, sizeof(probe), "%s", o->output);
		char *slash = strrchr(probe, '/');
		snprintf(slash ? slash + 1 : probe, sizeof(probe) - (slash ? slash + 1 - probe : 0),
			 "%s", ".latprof-probe");
		if (lp_import_output_check(probe, 1, err, sizeof(err)))
			return lp_cli_error("%s", err), -1;
		/* The path limits with the widest pid (pid_max is at most 2^22). */
		char widest[PATH_MAX];
		int dummy = 0;
		if (run_output_expand(o->output_pattern, 4194304, widest, sizeof(widest), &dummy))
			return -1;
		if (lp_import_output_check(widest, 1, err, sizeof(err)))
			return lp_cli_error("%s", err), -1;
		return 0;
	}
	if (lp_import_output_check(o->output, o->force, err, sizeof(err)))
		return lp_cli_error("%s", err), -1;
	return 0;
}

int lp_run_finish_output(struct lp_run_opts *o, pid_t app)
{
	char err[1024];
	if (!o->output_has_pid)
		return 0;
	if (run_output_expand(o->output_pattern, app, o->output, sizeof(o->output),
			      &o->output_has_pid))
		return -1;
	if (lp_import_output_check(o->output, o->force, err, sizeof(err))) {
		lp_cli_error("%s", err);
		lp_cli_error("the event logs are kept in %s", o->logdir);
		return -1;
	}
	return 0;
}

int lp_run_no_logs(const struct lp_run_opts *o)
{
	return lp_log_dir_count(o->logdir) <= 0;
}

/* OUTPUT.logs -> the private log directory, made when the app starts and
 * removed with the directory: if latprof itself is killed (kill -9, OOM),
 * the logs are found where the database was to be, and
 * 'latprof import OUTPUT.logs -o OUTPUT' imports them. An existing
 * OUTPUT.logs (an earlier killed run's) is left as it is: this run's
 * directory is named on stderr instead. */
static void marker_path(const struct lp_run_opts *o, pid_t app, char *buf, size_t len)
{
	char out[PATH_MAX];
	int has_pid = 0;
	if (!o->output_has_pid)
		snprintf(out, sizeof(out), "%s", o->output);
	else if (run_output_expand(o->output_pattern, app, out, sizeof(out), &has_pid))
		out[0] = 0;
	if (!out[0] || snprintf(buf, len, "%s.logs", out) >= (int)len)
		buf[0] = 0;
}

void lp_run_mark_logs(struct lp_run_opts *o, pid_t app)
{
	struct stat st;
	marker_path(o, app, o->marker, sizeof(o->marker));
	if (!o->marker[0])
		return;
	if (lstat(o->marker, &st) == 0 || symlink(o->logdir, o->marker) != 0) {
		fprintf(stderr, "latprof: %s exists; this run's event logs are in %s\n", o->marker,
			o->logdir);
		o->marker[0] = 0;
	}
}

void lp_run_unmark_logs(struct lp_run_opts *o)
{
	if (o->marker[0])
		unlink(o->marker);
	o->marker[0] = 0;
}
