/* SPDX-License-Identifier: MIT */
/*
 * lp_timeseries (the charts' and the timeline's numbers) on databases built
 * by hand with the real schema: every bin of every lane, the lock and
 * condition wait series, and one request's timeline, each compared with a
 * brute-force reference computed here from the same rows.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lp_check.h"
#include "lp_timeseries.h"

extern const char lp_schema_core_sql[], lp_schema_nvtx_sql[], lp_schema_cuda_sql[];

/* One process [0, 200 us): 20 bins of 10 us. Thread 1 (tid 100) lives
 * throughout, thread 2 (tid 101) in [50, 150) us. Thread 1 waits on a
 * condition [20, 25) us, sleeps [100, 130) us, waits for a lock
 * [140, 150) us; thread 2 waits for a lock [60, 75) us. GPU: stream 7 runs a
 * kernel [12, 30) us and a copy [25, 45) us (union [12, 45)), stream 8 a
 * memset [100, 105) us. The request (range 1) is [10, 190) us on thread 1
 * and launched the kernel (correlation 5) by an API call [30, 32) us. */
static const char rows[] =
    "INSERT INTO processes(id, pid, ppid, start_ns, end_ns) VALUES (1, 500, 1, 0, 200000);"
    "INSERT INTO threads(id, process_id, tid, start_ns, end_ns) VALUES"
    " (1, 1, 100, 0, 200000), (2, 1, 101, 50000, 150000);"
    "INSERT INTO strings(id, value) VALUES (1, 'request'), (2, 'k1'), (3, 'cudaLaunchKernel');"
    "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns, start_thread_id, depth)"
    " VALUES (1, 1, 1, 10000, 190000, 1, 0);"
    "INSERT INTO locks(id, process_id, address, kind, name) VALUES (1, 1, 4096, 'mutex', 'm');"
    "INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns) VALUES"
    " (1, 1, 2, 60000, 15000), (2, 1, 1, 140000, 10000);"
    "INSERT INTO cond_waits(id, thread_id, cond_addr, start_ns, dur_ns) VALUES"
    " (1, 1, 64, 20000, 5000);"
    "INSERT INTO blocking_calls(id, thread_id, start_ns, dur_ns, call, category, result) VALUES"
    " (1, 1, 100000, 30000, 'nanosleep', 'sleep', 0);"
    "INSERT INTO cuda_api(id, process_id, thread_id, domain, cbid, name_id, correlation_id,"
    " start_ns, end_ns, return_value) VALUES (1, 1, 1, 'runtime', 211, 3, 5, 30000, 32000, 0);"
    "INSERT INTO kernels(id, process_id, device, context, stream, correlation_id, start_ns,"
    " end_ns, name_id) VALUES (1, 1, 0, 1, 7, 5, 12000, 30000, 2);"
    "INSERT INTO memcpys(id, process_id, device, context, stream, correlation_id, start_ns,"
    " end_ns, bytes, copy_kind, src_kind, dst_kind, async) VALUES"
    " (1, 1, 0, 1, 7, 6, 25000, 45000, 64, 'HtoD', 'pinned', 'device', 1);"
    "INSERT INTO memsets(id, process_id, device, context, stream, correlation_id, start_ns,"
    " end_ns, bytes, value, memory_kind, async) VALUES"
    " (1, 1, 0, 1, 8, 7, 100000, 105000, 64, 0, 'device', 1);";

#define NB 20
#define BIN 10000

/* ns of [a, z) inside bin b */
static int64_t in_bin(int64_t a, int64_t z, int b)
{
	int64_t lo = (int64_t)b * BIN, hi = lo + BIN;
	lo = a > lo ? a : lo;
	hi = z < hi ? z : hi;
	return hi > lo ? hi - lo : 0;
}

struct iv {
	int64_t a, z;
};

/* busy = alive minus the waits (which never overlap here), per bin */
static void ref_lane(struct iv alive, const struct iv *w, int nw, double *busy, int64_t *total)
{
	*total = 0;
	for (int b = 0; b < NB; b++) {
		int64_t v = in_bin(alive.a, alive.z, b);
		for (int i = 0; i < nw; i++)
			v -= in_bin(w[i].a, w[i].z, b);
		busy[b] = (double)v / (double)BIN;
		*total += v;
	}
}

