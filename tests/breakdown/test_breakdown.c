/* SPDX-License-Identifier: MIT */
/*
 * lp_breakdown_compute on databases built by hand with the real schema
 * (in memory): two hand-checked requests, then 300 seeded random ones on
 * three threads with lock waits and sleeps that overlap each other and
 * straddle stage and request edges. Every stage's instances, per-request
 * distribution, share and category split, the unattributed rest and the
 * request totals are compared with a brute-force reference that walks each
 * request microsecond by microsecond, and each slowest request's largest
 * wait with the longest clipped wait of its thread. The largest waits'
 * call sites (Python, lock, condition, blocking call) on a third database.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_breakdown.h"
#include "lp_check.h"
#include "lp_rnd.h"

extern const char lp_schema_core_sql[], lp_schema_nvtx_sql[], lp_schema_python_sql[];

#define US 1000LL /* the rows are laid out in microseconds */

static sqlite3 *db_new(void)
{
	sqlite3 *db;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_core_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, lp_schema_nvtx_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db,
			 "INSERT INTO processes(id, pid, ppid, start_ns, end_ns) VALUES"
			 " (1, 500, 1, 0, 1000000000000);"
			 "INSERT INTO threads(id, process_id, tid, start_ns, end_ns) VALUES"
			 " (1, 1, 100, 0, 1000000000000), (2, 1, 101, 0, 1000000000000),"
			 " (3, 1, 102, 0, 1000000000000);"
			 "INSERT INTO strings(id, value) VALUES (1, 'request'), (2, 'decode'),"
			 " (3, 'infer');"
			 "INSERT INTO locks(id, process_id, address, kind, name) VALUES"
			 " (1, 1, 4096, 'mutex', 'm');",
			 NULL, NULL, NULL) != SQLITE_OK) {
		printf("FAIL: setup: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	return db;
}

static void exec(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		printf("FAIL: %s: %s\n", sql, sqlite3_errmsg(db));
		exit(1);
	}
}

static int cat_index(const struct lp_breakdown *b, const char *name)
{
	for (int k = 0; k < b->ncat; k++)
		if (b->cat_name[k] && !strcmp(b->cat_name[k], name))
			return k;
	return -1;
}

static const struct lp_breakdown_stage *stage_of(const struct lp_breakdown *b, const char *name)
{
	for (size_t i = 0; i < b->nstages; i++)
		if (!strcmp(b->stages[i].name, name))
			return &b->stages[i];
	return NULL;
}

/* Request 1 [0, 100) us on thread 1: decode [10, 40), infer [50, 90); a
 * lock wait [20, 30) in decode, a sleep [60, 75) in infer and one [95, 99)
 * in no stage. Request 2 [200, 260): decode [200, 230), infer [235, 255),
 * a lock wait [225, 240) across decode's end and infer's start. A sleep at
 * [300, 310), outside every request, counts nowhere. */
