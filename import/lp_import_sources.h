/* SPDX-License-Identifier: MIT */
/* The sources the importer knows, in the order their hooks run. */
#ifndef LP_IMPORT_SOURCES_H
#define LP_IMPORT_SOURCES_H

#include "lp_import.h"

struct lp_log;

#define LP_IMPORT_MAX_SOURCES 8
extern const struct lp_import_source *const lp_import_sources[];

/* The core source also sees process-level definitions in pass 1. */
int lp_core_begin_process(struct lp_import *imp, const struct lp_log *log);
int lp_core_pass1(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
		  const void *payload, size_t len);

/* argv (NUL-separated, n bytes) as a malloc'd space-separated string. */
char *lp_import_argv_str(const void *p, size_t n);
/* Processes imported from the run's process table (no log of their own):
 * their lost records, how many never said how they ended, and the
 * earliest wall-clock start among them (0: unknown). */
void lp_core_add_table_counts(struct lp_import *imp, long long dropped_records, int unclosed,
			      uint64_t realtime_ns);

/* Adds the wait statuses `latprof run` collected as subreaper (a text file
 * of "pid status" lines); a missing file is fine. */
int lp_import_core_reaped(struct lp_import *imp, const char *path);

/* A wait an image died in (lp_import.c's import_inflight), stack a local
 * stack id of that image: imported as unfinished, its end found later. */
struct lp_inf_wait;
int lp_core_inflight(struct lp_import *imp, const struct lp_inf_wait *w, uint32_t stack);

/* Checks a database's output path before anything runs (the rule of
 * lp_file_output_check, plus what SQLite and NAME_MAX accept of its
 * temporary name): 0 or -errno with err set. */
int lp_import_output_check(const char *out, int force, char *err, size_t errlen);
/* Any output file: its directory exists and is writable; not a symbolic
 * link, only a regular file, an existing one only with force. */
int lp_file_output_check(const char *out, int force, char *err, size_t errlen);

#endif