static void check_lane(const struct lp_timeseries *ts, size_t i, const char *name,
		       const double *busy, int64_t total)
{
	if (i >= ts->nlanes) {
		CHECK(0, "lane %zu (%s) exists: %zu lanes", i, name, ts->nlanes);
		return;
	}
	const struct lp_ts_lane *l = &ts->lanes[i];
	CHECK(l->name && !strcmp(l->name, name), "lane %zu is '%s', got '%s'", i, name,
	      l->name ? l->name : "(null)");
	int bad = 0;
	for (int b = 0; b < NB; b++) {
		CHECK_QUIET(l->busy[b] == busy[b], "lane %s bin %d busy %.4f, got %.4f", name, b,
			    busy[b], l->busy[b]);
		bad += l->busy[b] != busy[b];
	}
	CHECK(!bad, "lane %s: all %d bins as the reference", name, NB);
	CHECK(l->total_busy_ns == total, "lane %s busy %lld ns, got %lld", name, (long long)total,
	      (long long)l->total_busy_ns);
}

static void check_series(const char *what, const int64_t *got, const struct iv *w, int nw,
			 int count_starts)
{
	int bad = 0;
	for (int b = 0; b < NB; b++) {
		int64_t want = 0;
		for (int i = 0; i < nw; i++)
			want += count_starts ? (w[i].a / BIN == b) : in_bin(w[i].a, w[i].z, b);
		CHECK_QUIET(got[b] == want, "%s bin %d: %lld, got %lld", what, b, (long long)want,
			    (long long)got[b]);
		bad += got[b] != want;
	}
	CHECK(!bad, "%s: all %d bins as the reference", what, NB);
}

static void test_series(sqlite3 *db)
{
	struct lp_timeseries ts;
	char err[256] = "";
	int rc = lp_timeseries_compute(db, NULL, NULL, &ts, err, sizeof(err));
	CHECK(rc == 0, "lp_timeseries_compute: %d %s", rc, err);
	if (rc)
		return;
	CHECK(ts.start_ns == 0 && ts.end_ns == 200000 && ts.bin_ns == BIN && ts.nbins == NB,
	      "run [0, 200000) in %d bins of %d ns, got [%lld, %lld) %zu x %lld", NB, BIN,
	      (long long)ts.start_ns, (long long)ts.end_ns, ts.nbins, (long long)ts.bin_ns);
	CHECK(ts.nlanes == 4 && ts.has_gpu, "2 CPU + 2 GPU lanes, got %zu (gpu %d)", ts.nlanes,
	      ts.has_gpu);
	if (ts.nbins != NB) {
		lp_timeseries_free(&ts);
		return;
	}
	double busy[NB];
	int64_t total;
	struct iv w1[] = {{20000, 25000}, {100000, 130000}, {140000, 150000}};
	ref_lane((struct iv){0, 200000}, w1, 3, busy, &total);
	check_lane(&ts, 0, "tid 100", busy, total);
	CHECK(total == 200000 - 45000, "reference: thread 1 busy 155000 ns, got %lld",
	      (long long)total);
	struct iv w2[] = {{60000, 75000}};
	ref_lane((struct iv){50000, 150000}, w2, 1, busy, &total);
	check_lane(&ts, 1, "tid 101", busy, total);
	struct iv g7[] = {{12000, 45000}}, g8[] = {{100000, 105000}};
	ref_lane((struct iv){0, 0}, NULL, 0, busy, &total);
	for (int b = 0; b < NB; b++)
		busy[b] = (double)in_bin(g7[0].a, g7[0].z, b) / (double)BIN;
	check_lane(&ts, 2, "GPU 0 stream 7 (pid 500)", busy, 33000);
	for (int b = 0; b < NB; b++)
		busy[b] = (double)in_bin(g8[0].a, g8[0].z, b) / (double)BIN;
	check_lane(&ts, 3, "GPU 0 stream 8 (pid 500)", busy, 5000);

	struct iv locks[] = {{60000, 75000}, {140000, 150000}}, conds[] = {{20000, 25000}};
	check_series("lock_wait_ns", ts.lock_wait_ns, locks, 2, 0);
	check_series("lock_waits (began in the bin)", ts.lock_waits, locks, 2, 1);
	check_series("cond_wait_ns", ts.cond_wait_ns, conds, 1, 0);
	CHECK(ts.total_lock_wait_ns == 25000 && ts.nlock_waits == 2,
	      "2 lock waits, 25000 ns (the sleep is no lock wait), got %lld, %lld ns",
	      (long long)ts.nlock_waits, (long long)ts.total_lock_wait_ns);
	lp_timeseries_free(&ts);
}

