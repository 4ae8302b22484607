/* SPDX-License-Identifier: MIT */
/*
 * The ceiling for `latprof import`: SQLite's own bulk insert of N rows
 * shaped like lock_waits (same columns, importer's pragmas, one
 * transaction, 64-row INSERTs of bound values, the same start_ns index built
 * after the load), with nothing else to do. The runner (run_bench.py
 * import) prints the importer's rate next to this one, measured in the same
 * run, since absolute rates follow the machine's load.
 *   bench_sqlite_ref DB [N]   prints: rows=N insert_s=X index_s=Y cpu_s=Z
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REF_BATCH 64
#define REF_ROW "(?,?,?,?,?,?,?,?)"

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

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	sqlite3 *db;
	sqlite3_stmt *st;
	if (argc < 2 || n <= 0) {
		fprintf(stderr, "usage: bench_sqlite_ref DB [N]\n");
		return 2;
	}
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	unlink(argv[1]);
	if (sqlite3_open(argv[1], &db) != SQLITE_OK)
		return 1;
	if (ref_exec(db,
		     "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
		     "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536; "
		     "PRAGMA temp_store=MEMORY; BEGIN;"
		     "CREATE TABLE lock_waits (id INTEGER PRIMARY KEY, lock_id INTEGER NOT NULL, "
		     "thread_id INTEGER NOT NULL, owner_tid INTEGER, start_ns INTEGER NOT NULL, "
		     "dur_ns INTEGER NOT NULL, end_ns INTEGER GENERATED ALWAYS AS "
		     "(start_ns + dur_ns) VIRTUAL, mode INTEGER NOT NULL DEFAULT 0, "
		     "stack_id INTEGER, flags INTEGER NOT NULL DEFAULT 0)"))
		return 1;
	char sql[128 + REF_BATCH * sizeof(REF_ROW ",")];
	char *p = stpcpy(sql, "INSERT INTO lock_waits(lock_id, thread_id, owner_tid, start_ns, "
			      "dur_ns, mode, stack_id, flags) VALUES ");
	for (int r = 0; r < REF_BATCH; r++)
		p = stpcpy(stpcpy(p, r ? "," : ""), REF_ROW);
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		return 1;
	double t0 = ref_cpu();
	long long ts[4] = {0};
	for (long done = 0; done < n; done += REF_BATCH) {
		for (int r = 0; r < REF_BATCH; r++) {
			int b = r * 8, th = r & 3; /* 4 threads, each in time order */
			ts[th] += 1000 + (done + r) % 997;
			sqlite3_bind_int64(st, b + 1, 1 + th);
			sqlite3_bind_int64(st, b + 2, 2 + th);
			sqlite3_bind_int64(st, b + 3, 1000 + th);
			sqlite3_bind_int64(st, b + 4, ts[th]);
			sqlite3_bind_int64(st, b + 5, 500 + r);
			sqlite3_bind_int64(st, b + 6, 0);
			sqlite3_bind_int64(st, b + 7, 1 + th);
			sqlite3_bind_int64(st, b + 8, 0);
		}
		if (sqlite3_step(st) != SQLITE_DONE)
			return 1;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (ref_exec(db, "COMMIT"))
		return 1;
	double t1 = ref_cpu();
	if (ref_exec(db, "CREATE INDEX lock_waits_start ON lock_waits(start_ns)"))
		return 1;
	double t2 = ref_cpu();
	sqlite3_close(db);
	printf("rows=%ld insert_s=%.3f index_s=%.3f cpu_s=%.3f\n",
	       (n + REF_BATCH - 1) / REF_BATCH * REF_BATCH, t1 - t0, t2 - t1, t2);
	return 0;
}
