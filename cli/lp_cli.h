/* SPDX-License-Identifier: MIT */
/*
 * Shared by the subcommands (one file each, cmd_*.c). The x*() helpers die
 * on failure: they belong to the CLI only, never to code inside the app.
 */
#ifndef LP_CLI_H
#define LP_CLI_H

#include <stddef.h>
#include <stdio.h>

#define LP_EXIT_OK 0
#define LP_EXIT_FAIL 1	/* regression, failed expectation */
#define LP_EXIT_USAGE 2 /* usage or input error */

struct lp_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full help text */
	/* When set, writes the help text instead of usage: a command whose
	 * help comes from a table (report's views). */
	void (*write_help)(FILE *f);
};

extern const struct lp_cmd *const lp_commands[]; /* NULL-terminated */

/* Prints "latprof: <message>" on stderr and returns LP_EXIT_USAGE. */
int lp_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "latprof <cmd>: unknown option..." plus the usage hint; returns 2. */
int lp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "unknown or incomplete option 'WORD'" as a usage error, with the nearest
 * of the command's long options when one is within 2 edits. */
struct option;
int lp_cli_bad_option(const char *cmd, const char *word, const struct option *opts);
int lp_cli_bad_option_names(const char *cmd, const char *word, const char *const *names, size_t n);
void lp_cli_print_help(const struct lp_cmd *cmd);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Directory holding liblatprof_*.so: <dir of the latprof binary>/../lib/latprof. */
const char *lp_cli_libdir(void);
/* The one rule for every file a command writes (run, import, report -o and
 * --html, export --chrome, check --junit, diff -o, plot's charts): never one
 * of the command's inputs (the same file by device and inode, however the
 * path is spelled; --force does not change that), never an existing file
 * without force, never through a symbolic link, only a regular file, into a
 * directory that exists and is writable; a database (db) also within the
 * path limits of SQLite and NAME_MAX. 0, or LP_EXIT_USAGE after one
 * `latprof:` line, before anything is computed or run. */
int lp_cli_out_check(const char *out, int force, int db, const char *const *inputs, size_t ninputs);
/* Open an output file lp_cli_out_check passed, for writing: without force
 * it must not exist (O_EXCL: never a file made since the check); never
 * through a symlink (O_NOFOLLOW) and only a regular file (a FIFO or device
 * is refused, without blocking). NULL with one `latprof:` line on failure. */
FILE *lp_cli_fopen_out(const char *path, int force);

/* The request an imported capture names (meta import.default_request:
 * Kineto's ProfilerStep) when the user gave none; NULL otherwise. */
const char *lp_cli_default_request(const char *db_path, char *buf, size_t len);

/* Closest command name within edit distance 2, or NULL. */
const char *lp_cli_suggest(const char *word, const char *const *candidates, size_t n);

#endif
