/* SPDX-License-Identifier: MIT */
/*
 * lp_import_dir's stats are an out-parameter: whatever the caller's struct
 * held before (cmd_import.c and cmd_run.c pass one from the stack,
 * uninitialized), every field afterwards is this import's own figure. A
 * recording of known content (lp_core linked directly: 1000 records of a
 * type no source owns) imported with stats prefilled with garbage, then
 * again into a second database with the same struct: exact counts both
 * times, and the database's own meta rows agree. Halfway through the log,
 * a child-status record shorter than its struct (what a damaged log holds):
 * skipped, and the records after it are read all the same; and two NVTX
 * category names, one of them lost while recording (its string never
 * defined, as when the string table is full): that one is left out, the
 * other imported, the log read on.
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_check.h"
#include "lp_core.h"
#include "lp_import.h"
#include "lp_log_format.h"
#include "lp_log_nvtx.h"

#define NREC 1000
#define LP_TEST_REC_TYPE 250 /* no source owns it: counted as unknown */

static long long q(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

static void import_once(const char *dir, const char *out, struct lp_import_stats *st)
{
	char err[512] = "";
	struct lp_import_opts o = {0};
	int rc = lp_import_dir(dir, out, &o, st, err, sizeof(err));
	CHECK(rc == 0, "import into %s: %d %s", out, rc, err);
	CHECK(st->processes == 1 && st->unknown_records == NREC && st->lock_waits == 0,
	      "1 process, %d unknown records, 0 lock waits: got %d, %lld, %lld", NREC,
	      st->processes, st->unknown_records, st->lock_waits);
	CHECK(st->dropped_records == 0 && st->dropped_strings == 0 && st->damaged_chunks == 0,
	      "nothing dropped or damaged: records %lld, strings %lld, chunks %lld",
	      st->dropped_records, st->dropped_strings, st->damaged_chunks);
	long long threads = q(out, "SELECT count(*) FROM threads");
	long long recs = q(out, "SELECT value FROM meta WHERE key = 'import.records'");
	long long dropped = q(out, "SELECT value FROM meta WHERE key = 'dropped_records'");
	CHECK(st->threads == 1 && threads == 1, "1 thread: stats %lld, database %lld", st->threads,
	      threads);
	CHECK(st->records == recs && recs >= NREC,
	      "records as the database's import.records (>= %d): stats %lld, meta %lld", NREC,
	      st->records, recs);
	CHECK(dropped == 0, "meta dropped_records 0, got %lld", dropped);
	long long cats =
	    q(out, "SELECT count(*) FROM categories WHERE category = 1 AND name = 'cat-io'");
	long long ncat = q(out, "SELECT count(*) FROM categories");
	CHECK(cats == 1 && ncat == 1,
	      "category 1 'cat-io' imported, the lost name left out: %lld of %lld", cats, ncat);
}

int main(void)
{
	char dir[] = "/tmp/lp-import-stats-XXXXXX", out[128], cmd[256];
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	setenv("LATPROF_DIR", dir, 1);
	if (lp_core_init())
		return fprintf(stderr, "lp_core_init failed\n"), 1;
	int written = 0;
	for (int i = 0; i < NREC; i++) {
		if (i == NREC / 4) {
			uint32_t name[2] = {lp_intern_string("cat-io", 6), 0x7fff0001u /* lost */};
			for (int k = 0; k < 2; k++) {
				struct lp_rec_nvtx_category *c =
				    lp_rec_begin(LP_REC_NVTX_CATEGORY, 0, sizeof(*c));
				if (c) {
					c->category = (uint32_t)k + 1;
					c->name = name[k];
					lp_rec_commit();
				}
			}
		}
		if (i == NREC / 2) {
			uint64_t *c = lp_rec_begin(LP_REC_CHILD_STATUS, 0, 8); /* ts only */
			if (c) {
				c[0] = 1;
				lp_rec_commit();
			}
		}
		uint64_t *p = lp_rec_begin(LP_TEST_REC_TYPE, 0, 8);
		if (p) {
			p[0] = (uint64_t)i;
			lp_rec_commit();
			written++;
		}
	}
	lp_core_exit(0, 0);
	CHECK(written == NREC, "%d records written, got %d", NREC, written);

	struct lp_import_stats st;
	memset(&st, 0xa5, sizeof(st)); /* what an uninitialized stack may hold */
	snprintf(out, sizeof(out), "%s/a.db", dir);
	import_once(dir, out, &st);
	snprintf(out, sizeof(out), "%s/b.db", dir); /* the same struct again */
	import_once(dir, out, &st);

	int failed = lp_check_done();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!failed && system(cmd) != 0)
		return 1;
	return failed;
}
