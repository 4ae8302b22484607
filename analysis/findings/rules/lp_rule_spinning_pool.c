/* SPDX-License-Identifier: MIT */
/*
 * Rule "spinning-pool": A thread pool spins beside the work.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_util.h"
#include "lp_waits.h"

struct spin_acc {
	int64_t req_cpu, req_threads; /* request threads' task-clock in the window */
	int64_t top_thread, top_tid, top_cpu, pool_cpu, pool_threads;
	char *top_name;
};

/* A thread on a CPU less than this share of the window does not spin: a
 * helper that wakes for its work now and then (an OpenBLAS thread, a
 * timer) is no pool burning cores. */
#define LP_SPIN_BUSY 0.1

static int spin_row(sqlite3_stmt *st, void *ctx)
{
	struct spin_acc *a = ctx;
	int64_t cpu = sqlite3_column_int64(st, 3), win = sqlite3_column_int64(st, 5);
	if (sqlite3_column_int(st, 2)) { /* serves requests */
		a->req_cpu += cpu;
		a->req_threads++;
		return 0;
	}
	a->pool_cpu += cpu;
	a->pool_threads++;
	if ((double)cpu >= LP_SPIN_BUSY * (double)win && cpu > a->top_cpu) {
		free(a->top_name);
		a->top_name = lp_db_col_strdup(st, 4);
		a->top_thread = sqlite3_column_int64(st, 0);
		a->top_tid = sqlite3_column_int64(st, 1);
		a->top_cpu = cpu;
	}
	return 0;
}

/* Each thread's life and task-clock. */
#define LP_SPIN_LIFE                                                                               \
	"life AS (SELECT t.id, t.tid, t.name, t.process_id AS proc, p.pid, "                       \
	"coalesce(t.start_ns, p.start_ns) AS s, coalesce(t.end_ns, tc.end_ns, p.end_ns) AS e, "    \
	"tc.value AS cpu FROM threads t JOIN processes p ON p.id = t.process_id "                  \
	"JOIN thread_counters tc ON tc.thread_id = t.id JOIN counter_events ev ON ev.id = "        \
	"tc.event_id AND ev.name = 'task-clock') "
/* With requests: the threads that run them, and per process the window
 * where requests were in flight. */
#define LP_SPIN_REQ                                                                                \
	"WITH req AS (SELECT r.start_thread_id AS th, r.process_id AS proc FROM ranges_named r "   \
	"WHERE r.name = ?1 AND coalesce(r.domain, '') = ?2), win AS (SELECT r.process_id AS "      \
	"proc, min(r.start_ns) AS s, max(r.end_ns) AS e FROM ranges_named r WHERE r.name = ?1 "    \
	"AND coalesce(r.domain, '') = ?2 GROUP BY 1), " LP_SPIN_LIFE
/* Without: the threads that wait for work in poll/epoll/select (a server's
 * event loops, the main thread too), over the life of their process. */
#define LP_SPIN_POLL                                                                               \
	"WITH " LP_SPIN_LIFE ", req AS (SELECT DISTINCT b.thread_id AS th, t.process_id AS proc "  \
	"FROM blocking_calls b JOIN threads t ON t.id = b.thread_id WHERE b.category = "           \
	"'poll_wait' AND ?1 IS ?1 AND ?2 IS ?2), win AS (SELECT proc, min(s) AS s, max(e) AS e "   \
	"FROM life WHERE proc IN (SELECT proc FROM req) GROUP BY proc) "
/* Per thread: id, tid, serves, task-clock inside the window (prorated to
 * the part of its life there), name, that part's length. */
#define LP_SPIN_ROWS                                                                               \
	"SELECT l.id, l.tid, l.id IN (SELECT th FROM req), CAST(l.cpu * max(0, min(l.e, w.e) - "   \
	"max(l.s, w.s)) / max(1.0, l.e - l.s) AS INTEGER), l.name, max(0, min(l.e, w.e) - "        \
	"max(l.s, w.s)) FROM life l JOIN win w ON w.proc = l.proc WHERE l.tid != l.pid OR l.id "   \
	"IN (SELECT th FROM req)"

/*
 * A thread pool that spins: threads of a serving process that are on a CPU
 * a good part of the time (LP_SPIN_BUSY) without serving, against that
 * process's serving threads. With requests, the serving threads are those
 * that run requests and the main thread (it sets the server up) is left
 * out; without, they are the threads that wait for work in poll (the event
 * loops: Redis's main thread beside its io-threads). A thread's task-clock
 * counts in proportion to the part of its life inside the window (its
 * totals are per thread, not per request).
 */
