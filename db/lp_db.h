/* SPDX-License-Identifier: MIT */
/* Opening latprof databases: created by the importer, read by reports. */
#ifndef LP_DB_H
#define LP_DB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A string of an imported capture is stored up to its first LP_JSTR_KEEP
 * raw JSON bytes (meta import.truncated_strings counts the longer ones; the
 * run summary says so). Half an element's arena of the JSON reader
 * (import/captures/lp_json_stream.h), so that the element's other fields
 * still fit. */
#define LP_JSTR_KEEP 32768

/* Bump when a table in schemas/ changes shape. Reports read every version
 * from LP_SCHEMA_READ_MIN on and refuse others: what a later version added
 * (version 5: threads.run_delay_ns) is looked for before it is read, and
 * its absence reads as "not recorded". */
#define LP_SCHEMA_VERSION 5
#define LP_SCHEMA_READ_MIN 4

/* Open an existing database read-only and check it is a latprof database
 * of a version this latprof reads (LP_SCHEMA_READ_MIN..LP_SCHEMA_VERSION). On failure returns
 * -errno-style code and writes one human sentence into err. Refuses FIFOs and devices. */
int lp_db_open_ro(const char *path, sqlite3 **out, char *err, size_t errlen);

/* The schema of every table the importer creates (schemas/<source>.sql, one text
 * per import source), NULL-terminated. The importer's sources create their
 * tables from these texts; the check below reads them without the importer. */
extern const char *const lp_db_schemas[];

/* A database the importer wrote must hold every table it creates: 0, or
 * -1 with "PATH is damaged: table 'T' is missing..." (db/lp_db_check.c;
 * lp_db_open_ro calls it). */
int lp_db_check_tables(sqlite3 *db, const char *path, char *err, size_t errlen);

/* The importer has just put a whole database at path: this process's
 * later opens of it skip lp_db_check_tables while the file is unchanged. */
void lp_db_check_trust(const char *path);

/* Run SQL with no result rows; returns 0 or -EIO with err filled. */
int lp_db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

/* ---- lookups with a default ----
 * lp_db_meta, lp_db_int, lp_db_count and lp_db_has_table answer a default
 * when the row, the table or the column is missing: a database from an
 * older build, or without CUDA data, is not an error. A read error (a
 * damaged page, SQLITE_BUSY, out of memory) is not a missing row: like
 * ferror(), they record it against the connection, and every command
 * checks lp_db_fault() before it prints (a report computed from a default
 * that stood in for a failed read would be shorter, not wrong-looking). */

/* Value of meta[key] as text (static buffer owned by caller) or NULL. */
const char *lp_db_meta(sqlite3 *db, const char *key, char *buf, size_t len);

/* First column of the first row of sql as an integer; dflt when the query
 * returns no row or NULL, or names a missing table or column. */
int64_t lp_db_int(sqlite3 *db, const char *sql, int64_t dflt);

/* Count rows of a table (0 when the table is missing). */
long long lp_db_count(sqlite3 *db, const char *table);

/* True when the table exists. */
int lp_db_has_table(sqlite3 *db, const char *table);

/* -EIO with the first read error's sentence in err when a lookup above
 * failed to read db since it was opened; else 0. Per thread. */
int lp_db_fault(sqlite3 *db, char *err, size_t errlen);

/* ---- the one read path ----
 * Every loop over result rows in db/, import/ and analysis/ goes through lp_db_each or
 * lp_db_step_all. Why: a sqlite3_step() that fails (damaged page, SQLITE_BUSY,
 * out of memory) returns neither SQLITE_ROW nor SQLITE_DONE; a bare
 * `while (step == SQLITE_ROW)` takes that for the last row and a report is
 * silently computed from part of the data. These check SQLITE_DONE and turn
 * anything else into -EIO with one sentence in err. */

/* Called per row; returns 0 to go on, LP_DB_STOP to end the loop early
 * without error (single-row lookups), a negative errno to stop (returned
 * as is by the iterator; -ENOMEM also fills err). */
