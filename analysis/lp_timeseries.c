/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_timeseries.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_breakdown.h"
#include "lp_db.h"
#include "lp_util.h"
#include "lp_waits.h"

#define LP_PUSH(arr, n, cap)                                                                       \
	({                                                                                         \
		void *p_ = lp_grow((arr), &(cap), (n) + 1, sizeof(*(arr)));                        \
		if (p_)                                                                            \
			(arr) = p_;                                                                \
		p_ ? memset(&(arr)[(n)++], 0, sizeof(*(arr))) : NULL;                              \
	})

/* ---- bins ---- */

/* Adds the part of [a, z) in each bin to acc (ns). */
static void bin_add(const struct lp_timeseries *ts, int64_t *acc, int64_t a, int64_t z)
{
	if (a < ts->start_ns)
		a = ts->start_ns;
	if (z > ts->end_ns)
		z = ts->end_ns;
	while (a < z) {
		size_t b = (size_t)((a - ts->start_ns) / ts->bin_ns);
		if (b >= ts->nbins)
			break;
		int64_t be = ts->start_ns + (int64_t)(b + 1) * ts->bin_ns;
		int64_t e = z < be ? z : be;
		acc[b] += e - a;
		a = e;
	}
}

static int64_t bin_len(const struct lp_timeseries *ts, size_t b)
{
	int64_t be = ts->start_ns + (int64_t)(b + 1) * ts->bin_ns;
	if (be > ts->end_ns)
		be = ts->end_ns;
	int64_t l = be - (ts->start_ns + (int64_t)b * ts->bin_ns);
	return l > 0 ? l : 1;
}

static void timeseries_bounds(sqlite3 *db, struct lp_timeseries *ts)
{
	ts->start_ns = lp_db_int(db, "SELECT min(start_ns) FROM processes", 0);
	int64_t e =
	    lp_db_int(db, "SELECT max(max(start_ns, COALESCE(end_ns, 0))) FROM processes", 0);
	int64_t t = lp_db_int(db, "SELECT max(COALESCE(end_ns, 0)) FROM threads", 0);
	e = t > e ? t : e;
	if (lp_db_has_table(db, "ranges")) {
		t = lp_db_int(db, "SELECT max(end_ns) FROM ranges", 0);
		e = t > e ? t : e;
	}
	ts->end_ns = e > ts->start_ns ? e : ts->start_ns + 1;
	int64_t span = ts->end_ns - ts->start_ns;
	size_t nb = span < 1000000 ? 20 : 100; /* a few bins for sub-ms runs */
	ts->bin_ns = (span + (int64_t)nb - 1) / (int64_t)nb;
	ts->nbins = (size_t)((span + ts->bin_ns - 1) / ts->bin_ns);
}

/* ---- requests ---- */

struct req_ctx {
	struct lp_timeseries *ts;
	size_t cap;
};

static int req_row(sqlite3_stmt *st, void *vctx)
{
	struct req_ctx *c = vctx;
	struct lp_ts_req *r = LP_PUSH(c->ts->req, c->ts->nreq, c->cap);
	if (!r)
		return -ENOMEM;
	r->range_id = sqlite3_column_int64(st, 0);
	r->start_ns = sqlite3_column_int64(st, 1);
	r->dur_ns = sqlite3_column_int64(st, 2);
	return 0;
}

static int ts_percentiles(struct lp_timeseries *ts);

static int ts_req_cmp(const void *a, const void *b)
{
	const struct lp_ts_req *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->range_id > y->range_id) - (x->range_id < y->range_id);
}

/* The request ranges from the loaded set, in the query's order (start, id). */
static int ts_requests_rs(const struct lp_breakdown *b, const struct lp_rset *rs,
			  struct lp_timeseries *ts)
{
	uint8_t *isreq = lp_rset_keys_named(rs, b->req_domain, b->req_name);
	size_t cap = 0;
	if (!isreq)
		return -ENOMEM;
	for (size_t i = 0; i < rs->n; i++) {
		const struct lp_rg *g = &rs->r[i];
		if (!isreq[g->key])
			continue;
		struct lp_ts_req *r = LP_PUSH(ts->req, ts->nreq, cap);
		if (!r) {
			free(isreq);
			return -ENOMEM;
		}
		*r = (struct lp_ts_req){rs->id[i], g->start, g->end - g->start};
	}
	free(isreq);
	if (ts->nreq > 1) /* qsort(NULL, 0) is undefined */
		qsort(ts->req, ts->nreq, sizeof(*ts->req), ts_req_cmp);
	return 0;
}

static int ts_requests(sqlite3 *db, const struct lp_breakdown *b, const struct lp_rset *ranges,
		       struct lp_timeseries *ts, char *err, size_t errlen)
{
	if (!b || !b->has_ranges || !b->req_name)
		return 0;
	if (ranges) {
		int rc = ts_requests_rs(b, ranges, ts);
		return rc ? rc : ts_percentiles(ts);
	}
	/* The name's ids first, then ranges through their name index: joining
	 * strings per range makes SQLite walk every range in start order
	 * (docs/perf-notes.md, "Request time series"). */
	const char *sql = "SELECT r.id, r.start_ns, r.end_ns - r.start_ns FROM ranges r "
			  "LEFT JOIN domains d ON d.id = r.domain_id "
			  "WHERE r.name_id IN (SELECT id FROM strings WHERE value = ?1) "
			  "AND COALESCE(d.name, '') = ?2 ORDER BY r.start_ns, r.id";
	struct lp_db_arg a[2] = {LP_DB_TEXT(b->req_name),
				 LP_DB_TEXT(b->req_domain ? b->req_domain : "")};
	struct req_ctx c = {ts, 0};
	int rc = lp_db_query(db, sql, a, 2, req_row, &c, err, errlen);
	return rc ? rc : ts_percentiles(ts);
}

static int ts_percentiles(struct lp_timeseries *ts)
{
	if (!ts->nreq)
		return 0;
	int64_t *d = malloc(ts->nreq * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < ts->nreq; i++)
		d[i] = ts->req[i].dur_ns;
	ts->p50_ns = lp_pctl(d, ts->nreq, 50);
	ts->p90_ns = lp_pctl(d, ts->nreq, 90);
	ts->p99_ns = lp_pctl(d, ts->nreq, 99);
	free(d);
	return 0;
}

