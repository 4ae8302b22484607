/* SPDX-License-Identifier: MIT */
/* The table of `latprof report` views, and what is derived from it. */
#include "lp_view.h"

#include <string.h>

const char *const lp_view_fmt_names[LP_VIEW_NFMT] = {"text", "json", "csv"};

/* One line per view, in the order `report --help` lists them. */
const struct lp_view *const lp_views[] = {
    &lp_view_summary,
    &lp_view_locks,
    &lp_view_breakdown,
    &lp_view_ranges,
    &lp_view_counters,
    &lp_view_kernels,
    &lp_view_memcpy,
    &lp_view_sync,
    &lp_view_cuda_api,
    &lp_view_bottlenecks,
    &lp_view_processes,
    &lp_view_html,
    NULL,
};

const struct lp_view *lp_view_find(const char *flag)
{
	for (const struct lp_view *const *v = lp_views; *v; v++)
		if ((*v)->flag && !strcmp((*v)->flag, flag))
			return *v;
	return NULL;
}

/* Each line of text after prefix; the first line after first instead. */
static void help_lines(FILE *f, const char *first, const char *prefix, const char *text)
{
	const char *p = text;
	for (int i = 0; *p; i++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(f, "%s%.*s\n", i ? prefix : first, (int)n, p);
		p += n + (nl != NULL);
	}
}

#define LP_HELP_COL 12 /* "--flag ARG" padded to this width */

void lp_views_write_help(FILE *f)
{
	char first[96], pad[LP_HELP_COL + 4]; /* "  " flag " " */
	memset(pad, ' ', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	fputs("views:\n", f);
	for (const struct lp_view *const *v = lp_views; *v; v++) {
		if (!(*v)->flag)
			continue;
		char flag[48];
		snprintf(flag, sizeof(flag), "--%s%s%s", (*v)->flag, (*v)->arg ? " " : "",
			 (*v)->arg ? (*v)->arg : "");
		if (strlen(flag) < LP_HELP_COL)
			snprintf(first, sizeof(first), "  %-*s ", LP_HELP_COL, flag);
		else /* a longer one pushes its first line right */
			snprintf(first, sizeof(first), "  %s  ", flag);
		help_lines(f, first, pad, (*v)->help);
		if ((*v)->options_help)
			help_lines(f, "     ", "     ", (*v)->options_help);
	}
}

void lp_view_json_open(FILE *f, const char *schema, int version)
{
	fprintf(f, "{\n  \"format\": \"latprof.report.%s\",\n  \"version\": %d,\n  ", schema,
		version);
}