typedef int (*lp_db_row_fn)(sqlite3_stmt *st, void *ctx);
#define LP_DB_STOP 1

/* One bound parameter: an integer, or text (NULL text binds SQL NULL). */
struct lp_db_arg {
	int is_text;
	int64_t i;
	const char *text;
};
#define LP_DB_INT(v) ((struct lp_db_arg){.i = (int64_t)(v)})
#define LP_DB_TEXT(s) ((struct lp_db_arg){.is_text = 1, .text = (s)})

/* Steps an already prepared and bound statement to SQLITE_DONE, calling fn
 * per row (fn may be NULL). Does not finalize or reset: the caller owns st. */
/* Shows the rows of a scan of table as progress on a terminal (lp_progress.h;
 * counting them only then); the caller ends it with lp_progress_end(). */
void lp_db_progress(sqlite3 *db, const char *what, const char *table);

int lp_db_step_all(sqlite3_stmt *st, lp_db_row_fn fn, void *ctx, char *err, size_t errlen);

/* Prepares sql, binds args[0..nargs) as ?1..?n (int64), steps it with
 * lp_db_step_all and finalizes. 0, fn's error, or -EIO with err filled. */
int lp_db_each(sqlite3 *db, const char *sql, const int64_t *args, int nargs, lp_db_row_fn fn,
	       void *ctx, char *err, size_t errlen);

/* Prepares sql, binds args[0..nargs) as ?1..?n, steps it with
 * lp_db_step_all and finalizes. 0, fn's error, or -EIO with err filled. */
int lp_db_query(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		lp_db_row_fn fn, void *ctx, char *err, size_t errlen);

/* Called per row of a fold with the values of lp_rows(...); returns as
 * lp_db_row_fn does. */
typedef int (*lp_db_vals_fn)(sqlite3_value **v, void *ctx);

/* A scan of millions of rows, read inside SQLite: sql selects the
 * aggregate lp_rows(expr, ...), which calls fn with the values of each row
 * it aggregates. Stepping each row out costs more than reading it (5 M
 * ranges of 5 columns: 1.7 s stepped, 1.2 s folded). 0, fn's error, or
 * -EIO with err filled. */
int lp_db_fold(sqlite3 *db, const char *sql, lp_db_vals_fn fn, void *ctx, char *err, size_t errlen);

/* The checked single-value lookup: *out = first column of the first row,
 * dflt when there is no row or it is NULL. 0, or -EIO with err filled. */
int lp_db_get_int(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		  int64_t dflt, int64_t *out, char *err, size_t errlen);

/* A checked single-row lookup with a default: calls fn on the first row
 * of sql (if any) and returns 1, or 0 when there is no row. A read error
 * counts as no row and is recorded for lp_db_fault(), like lp_db_int. */
int lp_db_lookup(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		 lp_db_row_fn fn, void *ctx);

/* One step of a prepared single-row lookup the caller reuses (a string
 * by id, bound anew each time): 1 with a row, 0 without one. A read error
 * counts as no row and is recorded for lp_db_fault(), like lp_db_int. */
int lp_db_step_row(sqlite3_stmt *st);

/* One row of a scan the caller steps itself (several cursors merged in
 * order, say): 1 with a row (counted as progress), 0 at the end, -EIO on
 * a read error (sqlite3_errmsg tells which). */
int lp_db_step_next(sqlite3_stmt *st);

/* Whether a prepared statement's first step reads without error (a table
 * whose pages are damaged fails here): 0 or -EIO. */
int lp_db_probe(sqlite3_stmt *st);

/* lp_db_int with bound parameters (a lookup with a default, as above). */
int64_t lp_db_int_args(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		       int64_t dflt);

/* Column i as a malloc'd string (NULL for SQL NULL or no memory: callers
 * that must tell the two apart check sqlite3_column_type first). */
char *lp_db_col_strdup(sqlite3_stmt *st, int i);

#endif