/* ---- CPU lanes ---- */

struct lane_ctx {
	struct lp_timeseries *ts;
	size_t cap;
	int64_t **alive, **wait; /* per CPU lane, [nbins] ns */
	size_t ncpu;
	int64_t **runq; /* per CPU lane, [nbins]: the waits' run-queue tails */
};

static int thread_row(sqlite3_stmt *st, void *vctx)
{
	struct lane_ctx *c = vctx;
	struct lp_timeseries *ts = c->ts;
	struct lp_ts_lane *l = LP_PUSH(ts->lanes, ts->nlanes, c->cap);
	if (!l)
		return -ENOMEM;
	l->kind = LP_LANE_CPU;
	l->id = sqlite3_column_int64(st, 0);
	int64_t tid = sqlite3_column_int64(st, 1);
	const char *nm = (const char *)sqlite3_column_text(st, 2);
	l->pid = sqlite3_column_int(st, 3);
	if (nm)
		l->name = asprintf(&l->name, "%s %lld", nm, (long long)tid) < 0 ? NULL : l->name;
	else
		l->name = asprintf(&l->name, "tid %lld", (long long)tid) < 0 ? NULL : l->name;
	l->busy = calloc(ts->nbins, sizeof(double));
	int64_t *alive = calloc(ts->nbins, sizeof(int64_t));
	int64_t *wait = calloc(ts->nbins, sizeof(int64_t));
	int64_t **na = realloc(c->alive, (c->ncpu + 1) * sizeof(*na));
	if (na)
		c->alive = na;
	int64_t **nw = realloc(c->wait, (c->ncpu + 1) * sizeof(*nw));
	if (nw)
		c->wait = nw;
	if (!l->name || !l->busy || !alive || !wait || !na || !nw) {
		free(alive);
		free(wait);
		return -ENOMEM;
	}
	c->alive[c->ncpu] = alive;
	c->wait[c->ncpu++] = wait;
	bin_add(ts, alive, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5));
	return 0;
}

static int lane_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = ((const struct lp_ts_lane *)b)->id;
	return x < y ? -1 : x > y;
}

static int wait_row(sqlite3_stmt *st, void *vctx)
{
	struct lane_ctx *c = vctx;
	struct lp_timeseries *ts = c->ts;
	int64_t th = sqlite3_column_int64(st, 0);
	int64_t a = sqlite3_column_int64(st, 1), z = sqlite3_column_int64(st, 2);
	int cond = sqlite3_column_int(st, 3);
	struct lp_ts_lane *l = bsearch(&th, ts->lanes, c->ncpu, sizeof(*l), lane_cmp);
	int64_t runq = sqlite3_column_int64(st, 4);
	if (l)
		bin_add(ts, c->wait[l - ts->lanes], a, z);
	if (l && runq > 0 && runq <= z - a)
		bin_add(ts, c->runq[l - ts->lanes], z - runq, z);
	if (cond == 2) /* a blocking call: off the CPU, not a lock or condition wait */
		return 0;
	bin_add(ts, cond ? ts->cond_wait_ns : ts->lock_wait_ns, a, z);
	if (!cond) {
		ts->total_lock_wait_ns += z - a;
		ts->nlock_waits++;
		if (a >= ts->start_ns && a < ts->end_ns)
			ts->lock_waits[(a - ts->start_ns) / ts->bin_ns]++;
	}
	return 0;
}

/*
 * On-CPU and preempted time per CPU lane, from task-clock: the thread's
 * cumulative task-clock at its counter samples (range boundaries) and at
 * exit, each interval's increase spread over the interval's bins in
 * proportion to their time outside recorded waits (a thread runs little
 * while it waits). Per bin, on-CPU is at most the time outside waits; the
 * rest of that time is preempted (runnable, off the CPU), as are the
 * waits' run-queue tails. Lanes without task-clock keep oncpu NULL.
 */
#define LP_TS_MAXSAMPLES 2000000

struct tc_ctx {
	struct lane_ctx *c;
	int64_t th, ts, v; /* the previous point */
	double **acc;	   /* per CPU lane, [nbins] task-clock ns; NULL until seen */
	int err;
};

static double avail_ns(const struct lane_ctx *c, size_t i, size_t b)
{
	int64_t v = c->alive[i][b] - c->wait[i][b];
	return v > 0 ? (double)v : 0;
}

static void tc_spread(struct tc_ctx *x, size_t i, int64_t a, int64_t z, double d)
{
	const struct lp_timeseries *ts = x->c->ts;
	if (a < ts->start_ns)
		a = ts->start_ns;
	if (z > ts->end_ns)
		z = ts->end_ns;
	if (z <= a || d <= 0 || ts->nbins == 0)
		return;
	size_t b0 = (size_t)((a - ts->start_ns) / ts->bin_ns);
	size_t b1 = (size_t)((z - 1 - ts->start_ns) / ts->bin_ns);
	if (b1 >= ts->nbins)
		b1 = ts->nbins - 1;
	double wsum = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t b = b0; b <= b1; b++) {
			int64_t bs = ts->start_ns + (int64_t)b * ts->bin_ns;
			int64_t be = bs + bin_len(ts, b);
			int64_t o = (z < be ? z : be) - (a > bs ? a : bs);
			if (o <= 0)
				continue;
			/* weight: the overlap's share of the bin's time outside waits */
			double w = (double)o * avail_ns(x->c, i, b) / (double)bin_len(ts, b);
			if (!pass)
				wsum += w;
			else if (wsum > 0)
				x->acc[i][b] += d * w / wsum;
		}
}

static int tc_row(sqlite3_stmt *st, void *vctx)
{
	struct tc_ctx *x = vctx;
	int64_t th = sqlite3_column_int64(st, 0), t = sqlite3_column_int64(st, 1);
	int64_t v = sqlite3_column_int64(st, 2);
	struct lp_ts_lane *l = bsearch(&th, x->c->ts->lanes, x->c->ncpu, sizeof(*l), lane_cmp);
	if (l && th == x->th && t > x->ts && v >= x->v) {
		size_t i = (size_t)(l - x->c->ts->lanes);
		if (!x->acc[i] && !(x->acc[i] = calloc(x->c->ts->nbins, sizeof(double))))
			return -ENOMEM;
		tc_spread(x, i, x->ts, t, (double)(v - x->v));
	}
	x->th = th, x->ts = t, x->v = v;
	return 0;
}

