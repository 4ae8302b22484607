/* SPDX-License-Identifier: MIT */
/* CUDA summaries (analysis/lp_cuda.h): one ordered query per view, groups
 * and their median/stddev computed here from the sorted durations. */
#define _GNU_SOURCE
#include "lp_cuda.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_ivset.h"
#include "lp_util.h"

int lp_cuda_capture_read(sqlite3 *db, struct lp_cuda_capture *c)
{
	char buf[800];
	memset(c, 0, sizeof(*c));
	const char *v = lp_db_meta(db, "cuda.captured", buf, sizeof(buf));
	c->captured = v && atoi(v) > 0;
	v = lp_db_meta(db, "cuda.status", buf, sizeof(buf));
	snprintf(c->status, sizeof(c->status), "%s",
		 v ? v : "not captured: this database predates CUDA capture");
	v = lp_db_meta(db, "cuda.dropped_records", buf, sizeof(buf));
	c->dropped = v ? atoll(v) : 0;
	v = lp_db_meta(db, "cuda.conflicts", buf, sizeof(buf));
	c->missing_unknown =
	    v && (strstr(v, "callbacks") || strstr(v, "flush_timeout") || strstr(v, "stopped"));
	return 0;
}

/* ---- grouping: rows (k1, k2, k3, k4 int, bytes, value[, device]) ordered by
 * keys, value; the views carry the device (-1 unknown) as a fifth key */

struct group {
	char *k[3];
	int64_t k4, dev, bytes;
	int64_t sum[3]; /* extra per-row sums (stage view) */
	int64_t rows;	/* rows, including those with a NULL value (not in st) */
	struct lp_cuda_stat st;
};

struct groups {
	struct group *v;
	size_t n, cap;
	int64_t *vals;
	size_t nvals, capvals;
};

static int64_t q1(sqlite3 *db, const char *sql)
{
	return lp_db_int(db, sql, 0);
}

static void stat_of(const int64_t *v, size_t n, struct lp_cuda_stat *st)
{
	double sum = 0, sq = 0;
	memset(st, 0, sizeof(*st));
	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	st->n = (int64_t)n;
	st->total = (int64_t)sum;
	st->min = v[0];
	st->max = v[n - 1];
	st->med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	st->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += ((double)v[i] - st->mean) * ((double)v[i] - st->mean);
	st->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0; /* sample stddev, as nsys */
}

static int same_key(const char *a, const unsigned char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, (const char *)b));
}

struct load {
	struct groups *g;
	struct group *cur;
	int nsum;
	int dev; /* column 6 is the device; sums follow it */
};

static void group_close(struct load *l)
{
	struct group *cur = l->cur;
	if (cur)
		stat_of(l->g->vals + l->g->nvals - (size_t)cur->st.n, (size_t)cur->st.n, &cur->st);
}

static int group_row(sqlite3_stmt *st, void *ctx)
{
	struct load *l = ctx;
	struct groups *g = l->g;
	struct group *cur = l->cur;
	const unsigned char *k[3];
	for (int i = 0; i < 3; i++)
		k[i] = sqlite3_column_text(st, i);
	int64_t k4 = sqlite3_column_int64(st, 3);
	int64_t dev = l->dev ? sqlite3_column_int64(st, 6) : -1;
	if (!cur || !same_key(cur->k[0], k[0]) || !same_key(cur->k[1], k[1]) ||
	    !same_key(cur->k[2], k[2]) || cur->k4 != k4 || cur->dev != dev) {
		group_close(l);
		if (LP_GROW(g->v, g->n, g->cap))
			return -ENOMEM;
		cur = l->cur = &g->v[g->n++];
		memset(cur, 0, sizeof(*cur));
		for (int i = 0; i < 3; i++)
			cur->k[i] = k[i] ? strdup((const char *)k[i]) : NULL;
		cur->k4 = k4;
		cur->dev = dev;
	}
	cur->rows++;
	cur->bytes += sqlite3_column_int64(st, 4);
	for (int i = 0; i < l->nsum; i++)
		cur->sum[i] += sqlite3_column_int64(st, 6 + l->dev + i);
	if (sqlite3_column_type(st, 5) == SQLITE_NULL)
		return 0; /* counted, but no value for the statistics */
	if (LP_GROW(g->vals, g->nvals, g->capvals))
		return -ENOMEM;
	g->vals[g->nvals++] = sqlite3_column_int64(st, 5);
	cur->st.n++;
	return 0;
}

