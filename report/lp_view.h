/* SPDX-License-Identifier: MIT */
/*
 * The views of `latprof report`: one struct lp_view per view, listed one
 * line each in lp_views[] (report/lp_views.c). A view is an analysis
 * (analyze: a heap result or NULL with one sentence in err; free) plus one
 * writer per format behind one signature. Everything else comes from the
 * table: the command's options, `report --help`, which options go with which
 * view, the JSON envelope's name and the schema the tests validate against.
 * Adding a view is one file (the adapter, its writers and its struct
 * lp_view) and one line in lp_views[]; docs/views.md shows one.
 */
#ifndef LP_VIEW_H
#define LP_VIEW_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

enum lp_view_fmt { LP_VIEW_TEXT, LP_VIEW_JSON, LP_VIEW_CSV, LP_VIEW_NFMT };
extern const char *const lp_view_fmt_names[LP_VIEW_NFMT];

/* The options a view takes besides --top, --format and -o. */
enum {
	LP_VIEW_REQUEST = 1,	 /* --request NAME (and an import's default request) */
	LP_VIEW_STAGE_DEPTH = 2, /* --stage-depth N */
	LP_VIEW_RULE_THR = 4,	 /* --rule-threshold ID=VALUE */
	LP_VIEW_NATIVE = 8,	 /* --native: native call sites only */
};

struct lp_findings_override;

struct lp_view_opts {
	int top;
	const char *request;
	int stage_depth;
	const struct lp_findings_override *over;
	size_t nover;
	int native;
};

typedef void (*lp_view_writer)(FILE *f, const void *res);

struct lp_view {
	const char *flag;	  /* --flag; NULL: the default view */
	const char *arg;	  /* the flag's argument ("OUT.html": the output file), or NULL */
	const char *help;	  /* for `report --help`: lines of at most 64 columns */
	const char *options_help; /* its own options, lines of at most 74 columns, or NULL */
	unsigned takes;		  /* LP_VIEW_REQUEST | ... */
	/* The JSON document is {"format": "latprof.report.<schema>", "version":
	 * <schema_version>, ...} and schemas/report-<schema>.schema.json
	 * describes it; NULL when the view has no JSON of its own. */
	const char *schema;
	int schema_version;
	void *(*analyze)(sqlite3 *db, const struct lp_view_opts *o, char *err, size_t errlen);
	void (*free)(void *res);
	lp_view_writer write[LP_VIEW_NFMT]; /* NULL: format not offered */
};

extern const struct lp_view *const lp_views[]; /* NULL-terminated, in help order */

/* The view of --flag, or NULL. */
const struct lp_view *lp_view_find(const char *flag);
/* The "views:" part of `report --help`, from the table. */
void lp_views_write_help(FILE *f);
/* The envelope every view's JSON opens with: "{", "format", "version" and
 * the indentation of the next member. */
void lp_view_json_open(FILE *f, const char *schema, int version);

/* A writer of the table's signature over a typed writer fn(FILE *, const T *). */
#define LP_VIEW_WRITER(name, fn)                                                                   \
	static void name(FILE *f, const void *res)                                                 \
	{                                                                                          \
		fn(f, res);                                                                        \
	}

/* The views, one report/lp_view_*.c each. */
extern const struct lp_view lp_view_summary, lp_view_locks, lp_view_breakdown, lp_view_ranges,
    lp_view_counters, lp_view_kernels, lp_view_memcpy, lp_view_sync, lp_view_cuda_api,
    lp_view_processes, lp_view_bottlenecks, lp_view_html;

#endif