/* Task-clock that a stretch between two samples gives a bin beyond its
 * time outside waits ran inside waits (a spinning lock, the recorder's own
 * work at a wait's end). The breakdown's thread row caps on-CPU only at the
 * thread's whole time outside waits; so that the heatmap's lane adds up to
 * that row, the overflow fills the lane's spare bins in proportion to
 * their spare time: the fraction of each bin's spare it takes. */
static double tc_overflow_fill(const struct lane_ctx *c, size_t i, const double *acc)
{
	double over = 0, spare = 0;
	for (size_t b = 0; b < c->ts->nbins; b++) {
		double av = avail_ns(c, i, b);
		if (acc[b] > av)
			over += acc[b] - av;
		else
			spare += av - acc[b];
	}
	if (over <= 0 || spare <= 0)
		return 0;
	return over < spare ? over / spare : 1;
}

/* Bin b's run-queue tails of lane i's waits, at most its time in waits. */
static double runq_in_bin(const struct lane_ctx *c, size_t i, size_t b)
{
	return (double)(c->runq[i][b] < c->wait[i][b] ? c->runq[i][b] : c->wait[i][b]);
}

/* Lane i's bins on a CPU and preempted, from its task-clock per bin (acc).
 * With the kernel's run_delay of the thread (delay >= 0) the lane's totals
 * are the breakdown's thread row's (lp_breakdown_split_runq): preempted
 * outside the waits spread over the time no task-clock covers, on-CPU
 * scaled to what that leaves; the rest was off the CPU in blocking not
 * recorded, drawn as waiting. Without it, all time outside waits and off
 * the CPU is preempted. */
static void tc_lane_split(const struct lane_ctx *c, size_t i, const double *acc, int64_t delay)
{
	const struct lp_timeseries *ts = c->ts;
	struct lp_ts_lane *l = &ts->lanes[i];
	double fill = tc_overflow_fill(c, i, acc), avail = 0, on_all = 0, rq_all = 0;
	for (size_t b = 0; b < ts->nbins; b++) {
		double av = avail_ns(c, i, b), on = acc[b] < av ? acc[b] : av;
		l->oncpu[b] = on + (av - on) * fill; /* ns until the end */
		avail += av, on_all += l->oncpu[b], rq_all += runq_in_bin(c, i, b);
	}
	double k = 1, take = 1; /* on-CPU scale; the share of the rest preempted */
	if (delay >= 0) {
		int64_t on, out;
		lp_breakdown_split_runq(llround(avail), llround(rq_all), llround(on_all), delay,
					&on, &out);
		k = on_all > 0 ? (double)on / on_all : 1;
		take = avail - (double)on > 0 ? (double)out / (avail - (double)on) : 0;
	}
	for (size_t b = 0; b < ts->nbins; b++) {
		double av = avail_ns(c, i, b), on = l->oncpu[b] * k, len = (double)bin_len(ts, b);
		double pre = (av - on) * take + runq_in_bin(c, i, b);
		l->oncpu[b] = on / len;
		l->preempted[b] = pre / len;
		l->total_oncpu_ns += llround(on);
		l->total_preempted_ns += llround(pre);
	}
}

static int ts_cpu_split(sqlite3 *db, struct lane_ctx *c, char *err, size_t errlen)
{
	struct lp_timeseries *ts = c->ts;
	if (!c->ncpu || !lp_db_has_table(db, "counter_samples") ||
	    !lp_db_has_table(db, "thread_counters"))
		return 0;
	struct tc_ctx x = {c, -1, 0, 0, calloc(c->ncpu, sizeof(double *)), 0};
	if (!x.acc)
		return -ENOMEM;
	/* The points: 0 when the counters opened, the samples, the total at exit.
	 * Past LP_TS_MAXSAMPLES samples (one per range boundary: millions at the
	 * run sizes the page is bounded for) only the first and the last: the
	 * sort would cost more than the rest of the page, and the bins are
	 * coarser than the samples anyway. */
	static const char all_sql[] =
	    "WITH e AS (SELECT id FROM counter_events WHERE name = 'task-clock' AND available) "
	    "SELECT thread_id, start_ns, 0 FROM thread_counters WHERE start_ns IS NOT NULL AND "
	    "event_id IN e UNION ALL SELECT s.thread_id, s.ts_ns, v.value FROM counter_values v "
	    "JOIN counter_samples s ON s.id = v.sample_id WHERE v.event_id IN e UNION ALL "
	    "SELECT thread_id, end_ns, value FROM thread_counters WHERE event_id IN e "
	    "ORDER BY 1, 2, 3";
	static const char ends_sql[] =
	    "WITH e AS (SELECT id FROM counter_events WHERE name = 'task-clock' AND available) "
	    "SELECT thread_id, start_ns, 0 FROM thread_counters WHERE start_ns IS NOT NULL AND "
	    "event_id IN e UNION ALL SELECT thread_id, end_ns, value FROM thread_counters "
	    "WHERE event_id IN e ORDER BY 1, 2, 3";
	int many = lp_db_int(db, "SELECT count(*) FROM counter_samples", 0) > LP_TS_MAXSAMPLES;
	int rc = lp_db_each(db, many ? ends_sql : all_sql, NULL, 0, tc_row, &x, err, errlen);
	struct lp_map delay = {0}; /* threads.id -> the kernel's run_delay ns */
	if (!rc)
		rc = lp_breakdown_thread_delays(db, &delay, err, errlen);
	for (size_t i = 0; i < c->ncpu; i++) {
		struct lp_ts_lane *l = &ts->lanes[i];
		if (!rc && x.acc[i]) {
			l->oncpu = calloc(ts->nbins, sizeof(double));
			l->preempted = calloc(ts->nbins, sizeof(double));
			if (!l->oncpu || !l->preempted)
				rc = -ENOMEM;
		}
		uint64_t d;
		if (!rc && l->oncpu)
			tc_lane_split(c, i, x.acc[i],
				      lp_map_get(&delay, (uint64_t)l->id, &d) ? (int64_t)d : -1);
		free(x.acc[i]);
	}
	lp_map_free(&delay);
	free(x.acc);
	return rc;
}