static void test_hand_checked(void)
{
	sqlite3 *db = db_new();
	exec(db,
	     "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns, start_thread_id,"
	     " end_thread_id, parent_id, depth) VALUES"
	     " (1, 1, 1, 0, 100000, 1, 1, NULL, 0), (2, 1, 2, 10000, 40000, 1, 1, 1, 1),"
	     " (3, 1, 3, 50000, 90000, 1, 1, 1, 1), (4, 1, 1, 200000, 260000, 1, 1, NULL, 0),"
	     " (5, 1, 2, 200000, 230000, 1, 1, 4, 1), (6, 1, 3, 235000, 255000, 1, 1, 4, 1);"
	     "INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns) VALUES"
	     " (1, 1, 1, 20000, 10000), (2, 1, 1, 225000, 15000);"
	     "INSERT INTO blocking_calls(id, thread_id, start_ns, dur_ns, call, category, result)"
	     " VALUES (1, 1, 60000, 15000, 'nanosleep', 'sleep', 0),"
	     " (2, 1, 95000, 4000, 'nanosleep', 'sleep', 0),"
	     " (3, 1, 300000, 10000, 'nanosleep', 'sleep', 0);");
	struct lp_breakdown_opts o = {0};
	struct lp_breakdown b;
	char err[256] = "";
	int rc = lp_breakdown_compute(db, &o, &b, err, sizeof(err));
	CHECK(rc == 0, "lp_breakdown_compute: %d %s", rc, err);
	if (rc) {
		sqlite3_close(db);
		return;
	}
	int lw = cat_index(&b, "lock_wait"), sl = cat_index(&b, "sleep"),
	    un = b.ncat - LP_BREAKDOWN_NREST + LP_BREAKDOWN_UNSPLIT;
	CHECK(b.has_ranges && !strcmp(b.req_name, "request") && b.req.n == 2 &&
		  b.req.total == 160 * US && b.req.max == 100 * US && b.req.p50 == 60 * US,
	      "requests: 2, 160 us in all, max 100 us, p50 60 us (n %lld total %lld max %lld "
	      "p50 %lld)",
	      (long long)b.req.n, (long long)b.req.total, (long long)b.req.max,
	      (long long)b.req.p50);
	const struct lp_breakdown_stage *de = stage_of(&b, "decode"), *in = stage_of(&b, "infer"),
					*ua = stage_of(&b, LP_BREAKDOWN_UNATTRIBUTED);
	CHECK(b.nstages == 3 && de && in && ua && b.stages[2].unattributed,
	      "stages decode, infer and the unattributed rest, last (%zu)", b.nstages);
	if (!de || !in || !ua)
		goto out;
	/* decode: 30 + 30 us; lock 10 (req 1) + 5 ([225, 230), req 2). */
	CHECK(de->instances == 2 && de->st.n == 2 && de->st.total == 60 * US &&
		  de->st.max == 30 * US && de->cat_ns[lw] == 15 * US && de->cat_ns[sl] == 0 &&
		  de->cat_ns[un] == 45 * US,
	      "decode: 2 instances, 60 us, lock wait 15 us, the rest 45 us (lock %lld, rest "
	      "%lld)",
	      (long long)de->cat_ns[lw], (long long)de->cat_ns[un]);
	/* infer: 40 + 20 us; sleep 15 (req 1), lock [235, 240) 5 (req 2). */
	CHECK(in->instances == 2 && in->st.total == 60 * US && in->st.max == 40 * US &&
		  in->cat_ns[lw] == 5 * US && in->cat_ns[sl] == 15 * US &&
		  in->cat_ns[un] == 40 * US,
	      "infer: 60 us, lock wait 5 us, sleep 15 us, the rest 40 us (lock %lld, sleep %lld, "
	      "rest %lld)",
	      (long long)in->cat_ns[lw], (long long)in->cat_ns[sl], (long long)in->cat_ns[un]);
	/* rest: req 1 [0,10) [40,50) [90,100) = 30 us, sleep [95, 99) 4 us;
	 * req 2 [230, 235) [255, 260) = 10 us, lock [230, 235) 5 us. */
	CHECK(ua->instances == 2 && ua->st.total == 40 * US && ua->cat_ns[lw] == 5 * US &&
		  ua->cat_ns[sl] == 4 * US && ua->cat_ns[un] == 31 * US,
	      "unattributed: 40 us, lock wait 5 us, sleep 4 us, the rest 31 us (%lld, %lld, "
	      "%lld, %lld)",
	      (long long)ua->st.total, (long long)ua->cat_ns[lw], (long long)ua->cat_ns[sl],
	      (long long)ua->cat_ns[un]);
	CHECK(de->share == 60.0 / 160 && in->share == 60.0 / 160 && ua->share == 40.0 / 160,
	      "shares 0.375, 0.375, 0.25 (%g, %g, %g)", de->share, in->share, ua->share);
	CHECK(b.req_cat_ns[lw] == 25 * US && b.req_cat_ns[sl] == 19 * US &&
		  b.req_cat_ns[un] == 116 * US,
	      "request time: lock wait 25 us, sleep 19 us (not the one outside requests), the "
	      "rest 116 us (%lld, %lld, %lld)",
	      (long long)b.req_cat_ns[lw], (long long)b.req_cat_ns[sl],
	      (long long)b.req_cat_ns[un]);
	/* Largest waits: request 1's sleep [60, 75) beats its lock wait [20, 30);
	 * request 2's one lock wait on 'm'. No stacks: the call's name alone. */
	const struct lp_breakdown_slow *s1 = &b.slow[0], *s2 = &b.slow[1];
	CHECK(b.nslow == 2 && s1->range_id == 1 && s1->wait_cat == sl && s1->wait_ns == 15 * US &&
		  s1->wait_thread_id == 1 && s1->wait_start_ns == 60 * US && s1->wait_site &&
		  !strcmp(s1->wait_site, "nanosleep") && !s1->wait_python,
	      "slowest request 1: largest wait the 15 us sleep at 60 us, site 'nanosleep' (cat %d, "
	      "%lld ns at %lld, '%s')",
	      s1->wait_cat, (long long)s1->wait_ns, (long long)s1->wait_start_ns,
	      s1->wait_site ? s1->wait_site : "(null)");
	CHECK(b.nslow == 2 && s2->range_id == 4 && s2->wait_cat == lw && s2->wait_ns == 15 * US &&
		  s2->wait_start_ns == 225 * US && s2->wait_site && !strcmp(s2->wait_site, "m"),
	      "slowest request 2: largest wait the 15 us lock wait on m (cat %d, %lld ns, '%s')",
	      s2->wait_cat, (long long)s2->wait_ns, s2->wait_site ? s2->wait_site : "(null)");
out:
	lp_breakdown_free(&b);
	sqlite3_close(db);
}

static const struct lp_breakdown_slow *slow_of(const struct lp_breakdown *b, int64_t range_id)
{
	for (size_t i = 0; i < b->nslow; i++)
		if (b->slow[i].range_id == range_id)
			return &b->slow[i];
	return NULL;
}

static int site_is(const struct lp_breakdown_slow *s, const char *want)
{
	return s && s->wait_site && !strcmp(s->wait_site, want);
}