static int groups_load(sqlite3 *db, const char *sql, int nsum, int dev, struct groups *g, char *err,
		       size_t errlen)
{
	struct load l = {g, NULL, nsum, dev};
	memset(g, 0, sizeof(*g));
	int rc = lp_db_query(db, sql, NULL, 0, group_row, &l, err, errlen);
	if (rc == 0)
		group_close(&l);
	if (rc == -EIO)
		snprintf(err, errlen, "cannot read CUDA tables: %s", sqlite3_errmsg(db));
	else if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory reading CUDA tables");
	return rc;
}

static void groups_free(struct groups *g)
{
	for (size_t i = 0; i < g->n; i++)
		for (int k = 0; k < 3; k++)
			free(g->v[i].k[k]);
	free(g->v);
	free(g->vals);
	memset(g, 0, sizeof(*g));
}

static int by_total(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return x->st.total < y->st.total ? 1 : x->st.total > y->st.total ? -1 : 0;
}

/* ---- views ------------------------------------------------------------- */

/* Each view's query is a template: @1 is column 7, the device of the row's
 * work, @2 the same for a second part, @3 a WITH clause and @4 a join that
 * device needs. With one device they are "-1" and nothing (one row per name,
 * and no extra work on 10^5 calls); else kernels, copies and memsets carry
 * it; a sync runs on its context's device (the device of the context's GPU
 * work: nsys writes deviceId 0 for every sync, CUPTI none); an API call on
 * the device of the GPU work and syncs with its correlation id. -1 (shown
 * as "-"): none, or more than one device. */
#define LP_DEV_ONE "CASE WHEN min(device) = max(device) THEN min(device) END"
#define LP_CTX_DEV                                                                                 \
	"ctx AS (SELECT process_id, context, " LP_DEV_ONE " AS device FROM (SELECT process_id, "   \
	"context, device FROM kernels UNION ALL SELECT process_id, context, device FROM memcpys "  \
	"UNION ALL SELECT process_id, context, device FROM memsets) GROUP BY 1, 2)"
static const char sql_kernels[] =
    "SELECT coalesce(s.value, '?'), NULL, NULL, 0, 0, k.end_ns - k.start_ns, @1 "
    "FROM kernels k LEFT JOIN strings s ON s.id = k.name_id ORDER BY 1, 7, 6";
static const char sql_memcpy[] =
    "SELECT copy_kind, src_kind, dst_kind, async, bytes, end_ns - start_ns, @1 FROM memcpys "
    "ORDER BY 1, 2, 3, 4, 7, 6";
/* Host blocked: sync APIs, and the synchronous cudaMemcpy calls. */
static const char sql_sync[] =
    "@3 SELECT type, NULL, NULL, 0, 0, end_ns - start_ns, @1 FROM syncs y @4 UNION ALL "
    "SELECT 'synchronous memcpy', NULL, NULL, 0, m.bytes, a.end_ns - a.start_ns, @2 "
    "FROM memcpys m JOIN cuda_api a ON a.process_id = m.process_id AND a.domain = 'runtime' "
    "AND a.correlation_id = coalesce(m.runtime_correlation_id, m.correlation_id) "
    "WHERE m.async = 0 ORDER BY 1, 7, 6";
/* Runtime calls, and driver calls made directly (no runtime call around). */
static const char sql_api[] =
    "@3 SELECT coalesce(s.value, a.domain || ':' || a.cbid), NULL, NULL, 0, 0, "
    "a.end_ns - a.start_ns, @1 FROM cuda_api a LEFT JOIN strings s ON s.id = a.name_id @4 "
    "WHERE a.domain = 'runtime' OR NOT EXISTS (SELECT 1 FROM cuda_api r WHERE "
    "r.process_id = a.process_id AND r.correlation_id = a.correlation_id AND "
    "r.domain = 'runtime') ORDER BY 1, 7, 6";
/* @1..@4 of each view split by device */
static const char *const lp_by_dev[][4] = {
    {"k.device", "-1", "", ""},
    {"device", "-1", "", ""},
    {"coalesce(ctx.device, -1)", "m.device", "WITH " LP_CTX_DEV,
     "LEFT JOIN ctx ON ctx.process_id = y.process_id AND ctx.context = y.context"},
    {"coalesce(dev.device, -1)", "-1",
     "WITH " LP_CTX_DEV ", dev AS (SELECT process_id, corr, " LP_DEV_ONE " AS device FROM ("
     "SELECT process_id, correlation_id AS corr, device FROM kernels UNION ALL SELECT "
     "process_id, coalesce(runtime_correlation_id, correlation_id), device FROM memcpys UNION "
     "ALL SELECT process_id, correlation_id, device FROM memsets UNION ALL SELECT y.process_id, "
     "y.correlation_id, ctx.device FROM syncs y JOIN ctx ON ctx.process_id = y.process_id AND "
     "ctx.context = y.context) WHERE corr <> 0 GROUP BY 1, 2)",
     "LEFT JOIN dev ON dev.process_id = a.process_id AND dev.corr = a.correlation_id"},
};