static int ts_cpu(sqlite3 *db, struct lp_timeseries *ts, size_t *cap, char *err, size_t errlen)
{
	struct lane_ctx c = {ts, *cap, NULL, NULL, 0, NULL};
	int64_t end = ts->end_ns;
	int rc = lp_db_each(db,
			    "SELECT t.id, t.tid, t.name, p.pid, COALESCE(t.start_ns, p.start_ns), "
			    "COALESCE(t.end_ns, p.end_ns, ?1) FROM threads t "
			    "JOIN processes p ON p.id = t.process_id ORDER BY t.id",
			    &end, 1, thread_row, &c, err, errlen);
	c.runq = calloc(c.ncpu + 1, sizeof(*c.runq));
	for (size_t i = 0; !rc && c.runq && i < c.ncpu; i++)
		if (!(c.runq[i] = calloc(ts->nbins + 1, sizeof(int64_t))))
			rc = -ENOMEM;
	if (!rc && !c.runq)
		rc = -ENOMEM;
	if (!rc && lp_db_has_table(db, "lock_waits"))
		rc = lp_db_each(db,
				"SELECT thread_id, start_ns, start_ns + dur_ns, 0, "
				"coalesce(runq_ns, 0) FROM lock_waits "
				"UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, 1, "
				"coalesce(runq_ns, 0) FROM cond_waits",
				NULL, 0, wait_row, &c, err, errlen);
	if (!rc && lp_db_has_table(db, "blocking_calls"))
		rc = lp_db_each(db,
				"SELECT thread_id, start_ns, start_ns + dur_ns, 2, "
				"coalesce(runq_ns, 0) FROM blocking_calls",
				NULL, 0, wait_row, &c, err, errlen);
	if (!rc)
		rc = ts_cpu_split(db, &c, err, errlen);
	for (size_t i = 0; i < c.ncpu; i++) {
		struct lp_ts_lane *l = &ts->lanes[i];
		for (size_t b = 0; !rc && b < ts->nbins; b++) {
			int64_t v = c.alive[i][b] - c.wait[i][b];
			v = v < 0 ? 0 : v;
			l->busy[b] = (double)v / (double)bin_len(ts, b);
			l->total_busy_ns += v;
		}
		free(c.alive[i]);
		free(c.wait[i]);
		if (c.runq)
			free(c.runq[i]);
	}
	free(c.alive);
	free(c.wait);
	free(c.runq);
	*cap = c.cap;
	return rc;
}

/* ---- GPU lanes: union of device work per (process, device, stream) ---- */

struct gpu_ctx {
	struct lp_timeseries *ts;
	size_t *cap;
	int64_t pid_key, dev, stream, cur_end;
	int64_t *acc;
};

static int gpu_flush(struct gpu_ctx *c)
{
	struct lp_timeseries *ts = c->ts;
	if (!c->acc)
		return 0;
	struct lp_ts_lane *l = &ts->lanes[ts->nlanes - 1];
	for (size_t b = 0; b < ts->nbins; b++) {
		l->busy[b] = (double)c->acc[b] / (double)bin_len(ts, b);
		l->total_busy_ns += c->acc[b];
	}
	free(c->acc);
	c->acc = NULL;
	return 0;
}

static int gpu_row(sqlite3_stmt *st, void *vctx)
{
	struct gpu_ctx *c = vctx;
	struct lp_timeseries *ts = c->ts;
	int64_t pk = sqlite3_column_int64(st, 0), dev = sqlite3_column_int64(st, 2);
	int64_t stream = sqlite3_column_int64(st, 3);
	int64_t a = sqlite3_column_int64(st, 4), z = sqlite3_column_int64(st, 5);
	if (!c->acc || pk != c->pid_key || dev != c->dev || stream != c->stream) {
		gpu_flush(c);
		struct lp_ts_lane *l = LP_PUSH(ts->lanes, ts->nlanes, *c->cap);
		if (!l)
			return -ENOMEM;
		l->kind = LP_LANE_GPU;
		l->id = stream;
		l->pid = sqlite3_column_int(st, 1);
		if (asprintf(&l->name, "GPU %lld stream %lld (pid %d)", (long long)dev,
			     (long long)stream, l->pid) < 0)
			l->name = NULL;
		l->busy = calloc(ts->nbins, sizeof(double));
		c->acc = calloc(ts->nbins, sizeof(int64_t));
		if (!l->name || !l->busy || !c->acc)
			return -ENOMEM;
		c->pid_key = pk, c->dev = dev, c->stream = stream;
		c->cur_end = INT64_MIN;
		ts->has_gpu = 1;
	}
	if (a < c->cur_end)
		a = c->cur_end;
	if (z > a) {
		bin_add(ts, c->acc, a, z);
		c->cur_end = z;
	}
	return 0;
}

static int ts_gpu(sqlite3 *db, struct lp_timeseries *ts, size_t *cap, char *err, size_t errlen)
{
	if (!lp_db_has_table(db, "kernels"))
		return 0;
	struct gpu_ctx c = {.ts = ts, .cap = cap};
	int rc = lp_db_each(
	    db,
	    "SELECT g.process_id, p.pid, g.device, g.stream, g.start_ns, g.end_ns FROM "
	    "(SELECT process_id, device, stream, start_ns, end_ns FROM kernels "
	    "UNION ALL SELECT process_id, device, stream, start_ns, end_ns FROM memcpys "
	    "UNION ALL SELECT process_id, device, stream, start_ns, end_ns FROM memsets) g "
	    "JOIN processes p ON p.id = g.process_id "
	    "ORDER BY g.process_id, g.device, g.stream, g.start_ns",
	    NULL, 0, gpu_row, &c, err, errlen);
	if (!rc)
		gpu_flush(&c);
	free(c.acc);
	return rc;
}

int lp_timeseries_compute(sqlite3 *db, const struct lp_breakdown *b, const struct lp_rset *ranges,
			  struct lp_timeseries *ts, char *err, size_t errlen)
{
	memset(ts, 0, sizeof(*ts));
	timeseries_bounds(db, ts);
	ts->lock_wait_ns = calloc(ts->nbins, sizeof(int64_t));
	ts->cond_wait_ns = calloc(ts->nbins, sizeof(int64_t));
	ts->lock_waits = calloc(ts->nbins, sizeof(int64_t));
	if (!ts->lock_wait_ns || !ts->cond_wait_ns || !ts->lock_waits) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t cap = 0;
	int rc = ts_requests(db, b, ranges, ts, err, errlen);
	if (!rc)
		rc = ts_cpu(db, ts, &cap, err, errlen);
	if (!rc)
		rc = ts_gpu(db, ts, &cap, err, errlen);
	return rc;
}