/*
 * Each slowest request's largest wait and its call site, by hand:
 *  A [0, 1000) us on thread 1: a lock wait [100, 400) on a heap mutex with
 *    Python frames (threading.py's acquire inside, handler.py:42 serve_one
 *    the site), 50 us of it in the run queue: 250 us; a sleep [500, 700).
 *  B [2000, 2900) on thread 1, stage "work" [2100, 2800) on thread 2: on
 *    thread 2 a condition wait [2200, 2600) inside the stage (its stack's
 *    top frame: pop_job queue.c:12) and a longer sleep [1000, 1990)
 *    outside it; on thread 1 a wait on the unnamed heap mutex [1900, 2050)
 *    straddling B's start: 50 us inside.
 *  C [3000, 3800) on thread 1: a recv on a socket [3100, 3300) from
 *    fetch_reply, and, longer, a GIL wait [3350, 3750) (a condition wait
 *    of class gil on the GIL's mutex 'gil_mutex') with Python frames
 *    whose site is model.py:7 infer.
 *  D [4000, 4500) on thread 1: no wait.
 *  E [5000, 6000) on thread 1: a lock wait [5000, 5100) inside a sleep
 *    [5050, 5600): the sleep's time starts at 5100 (the lock wait owns
 *    the overlap), 500 us, and its row is the sleep at 5050.
 */