/* The template with @1..@4 replaced by val[0..3] (malloc'd; NULL: no memory). */
static char *sql_fill(const char *tmpl, const char *const val[4])
{
	size_t len = strlen(tmpl) + 1;
	for (int i = 0; i < 4; i++)
		len += strlen(val[i]);
	char *out = malloc(len), *o = out;
	if (!out)
		return NULL;
	for (const char *t = tmpl; *t; t++) {
		if (t[0] == '@' && t[1] >= '1' && t[1] <= '4') {
			const char *v = val[t[1] - '1'];
			size_t n = strlen(v);
			memcpy(o, v, n);
			o += n;
			t++;
		} else {
			*o++ = *t;
		}
	}
	*o = 0;
	return out;
}

static int view_rows(struct lp_cuda_report *r, struct groups *g)
{
	if (g->n > 1) /* qsort(NULL, 0) is undefined */
		qsort(g->v, g->n, sizeof(*g->v), by_total);
	r->n = g->n;
	for (size_t i = 0; i < g->n; i++)
		r->total_ns += g->v[i].st.total;
	size_t sz = r->view == LP_CUDA_KERNELS	? sizeof(*r->rows.kern)
		    : r->view == LP_CUDA_MEMCPY ? sizeof(*r->rows.memcpy)
		    : r->view == LP_CUDA_SYNC	? sizeof(*r->rows.sync)
						: sizeof(*r->rows.api);
	void *rows = calloc(g->n ? g->n : 1, sz);
	if (!rows)
		return -ENOMEM;
	r->rows.kern = rows;
	for (size_t i = 0; i < g->n; i++) {
		struct group *x = &g->v[i];
		double share = r->total_ns ? (double)x->st.total / (double)r->total_ns : 0;
		switch (r->view) {
		case LP_CUDA_KERNELS:
			r->rows.kern[i] = (struct lp_cuda_kern_row){x->k[0], x->dev, x->st, share};
			break;
		case LP_CUDA_MEMCPY:
			r->rows.memcpy[i] = (struct lp_cuda_memcpy_row){
			    x->k[0], x->k[1],
			    x->k[2], (int)x->k4,
			    x->dev,  x->bytes,
			    x->st,   x->st.total ? (double)x->bytes / (double)x->st.total : 0,
			    share,
			};
			x->k[1] = x->k[2] = NULL;
			break;
		case LP_CUDA_SYNC:
			r->rows.sync[i] = (struct lp_cuda_sync_row){
			    x->k[0], x->dev, x->st,
			    r->wall_ns ? (double)x->st.total / (double)r->wall_ns : 0};
			break;
		case LP_CUDA_API:
			r->rows.api[i] = (struct lp_cuda_api_row){x->k[0], x->dev, x->st, share};
			break;
		}
		x->k[0] = NULL; /* moved */
	}
	return 0;
}

/* Launch delay of kernels: a synchronous copy starts inside its call, so
 * "API end -> GPU start" only means something for launched work. One per
 * launch: every kernel node of a CUDA graph carries the cudaGraphLaunch's
 * correlation id, and only the first node waited for the launch; the
 * others waited for the nodes before them. */
static int kernel_delay(sqlite3 *db, struct lp_cuda_report *r, char *err, size_t errlen)
{
	struct groups g;
	int rc = groups_load(db,
			     "SELECT NULL, NULL, NULL, 0, 0, min(start_ns) - api_end_ns FROM "
			     "gpu_launches WHERE op = 'kernel' GROUP BY process_id, correlation_id "
			     "ORDER BY 6",
			     0, 0, &g, err, errlen);
	if (rc == 0 && g.n)
		r->launch_delay = g.v[0].st;
	groups_free(&g);
	if (rc == 0) {
		r->graph_launches = q1(db, "SELECT count(DISTINCT process_id || ':' || "
					   "correlation_id) FROM kernels WHERE graph_id <> 0");
		r->graph_kernels = q1(db, "SELECT count(*) FROM kernels WHERE graph_id <> 0");
	}
	return rc;
}

struct idle {
	struct lp_cuda_report *r;
	const struct lp_ivset *busy;
};