void lp_timeseries_free(struct lp_timeseries *ts)
{
	free(ts->req);
	for (size_t i = 0; i < ts->nlanes; i++) {
		free(ts->lanes[i].name);
		free(ts->lanes[i].busy);
		free(ts->lanes[i].oncpu);
		free(ts->lanes[i].preempted);
	}
	free(ts->lanes);
	free(ts->lock_wait_ns);
	free(ts->cond_wait_ns);
	free(ts->lock_waits);
	memset(ts, 0, sizeof(*ts));
}

/* ---- one request's timeline ---- */

#define LP_TL_MAXITEMS 4000

struct tl_ctx {
	struct lp_req_timeline *t;
	size_t cap, lcap;
	int64_t *keep; /* range ids kept (sorted ascending as they come) */
	int *keepdepth;
	size_t nkeep, kcap;
	int64_t process_id;
	int64_t *corr; /* API correlation ids on the lanes */
	size_t ncorr, ccap;
};

static int lp_tl_lane(struct tl_ctx *c, int64_t thread_id, const char *name)
{
	struct lp_req_timeline *t = c->t;
	for (size_t i = 0; i < t->nlanes; i++)
		if (t->lanes[i].thread_id == thread_id &&
		    (thread_id || !strcmp(t->lanes[i].name, name)))
			return (int)i;
	struct lp_tl_lane *l = LP_PUSH(t->lanes, t->nlanes, c->lcap);
	if (!l || !(l->name = strdup(name ? name : "")))
		return -ENOMEM;
	l->thread_id = thread_id;
	return (int)(t->nlanes - 1);
}

static int tl_push(struct tl_ctx *c, enum lp_tl_kind k, int lane, int depth, int64_t a, int64_t z,
		   const char *name)
{
	struct lp_req_timeline *t = c->t;
	if (t->n >= LP_TL_MAXITEMS)
		return 0;
	struct lp_tl_item *it = LP_PUSH(t->items, t->n, c->cap);
	if (!it || !(it->name = strdup(name ? name : "")))
		return -ENOMEM;
	it->kind = k, it->lane = lane, it->depth = depth;
	it->start_ns = a < t->start_ns ? t->start_ns : a;
	it->end_ns = z > t->end_ns ? t->end_ns : z;
	return 0;
}

static int tl_find_keep(const struct tl_ctx *c, int64_t id)
{
	for (size_t i = c->nkeep; i-- > 0;)
		if (c->keep[i] == id)
			return (int)i;
	return -1;
}

/* Thread label as the lanes show it: "name tid" or "tid N". */
static char *thread_label(sqlite3_stmt *st, int icol_name, int icol_tid)
{
	const char *nm = (const char *)sqlite3_column_text(st, icol_name);
	char *s;
	long long tid = sqlite3_column_int64(st, icol_tid);
	if ((nm ? asprintf(&s, "%s %lld", nm, tid) : asprintf(&s, "tid %lld", tid)) < 0)
		return NULL;
	return s;
}

/* r.id, r.parent_id, r.start_thread_id, start, end, name, thread name, tid */
static int tl_range_row(sqlite3_stmt *st, void *vctx)
{
	struct tl_ctx *c = vctx;
	int64_t id = sqlite3_column_int64(st, 0), parent = sqlite3_column_int64(st, 1);
	int depth;
	if (id == c->t->range_id) {
		depth = 0;
	} else {
		int k = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : tl_find_keep(c, parent);
		if (k < 0)
			return 0;
		depth = c->keepdepth[k] + 1;
	}
	size_t kc = c->kcap;
	int64_t *kp = lp_grow(c->keep, &kc, c->nkeep + 1, sizeof(int64_t));
	if (kp)
		c->keep = kp;
	int *kd = kp ? lp_grow(c->keepdepth, &c->kcap, c->nkeep + 1, sizeof(int)) : NULL;
	if (!kp || !kd)
		return -ENOMEM;
	c->keepdepth = kd;
	c->keep[c->nkeep] = id;
	c->keepdepth[c->nkeep++] = depth;
	char *lbl = thread_label(st, 6, 7);
	if (!lbl)
		return -ENOMEM;
	int lane = lp_tl_lane(c, sqlite3_column_int64(st, 2), lbl);
	free(lbl);
	if (lane < 0)
		return lane;
	return tl_push(c, LP_TL_RANGE, lane, depth, sqlite3_column_int64(st, 3),
		       sqlite3_column_int64(st, 4), (const char *)sqlite3_column_text(st, 5));
}

static int tl_lane_of(const struct lp_req_timeline *t, int64_t thread_id)
{
	for (size_t i = 0; i < t->nlanes; i++)
		if (t->lanes[i].thread_id == thread_id)
			return (int)i;
	return -1;
}

/* thread_id, start, end, name, kind, corr */
static int tl_wait_row(sqlite3_stmt *st, void *vctx)
{
	struct tl_ctx *c = vctx;
	int lane = tl_lane_of(c->t, sqlite3_column_int64(st, 0));
	if (lane < 0)
		return 0;
	enum lp_tl_kind k = (enum lp_tl_kind)sqlite3_column_int(st, 4);
	if (k == LP_TL_API) {
		int64_t *p = lp_grow(c->corr, &c->ccap, c->ncorr + 1, sizeof(int64_t));
		if (!p)
			return -ENOMEM;
		c->corr = p;
		c->corr[c->ncorr++] = sqlite3_column_int64(st, 5);
	}
	return tl_push(c, k, lane, 0, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
		       (const char *)sqlite3_column_text(st, 3));
}

/* corr, stream, device, start, end, name */
static int tl_gpu_row(sqlite3_stmt *st, void *vctx)
{
	struct tl_ctx *c = vctx;
	int64_t corr = sqlite3_column_int64(st, 0);
	size_t i;
	for (i = 0; i < c->ncorr && c->corr[i] != corr; i++)
		;
	if (i == c->ncorr)
		return 0;
	char nm[64];
	snprintf(nm, sizeof(nm), "GPU %lld stream %lld", (long long)sqlite3_column_int64(st, 2),
		 (long long)sqlite3_column_int64(st, 1));
	int lane = lp_tl_lane(c, 0, nm);
	if (lane < 0)
		return lane;
	return tl_push(c, LP_TL_GPU, lane, 0, sqlite3_column_int64(st, 3),
		       sqlite3_column_int64(st, 4), (const char *)sqlite3_column_text(st, 5));
}

