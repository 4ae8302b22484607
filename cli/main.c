/* SPDX-License-Identifier: MIT */
/* latprof: dispatch to cmd_*.c through the table in lp_commands.c. */
#include <stdio.h>
#include <string.h>

#include "lp_cli.h"
#include "lp_progress.h"

static void main_usage(FILE *f)
{
	fprintf(f, "usage: latprof <command> [options]\n\ncommands:\n");
	for (const struct lp_cmd *const *c = lp_commands; *c; c++)
		fprintf(f, "  %-8s %s\n", (*c)->name, (*c)->summary);
	fprintf(f, "\n'latprof <command> --help' describes one command.\n");
}

static const struct lp_cmd *find_cmd(const char *name)
{
	for (const struct lp_cmd *const *c = lp_commands; *c; c++)
		if (strcmp((*c)->name, name) == 0)
			return *c;
	return NULL;
}

static int unknown_cmd(const char *name)
{
	const char *names[32];
	size_t n = 0;
	for (const struct lp_cmd *const *c = lp_commands; *c && n < 32; c++)
		names[n++] = (*c)->name;
	const char *s = lp_cli_suggest(name, names, n);
	if (s)
		return lp_cli_error("'%s' is not a command; did you mean '%s'?", name, s);
	return lp_cli_error("'%s' is not a command; run 'latprof --help' for the list", name);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		main_usage(stderr);
		return LP_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		main_usage(stdout);
		return LP_EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("latprof %s\n", LATPROF_VERSION);
		return LP_EXIT_OK;
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			main_usage(stdout);
			return LP_EXIT_OK;
		}
		const struct lp_cmd *c = find_cmd(argv[2]);
		if (!c)
			return unknown_cmd(argv[2]);
		lp_cli_print_help(c);
		return LP_EXIT_OK;
	}
	const struct lp_cmd *c = find_cmd(name);
	if (!c)
		return unknown_cmd(name);
	if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		lp_cli_print_help(c);
		return LP_EXIT_OK;
	}
	lp_progress_init(0); /* report and import take --quiet */
	return c->run(argc - 1, argv + 1);
}
