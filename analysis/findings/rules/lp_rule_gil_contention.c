/* SPDX-License-Identifier: MIT */
/*
 * Rule "gil-contention": Python threads queue on the GIL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_locks.h"
#include "lp_util.h"
#include "lp_waits.h"

#define LP_GIL_WAITS                                                                               \
	"SELECT thread_id, start_ns, start_ns + dur_ns, flags FROM lock_waits WHERE class = 1 "    \
	"UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, flags FROM cond_waits "          \
	"WHERE class = 1"
/* The same waits with the end of their blocked part: the run-queue time
 * after the wake-up (runq_ns, from schedstat) is the breakdown's preempted,
 * counted there. */
#define LP_GIL_WAITS_BLOCKED                                                                       \
	"SELECT thread_id, start_ns, start_ns + dur_ns, flags, start_ns + dur_ns - "               \
	"coalesce(runq_ns, 0) FROM lock_waits WHERE class = 1 UNION ALL SELECT thread_id, "        \
	"start_ns, start_ns + dur_ns, flags, start_ns + dur_ns - coalesce(runq_ns, 0) FROM "       \
	"cond_waits WHERE class = 1"

struct gil_acc {
	struct lp_findings_ctx *c;
	int64_t in_ns, blocked_ns, waits, timed_out;
	int64_t *threads; /* distinct thread ids that waited inside requests */
	size_t nthreads, cap;
};