static int tl_item_cmp(const void *a, const void *b)
{
	const struct lp_tl_item *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->depth - y->depth;
}

static int tl_load(sqlite3 *db, struct tl_ctx *c, char *err, size_t errlen)
{
	struct lp_req_timeline *t = c->t;
	int64_t a[3] = {c->process_id, t->start_ns, t->end_ns};
	int rc = lp_db_each(
	    db,
	    "SELECT r.id, r.parent_id, r.start_thread_id, r.start_ns, r.end_ns, s.value, "
	    "t.name, t.tid FROM ranges r LEFT JOIN strings s ON s.id = r.name_id "
	    "JOIN threads t ON t.id = r.start_thread_id WHERE r.process_id = ?1 "
	    "AND r.start_ns >= ?2 AND r.start_ns <= ?3 ORDER BY r.start_ns, r.id",
	    a, 3, tl_range_row, c, err, errlen);
	int64_t w[2] = {t->start_ns, t->end_ns};
	if (!rc && lp_db_has_table(db, "lock_waits"))
		rc = lp_db_each(db,
				"SELECT w.thread_id, w.start_ns, w.start_ns + w.dur_ns, "
				"COALESCE(l.name, l.kind || ' 0x' || printf('%x', l.address)), "
				"CASE w.class WHEN 1 THEN 8 WHEN 2 THEN 10 WHEN 3 THEN 11 "
				"ELSE 1 END, 0 "
				"FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
				"WHERE w.start_ns < ?2 AND w.start_ns + w.dur_ns > ?1 "
				"UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, "
				"CASE class WHEN 1 THEN 'GIL' WHEN 2 THEN 'waiting for work' "
				"WHEN 3 THEN 'waiting for a thread to end' "
				"ELSE 'condition wait' END, CASE class WHEN 1 THEN 8 "
				"WHEN 2 THEN 10 WHEN 3 THEN 11 ELSE 2 END, 0 FROM cond_waits "
				"WHERE start_ns < ?2 AND start_ns + dur_ns > ?1",
				w, 2, tl_wait_row, c, err, errlen);
	if (!rc && lp_db_has_table(db, "blocking_calls"))
		rc =
		    lp_db_each(db,
			       "SELECT thread_id, start_ns, start_ns + dur_ns, call || "
			       "coalesce(' on ' || fd_kind, ''), CASE WHEN call IN " LP_JOIN_CALLS
			       " THEN 11 WHEN category = 'sleep' THEN 5 WHEN "
			       "category IN ('file_io', 'socket_io') THEN 6 ELSE 7 END, 0 "
			       "FROM blocking_calls WHERE start_ns < ?2 AND start_ns + dur_ns > ?1",
			       w, 2, tl_wait_row, c, err, errlen);
		/* The waits' run-queue tails: woken, runnable, waiting for a CPU. */
#define LP_TL_RUNQ_SQL(table)                                                                      \
	"SELECT thread_id, start_ns + dur_ns - runq_ns, start_ns + dur_ns, "                       \
	"'preempted (run queue)', 9, 0 FROM " table " WHERE runq_ns > 0 AND runq_ns <= dur_ns "    \
	"AND start_ns < ?2 AND start_ns + dur_ns > ?1"
	static const char *const runq_table[] = {"lock_waits", "cond_waits", "blocking_calls"};
	static const char *const runq_sql[] = {LP_TL_RUNQ_SQL("lock_waits"),
					       LP_TL_RUNQ_SQL("cond_waits"),
					       LP_TL_RUNQ_SQL("blocking_calls")};
#undef LP_TL_RUNQ_SQL
	for (size_t i = 0; i < sizeof(runq_sql) / sizeof(runq_sql[0]); i++)
		if (!rc && lp_db_has_table(db, runq_table[i]))
			rc = lp_db_each(db, runq_sql[i], w, 2, tl_wait_row, c, err, errlen);
	if (!rc && lp_db_has_table(db, "cuda_api")) {
		rc = lp_db_each(db,
				"SELECT a.thread_id, a.start_ns, a.end_ns, s.value, 3, "
				"a.correlation_id FROM cuda_api a LEFT JOIN strings s ON "
				"s.id = a.name_id WHERE a.start_ns < ?2 AND a.end_ns > ?1",
				w, 2, tl_wait_row, c, err, errlen);
		/* GPU work launched inside the request may run after it ends */
		int64_t g[2] = {c->process_id, t->start_ns};
		if (!rc && c->ncorr)
			rc = lp_db_each(
			    db,
			    "SELECT correlation_id, stream, device, start_ns, end_ns, "
			    "s.value FROM kernels k LEFT JOIN strings s ON s.id = k.name_id "
			    "WHERE process_id = ?1 AND end_ns > ?2 UNION ALL "
			    "SELECT correlation_id, stream, device, start_ns, end_ns, "
			    "'memcpy ' || copy_kind FROM memcpys WHERE process_id = ?1 "
			    "AND end_ns > ?2",
			    g, 2, tl_gpu_row, c, err, errlen);
	}
	return rc;
}

static int tl_proc_row(sqlite3_stmt *st, void *vctx)
{
	((struct tl_ctx *)vctx)->process_id = sqlite3_column_int64(st, 0);
	return 0;
}

int lp_req_timeline_compute(sqlite3 *db, const struct lp_timeseries *ts, int64_t at_ns,
			    const char *label, struct lp_req_timeline *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->label = label;
	const struct lp_ts_req *r = NULL;
	for (size_t i = 0; i < ts->nreq && !r; i++)
		if (ts->req[i].dur_ns == at_ns)
			r = &ts->req[i];
	if (!r)
		return 0;
	t->range_id = r->range_id;
	t->start_ns = r->start_ns;
	t->end_ns = r->start_ns + r->dur_ns;
	struct tl_ctx c = {.t = t};
	int64_t id = r->range_id;
	int rc = lp_db_each(db, "SELECT process_id FROM ranges WHERE id = ?1", &id, 1, tl_proc_row,
			    &c, err, errlen);
	if (!rc)
		rc = tl_load(db, &c, err, errlen);
	free(c.keep);
	free(c.keepdepth);
	free(c.corr);
	if (!rc && t->n) {
		qsort(t->items, t->n, sizeof(*t->items), tl_item_cmp);
		t->valid = 1;
	}
	return rc;
}

