/* SPDX-License-Identifier: MIT */
#include "lp_db.h"
#include "lp_progress.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lp_util.h"

/* The first read error of a lookup with a default (see lp_db.h), per
 * connection (a diff reads two) and per thread (the importer runs on
 * several). Commands are short-lived: four slots, reused in turn. */
#define NFAULT 4
static _Thread_local struct fault {
	sqlite3 *db;
	char msg[300];
} faults[NFAULT];
static _Thread_local unsigned fault_next;

static struct fault *fault_of(sqlite3 *db)
{
	for (int i = 0; i < NFAULT; i++)
		if (faults[i].db == db)
			return &faults[i];
	return NULL;
}

static void fault_note(sqlite3 *db, sqlite3_stmt *st)
{
	if (fault_of(db))
		return; /* the first error explains the rest */
	struct fault *f = fault_of(NULL);
	if (!f)
		f = &faults[fault_next++ % NFAULT];
	f->db = db;
	snprintf(f->msg, sizeof(f->msg), "database error: %s (reading %.80s)", sqlite3_errmsg(db),
		 st && sqlite3_sql(st) ? sqlite3_sql(st) : "the schema");
}

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
	sqlite3_busy_timeout(db, 2000);	  /* a writer's short transaction: wait it out */
	struct fault *old = fault_of(db); /* a closed connection's, same address */
	if (old)
		old->db = NULL;
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
	if (ver < LP_SCHEMA_READ_MIN || ver > LP_SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s has schema version %d; this latprof reads versions %d to %d "
			 "(re-import the logs or use the matching latprof)",
			 path, ver, LP_SCHEMA_READ_MIN, LP_SCHEMA_VERSION);
		goto fail;
	}
	/* The importer writes its version in meta too: a file whose meta says
	 * newer (a later latprof's, its user_version rewritten or copied from
	 * an older file) holds rows this latprof would misread. */
	char mv[32];
	if (lp_db_meta(db, "schema_version", mv, sizeof(mv))) {
		char *end;
		long m = strtol(mv, &end, 10);
		if (end == mv || *end || m < LP_SCHEMA_READ_MIN || m > LP_SCHEMA_VERSION) {
			snprintf(err, errlen,
				 "%s has schema version %s (meta.schema_version); this latprof "
				 "reads versions %d to %d (re-import the logs or use the "
				 "matching latprof)",
				 path, mv, LP_SCHEMA_READ_MIN, LP_SCHEMA_VERSION);
			goto fail;
		}
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

int lp_db_fault(sqlite3 *db, char *err, size_t errlen)
{
	struct fault *f = db ? fault_of(db) : NULL;
	if (!f)
		return 0;
	snprintf(err, errlen, "%s", f->msg);
	return -EIO;
}

/* Prepares a lookup. A missing table or column (SQLITE_ERROR) is the
 * lookup's default, anything else (a damaged schema, no memory) a fault. */
static sqlite3_stmt *lookup_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
		return st;
	if (sqlite3_errcode(db) != SQLITE_ERROR)
		fault_note(db, NULL);
	return NULL;
}

/* Steps a lookup once: SQLITE_ROW, or SQLITE_DONE for no row and for a
 * read error, which is noted. */
static int lookup_step(sqlite3_stmt *st)
{
	int s = sqlite3_step(st);
	if (s != SQLITE_ROW && s != SQLITE_DONE) {
		fault_note(sqlite3_db_handle(st), st);
		s = SQLITE_DONE;
	}
	return s;
}

const char *lp_db_meta(sqlite3 *db, const char *key, char *buf, size_t len)
{
	sqlite3_stmt *st = lookup_prepare(db, "SELECT value FROM meta WHERE key = ?");
	const char *res = NULL;
	if (!st)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (lookup_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
		res = buf;
	}
	sqlite3_finalize(st);
	return res;
}

