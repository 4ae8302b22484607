/* SPDX-License-Identifier: MIT */
/*
 * Wait classes (import/sources/lp_import_waits.c) on a database built by hand
 * with the real schema: one process serving requests on two threads, a
 * pool thread, and the main thread; each row below is one case of the
 * rules in docs/schema.md, "Wait classes".
 */
#include <sqlite3.h>
#include <stdio.h>

#include "lp_waits.h"

extern const char lp_schema_core_sql[], lp_schema_nvtx_sql[];

static int failures;

static void expect(sqlite3 *db, const char *table, int id, int want, const char *what)
{
	char sql[128];
	sqlite3_stmt *st;
	int got = -1;
	snprintf(sql, sizeof(sql), "SELECT class FROM %s WHERE id = %d", table, id);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		got = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	printf("%s: %s (%s) want %s\n", got == want ? "ok" : "FAIL", what, lp_wait_class_name(got),
	       lp_wait_class_name(want));
	failures += got != want;
}

/* Times in ms * 1e6. Threads: 1 main (tid = pid 100), 2 and 3 serve
 * requests, 4 a pool thread that ends at 900 ms. Requests: thread 2 in
 * [100, 200) and [300, 400) ms, thread 3 in [100, 400) ms. */
static const char lp_rows[] =
    "INSERT INTO processes(id, pid, ppid, start_ns, end_ns) VALUES (1, 100, 1, 0, 1000000000);"
    "INSERT INTO threads(id, process_id, tid, start_ns, end_ns) VALUES"
    " (1, 1, 100, 0, 1000000000), (2, 1, 101, 10000000, 500000000),"
    " (3, 1, 102, 10000000, 500000000), (4, 1, 103, 10000000, 900000000);"
    "INSERT INTO strings(id, value) VALUES (1, 'request');"
    "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns, start_thread_id, depth) VALUES"
    " (1, 1, 1, 100000000, 200000000, 2, 0), (2, 1, 1, 300000000, 400000000, 2, 0),"
    " (3, 1, 1, 100000000, 400000000, 3, 0);"
    "INSERT INTO frames(id, module, function) VALUES (1, 'libpython3.11.so', 'take_gil'),"
    " (2, 'app', 'worker'), (3, 'libpython3.11.so', NULL);"
    "INSERT INTO stacks(id, depth, top_frame) VALUES (1, 1, 1), (2, 1, 2), (3, 1, 3);"
    "INSERT INTO locks(id, process_id, address, kind, name, module) VALUES"
    " (1, 1, 4096, 'mutex', '_PyRuntime+0x1b8', 'libpython3.11.so'),"
    " (2, 1, 8192, 'mutex', 'model_lock', 'app'), (3, 1, 12288, 'sem', NULL, NULL),"
    " (4, 1, 16384, 'sem', NULL, NULL), (5, 1, 20480, 'sem', NULL, NULL),"
    " (6, 1, 24576, 'sem', NULL, NULL);"
    /* lock waits */
    "INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns, stack_id) VALUES"
    " (1, 2, 2, 150000000, 1000000, 2),"   /* model_lock in a request: contention */
    " (2, 1, 3, 150000000, 1000000, 3),"   /* the GIL mutex, stripped frame: gil */
    " (3, 3, 1, 600000000, 300000000, 2)," /* main waits once, pool thread ends: join */
    " (4, 4, 1, 50000000, 5000000, 2),"	   /* once, no thread ends: signal */
    " (5, 5, 2, 150000000, 1000000, 2), (6, 5, 3, 160000000, 1000000, 2)," /* shared sem: contention
									    */
    " (7, 6, 2, 220000000, 50000000, 2), (8, 6, 2, 410000000, 50000000, 2);" /* worker, between
										requests: idle */
    /* condition waits */
    "INSERT INTO cond_waits(id, thread_id, cond_addr, mutex_lock_id, start_ns, dur_ns, stack_id) "
    "VALUES"
    " (1, 2, 1, 1, 120000000, 5000000, 3),"    /* mutex in _PyRuntime: gil */
    " (2, 3, 2, NULL, 130000000, 5000000, 1)," /* take_gil frame, no mutex row: gil */
    " (3, 2, 3, 2, 210000000, 50000000, 2),"   /* request thread between requests: idle */
    " (4, 4, 4, 2, 150000000, 50000000, 2),"   /* pool thread: idle */
    " (5, 3, 5, 2, 150000000, 5000000, 2),"    /* inside a request: signal */
    " (6, 1, 6, 2, 150000000, 5000000, 2);" /* the main thread serves none: signal */;

int main(void)
{
	sqlite3 *db;
	char err[256] = "";
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_core_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_nvtx_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, lp_rows, NULL, NULL, NULL) != SQLITE_OK) {
		printf("FAIL: setup: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	if (lp_waits_classify(db, err, sizeof(err))) {
		printf("FAIL: classify: %s\n", err);
		return 1;
	}
	expect(db, "lock_waits", 1, LP_WAIT_CONTENTION, "mutex in a request");
	expect(db, "lock_waits", 2, LP_WAIT_GIL, "GIL mutex named from dynamic symbols");
	expect(db, "lock_waits", 3, LP_WAIT_JOIN, "semaphore released as a thread ended");
	expect(db, "lock_waits", 4, LP_WAIT_SIGNAL, "one-shot semaphore");
	expect(db, "lock_waits", 5, LP_WAIT_CONTENTION, "semaphore used as a lock");
	expect(db, "lock_waits", 7, LP_WAIT_IDLE, "worker's semaphore between requests");
	expect(db, "lock_waits", 8, LP_WAIT_IDLE, "worker's semaphore after its last request");
	expect(db, "cond_waits", 1, LP_WAIT_GIL, "cond wait on the GIL's mutex");
	expect(db, "cond_waits", 2, LP_WAIT_GIL, "cond wait in take_gil");
	expect(db, "cond_waits", 3, LP_WAIT_IDLE, "request thread waiting for work");
	expect(db, "cond_waits", 4, LP_WAIT_IDLE, "pool thread waiting for work");
	expect(db, "cond_waits", 5, LP_WAIT_SIGNAL, "cond wait inside a request");
	expect(db, "cond_waits", 6, LP_WAIT_SIGNAL, "main thread's cond wait");
	sqlite3_close(db);
	return failures ? 1 : 0;
}