void lp_req_timeline_free(struct lp_req_timeline *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->items[i].name);
	for (size_t i = 0; i < t->nlanes; i++)
		free(t->lanes[i].name);
	free(t->items);
	free(t->lanes);
	memset(t, 0, sizeof(*t));
}

/* ---- the flat trace ---- */

/* GPU work goes to a pseudo-process per (process, device): above any pid
 * Linux hands out (pid_max <= 2^22), so lanes never collide with threads. */
static int gpu_pid(int64_t process_id, int64_t device)
{
	return (1 << 30) + (int)(process_id * 64 + device);
}

struct tr_ctx {
	struct lp_trace *t;
	size_t ecap, tcap, ccap, mcap;
	enum lp_ev_kind kind;
	int64_t last_thread, last_event;
	double last_value;
};

/* kind-specific SELECT: id, pid, tid, start, end, name, detail, corr, process_id, cross */
static int tr_ev_row(sqlite3_stmt *st, void *vctx)
{
	struct tr_ctx *c = vctx;
	struct lp_tr_event *e = LP_PUSH(c->t->ev, c->t->nev, c->ecap);
	if (!e)
		return -ENOMEM;
	e->kind = c->kind;
	e->id = sqlite3_column_int64(st, 0);
	e->pid = sqlite3_column_int(st, 1);
	e->tid = sqlite3_column_int64(st, 2);
	e->start_ns = sqlite3_column_int64(st, 3);
	e->end_ns = sqlite3_column_int64(st, 4);
	if (e->end_ns < e->start_ns)
		e->end_ns = e->start_ns;
	e->name = lp_db_col_strdup(st, 5);
	e->detail = lp_db_col_strdup(st, 6);
	e->corr = sqlite3_column_int64(st, 7);
	e->process_id = sqlite3_column_int64(st, 8);
	e->cross_thread = sqlite3_column_int(st, 9);
	if (e->kind >= LP_EV_KERNEL)
		e->pid = gpu_pid(e->process_id, e->pid); /* column 1 held the device */
	if (!e->name && !(e->name = strdup("(unnamed)")))
		return -ENOMEM;
	c->t->count[e->kind]++;
	return 0;
}

static int tr_mark_row(sqlite3_stmt *st, void *vctx)
{
	struct tr_ctx *c = vctx;
	struct lp_tr_event *e = LP_PUSH(c->t->marks, c->t->nmarks, c->mcap);
	if (!e)
		return -ENOMEM;
	e->id = sqlite3_column_int64(st, 0);
	e->pid = sqlite3_column_int(st, 1);
	e->tid = sqlite3_column_int64(st, 2);
	e->start_ns = e->end_ns = sqlite3_column_int64(st, 3);
	e->name = lp_db_col_strdup(st, 5);
	if (!e->name && !(e->name = strdup("(unnamed)")))
		return -ENOMEM;
	return 0;
}

/* pid, tid, name, is_process, sort */
static int tr_track_row(sqlite3_stmt *st, void *vctx)
{
	struct tr_ctx *c = vctx;
	struct lp_tr_track *k = LP_PUSH(c->t->tracks, c->t->ntracks, c->tcap);
	if (!k)
		return -ENOMEM;
	k->pid = sqlite3_column_int(st, 0);
	k->tid = sqlite3_column_int64(st, 1);
	k->name = lp_db_col_strdup(st, 2);
	k->is_process = sqlite3_column_int(st, 3);
	k->sort = sqlite3_column_int(st, 4);
	if (!k->name)
		return -ENOMEM;
	return 0;
}

/* GPU pseudo-process rows carry process_id and device: map them. */
static int tr_gpu_track_row(sqlite3_stmt *st, void *vctx)
{
	struct tr_ctx *c = vctx;
	int rc = tr_track_row(st, vctx);
	if (!rc) {
		struct lp_tr_track *k = &c->t->tracks[c->t->ntracks - 1];
		k->pid = gpu_pid(sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 0));
	}
	return rc;
}

/* thread_id, pid, tid, ts, event name, value, event id */
static int tr_counter_row(sqlite3_stmt *st, void *vctx)
{
	struct tr_ctx *c = vctx;
	int64_t th = sqlite3_column_int64(st, 0), ev = sqlite3_column_int64(st, 6);
	double v = sqlite3_column_double(st, 5);
	if (th != c->last_thread || ev != c->last_event)
		c->last_value = 0; /* values count from when the group was opened */
	c->last_thread = th, c->last_event = ev;
	struct lp_tr_counter *k = LP_PUSH(c->t->counters, c->t->ncounters, c->ccap);
	if (!k)
		return -ENOMEM;
	k->pid = sqlite3_column_int(st, 1);
	k->ts_ns = sqlite3_column_int64(st, 3);
	k->value = v - c->last_value;
	c->last_value = v;
	if (asprintf(&k->name, "%s tid %lld", (const char *)sqlite3_column_text(st, 4),
		     (long long)sqlite3_column_int64(st, 2)) < 0) {
		k->name = NULL;
		return -ENOMEM;
	}
	return 0;
}

struct tr_src {
	enum lp_ev_kind kind;
	const char *table;
	const char *sql;
};

