/* SPDX-License-Identifier: MIT */
/*
 * Links liblatprof_core directly: 8 threads hammer lp_rec_begin/commit and
 * lp_intern_string (distinct and shared strings, so intern slots are
 * claimed concurrently), then the log is imported in-process. Built in every
 * build (label unit); in the LATPROF_SANITIZE=thread build it is the TSan
 * test of the recording core and the importer (label tsan). Asserts exact
 * counts: every record and string is in the database.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_core.h"
#include "lp_import.h"

#define THREADS 8
#define PER_THREAD 20000
#define SHARED 64
#define LP_TEST_REC_TYPE 250 /* no source owns it: counted as unknown */

static void *hammer(void *arg)
{
	long t = (long)arg;
	char s[64];
	for (long i = 0; i < PER_THREAD; i++) {
		uint64_t *p = lp_rec_begin(LP_TEST_REC_TYPE, (uint32_t)t, 16);
		if (p) {
			p[0] = (uint64_t)t;
			p[1] = (uint64_t)i;
			lp_rec_commit();
		}
		if (i % 10 == 0) {
			int n = snprintf(s, sizeof(s), "own t%ld i%ld", t, i);
			lp_intern_string(s, (size_t)n);
			n = snprintf(s, sizeof(s), "shared %ld", (i / 10) % SHARED);
			lp_intern_string(s, (size_t)n);
		}
	}
	return NULL;
}

static long long q(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int main(void)
{
	char dir[] = "/tmp/lp-core-stress-XXXXXX", out[128], err[512];
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	setenv("LATPROF_DIR", dir, 1);
	setenv("LATPROF_LOG_MB", "256", 1);
	if (lp_core_init())
		return fprintf(stderr, "lp_core_init failed\n"), 1;
	pthread_t th[THREADS];
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, hammer, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	lp_core_exit(0, 0);

	snprintf(out, sizeof(out), "%s/out.db", dir);
	struct lp_import_opts o = {0};
	struct lp_import_stats st;
	if (lp_import_dir(dir, out, &o, &st, err, sizeof(err)))
		return fprintf(stderr, "import: %s\n", err), 1;
	sqlite3 *db;
	sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL);
	long long recs = q(db, "SELECT value FROM meta WHERE key = 'import.unknown_records'");
	long long own = q(db, "SELECT count(*) FROM strings WHERE value LIKE 'own %'");
	long long shared = q(db, "SELECT count(*) FROM strings WHERE value LIKE 'shared %'");
	long long dropped = q(db, "SELECT value FROM meta WHERE key = 'dropped_records'");
	sqlite3_close(db);
	printf("records %lld of %d, own strings %lld of %d, shared %lld of %d, dropped %lld\n",
	       recs, THREADS * PER_THREAD, own, THREADS * PER_THREAD / 10, shared, SHARED, dropped);
	int ok = recs == THREADS * PER_THREAD && own == THREADS * PER_THREAD / 10 &&
		 shared == SHARED && dropped == 0;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (ok && system(cmd) != 0)
		return 1;
	printf("%s\n", ok ? "ok: every record and string is in the database" : "FAIL");
	return ok ? 0 : 1;
}
