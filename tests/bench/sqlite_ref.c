/* SPDX-License-Identifier: MIT */
/*
 * The ceiling for `latprof import`: SQLite's own bulk insert of N rows
 * shaped like lock_waits, stored as the importer stores them (the same
 * columns, pragmas, connection flags and 64 KiB pages, one transaction,
 * the table clustered by (start_ns, id) and rows in start order, each
 * numbered), through 64-row INSERTs of bound values, with nothing else to
 * do. Shape "narrow" inserts rows of two values (start_ns, dur_ns) and
 * their number into a table of only those, the same way: what the same
 * machine reaches with a row that is little more than its key. The runner
 * (run_bench.py import) prints the importer's rate next to both, measured
 * in the same run, since absolute rates follow the machine's load.
 *   bench_sqlite_ref DB [N [lock_waits|narrow]]
 *   prints: rows=N shape=S insert_s=X cpu_s=Z
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REF_BATCH 64

/* The importer's lock_waits table (schemas/core.sql), and a narrow one. */
static const char ref_wide_sql[] =
    "CREATE TABLE lock_waits (id INTEGER NOT NULL, lock_id INTEGER NOT NULL, "
    "thread_id INTEGER NOT NULL, owner_tid INTEGER, start_ns INTEGER NOT NULL, "
    "dur_ns INTEGER NOT NULL, end_ns INTEGER GENERATED ALWAYS AS (start_ns + dur_ns) VIRTUAL, "
    "mode INTEGER NOT NULL DEFAULT 0, stack_id INTEGER, flags INTEGER NOT NULL DEFAULT 0, "
    "class INTEGER NOT NULL DEFAULT 0, owner_range_id INTEGER, PRIMARY KEY (start_ns, id)) "
    "WITHOUT ROWID";
static const char ref_narrow_sql[] =
    "CREATE TABLE lock_waits (id INTEGER NOT NULL, start_ns INTEGER NOT NULL, "
    "dur_ns INTEGER NOT NULL, PRIMARY KEY (start_ns, id)) WITHOUT ROWID";

static double ref_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int ref_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	fprintf(stderr, "bench_sqlite_ref: %s\n", msg ? msg : "?");
	sqlite3_free(msg);
	return -1;
}

/* INSERT INTO lock_waits(cols) VALUES (?, ...), ... : REF_BATCH rows. */
static sqlite3_stmt *ref_insert(sqlite3 *db, int wide)
{
	static const char wide_row[] = "(?,?,?,?,?,?,?,?,?)", narrow_row[] = "(?,?,?)";
	const char *row = wide ? wide_row : narrow_row;
	char sql[128 + REF_BATCH * sizeof(wide_row)];
	char *p = stpcpy(sql, wide ? "INSERT INTO lock_waits(lock_id, thread_id, owner_tid, "
				     "start_ns, dur_ns, mode, stack_id, flags, id) VALUES "
				   : "INSERT INTO lock_waits(start_ns, dur_ns, id) VALUES ");
	for (int r = 0; r < REF_BATCH; r++)
		p = stpcpy(stpcpy(p, r ? "," : ""), row);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		fprintf(stderr, "bench_sqlite_ref: %s\n", sqlite3_errmsg(db));
	return st;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	const char *shape = argc > 3 ? argv[3] : "lock_waits";
	int wide = strcmp(shape, "narrow") != 0;
	sqlite3 *db;
	sqlite3_stmt *st;
	if (argc < 2 || n <= 0 || (wide && strcmp(shape, "lock_waits"))) {
		fprintf(stderr, "usage: bench_sqlite_ref DB [N [lock_waits|narrow]]\n");
		return 2;
	}
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	unlink(argv[1]);
	/* As the importer opens and sets up its database (import/lp_import.c
	 * tmp_db, import_setup; lp_import_core.c core_begin). */
	if (sqlite3_open_v2(argv[1], &db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return 1;
	if (ref_exec(db, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; "
			 "PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
			 "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY; "
			 "PRAGMA secure_delete=OFF; BEGIN;") ||
	    ref_exec(db, wide ? ref_wide_sql : ref_narrow_sql) || !(st = ref_insert(db, wide)))
		return 1;
	double t0 = ref_cpu();
	long long ts = 0;
	for (long done = 0; done < n; done += REF_BATCH) {
		for (int r = 0; r < REF_BATCH; r++) {
			int th = r & 3; /* 4 threads, their waits merged in start order */
			ts += 300 + (done + r) % 397;
			if (!wide) {
				sqlite3_bind_int64(st, r * 3 + 1, ts);
				sqlite3_bind_int64(st, r * 3 + 2, 500 + r);
				sqlite3_bind_int64(st, r * 3 + 3, done + r + 1);
				continue;
			}
			int b = r * 9;
			sqlite3_bind_int64(st, b + 1, 1 + th);
			sqlite3_bind_int64(st, b + 2, 2 + th);
			sqlite3_bind_int64(st, b + 3, 1000 + th);
			sqlite3_bind_int64(st, b + 4, ts);
			sqlite3_bind_int64(st, b + 5, 500 + r);
			sqlite3_bind_int64(st, b + 6, 0);
			sqlite3_bind_int64(st, b + 7, 1 + th);
			sqlite3_bind_int64(st, b + 8, 0);
			sqlite3_bind_int64(st, b + 9, done + r + 1);
		}
		if (sqlite3_step(st) != SQLITE_DONE)
			return 1;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (ref_exec(db, "COMMIT"))
		return 1;
	double t1 = ref_cpu();
	sqlite3_close(db);
	printf("rows=%ld shape=%s insert_s=%.3f cpu_s=%.3f\n",
	       (n + REF_BATCH - 1) / REF_BATCH * REF_BATCH, shape, t1 - t0, t1);
	return 0;
}
