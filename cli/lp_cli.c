/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_cli.h"
#include "lp_db.h"
#include "lp_import_sources.h"
#include "lp_suggest.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lp_cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("latprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return LP_EXIT_USAGE;
}

int lp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "latprof %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'latprof %s --help')\n", cmd);
	return LP_EXIT_USAGE;
}

/* The long option nearest to word ("--lcoks" -> "locks"), its name without
 * dashes and without an "=value"; NULL when none is within 2 edits. */
static const char *option_suggest(const char *word, const char *const *names, size_t n)
{
	char bare[64];
	if (strncmp(word, "--", 2))
		return NULL; /* a short option: a letter is no word to correct */
	word += 2;
	size_t len = strcspn(word, "=");
	if (!len || len >= sizeof(bare))
		return NULL;
	memcpy(bare, word, len);
	bare[len] = 0;
	const char *near = lp_suggest(bare, names, n);
	return near && strcmp(near, bare) ? near : NULL; /* itself: a value is missing */
}

int lp_cli_bad_option_names(const char *cmd, const char *word, const char *const *names, size_t n)
{
	const char *near = option_suggest(word, names, n);
	if (near)
		return lp_cli_usage_error(
		    cmd, "unknown or incomplete option '%s' (did you mean '--%s'?)", word, near);
	return lp_cli_usage_error(cmd, "unknown or incomplete option '%s'", word);
}

int lp_cli_bad_option(const char *cmd, const char *word, const struct option *opts)
{
	const char *names[64];
	size_t n = 0;
	for (; opts && opts->name && n < sizeof(names) / sizeof(names[0]); opts++)
		names[n++] = opts->name;
	return lp_cli_bad_option_names(cmd, word, names, n);
}

void lp_cli_print_help(const struct lp_cmd *cmd)
{
	printf("latprof %s: %s\n\n", cmd->name, cmd->summary);
	if (cmd->write_help)
		cmd->write_help(stdout);
	else
		fputs(cmd->usage, stdout);
}

static void oom(void)
{
	fputs("latprof: out of memory\n", stderr);
	exit(LP_EXIT_USAGE);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		oom();
	return s;
}

const char *lp_cli_libdir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	const char *env = getenv("LATPROF_LIBDIR");
	if (env && *env)
		return env;
	if (dir[0])
		return dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return ".";
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	if (strlen(exe) + 16 >= sizeof(dir))
		return ".";
	memcpy(dir, exe, strlen(exe));
	strcpy(dir + strlen(exe), "/../lib/latprof");
	char *real = realpath(dir, NULL);
	if (real) {
		snprintf(dir, sizeof(dir), "%s", real);
		free(real);
	}
	return dir;
}

const char *lp_cli_suggest(const char *word, const char *const *candidates, size_t n)
{
	return lp_suggest(word, candidates, n);
}

int lp_cli_out_check(const char *out, int force, int db, const char *const *inputs, size_t ninputs)
{
	struct stat so, si;
	char err[1024];
	if (stat(out, &so) == 0)
		for (size_t i = 0; i < ninputs; i++) {
			if (!inputs[i] || stat(inputs[i], &si) != 0 || si.st_dev != so.st_dev ||
			    si.st_ino != so.st_ino)
				continue;
			if (!strcmp(out, inputs[i]))
				return lp_cli_error(
				    "%s is an input of this command; refusing to write "
				    "over it (--force or not)",
				    out);
			return lp_cli_error("%s is the input %s (the same file); refusing to write "
					    "over it (--force or not)",
					    out, inputs[i]);
		}
	if ((db ? lp_import_output_check : lp_file_output_check)(out, force, err, sizeof(err)))
		return lp_cli_error("%s", err);
	return 0;
}

FILE *lp_cli_fopen_out(const char *path, int force)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO for writing would otherwise wait for a
	 * reader. Truncate only once we know it is a regular file. */
	int fd = open(
	    path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (force ? 0 : O_EXCL),
	    0666);
	if (fd < 0) {
		struct stat l;
		if (errno == ELOOP ||
		    (errno == EEXIST && lstat(path, &l) == 0 && S_ISLNK(l.st_mode)))
			lp_cli_error("%s is a symbolic link; refusing to write through it", path);
		else if (errno == EEXIST)
			lp_cli_error("%s exists; use --force to overwrite it", path);
		else
			lp_cli_error("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		lp_cli_error("%s is not a regular file; refusing to write it", path);
		return NULL;
	}
	FILE *f = NULL;
	if (fcntl(fd, F_SETFL, 0) != 0 || ftruncate(fd, 0) != 0 || !(f = fdopen(fd, "w"))) {
		lp_cli_error("cannot write %s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

const char *lp_cli_default_request(const char *db_path, char *buf, size_t len)
{
	sqlite3 *db;
	char err[256];
	if (!db_path || lp_db_open_ro(db_path, &db, err, sizeof(err)))
		return NULL; /* the command's own open says what is wrong */
	const char *r = lp_db_meta(db, "import.default_request", buf, len);
	sqlite3_close(db);
	return r;
}