static void test_slow_waits(void)
{
	sqlite3 *db = db_new();
	exec(db, lp_schema_python_sql);
	exec(db,
	     "INSERT INTO strings(id, value) VALUES (4, 'work');"
	     "INSERT INTO locks(id, process_id, address, kind, name) VALUES"
	     " (2, 1, 65536, 'mutex', NULL), (3, 1, 8192, 'mutex', 'gil_mutex');"
	     "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns, start_thread_id,"
	     " end_thread_id, parent_id, depth) VALUES"
	     " (1, 1, 1, 0, 1000000, 1, 1, NULL, 0), (2, 1, 1, 2000000, 2900000, 1, 1, NULL, 0),"
	     " (3, 1, 4, 2100000, 2800000, 2, 2, 2, 1), (4, 1, 1, 3000000, 3800000, 1, 1, NULL, 0),"
	     " (5, 1, 1, 4000000, 4500000, 1, 1, NULL, 0), (6, 1, 1, 5000000, 6000000, 1, 1, NULL, "
	     "0);"
	     "INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns, runq_ns) VALUES"
	     " (1, 2, 1, 100000, 300000, 50000), (2, 2, 1, 1900000, 150000, NULL),"
	     " (3, 1, 1, 5000000, 100000, NULL);"
	     "INSERT INTO frames(id, module, offset, function, file, line) VALUES"
	     " (1, '/app/worker', 4660, 'pop_job', 'queue.c', 12),"
	     " (2, '/app/worker', 8738, 'fetch_reply', 'net.c', 30);"
	     "INSERT INTO stacks(id, depth, top_frame) VALUES (1, 3, 1), (2, 4, 2);"
	     "INSERT INTO cond_waits(id, thread_id, cond_addr, mutex_lock_id, start_ns, dur_ns,"
	     " stack_id, class) VALUES (1, 2, 4096, NULL, 2200000, 400000, 1, 4),"
	     " (2, 1, 12288, 3, 3350000, 400000, NULL, 1);"
	     "INSERT INTO blocking_calls(id, thread_id, start_ns, dur_ns, call, category, fd,"
	     " fd_kind, result, stack_id) VALUES"
	     " (1, 1, 500000, 200000, 'nanosleep', 'sleep', NULL, NULL, 0, NULL),"
	     " (2, 2, 1000000, 990000, 'nanosleep', 'sleep', NULL, NULL, 0, NULL),"
	     " (3, 1, 3100000, 200000, 'recv', 'socket_io', 5, 'socket', 10, 2),"
	     " (4, 1, 5050000, 550000, 'nanosleep', 'sleep', NULL, NULL, 0, NULL);"
	     "INSERT INTO py_frames(id, function, file, line, source, wait_lib) VALUES"
	     " (1, 'acquire', '/usr/lib/python3.11/threading.py', 120, NULL, 1),"
	     " (2, 'serve_one', '/srv/app/handler.py', 42, 'with model_lock:', 0),"
	     " (3, 'infer', '/srv/app/model.py', 7, NULL, 0);"
	     "INSERT INTO py_stacks(id, depth, site_frame) VALUES (1, 2, 2), (2, 1, 3);"
	     "INSERT INTO py_stack_frames(stack_id, depth, frame_id) VALUES (1, 0, 1), (1, 1, 2),"
	     " (2, 0, 3);"
	     "INSERT INTO py_waits(thread_id, start_ns, py_stack_id) VALUES (1, 100000, 1),"
	     " (1, 3350000, 2), (1, 500000, NULL);");
	struct lp_breakdown_opts o = {0};
	struct lp_breakdown b;
	char err[256] = "";
	int rc = lp_breakdown_compute(db, &o, &b, err, sizeof(err));
	CHECK(rc == 0, "lp_breakdown_compute (largest waits): %d %s", rc, err);
	if (rc) {
		sqlite3_close(db);
		return;
	}
	int lw = cat_index(&b, "lock_wait"), cw = cat_index(&b, "cond_wait"),
	    gil = cat_index(&b, "gil_wait");
	const struct lp_breakdown_slow *a = slow_of(&b, 1), *bb = slow_of(&b, 2),
				       *c = slow_of(&b, 4), *d = slow_of(&b, 5),
				       *e = slow_of(&b, 6);
	CHECK(b.nslow == 5 && a && bb && c && d && e, "5 requests listed (%zu)", b.nslow);
	if (!a || !bb || !c || !d || !e)
		goto out;
	CHECK(a->wait_cat == lw && a->wait_ns == 250 * US && a->wait_thread_id == 1 &&
		  a->wait_start_ns == 100 * US && a->wait_python &&
		  site_is(a, "handler.py:42 serve_one") && a->wait_source &&
		  !strcmp(a->wait_source, "with model_lock:"),
	      "A: the lock wait less its run-queue tail (250 us), Python site handler.py:42 "
	      "serve_one past threading's frame, with its line (cat %d, %lld ns, '%s', '%s')",
	      a->wait_cat, (long long)a->wait_ns, a->wait_site ? a->wait_site : "(null)",
	      a->wait_source ? a->wait_source : "(null)");
	CHECK(bb->wait_cat == cw && bb->wait_ns == 400 * US && bb->wait_thread_id == 2 &&
		  bb->wait_start_ns == 2200 * US && !bb->wait_python &&
		  site_is(bb, "pop_job queue.c:12") && !bb->wait_source,
	      "B: the stage's condition wait on thread 2 (400 us), not the longer sleep there "
	      "outside the stage, nor the 50 us of the straddling lock wait; site pop_job "
	      "queue.c:12 (cat %d, %lld ns on thread %lld, '%s')",
	      bb->wait_cat, (long long)bb->wait_ns, (long long)bb->wait_thread_id,
	      bb->wait_site ? bb->wait_site : "(null)");
	CHECK(c->wait_cat == gil && c->wait_ns == 400 * US && c->wait_start_ns == 3350 * US &&
		  c->wait_python && site_is(c, "model.py:7 infer") && !c->wait_source,
	      "C: the GIL wait (400 us) beats the recv; Python site model.py:7 infer, no line "
	      "text (cat %d, %lld ns, '%s')",
	      c->wait_cat, (long long)c->wait_ns, c->wait_site ? c->wait_site : "(null)");
	CHECK(d->wait_cat < 0 && !d->wait_site, "D: no wait (cat %d)", d->wait_cat);
	CHECK(e->wait_cat == cat_index(&b, "sleep") && e->wait_ns == 500 * US &&
		  e->wait_start_ns == 5050 * US && site_is(e, "nanosleep"),
	      "E: the sleep's 500 us after the lock wait, its row the sleep at 5050 us (cat %d, "
	      "%lld ns at %lld, '%s')",
	      e->wait_cat, (long long)e->wait_ns, (long long)e->wait_start_ns,
	      e->wait_site ? e->wait_site : "(null)");
out:
	lp_breakdown_free(&b);
	/* The same run without its Python frames: the native sites. */
	exec(db, "DELETE FROM py_waits");
	rc = lp_breakdown_compute(db, &o, &b, err, sizeof(err));
	CHECK(rc == 0, "lp_breakdown_compute (no Python frames): %d %s", rc, err);
	if (!rc) {
		a = slow_of(&b, 1);
		c = slow_of(&b, 4);
		CHECK(a && !a->wait_python && site_is(a, "mutex@0x10000"),
		      "A without Python frames: the heap mutex by kind and address ('%s')",
		      a && a->wait_site ? a->wait_site : "(null)");
		CHECK(c && c->wait_cat == gil && !c->wait_python && site_is(c, "gil_mutex"),
		      "C without Python frames: the GIL's mutex by name ('%s')",
		      c && c->wait_site ? c->wait_site : "(null)");
		lp_breakdown_free(&b);
	}
	/* The recv alone in C: the call, its descriptor kind and its frame. */
	exec(db, "DELETE FROM cond_waits WHERE id = 2");
	rc = lp_breakdown_compute(db, &o, &b, err, sizeof(err));
	c = rc ? NULL : slow_of(&b, 4);
	CHECK(c && c->wait_cat == cat_index(&b, "socket_io") && c->wait_ns == 200 * US &&
		  site_is(c, "recv on socket in fetch_reply"),
	      "C without its GIL wait: the recv, 'recv on socket in fetch_reply' ('%s')",
	      c && c->wait_site ? c->wait_site : "(null)");
	if (!rc)
		lp_breakdown_free(&b);
	sqlite3_close(db);
}

#define NREQ 300
#define NTH 3
#define NSTG 2 /* decode, infer */

/* What the brute force accumulates per stage (NSTG = the unattributed rest). */
struct ref_stage {
	int64_t instances, nreq, total, lock, sleep, rest;
	int64_t per_req[NREQ];
};

struct span {
	int64_t a, z; /* us */
};

