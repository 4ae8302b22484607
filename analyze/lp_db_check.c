/* SPDX-License-Identifier: MIT */
/*
 * Is a database whole? The importer creates every table of every source
 * (schemas/SOURCE.sql) in one transaction, so a database it wrote and that lacks
 * one was damaged afterwards (a dropped table, a hand edit). Without this
 * check a report would take a missing `ranges` or `lock_waits` for a run
 * without NVTX ranges or lock waits and call the run clean.
 */
#include "lp_db.h"

#include <stdio.h>

#include "lp_import.h"
#include "lp_import_sources.h"

/* Each table the importer creates, checked in db: the first missing or
 * unreadable one makes the database damaged. */
static int db_tables_cb(sqlite3_stmt *st, void *ctx)
{
	void **c = ctx;
	sqlite3 *db = c[0];
	const char *name = (const char *)sqlite3_column_text(st, 0);
	char sql[256];
	sqlite3_stmt *probe = NULL;
	snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\" LIMIT 1", name ? name : "");
	int ok = name && lp_db_has_table(db, name) &&
		 sqlite3_prepare_v2(db, sql, -1, &probe, NULL) == SQLITE_OK &&
		 lp_db_probe(probe) == 0;
	if (!ok)
		snprintf(c[1], 128, "%s", name ? name : "?");
	sqlite3_finalize(probe);
	return ok ? 0 : 1;
}

int lp_db_check_tables(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	char buf[32], missing[128] = "";
	if (!lp_db_meta(db, "import.records", buf, sizeof(buf)))
		return 0; /* not written by the importer (a generated benchmark) */
	sqlite3 *ref = NULL;
	int rc =
	    sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK ? 0 : -1;
	for (int i = 0; rc == 0 && lp_import_sources[i]; i++)
		if (lp_import_sources[i]->schema)
			rc = lp_db_exec(ref, lp_import_sources[i]->schema, err, errlen);
	void *ctx[2] = {db, missing};
	if (rc == 0)
		rc = lp_db_each(ref,
				"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
				"LIKE 'sqlite_%' ORDER BY rowid",
				NULL, 0, db_tables_cb, ctx, err, errlen);
	sqlite3_close(ref);
	if (rc == 1 || missing[0]) {
		snprintf(err, errlen,
			 "%s is damaged: table '%s' is missing or unreadable (re-import the run's "
			 "event logs, or record it again)",
			 path, missing);
		return -1;
	}
	return rc ? -1 : 0;
}