static const struct tr_src lp_tr_srcs[] = {
    {LP_EV_RANGE, "ranges",
     "SELECT r.id, p.pid, t.tid, r.start_ns, r.end_ns, s.value, d.name, 0, r.process_id, "
     "r.end_thread_id IS NOT NULL AND r.end_thread_id != r.start_thread_id FROM ranges r "
     "JOIN threads t ON t.id = r.start_thread_id JOIN processes p ON p.id = r.process_id "
     "LEFT JOIN strings s ON s.id = r.name_id LEFT JOIN domains d ON d.id = r.domain_id"},
    {LP_EV_LOCK, "lock_waits",
     "SELECT w.id, p.pid, t.tid, w.start_ns, w.start_ns + w.dur_ns, "
     "'lock wait: ' || COALESCE(l.name, l.kind || ' 0x' || printf('%x', l.address)), "
     "l.kind, 0, t.process_id, 0 FROM lock_waits w JOIN locks l ON l.id = w.lock_id "
     "JOIN threads t ON t.id = w.thread_id JOIN processes p ON p.id = t.process_id"},
    {LP_EV_COND, "cond_waits",
     "SELECT w.id, p.pid, t.tid, w.start_ns, w.start_ns + w.dur_ns, 'condition wait', "
     "printf('0x%x', w.cond_addr), 0, t.process_id, 0 FROM cond_waits w "
     "JOIN threads t ON t.id = w.thread_id JOIN processes p ON p.id = t.process_id"},
    {LP_EV_API, "cuda_api",
     "SELECT a.id, p.pid, t.tid, a.start_ns, a.end_ns, s.value, a.domain, a.correlation_id, "
     "a.process_id, 0 FROM cuda_api a JOIN threads t ON t.id = a.thread_id "
     "JOIN processes p ON p.id = a.process_id LEFT JOIN strings s ON s.id = a.name_id"},
    {LP_EV_KERNEL, "kernels",
     "SELECT k.id, k.device, k.stream, k.start_ns, k.end_ns, s.value, NULL, "
     "k.correlation_id, k.process_id, 0 FROM kernels k "
     "LEFT JOIN strings s ON s.id = k.name_id"},
    {LP_EV_MEMCPY, "memcpys",
     "SELECT id, device, stream, start_ns, end_ns, 'memcpy ' || copy_kind, "
     "bytes || ' bytes ' || src_kind || ' -> ' || dst_kind, correlation_id, process_id, 0 "
     "FROM memcpys"},
    {LP_EV_MEMSET, "memsets",
     "SELECT id, device, stream, start_ns, end_ns, 'memset', bytes || ' bytes ' || memory_kind, "
     "correlation_id, process_id, 0 FROM memsets"},
};

static int trace_tracks(sqlite3 *db, struct tr_ctx *c, char *err, size_t errlen)
{
	int rc = lp_db_each(db,
			    "SELECT pid, 0, COALESCE(exe, cmdline, 'process') || ' ' || pid, 1, "
			    "row_number() OVER (ORDER BY start_ns, id) FROM processes",
			    NULL, 0, tr_track_row, c, err, errlen);
	if (!rc)
		rc = lp_db_each(db,
				"SELECT p.pid, t.tid, COALESCE(t.name, 'thread ' || t.tid), 0, "
				"row_number() OVER (PARTITION BY t.process_id ORDER BY t.id) "
				"FROM threads t JOIN processes p ON p.id = t.process_id",
				NULL, 0, tr_track_row, c, err, errlen);
	if (rc || !lp_db_has_table(db, "kernels"))
		return rc;
	/* column 0 is the device; tr_gpu_track_row makes it the pseudo pid */
	const char *gsql =
	    "SELECT g.device, 0, 'GPU ' || g.device || COALESCE(' ' || d.name, '') || "
	    "' (pid ' || p.pid || ')', 1, 100000 + g.device, g.process_id FROM "
	    "(SELECT DISTINCT process_id, device FROM (SELECT process_id, device FROM kernels "
	    "UNION ALL SELECT process_id, device FROM memcpys UNION ALL SELECT process_id, "
	    "device FROM memsets)) g JOIN processes p ON p.id = g.process_id "
	    "LEFT JOIN gpu_devices d ON d.process_id = g.process_id AND d.device = g.device";
	rc = lp_db_each(db, gsql, NULL, 0, tr_gpu_track_row, c, err, errlen);
	if (!rc)
		rc = lp_db_each(db,
				"SELECT device, stream, 'stream ' || stream, 0, stream, process_id "
				"FROM (SELECT process_id, device, stream FROM kernels UNION "
				"SELECT process_id, device, stream FROM memcpys UNION "
				"SELECT process_id, device, stream FROM memsets)",
				NULL, 0, tr_gpu_track_row, c, err, errlen);
	return rc;
}

int lp_trace_load(sqlite3 *db, struct lp_trace *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	struct tr_ctx c = {.t = t, .last_thread = -1};
	t->base_ns = lp_db_int(db, "SELECT min(start_ns) FROM processes", 0);
	int rc = trace_tracks(db, &c, err, errlen);
	for (size_t i = 0; !rc && i < ARRAY_SIZE(lp_tr_srcs); i++) {
		if (!lp_db_has_table(db, lp_tr_srcs[i].table))
			continue;
		c.kind = lp_tr_srcs[i].kind;
		rc = lp_db_each(db, lp_tr_srcs[i].sql, NULL, 0, tr_ev_row, &c, err, errlen);
	}
	if (!rc && lp_db_has_table(db, "marks"))
		rc = lp_db_each(db,
				"SELECT m.id, p.pid, t.tid, m.ts_ns, 0, s.value FROM marks m "
				"JOIN threads t ON t.id = m.thread_id JOIN processes p ON "
				"p.id = m.process_id LEFT JOIN strings s ON s.id = m.name_id",
				NULL, 0, tr_mark_row, &c, err, errlen);
	if (!rc && lp_db_has_table(db, "counter_values"))
		rc =
		    lp_db_each(db,
			       "SELECT cs.thread_id, p.pid, t.tid, cs.ts_ns, ce.name, cv.value, "
			       "ce.id FROM counter_values cv JOIN counter_samples cs ON "
			       "cs.id = cv.sample_id JOIN counter_events ce ON ce.id = cv.event_id "
			       "JOIN threads t ON t.id = cs.thread_id JOIN processes p ON "
			       "p.id = t.process_id WHERE ce.available "
			       "ORDER BY cs.thread_id, ce.id, cs.ts_ns",
			       NULL, 0, tr_counter_row, &c, err, errlen);
	return rc;
}

void lp_trace_free(struct lp_trace *t)
{
	for (size_t i = 0; i < t->nev; i++) {
		free(t->ev[i].name);
		free(t->ev[i].detail);
	}
	for (size_t i = 0; i < t->nmarks; i++)
		free(t->marks[i].name);
	for (size_t i = 0; i < t->ntracks; i++)
		free(t->tracks[i].name);
	for (size_t i = 0; i < t->ncounters; i++)
		free(t->counters[i].name);
	free(t->ev);
	free(t->marks);
	free(t->tracks);
	free(t->counters);
	memset(t, 0, sizeof(*t));
}