static int in_span(const struct span *v, int n, int64_t t)
{
	for (int i = 0; i < n; i++)
		if (v[i].a <= t && t < v[i].z)
			return 1;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t nearest_rank(int64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	size_t k = 0; /* the smallest k with k + 1 >= p n / 100 */
	while ((double)(k + 1) < p / 100.0 * (double)n)
		k++;
	return v[k < n ? k : n - 1];
}

/*
 * Requests laid end to end per thread with gaps; each has decode and, most
 * of the time, infer after it (two thirds), both inside the request with
 * gaps around. Waits are drawn per thread anywhere in its timeline: lock
 * waits and sleeps overlap each other (the lock wait owns the overlap: it
 * comes first in lp_breakdown_categories) and cross every edge.
 */
static void test_random(void)
{
	sqlite3 *db = db_new();
	static struct span req[NREQ], stg[NREQ][NSTG];
	static int req_th[NREQ], has[NREQ][NSTG];
	static struct span lockw[NTH][200], sleepw[NTH][200];
	int nlock[NTH] = {0}, nsleep[NTH] = {0};
	int64_t tend[NTH] = {0};
	char sql[512];
	int64_t id = 0;
	lp_rnd_state = 0x5eed5eedULL;
	exec(db, "BEGIN");
	for (int r = 0; r < NREQ; r++) {
		int th = r % NTH;
		int64_t a = tend[th] + 1 + rnd() % 20, t = a + rnd() % 5;
		for (int s = 0; s < NSTG; s++) {
			has[r][s] = s == 0 || rnd() % 3 != 0;
			if (!has[r][s])
				continue;
			stg[r][s].a = t;
			stg[r][s].z = t + 1 + rnd() % 40;
			t = stg[r][s].z + rnd() % 5;
		}
		req[r] = (struct span){a, t + rnd() % 5 + 1};
		req_th[r] = th;
		tend[th] = req[r].z;
		int64_t rid = ++id;
		snprintf(sql, sizeof(sql),
			 "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns,"
			 " start_thread_id, end_thread_id, parent_id, depth) VALUES"
			 " (%lld, 1, 1, %lld, %lld, %d, %d, NULL, 0)",
			 (long long)rid, (long long)(req[r].a * US), (long long)(req[r].z * US),
			 th + 1, th + 1);
		exec(db, sql);
		for (int s = 0; s < NSTG; s++)
			if (has[r][s]) {
				snprintf(
				    sql, sizeof(sql),
				    "INSERT INTO ranges(id, process_id, name_id, start_ns,"
				    " end_ns, start_thread_id, end_thread_id, parent_id, depth)"
				    " VALUES (%lld, 1, %d, %lld, %lld, %d, %d, %lld, 1)",
				    (long long)++id, s + 2, (long long)(stg[r][s].a * US),
				    (long long)(stg[r][s].z * US), th + 1, th + 1, (long long)rid);
				exec(db, sql);
			}
	}
	for (int th = 0; th < NTH; th++) {
		/* Waits never overlap one of their own kind on a thread (a thread
		 * waits for one lock at a time): each kind walks forward. */
		for (int64_t t = rnd() % 30; t < tend[th] && nlock[th] < 200; t += 5 + rnd() % 60) {
			struct span w = {t, t + 1 + rnd() % 25};
			lockw[th][nlock[th]++] = w;
			t = w.z;
			snprintf(sql, sizeof(sql),
				 "INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns)"
				 " VALUES (%lld, 1, %d, %lld, %lld)",
				 (long long)++id, th + 1, (long long)(w.a * US),
				 (long long)((w.z - w.a) * US));
			exec(db, sql);
		}
		for (int64_t t = rnd() % 30; t < tend[th] && nsleep[th] < 200;
		     t += 5 + rnd() % 60) {
			struct span w = {t, t + 1 + rnd() % 25};
			sleepw[th][nsleep[th]++] = w;
			t = w.z;
			snprintf(sql, sizeof(sql),
				 "INSERT INTO blocking_calls(id, thread_id, start_ns, dur_ns, call,"
				 " category, result) VALUES (%lld, %d, %lld, %lld, 'nanosleep',"
				 " 'sleep', 0)",
				 (long long)++id, th + 1, (long long)(w.a * US),
				 (long long)((w.z - w.a) * US));
			exec(db, sql);
		}
	}
	exec(db, "COMMIT");

	/* The brute force: every microsecond of every request. */
	static struct ref_stage ref[NSTG + 1];
	static int64_t req_dur[NREQ];
	int64_t req_total = 0, req_lock = 0, req_sleep = 0, req_rest = 0;
	for (int r = 0; r < NREQ; r++) {
		int th = req_th[r];
		int64_t in_stage[NSTG + 1] = {0};
		for (int64_t t = req[r].a; t < req[r].z; t++) {
			int s = NSTG;
			for (int k = 0; k < NSTG; k++)
				if (has[r][k] && stg[r][k].a <= t && t < stg[r][k].z)
					s = k;
			int lk = in_span(lockw[th], nlock[th], t),
			    sp = !lk && in_span(sleepw[th], nsleep[th], t);
			in_stage[s]++;
			ref[s].lock += lk;
			ref[s].sleep += sp;
			ref[s].rest += !lk && !sp;
			req_lock += lk;
			req_sleep += sp;
			req_rest += !lk && !sp;
		}
		for (int s = 0; s <= NSTG; s++) {
			int present = s == NSTG || has[r][s];
			ref[s].instances += present;
			if (present && (s < NSTG || in_stage[s] > 0))
				ref[s].per_req[ref[s].nreq++] = in_stage[s];
			ref[s].total += in_stage[s];
		}
		req_dur[r] = req[r].z - req[r].a;
		req_total += req_dur[r];
	}

	struct lp_breakdown_opts o = {0};
	struct lp_breakdown b;
	char err[256] = "";
	int rc = lp_breakdown_compute(db, &o, &b, err, sizeof(err));
	CHECK(rc == 0, "lp_breakdown_compute on %d random requests: %d %s", NREQ, rc, err);
	if (rc) {
		sqlite3_close(db);
		return;
	}
	int lw = cat_index(&b, "lock_wait"), sl = cat_index(&b, "sleep"),
	    un = b.ncat - LP_BREAKDOWN_NREST + LP_BREAKDOWN_UNSPLIT;
	int64_t p50 = nearest_rank(req_dur, NREQ, 50), p99 = nearest_rank(req_dur, NREQ, 99);
	CHECK(b.req.n == NREQ && b.req.total == req_total * US && b.req.p50 == p50 * US &&
		  b.req.p99 == p99 * US && b.req.max == req_dur[NREQ - 1] * US,
	      "requests: %d, total %lld us, p50 %lld us, p99 %lld us as brute force (%lld, "
	      "%lld, %lld)",
	      NREQ, (long long)req_total, (long long)p50, (long long)p99,
	      (long long)(b.req.total / US), (long long)(b.req.p50 / US),
	      (long long)(b.req.p99 / US));
	CHECK(b.req_cat_ns[lw] == req_lock * US && b.req_cat_ns[sl] == req_sleep * US &&
		  b.req_cat_ns[un] == req_rest * US,
	      "request time split: lock wait %lld us, sleep %lld us (lock wait owns the overlap), "
	      "rest %lld us (%lld, %lld, %lld)",
	      (long long)req_lock, (long long)req_sleep, (long long)req_rest,
	      (long long)(b.req_cat_ns[lw] / US), (long long)(b.req_cat_ns[sl] / US),
	      (long long)(b.req_cat_ns[un] / US));
	const char *names[NSTG + 1] = {"decode", "infer", LP_BREAKDOWN_UNATTRIBUTED};
	for (int s = 0; s <= NSTG; s++) {
		const struct lp_breakdown_stage *st = stage_of(&b, names[s]);
		struct ref_stage *w = &ref[s];
		if (!st) {
			CHECK(0, "no stage %s", names[s]);
			continue;
		}
		int64_t max = 0;
		for (int64_t i = 0; i < w->nreq; i++)
			max = w->per_req[i] > max ? w->per_req[i] : max;
		int64_t sp50 = nearest_rank(w->per_req, (size_t)w->nreq, 50);
		CHECK(st->instances == w->instances && st->st.n == w->nreq &&
			  st->st.total == w->total * US && st->st.max == max * US &&
			  st->st.p50 == sp50 * US,
		      "%s: %lld instances, %lld requests, %lld us, max %lld, p50 %lld us as brute "
		      "force (%lld, %lld, %lld, %lld, %lld)",
		      names[s], (long long)w->instances, (long long)w->nreq, (long long)w->total,
		      (long long)max, (long long)sp50, (long long)st->instances,
		      (long long)st->st.n, (long long)(st->st.total / US),
		      (long long)(st->st.max / US), (long long)(st->st.p50 / US));
		CHECK(st->cat_ns[lw] == w->lock * US && st->cat_ns[sl] == w->sleep * US &&
			  st->cat_ns[un] == w->rest * US,
		      "%s: lock wait %lld us, sleep %lld us, rest %lld us (%lld, %lld, %lld)",
		      names[s], (long long)w->lock, (long long)w->sleep, (long long)w->rest,
		      (long long)(st->cat_ns[lw] / US), (long long)(st->cat_ns[sl] / US),
		      (long long)(st->cat_ns[un] / US));
		double share = (double)w->total / (double)req_total;
		CHECK(st->share > share - 1e-12 && st->share < share + 1e-12,
		      "%s: share %.6f of request time (%.6f)", names[s], share, st->share);
	}
	/* Each listed request's largest wait against the brute force: the
	 * longest run of microseconds of one category in the request (lock
	 * wait owns the overlap, as in the split), and the wait that run lies
	 * in; lock waits first on a tie (category order), then the earlier run. */
	int bad = 0;
	for (size_t i = 0; i < b.nslow; i++) {
		const struct lp_breakdown_slow *sw = &b.slow[i];
		int r = -1;
		for (int k = 0; k < NREQ; k++)
			if (req[k].a * US == sw->start_ns && req_th[k] + 1 == sw->thread_id)
				r = k;
		int th = r < 0 ? -1 : req_th[r];
		if (r < 0) {
			CHECK(0, "slowest request %lld found among the requests",
			      (long long)sw->range_id);
			continue;
		}
		int cat = -1;
		int64_t best = 0, at = 0;
		for (int kind = 0; kind < 2; kind++) {
			const struct span *v = kind ? sleepw[th] : lockw[th];
			int nv = kind ? nsleep[th] : nlock[th];
			int64_t run = 0, from = 0;
			for (int64_t t = req[r].a; t <= req[r].z; t++) {
				int lk = t < req[r].z && in_span(lockw[th], nlock[th], t);
				int mine = t < req[r].z && (kind ? !lk && in_span(v, nv, t) : lk);
				if (mine && !run++)
					from = t;
				if (mine)
					continue;
				if (run > best) {
					best = run;
					cat = kind ? sl : lw;
					for (int k = 0; k < nv; k++)
						if (v[k].a <= from && from < v[k].z)
							at = v[k].a;
				}
				run = 0;
			}
		}
		int ok = sw->wait_cat == cat &&
			 (cat < 0 || (sw->wait_ns == best * US && sw->wait_start_ns == at * US));
		bad += !ok;
		CHECK_QUIET(ok,
			    "request %lld: largest wait cat %d %lld us at %lld (brute force "
			    "cat %d %lld us at %lld)",
			    (long long)sw->range_id, sw->wait_cat, (long long)(sw->wait_ns / US),
			    (long long)(sw->wait_start_ns / US), cat, (long long)best,
			    (long long)at);
	}
	CHECK(b.nslow == LP_BREAKDOWN_NSLOW && !bad,
	      "the %zu slowest requests' largest waits (category, time, start) as brute force",
	      b.nslow);
	lp_breakdown_free(&b);
	sqlite3_close(db);
}

/*
 * A run without ranges: each thread's split comes from one streaming pass
 * over the waits (lp_breakdown_threads.c). Three threads, one starting
 * late and one ending early, with lock waits of every class, condition
 * waits, blocking calls of every category and joins, most with a run-queue
 * tail, overlapping across tables and crossing the threads' lives. Each
 * thread's categories are compared with a microsecond brute force, and
 * with the loaded sets' answer (a range on a fourth thread makes the
 * breakdown load them). bad_runq adds a wait whose run-queue time exceeds
 * its duration, so rows come out of start order: the sets answer then.
 */
#define NTW 400
struct tw {
	int64_t a, z, q; /* us: the wait, and its run-queue tail [z - q, z) */
	const char *cat; /* category name, NULL none */
};

static const char *const tw_class[2][4] = {{"lock_wait", "gil_wait", "idle_wait", "join_wait"},
					   {"cond_wait", "gil_wait", "idle_wait", "join_wait"}};
static const char *const tw_block[] = {"sleep", "file_io", "socket_io", "poll_wait", "other_block"};

/* One wait of a random table on thread th at t us; returns its end. */
static int64_t tw_insert(sqlite3 *db, struct tw *v, int th, int64_t t, int table, int64_t id)
{
	char sql[512];
	int cls = (int)(rnd() % 7);
	cls = cls > 3 ? 0 : cls; /* half the table's own, half the classes */
	v->a = t;
	v->z = t + 1 + rnd() % 30;
	v->q = rnd() % 3 ? (int64_t)(rnd() % (unsigned)(v->z - v->a + 1)) : 0;
	int null_q = !v->q && rnd() % 2;
	if (table < 2) {
		snprintf(
		    sql, sizeof(sql),
		    "INSERT INTO %s(id, %s, thread_id, start_ns, dur_ns, class, runq_ns) VALUES "
		    "(%lld, 1, %d, %lld, %lld, %d, %s)",
		    table ? "cond_waits" : "lock_waits", table ? "cond_addr" : "lock_id",
		    (long long)id, th + 1, (long long)(v->a * US), (long long)((v->z - v->a) * US),
		    cls, null_q ? "NULL" : "?");
		v->cat = tw_class[table][cls];
	} else {
		int join = rnd() % 5 == 0, k = (int)(rnd() % 5);
		snprintf(
		    sql, sizeof(sql),
		    "INSERT INTO blocking_calls(id, thread_id, start_ns, dur_ns, call, category,"
		    " result, runq_ns) VALUES (%lld, %d, %lld, %lld, '%s', '%s', 0, %s)",
		    (long long)id, th + 1, (long long)(v->a * US), (long long)((v->z - v->a) * US),
		    join ? "pthread_join" : "read", tw_block[k], null_q ? "NULL" : "?");
		v->cat = join ? "join_wait" : tw_block[k];
	}
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		printf("FAIL: %s: %s\n", sql, sqlite3_errmsg(db));
		exit(1);
	}
	if (!null_q)
		sqlite3_bind_int64(st, 1, v->q * US);
	if (sqlite3_step(st) != SQLITE_DONE) {
		printf("FAIL: %s: %s\n", sql, sqlite3_errmsg(db));
		exit(1);
	}
	sqlite3_finalize(st);
	return v->z;
}