static int idle_row(sqlite3_stmt *st, void *ctx)
{
	struct idle *x = ctx;
	int64_t p = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1),
		e = sqlite3_column_int64(st, 2);
	x->r->requests++;
	x->r->request_ns += e - s;
	x->r->gpu_idle_ns += (e - s) - lp_ivset_overlap(x->busy, p, s, e);
	return 0;
}

/* GPU idle inside requests: outermost ranges whose thread launched GPU
 * work; busy = union of every GPU op of the process (any device/stream). */
static int gpu_idle(sqlite3 *db, struct lp_cuda_report *r, char *err, size_t errlen)
{
	struct lp_ivset busy;
	/* Without API calls no range qualifies: skip the scan of every range. */
	if (!lp_db_has_table(db, "ranges") || !lp_db_has_table(db, "cuda_api") ||
	    !lp_db_int(db, "SELECT EXISTS (SELECT 1 FROM cuda_api)", 0))
		return 0;
	int rc = lp_ivset_from_sql(db, "SELECT process_id, start_ns, end_ns FROM gpu_ops", NULL, 0,
				   &busy, err, errlen);
	struct idle x = {r, &busy};
	if (rc == 0)
		rc = lp_db_query(db,
				 "SELECT r.process_id, r.start_ns, r.end_ns FROM ranges r WHERE "
				 "r.depth = 0 AND r.parent_id IS NULL AND EXISTS (SELECT 1 FROM "
				 "cuda_api a WHERE a.thread_id = r.start_thread_id AND a.start_ns "
				 ">= r.start_ns AND a.start_ns < r.end_ns)",
				 NULL, 0, idle_row, &x, err, errlen);
	lp_ivset_free(&busy);
	return rc;
}

/* GPU work per launching stage (innermost range on the thread at launch:
 * the launch delay once per launch, from its first GPU op, as above;
 * of the ranges open then, the one that started last, which lets SQLite walk
 * ranges_start backwards and stop at the first hit instead of sorting every
 * range that started before the launch by depth). */
static const char sql_stages[] =
    "WITH l AS (SELECT g.op, g.end_ns - g.start_ns AS dur, CASE row_number() OVER (PARTITION "
    "BY g.process_id, g.correlation_id, g.op ORDER BY g.start_ns) WHEN 1 THEN "
    "g.launch_delay_ns END AS delay, "
    "(SELECT r.name_id FROM ranges r WHERE r.process_id = g.process_id AND "
    "r.start_thread_id = g.thread_id AND r.start_ns <= g.api_start_ns AND r.end_ns > "
    "g.api_start_ns ORDER BY r.start_ns DESC, r.depth DESC LIMIT 1) AS rid "
    "FROM gpu_launches g) "
    "SELECT coalesce(s.value, '(no range)'), NULL, NULL, 0, 0, "
    "CASE l.op WHEN 'kernel' THEN l.delay END, "
    "CASE l.op WHEN 'kernel' THEN l.dur ELSE 0 END, CASE l.op WHEN 'memcpy' THEN l.dur ELSE 0 "
    "END, CASE l.op WHEN 'memset' THEN l.dur ELSE 0 END FROM l LEFT JOIN strings s ON s.id = "
    "l.rid ORDER BY 1, 6";

static int stage_rows(sqlite3 *db, struct lp_cuda_report *r, char *err, size_t errlen)
{
	struct groups g;
	if (!lp_db_has_table(db, "ranges"))
		return 0;
	int rc = groups_load(db, sql_stages, 3, 0, &g, err, errlen);
	if (rc == 0 && g.n) {
		r->stages = calloc(g.n, sizeof(*r->stages));
		if (!r->stages)
			rc = -ENOMEM;
		for (size_t i = 0; rc == 0 && i < g.n; i++) {
			struct lp_cuda_stage_row *s = &r->stages[i];
			s->stage = g.v[i].k[0];
			g.v[i].k[0] = NULL;
			s->launches = g.v[i].rows;
			s->launch_delay = g.v[i].st;
			s->kernel_ns = g.v[i].sum[0];
			s->memcpy_ns = g.v[i].sum[1];
			s->memset_ns = g.v[i].sum[2];
		}
		r->nstages = rc == 0 ? g.n : 0;
	}
	groups_free(&g);
	return rc;
}

