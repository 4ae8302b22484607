/* SPDX-License-Identifier: MIT */
/*
 * Is a database whole? The importer creates every table of every source
 * (schemas/SOURCE.sql) in one transaction, so a database it wrote and that lacks
 * one was damaged afterwards (a dropped table, a hand edit). Without this
 * check a report would take a missing `ranges` or `lock_waits` for a run
 * without NVTX ranges or lock waits and call the run clean.
 */
#include "lp_db.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * The check is most of the cost of opening a small database (a quarter of
 * `latprof report` on a short run), and one process opens the same file
 * several times: `latprof run` writes it, then opens it read-only for each
 * of its closing notes. So the importer's table names are listed once per
 * process, and a file that passed, or that this process's importer has
 * just written whole, is not checked again while it is the same file,
 * unchanged (device, inode, size, modification time).
 */
#define LP_CHECK_MAX_TABLES 64

static char *lp_check_names[LP_CHECK_MAX_TABLES];
static int lp_check_n = -1;

static struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int valid;
} lp_check_passed;

static int names_cb(sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	const char *name = (const char *)sqlite3_column_text(st, 0);
	assert(lp_check_n < LP_CHECK_MAX_TABLES);
	if (lp_check_n >= LP_CHECK_MAX_TABLES)
		return 1;
	char *copy = strdup(name ? name : "");
	if (!copy)
		return 1;
	lp_check_names[lp_check_n++] = copy;
	return 0;
}

/* The tables the importer creates, from its schemas built in memory. */
static int check_list_names(char *err, size_t errlen)
{
	if (lp_check_n >= 0)
		return 0;
	sqlite3 *ref = NULL;
	int rc =
	    sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK ? 0 : -1;
	for (int i = 0; rc == 0 && lp_db_schemas[i]; i++)
		rc = lp_db_exec(ref, lp_db_schemas[i], err, errlen);
	lp_check_n = 0;
	if (rc == 0)
		rc = lp_db_each(ref,
				"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
				"LIKE 'sqlite_%' ORDER BY rowid",
				NULL, 0, names_cb, NULL, err, errlen);
	sqlite3_close(ref);
	if (rc) {
		if (rc == 1) /* names_cb stopped the loop */
			snprintf(err, errlen, "out of memory listing latprof's tables");
		while (lp_check_n > 0)
			free(lp_check_names[--lp_check_n]);
		lp_check_n = -1;
		return -1;
	}
	return 0;
}

/* A table the importer creates, checked in db: missing or unreadable makes
 * the database damaged. */
static int check_table(sqlite3 *db, const char *name)
{
	char sql[256];
	sqlite3_stmt *probe = NULL;
	snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\" LIMIT 1", name);
	int ok = lp_db_has_table(db, name) &&
		 sqlite3_prepare_v2(db, sql, -1, &probe, NULL) == SQLITE_OK &&
		 lp_db_probe(probe) == 0;
	sqlite3_finalize(probe);
	return ok;
}

static int same_file(const struct stat *st)
{
	return lp_check_passed.valid && st->st_dev == lp_check_passed.dev &&
	       st->st_ino == lp_check_passed.ino && st->st_size == lp_check_passed.size &&
	       st->st_mtim.tv_sec == lp_check_passed.mtime.tv_sec &&
	       st->st_mtim.tv_nsec == lp_check_passed.mtime.tv_nsec;
}

static void check_passed(const struct stat *st)
{
	lp_check_passed.dev = st->st_dev;
	lp_check_passed.ino = st->st_ino;
	lp_check_passed.size = st->st_size;
	lp_check_passed.mtime = st->st_mtim;
	lp_check_passed.valid = 1;
}

void lp_db_check_trust(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		check_passed(&st);
}

int lp_db_check_tables(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	char buf[32];
	if (!lp_db_meta(db, "import.records", buf, sizeof(buf)))
		return 0; /* not written by the importer (a generated benchmark) */
	struct stat st;
	int have_stat = stat(path, &st) == 0;
	if (have_stat && same_file(&st))
		return 0;
	if (check_list_names(err, errlen))
		return -1;
	for (int i = 0; i < lp_check_n; i++)
		if (!check_table(db, lp_check_names[i])) {
			snprintf(
			    err, errlen,
			    "%s is damaged: table '%s' is missing or unreadable (re-import the "
			    "run's event logs, or record it again)",
			    path, lp_check_names[i]);
			return -1;
		}
	if (have_stat)
		check_passed(&st);
	return 0;
}
