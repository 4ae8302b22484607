/* SPDX-License-Identifier: MIT */
/* Opening latprof databases: created by the importer, read by reports. */
#ifndef LP_DB_H
#define LP_DB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Bump when a table in schemas/ changes shape; reports refuse others. */
#define LP_SCHEMA_VERSION 1

/* Open an existing database read-only and check it is a latprof database
 * of LP_SCHEMA_VERSION. On failure returns -errno-style code and writes one
 * human sentence into err. Refuses FIFOs and devices. */
int lp_db_open_ro(const char *path, sqlite3 **out, char *err, size_t errlen);

/* Run SQL with no result rows; returns 0 or -EIO with err filled. */
int lp_db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

/* Value of meta[key] as text (static buffer owned by caller) or NULL. */
const char *lp_db_meta(sqlite3 *db, const char *key, char *buf, size_t len);

/* First column of the first row of sql as an integer; dflt when the query
 * fails, returns no row or NULL. */
int64_t lp_db_int(sqlite3 *db, const char *sql, int64_t dflt);

/* Count rows of a table (0 when the table is missing). */
long long lp_db_count(sqlite3 *db, const char *table);

/* True when the table exists. */
int lp_db_has_table(sqlite3 *db, const char *table);

#endif
