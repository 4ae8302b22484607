/* SPDX-License-Identifier: MIT */
#include "lp_db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int lp_db_open_ro(const char *path, sqlite3 **out, char *err, size_t errlen)
{
	struct stat st;
	sqlite3 *db = NULL;
	int rc = -EINVAL;

	*out = NULL;
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", path);
		return -EINVAL;
	}
	/* Reports read from one thread: no per-connection mutex and no
	 * allocator statistics (a global mutex per malloc; only effective
	 * before SQLite initializes). */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(path, &db,
			    SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 db ? sqlite3_errmsg(db) : "no memory");
		goto fail;
	}
	sqlite3_busy_timeout(db, 2000); /* a writer's short transaction: wait it out */
	sqlite3_stmt *st_ver = NULL;
	int s = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st_ver, NULL);
	if (s == SQLITE_OK)
		s = sqlite3_step(st_ver);
	if (s != SQLITE_ROW) {
		int code = sqlite3_extended_errcode(db) & 0xff;
		if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
			snprintf(err, errlen,
				 "%s is locked by another program writing it (%s); try again once "
				 "it is done",
				 path, sqlite3_errmsg(db));
		else if (code == SQLITE_NOTADB)
			snprintf(err, errlen, "%s is not a latprof database (not SQLite)", path);
		else
			snprintf(err, errlen, "cannot read %s: %s", path, sqlite3_errmsg(db));
		sqlite3_finalize(st_ver);
		goto fail;
	}
	int ver = sqlite3_column_int(st_ver, 0);
	sqlite3_finalize(st_ver);
	if (!lp_db_has_table(db, "meta") || !lp_db_has_table(db, "processes")) {
		snprintf(err, errlen, "%s is not a latprof database (no meta/processes tables)",
			 path);
		goto fail;
	}
	if (ver != LP_SCHEMA_VERSION) {
		snprintf(
		    err, errlen,
		    "%s has schema version %d; this latprof reads version %d (re-import the logs "
		    "or use the matching latprof)",
		    path, ver, LP_SCHEMA_VERSION);
		goto fail;
	}
	if (lp_db_check_tables(db, path, err, errlen))
		goto fail;
	*out = db;
	return 0;
fail:
	sqlite3_close(db);
	return rc;
}

int lp_db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "database error: %s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}

const char *lp_db_meta(sqlite3 *db, const char *key, char *buf, size_t len)
{
	sqlite3_stmt *st;
	const char *res = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
		res = buf;
	}
	sqlite3_finalize(st);
	return res;
}

int lp_db_has_table(sqlite3 *db, const char *table)
{
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(
		db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", -1,
		&st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int64_t lp_db_int(sqlite3 *db, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

long long lp_db_count(sqlite3 *db, const char *table)
{
	char sql[256];
	sqlite3_stmt *st;
	long long n = 0;
	if (!lp_db_has_table(db, table))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\"", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int lp_db_step_all(sqlite3_stmt *st, lp_db_row_fn fn, void *ctx, char *err, size_t errlen)
{
	int s, rc = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (fn && (rc = fn(st, ctx)) != 0)
			break;
	}
	if (rc == -ENOMEM) {
		snprintf(err, errlen, "out of memory");
	} else if (!rc && s != SQLITE_DONE) {
		sqlite3 *db = sqlite3_db_handle(st);
		snprintf(err, errlen, "database error: %s (reading %.80s)", sqlite3_errmsg(db),
			 sqlite3_sql(st) ? sqlite3_sql(st) : "?");
		rc = -EIO;
	}
	return rc;
}

int lp_db_each(sqlite3 *db, const char *sql, const int64_t *args, int nargs, lp_db_row_fn fn,
	       void *ctx, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database error: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	for (int i = 0; i < nargs; i++)
		sqlite3_bind_int64(st, i + 1, args[i]);
	int rc = lp_db_step_all(st, fn, ctx, err, errlen);
	sqlite3_finalize(st);
	return rc;
}

char *lp_db_col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? strdup((const char *)s) : NULL;
}