int lp_cuda_analyze(sqlite3 *db, enum lp_cuda_view view, struct lp_cuda_report *r, char *err,
		    size_t errlen)
{
	static const char *const sql[] = {sql_kernels, sql_memcpy, sql_sync, sql_api};
	struct groups g;
	memset(r, 0, sizeof(*r));
	r->view = view;
	lp_cuda_capture_read(db, &r->cap);
	if (!lp_db_has_table(db, "kernels"))
		return 0; /* a database from a build without CUDA support */
	r->wall_ns = q1(db, "SELECT sum(coalesce(end_ns, start_ns) - start_ns) FROM processes "
			    "WHERE id IN (SELECT process_id FROM cuda_capture WHERE started)");
	r->devices = q1(db, "SELECT count(DISTINCT device) FROM gpu_ops");
	static const char *const one_dev[4] = {"-1", "-1", "", ""};
	char *q = sql_fill(sql[view], r->devices > 1 ? lp_by_dev[view] : one_dev);
	if (!q)
		return -ENOMEM;
	int rc = groups_load(db, q, 0, 1, &g, err, errlen);
	free(q);
	if (rc == 0)
		rc = view_rows(r, &g);
	groups_free(&g);
	if (rc == 0 && (view == LP_CUDA_KERNELS || view == LP_CUDA_SYNC))
		rc = kernel_delay(db, r, err, errlen);
	if (rc == 0 && (view == LP_CUDA_KERNELS || view == LP_CUDA_SYNC))
		rc = gpu_idle(db, r, err, errlen);
	if (rc == 0 && view == LP_CUDA_KERNELS)
		rc = stage_rows(db, r, err, errlen);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory in the CUDA analysis");
	else if (rc && !err[0])
		snprintf(err, errlen, "cannot read CUDA tables: %s", sqlite3_errmsg(db));
	return rc;
}

void lp_cuda_report_free(struct lp_cuda_report *r)
{
	for (size_t i = 0; r->rows.kern && i < r->n; i++) {
		switch (r->view) {
		case LP_CUDA_KERNELS:
			free(r->rows.kern[i].name);
			break;
		case LP_CUDA_MEMCPY:
			free(r->rows.memcpy[i].copy_kind);
			free(r->rows.memcpy[i].src_kind);
			free(r->rows.memcpy[i].dst_kind);
			break;
		case LP_CUDA_SYNC:
			free(r->rows.sync[i].type);
			break;
		case LP_CUDA_API:
			free(r->rows.api[i].name);
			break;
		}
	}
	free(r->rows.kern);
	for (size_t i = 0; i < r->nstages; i++)
		free(r->stages[i].stage);
	free(r->stages);
	memset(r, 0, sizeof(*r));
}

/* ---- breakdown categories (analysis/lp_breakdown.c lists them) ------------ */

static int api_intervals(sqlite3 *db, const char *sql, struct lp_ivec *out, char *err,
			 size_t errlen)
{
	if (!lp_db_has_table(db, "cuda_api"))
		return -ENOENT;
	int rc = lp_ivec_from_sql(db, sql, NULL, 0, out, err, errlen);
	if (rc == -EIO)
		snprintf(err, errlen, "cannot read CUDA tables: %s", sqlite3_errmsg(db));
	return rc;
}

/* Host blocked: the API call of a synchronization (cudaDeviceSynchronize,
 * stream/event sync) or of a synchronous copy, on the calling thread. */
int lp_cuda_load_sync_wait(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return api_intervals(
	    db,
	    "SELECT a.thread_id, a.start_ns, a.end_ns FROM cuda_api a WHERE "
	    "a.domain = 'runtime' AND (EXISTS (SELECT 1 FROM syncs y WHERE "
	    "y.process_id = a.process_id AND y.correlation_id = a.correlation_id) OR "
	    "EXISTS (SELECT 1 FROM memcpys m WHERE m.process_id = a.process_id AND "
	    "m.async = 0 AND a.correlation_id = coalesce(m.runtime_correlation_id, "
	    "m.correlation_id)))",
	    out, err, errlen);
}

/* Every other runtime call (after sync wait, which takes precedence). */
int lp_cuda_load_api(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return api_intervals(db,
			     "SELECT thread_id, start_ns, end_ns FROM cuda_api WHERE domain = "
			     "'runtime'",
			     out, err, errlen);
}

/* GPU execution of work this thread launched, on this thread's timeline:
 * time in a stage when the host did neither of the above while its
 * kernels (copies) ran. */
int lp_cuda_load_gpu_kernel(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return api_intervals(db,
			     "SELECT thread_id, start_ns, end_ns FROM gpu_launches WHERE op = "
			     "'kernel'",
			     out, err, errlen);
}

int lp_cuda_load_gpu_memcpy(sqlite3 *db, struct lp_ivec *out, char *err, size_t errlen)
{
	return api_intervals(db,
			     "SELECT thread_id, start_ns, end_ns FROM gpu_launches WHERE op IN "
			     "('memcpy', 'memset')",
			     out, err, errlen);
}