int lp_db_has_table(sqlite3 *db, const char *table)
{
	sqlite3_stmt *st = lookup_prepare(
	    db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
	int found = 0;
	if (!st)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	found = lookup_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int64_t lp_db_int(sqlite3 *db, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st = lookup_prepare(db, sql);
	int64_t v = dflt;
	if (!st)
		return dflt;
	if (lookup_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

long long lp_db_count(sqlite3 *db, const char *table)
{
	char sql[256];
	if (!lp_db_has_table(db, table))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\"", table);
	return lp_db_int(db, sql, 0);
}

void lp_db_progress(sqlite3 *db, const char *what, const char *table)
{
	if (lp_progress_enabled())
		lp_progress_begin(what, (uint64_t)lp_db_count(db, table), "rows");
}

int lp_db_step_all(sqlite3_stmt *st, lp_db_row_fn fn, void *ctx, char *err, size_t errlen)
{
	int s, rc = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		lp_progress_add(1);
		if (fn && (rc = fn(st, ctx)) != 0)
			break;
	}
	if (rc == LP_DB_STOP) {
		rc = 0;
	} else if (rc == -ENOMEM) {
		snprintf(err, errlen, "out of memory");
	} else if (!rc && s != SQLITE_DONE) {
		sqlite3 *db = sqlite3_db_handle(st);
		snprintf(err, errlen, "database error: %s (reading %.80s)", sqlite3_errmsg(db),
			 sqlite3_sql(st) ? sqlite3_sql(st) : "?");
		rc = -EIO;
	}
	return rc;
}

static void bind_args(sqlite3_stmt *st, const struct lp_db_arg *args, int nargs)
{
	for (int i = 0; i < nargs; i++)
		if (args[i].is_text)
			sqlite3_bind_text(st, i + 1, args[i].text, -1, SQLITE_STATIC);
		else
			sqlite3_bind_int64(st, i + 1, args[i].i);
}

int lp_db_query(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		lp_db_row_fn fn, void *ctx, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database error: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	bind_args(st, args, nargs);
	int rc = lp_db_step_all(st, fn, ctx, err, errlen);
	sqlite3_finalize(st);
	return rc;
}

int lp_db_each(sqlite3 *db, const char *sql, const int64_t *args, int nargs, lp_db_row_fn fn,
	       void *ctx, char *err, size_t errlen)
{
	struct lp_db_arg a[16];
	assert(nargs >= 0 && nargs <= (int)ARRAY_SIZE(a));
	for (int i = 0; i < nargs; i++)
		a[i] = LP_DB_INT(args[i]);
	return lp_db_query(db, sql, a, nargs, fn, ctx, err, errlen);
}

struct fold {
	lp_db_vals_fn fn;
	void *ctx;
	int rc;
};

static void fold_step(sqlite3_context *c, int n, sqlite3_value **v)
{
	struct fold *f = sqlite3_user_data(c);
	(void)n;
	/* an error set in a step ends the statement: no more rows are read */
	if (!f->rc && (f->rc = f->fn(v, f->ctx)) != 0)
		sqlite3_result_error(c, "stopped by the caller", -1);
}

static void fold_final(sqlite3_context *c)
{
	sqlite3_result_null(c);
}

int lp_db_fold(sqlite3 *db, const char *sql, lp_db_vals_fn fn, void *ctx, char *err, size_t errlen)
{
	struct fold f = {fn, ctx, 0};
	if (sqlite3_create_function(db, "lp_rows", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, &f, NULL,
				    fold_step, fold_final) != SQLITE_OK) {
		snprintf(err, errlen, "database error: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	int rc = lp_db_each(db, sql, NULL, 0, NULL, NULL, err, errlen);
	sqlite3_create_function(db, "lp_rows", -1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
	if (f.rc == LP_DB_STOP)
		return 0;
	if (f.rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return f.rc ? f.rc : rc;
}

struct get_int {
	int64_t v;
};

static int get_int_row(sqlite3_stmt *st, void *ctx)
{
	struct get_int *g = ctx;
	if (sqlite3_column_type(st, 0) != SQLITE_NULL)
		g->v = sqlite3_column_int64(st, 0);
	return LP_DB_STOP;
}

int lp_db_get_int(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		  int64_t dflt, int64_t *out, char *err, size_t errlen)
{
	struct get_int g = {dflt};
	int rc = lp_db_query(db, sql, args, nargs, get_int_row, &g, err, errlen);
	*out = rc ? dflt : g.v;
	return rc;
}

int lp_db_lookup(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		 lp_db_row_fn fn, void *ctx)
{
	sqlite3_stmt *st = lookup_prepare(db, sql);
	int found = 0;
	if (!st)
		return 0;
	bind_args(st, args, nargs);
	if (lookup_step(st) == SQLITE_ROW) {
		found = 1;
		if (fn)
			fn(st, ctx);
	}
	sqlite3_finalize(st);
	return found;
}

int64_t lp_db_int_args(sqlite3 *db, const char *sql, const struct lp_db_arg *args, int nargs,
		       int64_t dflt)
{
	struct get_int g = {dflt};
	lp_db_lookup(db, sql, args, nargs, get_int_row, &g);
	return g.v;
}

char *lp_db_col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? strdup((const char *)s) : NULL;
}

int lp_db_step_row(sqlite3_stmt *st)
{
	return lookup_step(st) == SQLITE_ROW;
}

int lp_db_step_next(sqlite3_stmt *st)
{
	int s = sqlite3_step(st);
	if (s == SQLITE_ROW) {
		lp_progress_add(1);
		return 1;
	}
	return s == SQLITE_DONE ? 0 : -EIO;
}

int lp_db_probe(sqlite3_stmt *st)
{
	int s = sqlite3_step(st);
	return s == SQLITE_ROW || s == SQLITE_DONE ? 0 : -EIO;
}
