/* SPDX-License-Identifier: MIT */
/* The run's process table (procs.lptab) for the importer: processes that
 * have no event log of their own (import/sources/lp_import_proctab.c). */
#ifndef LP_IMPORT_PROCTAB_H
#define LP_IMPORT_PROCTAB_H

#include <stddef.h>
#include <stdint.h>

#include "lp_import.h"
#include "lp_map.h"

struct lp_log;

/* One process image as the table tells it. */
struct lp_ptab_image {
	uint32_t pid, ppid, parent_tid;
	uint64_t start_ns, realtime_ns, end_ns;
	char comm[17];
	char *cmdline, *title, *exec_path;   /* argv and title NUL-separated */
	char *exec_why;			     /* why the program exec'd is not recorded, or NULL */
	uint32_t clone_threads, clone_procs; /* tasks made by raw clone() */
	size_t cmdline_len, title_len;
	int32_t status;
	uint32_t how;  /* enum lp_exit_how, 0: no exit record */
	uint64_t lost; /* records the image could not write */
};

struct lp_ptab_counts {
	int processes;		    /* rows added */
	long long lost;		    /* their lost records */
	int unclosed;		    /* of them, without an exit or exec */
	uint64_t first_realtime_ns; /* earliest wall-clock start of them, 0 none */
};

struct lp_ptab {
	struct lp_ptab_image *v;
	size_t n, cap;
	struct lp_map by_key; /* (pid, start_ns) -> index */
	long long damaged;    /* stretches of the file that were not records */
	/* lp_ptab_begin .. lp_ptab_end: the images without a log, in order */
	size_t *order, n_order, next;
	sqlite3_stmt *ins, *thr, *clones;
	struct lp_ptab_counts counts;
};

/* Read DIR/procs.lptab (none: an empty table). 0 or -errno with err. */
int lp_ptab_read(const char *dir, struct lp_ptab *t, char *err, size_t errlen);
void lp_ptab_free(struct lp_ptab *t);
/* The importer interleaves the images without a log with the logs (sorted
 * by name), so processes keep their old order: lp_ptab_begin once with
 * every log, lp_ptab_import_before(log) before each log is imported,
 * lp_ptab_import_before(NULL) for the rest, then lp_ptab_end (meta). */
int lp_ptab_begin(struct lp_import *imp, struct lp_ptab *t, const struct lp_log *logs,
		  size_t nlogs);
int lp_ptab_import_before(struct lp_import *imp, struct lp_ptab *t, const struct lp_log *next);
int lp_ptab_end(struct lp_import *imp, struct lp_ptab *t);
/* Finalizes the table's statements (lp_ptab_end does; an error path calls it
 * before closing the database, which an open statement would keep open). */
void lp_ptab_release(struct lp_ptab *t);

#endif