static int gil_row(sqlite3_stmt *st, void *ctx)
{
	struct gil_acc *a = ctx;
	int64_t th = sqlite3_column_int64(st, 0);
	int64_t in =
	    lp_findings_attr(a->c, th, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
	if (in <= 0)
		return 0;
	int64_t s = sqlite3_column_int64(st, 1), eb = sqlite3_column_int64(st, 4);
	a->blocked_ns +=
	    a->c->has_req ? lp_ivset_overlap(&a->c->reqset, th, s, eb) : (eb > s ? eb - s : 0);
	a->in_ns += in;
	a->waits++;
	a->timed_out += (sqlite3_column_int64(st, 3) & 1) != 0;
	for (size_t i = 0; i < a->nthreads; i++)
		if (a->threads[i] == th)
			return 0;
	if (a->nthreads == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 8;
		int64_t *v = realloc(a->threads, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		a->threads = v;
		a->cap = cap;
	}
	a->threads[a->nthreads++] = th;
	return 0;
}

static int gil_stage_row(sqlite3_stmt *st, void *ctx)
{
	lp_findings_site(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
			 sqlite3_column_int64(st, 2));
	return 0;
}

/* GIL wait per stage of the requests (the stages are the sites). */
static int gil_stages(struct lp_findings_ctx *c, struct lp_finding *f)
{
	/* The request's stages with an index on (thread, start); each GIL wait
	 * goes to the stage that began last at or before it on its thread. */
	int rc = lp_db_exec(c->db,
			    "CREATE TEMP TABLE IF NOT EXISTS lp_gil_st(th, s, e, name);"
			    "CREATE INDEX IF NOT EXISTS temp.lp_gil_st_at ON lp_gil_st(th, s);"
			    "DELETE FROM temp.lp_gil_st;",
			    c->err, c->errlen);
	sqlite3_stmt *st;
	if (rc || (rc = lp_findings_prep(
		       c,
		       "INSERT INTO temp.lp_gil_st SELECT st.start_thread_id, st.start_ns, "
		       "st.end_ns, st.name FROM ranges_named st JOIN ranges_named p ON "
		       "p.id = st.parent_id AND p.name = ?1 AND coalesce(p.domain, '') = ?2",
		       &st)))
		return rc;
	sqlite3_bind_text(st, 1, c->bd->req_name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->bd->req_domain ? c->bd->req_domain : "", -1, SQLITE_STATIC);
	rc = lp_db_step_all(st, NULL, NULL, c->err, c->errlen);
	sqlite3_finalize(st);
	return rc ? rc
		  : lp_db_each(
			c->db,
			"WITH g(th, s, e, fl) AS (" LP_GIL_WAITS
			"), m AS (SELECT g.s AS s, g.e AS e, "
			"(SELECT x.rowid FROM temp.lp_gil_st x WHERE x.th = g.th AND x.s <= g.s "
			"ORDER "
			"BY x.s DESC LIMIT 1) AS sid FROM g) SELECT x.name, count(*), sum(min(m.e, "
			"x.e) - m.s) FROM m JOIN temp.lp_gil_st x ON x.rowid = m.sid AND x.e > m.s "
			"GROUP BY x.name ORDER BY 3 DESC LIMIT 5",
			NULL, 0, gil_stage_row, f, c->err, c->errlen);
}

/* The Python functions the GIL's holders ran when GIL waits began
 * (py_waits.holder_frame_id, docs/python.md), by wait time. */
struct gil_holders {
	char text[600];
	size_t len;
	int64_t total_ns, top_ns;
	struct lp_finding *f; /* sites go here when the stages are not the sites */
};

static int gil_holder_row(sqlite3_stmt *st, void *ctx)
{
	struct gil_holders *h = ctx;
	const char *fn = (const char *)sqlite3_column_text(st, 0);
	const char *file = (const char *)sqlite3_column_text(st, 1);
	const char *base = file && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	int64_t ns = sqlite3_column_int64(st, 2);
	if (!h->top_ns)
		h->top_ns = ns;
	double pct = h->total_ns > 0 ? 100.0 * (double)ns / (double)h->total_ns : 0;
	int n = snprintf(h->text + h->len, sizeof(h->text) - h->len, "%s%s in %s (%.0f%%)",
			 h->len ? ", " : "", fn ? fn : "?", base ? base : "?", pct);
	if (n > 0 && (size_t)n < sizeof(h->text) - h->len)
		h->len += (size_t)n;
	if (h->f) {
		char *what = lp_findings_fmt("%s in %s", fn ? fn : "?", base ? base : "?");
		lp_findings_site(h->f, what, sqlite3_column_int64(st, 3), ns);
		free(what);
	}
	return 0;
}

static int gil_holders(struct lp_findings_ctx *c, struct gil_holders *h)
{
	if (!lp_db_has_table(c->db, "py_waits"))
		return 0;
	h->total_ns =
	    lp_db_int(c->db,
		      "SELECT (SELECT coalesce(sum(dur_ns), 0) FROM lock_waits WHERE class = "
		      "1) + (SELECT coalesce(sum(dur_ns), 0) FROM cond_waits WHERE class = 1)",
		      0);
	return lp_db_each(
	    c->db,
	    "WITH g(th, s, d) AS (SELECT thread_id, start_ns, dur_ns FROM lock_waits "
	    "WHERE class = 1 UNION ALL SELECT thread_id, start_ns, dur_ns FROM "
	    "cond_waits WHERE class = 1) SELECT f.function, f.file, sum(g.d), count(*) "
	    "FROM g JOIN py_waits pw ON pw.thread_id = g.th AND pw.start_ns = g.s "
	    "JOIN py_frames f ON f.id = pw.holder_frame_id GROUP BY 1, 2 "
	    "ORDER BY 3 DESC, 1 LIMIT 3",
	    NULL, 0, gil_holder_row, h, c->err, c->errlen);
}

/* The GIL: CPython threads waiting in take_gil (wait class gil) inside
 * requests. Sites are the request's stages the waits fell in, else the
 * Python functions the GIL's holders ran. */
static int rule_gil(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	int64_t scope = c->has_req ? c->req_ns : c->thread_ns;
	struct gil_acc a = {.c = c};
	lp_findings_stake_reset(c);
	/* most runs have no GIL: no scan of every wait to find none */
	int rc = lp_locks_group(c->db, c->err, c->errlen);
	if (!rc &&
	    lp_db_int(c->db,
		      "SELECT EXISTS (SELECT 1 FROM temp.lp_wagg WHERE src = 0 AND class = 1) "
		      "OR EXISTS (SELECT 1 FROM cond_waits WHERE class = 1)",
		      1))
		rc = lp_db_each(c->db, LP_GIL_WAITS_BLOCKED, NULL, 0, gil_row, &a, c->err,
				c->errlen);
	if (rc) {
		free(a.threads);
		return rc;
	}
	free(a.threads);
	double share = lp_findings_share(a.in_ns, scope);
	if (!lp_findings_judge(c, share))
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, share);
	if (!f)
		return -ENOMEM;
	f->subject = strdup("the GIL");
	lp_findings_num(f, "wait_ns", c->has_req ? "GIL wait inside requests" : "GIL wait", "ns",
			(double)a.in_ns);
	lp_findings_num(f, "share", c->has_req ? "of request time" : "of thread time", "share",
			share);
	lp_findings_num(f, "waits", "GIL waits", "count", (double)a.waits);
	lp_findings_num(f, "waiting_threads", "threads waiting", "count", (double)a.nthreads);
	/* take_gil's wait times out after the switch interval and then asks the
	 * holder to drop the GIL: each timeout is a forced switch. */
	lp_findings_num(f, "switch_requests", "forced switches (switch interval ran out)", "count",
			(double)a.timed_out);
	if (c->has_req) {
		lp_findings_num(f, "wait_per_request_ns", "GIL wait per request", "ns",
				(double)a.in_ns / (double)c->nreq);
		f->site_kind = "stages";
		int rs = gil_stages(c, f);
		if (rs)
			return rs;
	}
	struct gil_holders h = {.f = c->has_req ? NULL : f};
	if (!c->has_req)
		f->site_kind = "GIL holders' functions";
	if ((rc = gil_holders(c, &h)))
		return rc;
	if (h.top_ns && h.total_ns > 0)
		lp_findings_num(f, "holder_top_share",
				"of GIL wait behind the holders' top function", "share",
				(double)h.top_ns / (double)h.total_ns);
	f->summary = lp_findings_fmt(
	    "%s threads waited %.1f%% of %s for the GIL (%lld threads, %lld waits)%s%s",
	    c->has_req ? "request" : "the run's", 100 * share,
	    c->has_req ? "request time" : "their time", (long long)a.nthreads, (long long)a.waits,
	    h.len ? "; the GIL's holders ran " : "", h.text);
	lp_findings_category(f, "gil_wait");
	/* saving: the blocked part; waiting for a CPU once woken is preempted */
	lp_findings_saving(f, a.blocked_ns, a.in_ns,
			   c->has_req ? "GIL wait inside requests" : "GIL wait");
	lp_findings_example(c, f);
	return 1;
}

const struct lp_rule lp_rule_gil_contention = {
    .id = "gil-contention",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.05,
    .needs = LP_NEED_TIME,
    .title = "Python threads queue on the GIL",
    .measures = "GIL wait (CPython take_gil) inside requests / request time (thread time without "
		"requests)",
    .fix = "Move the CPU work to code that releases the GIL (NumPy, a C extension, onnxruntime), "
	   "serve with processes or several server workers instead of threads, or use a "
	   "free-threaded CPython build (3.13t).",
    .eval = rule_gil,
};