static int compute_threads(sqlite3 *db, struct lp_breakdown *b)
{
	struct lp_breakdown_opts o = {0};
	char err[256] = "";
	int rc = lp_breakdown_compute(db, &o, b, err, sizeof(err));
	CHECK(rc == 0 && b->nthreads >= NTH, "lp_breakdown_compute: %d %s (%zu threads)", rc, err,
	      b->nthreads);
	return rc == 0 && b->nthreads >= NTH;
}

static void test_threads_stream(int bad_runq)
{
	sqlite3 *db = db_new();
	static struct tw w[NTH][NTW + 2];
	int nw[NTH] = {0};
	const int64_t life[NTH][2] = {{0, 5000}, {50, 3000}, {0, 2000}};
	int64_t id = 0;
	lp_rnd_state = 0x7eadbeefULL + (unsigned)bad_runq;
	exec(db, "UPDATE processes SET end_ns = 5000000;"
		 "UPDATE threads SET start_ns = 0, end_ns = 5000000 WHERE id = 1;"
		 "UPDATE threads SET start_ns = 50000, end_ns = 3000000 WHERE id = 2;"
		 "UPDATE threads SET start_ns = 0, end_ns = 2000000 WHERE id = 3;"
		 "BEGIN");
	for (int th = 0; th < NTH; th++)
		for (int table = 0; table < 3; table++)
			for (int64_t t = rnd() % 40; t < 4500 && nw[th] < NTW; t += 3 + rnd() % 50)
				t = tw_insert(db, &w[th][nw[th]++], th, t, table, ++id);
	if (bad_runq) { /* 20 us of run queue in a 10 us wait on thread 1, and a sleep
			   that starts inside that run-queue time, before the wait */
		exec(db,
		     "INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns, runq_ns)"
		     " VALUES (99999, 1, 1, 4600000, 10000, 20000);"
		     "INSERT INTO blocking_calls(id, thread_id, start_ns, dur_ns, call, category,"
		     " result) VALUES (99998, 1, 4595000, 3000, 'nanosleep', 'sleep', 0)");
		w[0][nw[0]++] = (struct tw){4600, 4610, 20, "lock_wait"};
		w[0][nw[0]++] = (struct tw){4595, 4598, 0, "sleep"};
	}
	exec(db, "COMMIT");

	struct lp_breakdown b, sets;
	if (!compute_threads(db, &b)) {
		sqlite3_close(db);
		return;
	}
	int n = b.ncat - LP_BREAKDOWN_NREST, pre = n + LP_BREAKDOWN_PREEMPTED,
	    un = n + LP_BREAKDOWN_UNSPLIT;
	for (int th = 0; th < NTH; th++) {
		int64_t ref[LP_BREAKDOWN_MAXCAT] = {0};
		for (int64_t t = life[th][0]; t < life[th][1]; t++) {
			int own = INT32_MAX, runq = 0;
			for (int i = 0; i < nw[th]; i++) {
				const struct tw *v = &w[th][i];
				int k = cat_index(&b, v->cat);
				if (v->a <= t && t < v->z - v->q && k < own)
					own = k;
				runq |= v->q > 0 && v->z - v->q <= t && t < v->z;
			}
			ref[own != INT32_MAX ? own : runq ? pre : un]++;
		}
		const struct lp_breakdown_thread *o = &b.threads[th];
		int same = o->total_ns == (life[th][1] - life[th][0]) * US;
		for (int k = 0; k < b.ncat; k++)
			same = same && o->cat_ns[k] == ref[k] * US;
		CHECK(same,
		      "thread %d (%s runq): every category as the brute force (lock %lld us "
		      "against %lld, preempted %lld against %lld, rest %lld against %lld)",
		      th + 1, bad_runq ? "a bad" : "sane", (long long)(o->cat_ns[1] / US),
		      (long long)ref[1], (long long)(o->cat_ns[pre] / US), (long long)ref[pre],
		      (long long)(o->cat_ns[un] / US), (long long)ref[un]);
	}
	/* The same threads with the sets loaded: a range elsewhere asks for them. */
	exec(db, "INSERT INTO threads(id, process_id, tid, start_ns, end_ns) VALUES"
		 " (4, 1, 103, 0, 5000000);"
		 "INSERT INTO ranges(id, process_id, name_id, start_ns, end_ns, start_thread_id,"
		 " end_thread_id, parent_id, depth) VALUES (1, 1, 1, 0, 1000, 4, 4, NULL, 0)");
	if (compute_threads(db, &sets)) {
		int same = 1;
		for (int th = 0; th < NTH; th++)
			same = same && !memcmp(b.threads[th].cat_ns, sets.threads[th].cat_ns,
					       sizeof(b.threads[th].cat_ns));
		CHECK(same && sets.has_ranges, "the streaming pass and the loaded sets agree (%s)",
		      bad_runq ? "a bad run-queue time" : "rows in start order");
		lp_breakdown_free(&sets);
	}
	lp_breakdown_free(&b);
	sqlite3_close(db);
}

int main(void)
{
	test_hand_checked();
	test_slow_waits();
	test_random();
	test_threads_stream(0);
	test_threads_stream(1);
	return lp_check_done();
}
