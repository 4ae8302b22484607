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
};

extern const struct lp_cmd *const lp_commands[]; /* NULL-terminated */

/* Prints "latprof: <message>" on stderr and returns LP_EXIT_USAGE. */
int lp_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "latprof <cmd>: unknown option..." plus the usage hint; returns 2. */
int lp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lp_cli_print_help(const struct lp_cmd *cmd);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Directory holding liblatprof_*.so: <dir of the latprof binary>/../lib/latprof. */
const char *lp_cli_libdir(void);
/* Open an output file for writing, truncated: never through a symlink
 * (O_NOFOLLOW) and only a regular file (a FIFO or device is refused, without
 * blocking). NULL with one clear `latprof:` line printed on failure. */
FILE *lp_cli_fopen_out(const char *path);

/* The request an imported capture names (meta import.default_request:
 * Kineto's ProfilerStep) when the user gave none; NULL otherwise. */
const char *lp_cli_default_request(const char *db_path, char *buf, size_t len);

/* Closest command name within edit distance 2, or NULL. */
const char *lp_cli_suggest(const char *word, const char *const *candidates, size_t n);

#endif