static int rule_spin(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	sqlite3_stmt *st;
	if (!c->has_req && !lp_db_has_table(c->db, "blocking_calls"))
		return lp_findings_skip(c,
					"no NVTX request ranges and no blocking calls recorded: no "
					"threads known to serve");
	int rc = lp_findings_prep(
	    c, c->has_req ? LP_SPIN_REQ LP_SPIN_ROWS : LP_SPIN_POLL LP_SPIN_ROWS, &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, c->bd->req_name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->bd->req_domain ? c->bd->req_domain : "", -1, SQLITE_STATIC);
	struct spin_acc a = {0};
	rc = lp_db_step_all(st, spin_row, &a, c->err, c->errlen);
	sqlite3_finalize(st);
	if (rc || !a.req_threads) {
		free(a.top_name);
		return rc ? rc
			  : lp_findings_skip(
				c, c->has_req ? "task-clock was not counted on the request threads"
					      : "no NVTX request ranges, and no thread waited for "
						"work in poll: no threads known to serve");
	}
	double per_req_thread = (double)a.req_cpu / (double)a.req_threads;
	double value = per_req_thread > 0 ? (double)a.top_cpu / per_req_thread : 0;
	if (!lp_findings_judge(c, value) || a.top_cpu <= 0) {
		free(a.top_name);
		return 0;
	}
	struct lp_finding *f = lp_findings_new(c, r, value);
	if (!f) {
		free(a.top_name);
		return -ENOMEM;
	}
	/* the library the pool thread waits in: its most frequent top frame */
	char *lib = NULL;
	sqlite3_stmt *ls;
	if (lp_findings_prep(
		c,
		"SELECT f.module, count(*) FROM (SELECT stack_id FROM cond_waits WHERE "
		"thread_id = ?1 UNION ALL SELECT stack_id FROM lock_waits WHERE thread_id = "
		"?1) w JOIN stacks s ON s.id = w.stack_id JOIN frames f ON f.id = s.top_frame "
		"WHERE f.module IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
		&ls) == 0) {
		sqlite3_bind_int64(ls, 1, a.top_thread);
		if (lp_db_step_row(ls))
			lib = lp_db_col_strdup(ls, 0);
		sqlite3_finalize(ls);
	}
	const char *base = lib && strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	f->subject = lp_findings_fmt("thread %lld%s%s%s%s%s", (long long)a.top_tid,
				     a.top_name ? " (" : "", a.top_name ? a.top_name : "",
				     a.top_name ? ")" : "", base ? " in " : "", base ? base : "");
	/* the keys stay; without requests the serving threads are the pollers */
	int q = c->has_req;
	lp_findings_num(f, "pool_thread_cpu_ns",
			q ? "busiest non-request thread's CPU while serving"
			  : "busiest thread's CPU that serves no poll",
			"ns", (double)a.top_cpu);
	lp_findings_num(f, "request_thread_cpu_ns",
			q ? "mean request thread's CPU while serving" : "mean serving thread's CPU",
			"ns", per_req_thread);
	lp_findings_num(f, "pool_threads", q ? "non-request threads" : "threads that serve no poll",
			"count", (double)a.pool_threads);
	lp_findings_num(f, "request_threads",
			q ? "request threads" : "serving threads (waiting in poll)", "count",
			(double)a.req_threads);
	double all = (double)(a.pool_cpu + a.req_cpu);
	lp_findings_num(f, "pool_cpu_share",
			q ? "non-request threads' share of the process CPU"
			  : "the other threads' share of the process CPU",
			"share", all > 0 ? (double)a.pool_cpu / all : 0);
	if (lib)
		lp_findings_site(f, lib, 0, 0);
	f->site_kind = "library";
	f->summary =
	    lp_findings_fmt(c->has_req ? "a thread that serves no request burned %.1fx the "
					 "CPU of a request thread while requests were in flight%s%s"
				       : "a thread that waits for no work in poll burned %.1fx the "
					 "CPU of the threads that serve (they wait in poll)%s%s",
			    value, base ? ", waiting in " : "", base ? base : "");
	/* what it takes from the cores the requests run on: all of it, as
	 * turning the pool off shows (onnxruntime: p99 16 -> 7 ms) */
	lp_findings_category(f, "preempted");
	lp_findings_saving(f, a.top_cpu, a.top_cpu,
			   c->has_req ? "the thread's CPU while requests were in flight"
				      : "the thread's CPU while the process served");
	free(lib);
	free(a.top_name);
	return 1;
}

const struct lp_rule lp_rule_spinning_pool = {
    .id = "spinning-pool",
    .unit = "ratio",
    .cmp = LP_CMP_GE,
    .threshold = 0.5,
    .needs = LP_NEED_THREAD_CPU,
    .title = "A thread pool spins beside the requests",
    .measures =
	"CPU of the busiest thread of the serving process that runs no request, while requests "
	"are in flight / CPU of a request thread (task-clock)",
    .fix = "Size the intra-op pool to the cores left to it (onnxruntime intra_op_num_threads, "
	   "OMP_NUM_THREADS, torch.set_num_threads) and disable spinning (onnxruntime "
	   "session.intra_op.allow_spinning=0, OMP_WAIT_POLICY=passive).",
    .eval = rule_spin,
    .title_whole_run = "A thread pool spins beside the serving threads",
};