static void test_timeline(sqlite3 *db)
{
	struct lp_ts_req rq = {1, 10000, 180000};
	struct lp_timeseries ts = {.nreq = 1, .req = &rq};
	struct lp_req_timeline t;
	char err[256] = "";
	int rc = lp_req_timeline_compute(db, &ts, 180000, "median request", &t, err, sizeof(err));
	CHECK(rc == 0 && t.valid, "lp_req_timeline_compute: %d %s (valid %d)", rc, err, t.valid);
	static const struct {
		enum lp_tl_kind kind;
		int lane;
		int64_t a, z;
		const char *name;
	} want[] = {
	    {LP_TL_RANGE, 0, 10000, 190000, "request"},
	    {LP_TL_GPU, 1, 12000, 30000, "k1"},
	    {LP_TL_COND, 0, 20000, 25000, "condition wait"},
	    {LP_TL_API, 0, 30000, 32000, "cudaLaunchKernel"},
	    {LP_TL_SLEEP, 0, 100000, 130000, "nanosleep"},
	    {LP_TL_LOCK, 0, 140000, 150000, "m"},
	};
	size_t n = sizeof(want) / sizeof(want[0]);
	CHECK(t.n == n,
	      "timeline: %zu items (thread 2's lock wait is off the request's lanes), "
	      "got %zu",
	      n, t.n);
	CHECK(t.nlanes == 2 && !strcmp(t.lanes[0].name, "tid 100") && t.lanes[0].thread_id == 1 &&
		  !strcmp(t.lanes[1].name, "GPU 0 stream 7"),
	      "lanes: 'tid 100' (thread 1), 'GPU 0 stream 7'; got %zu", t.nlanes);
	for (size_t i = 0; i < n && i < t.n; i++) {
		const struct lp_tl_item *it = &t.items[i];
		CHECK(it->kind == want[i].kind && it->lane == want[i].lane &&
			  it->start_ns == want[i].a && it->end_ns == want[i].z &&
			  !strcmp(it->name, want[i].name),
		      "item %zu: kind %d lane %d [%lld, %lld) '%s', got kind %d lane %d [%lld, "
		      "%lld) '%s'",
		      i, want[i].kind, want[i].lane, (long long)want[i].a, (long long)want[i].z,
		      want[i].name, it->kind, it->lane, (long long)it->start_ns,
		      (long long)it->end_ns, it->name);
	}
	lp_req_timeline_free(&t);
}

/* 64 lanes: the timeline's lane array is exactly full (lp_grow starts at
 * 64), so a lane lookup that ran one past the end would read outside it
 * (the asan tier sees that). Threads 1..65; the request on thread 1, one
 * child range on each of threads 2..64; lock waits on threads 64 and 65
 * (65 has no lane: its wait is not shown). */
static void test_full_lanes(void)
{
	sqlite3 *db;
	char sql[256], err[256] = "";
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_core_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_nvtx_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db,
			 "INSERT INTO processes(id, pid, ppid, start_ns, end_ns) VALUES "
			 "(1, 500, 1, 0, 200000);"
			 "INSERT INTO strings(id, value) VALUES (1, 'request'), (2, 'part');"
			 "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns, "
			 "start_thread_id) VALUES (1, 1, 1, 1000, 190000, 1);"
			 "INSERT INTO locks(id, process_id, address, kind, name) VALUES "
			 "(1, 1, 4096, 'mutex', 'm');"
			 "INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns) VALUES "
			 "(1, 1, 64, 5000, 100), (2, 1, 65, 6000, 100);",
			 NULL, NULL, NULL) != SQLITE_OK) {
		CHECK(0, "64-lane setup: %s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return;
	}
	for (int i = 1; i <= 65; i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO threads(id, process_id, tid, start_ns, end_ns) VALUES "
			 "(%d, 1, %d, 0, 200000);",
			 i, 1000 + i);
		if (i > 1 && i <= 64)
			snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql),
				 "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns, "
				 "start_thread_id, parent_id) VALUES (%d, 1, 2, %d, %d, %d, 1);",
				 i, 1000 + 10 * i, 2000 + 10 * i, i);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	struct lp_ts_req rq = {1, 1000, 189000};
	struct lp_timeseries ts = {.nreq = 1, .req = &rq};
	struct lp_req_timeline t;
	int rc = lp_req_timeline_compute(db, &ts, 189000, "p99 request", &t, err, sizeof(err));
	CHECK(rc == 0 && t.valid, "64 lanes: lp_req_timeline_compute %d %s", rc, err);
	size_t nlock = 0, nrange = 0;
	for (size_t i = 0; i < t.n; i++) {
		nlock += t.items[i].kind == LP_TL_LOCK;
		nrange += t.items[i].kind == LP_TL_RANGE;
	}
	CHECK(t.nlanes == 64 && nrange == 64 && nlock == 1,
	      "64 lanes, 64 ranges, 1 lock wait (thread 65's has no lane), got %zu, %zu, %zu",
	      t.nlanes, nrange, nlock);
	lp_req_timeline_free(&t);
	sqlite3_close(db);
}

int main(void)
{
	sqlite3 *db;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_core_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_nvtx_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_cuda_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, rows, NULL, NULL, NULL) != SQLITE_OK) {
		printf("FAIL: setup: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	test_series(db);
	test_timeline(db);
	sqlite3_close(db);
	test_full_lanes();
	return lp_check_done();
}
