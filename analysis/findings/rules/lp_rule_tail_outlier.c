/* SPDX-License-Identifier: MIT */
/*
 * Rule "tail-outlier": The p99 tail, and every part of the tail stage's growth.
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

/* ---- tail causes: every part of the tail stage's growth ---------------
 * The breakdown names the one category that grows most; a tail often has
 * several (a locked path: the holder's CPU and the others' lock wait). Per
 * wait class (lock, GIL, condition) and blocking-call category (sleep, file
 * and socket I/O, poll, other), the mean wait inside the tail stage of tail
 * requests (>= p99) against median ones (p40..p60); CPU is the rest, and with
 * task-clock the off-CPU part of it net of the recorded waits. */

#define LP_TAIL_NBLOCK 5 /* blocking_calls.category: sleep .. other_block */
#define LP_TAIL_NWAIT (LP_WAIT_NCLASSES + LP_TAIL_NBLOCK)
_Static_assert(LP_WAIT_NCLASSES == 6 && LP_WAIT_JOIN == 3 && LP_WAIT_SYNC == 5,
	       "LP_TAIL_WAITS_SQL numbers join 3, sync 5, blocking calls from 6");
#define LP_TAIL_NCAUSE (LP_TAIL_NWAIT + 2) /* the waits, on CPU, descheduled */

struct tail_cause {
	double growth_ns; /* per tail request */
	int64_t lock;	  /* the lock (contention) that grew most, 0 none */
	double lock_growth_ns;
};

struct tail_acc {
	double ntail, nmid;
	double ns[2][LP_TAIL_NWAIT];
	struct tail_cause cause[LP_TAIL_NCAUSE];
};

static int tail_row(sqlite3_stmt *st, void *ctx)
{
	struct tail_acc *a = ctx;
	int grp = sqlite3_column_int(st, 0), cls = sqlite3_column_int(st, 1);
	if (grp < 0 || grp > 1 || cls < 0 || cls >= LP_TAIL_NWAIT)
		return 0;
	double ns = sqlite3_column_double(st, 3);
	a->ns[grp][cls] += ns;
	return 0;
}

static int tail_lock_row(sqlite3_stmt *st, void *ctx)
{
	struct tail_acc *a = ctx;
	double g = sqlite3_column_double(st, 1) / a->ntail - sqlite3_column_double(st, 2) / a->nmid;
	struct tail_cause *k = &a->cause[LP_WAIT_CONTENTION];
	if (g > k->lock_growth_ns) {
		k->lock_growth_ns = g;
		k->lock = sqlite3_column_int64(st, 0);
	}
	return 0;
}

/* Each wait against the stage interval on its thread that began last at or
 * before it (an index lookup per wait: no scan of waits per interval); a
 * wait that began before its stage is left out. A pthread_join is class
 * join, and the runtime call of a host sync with the GPU (the syncs the
 * --locks classes count) class sync, as in lp_locks.c's class totals; a
 * database without the CUDA tables leaves LP_TAIL_SYNC_SQL out. */
#define LP_TAIL_WAITS_SQL                                                                          \
	"WITH w(th, s, e, cls, lk) AS (SELECT thread_id, start_ns, start_ns + dur_ns, class, "     \
	"lock_id FROM lock_waits UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, class, " \
	"mutex_lock_id FROM cond_waits UNION ALL SELECT thread_id, start_ns, start_ns + dur_ns, "  \
	"CASE WHEN call = 'pthread_join' THEN 3 ELSE 6 + CASE category WHEN 'sleep' THEN 0 "       \
	"WHEN 'file_io' THEN 1 WHEN 'socket_io' THEN 2 WHEN 'poll_wait' THEN 3 ELSE 4 END END, "   \
	"NULL FROM blocking_calls%s), "                                                            \
	"m AS (SELECT w.*, (SELECT iv.rowid FROM temp.lp_tail_iv "                                 \
	"iv WHERE iv.th = w.th AND iv.s <= w.s ORDER BY iv.s DESC LIMIT 1) AS ivid FROM w), "      \
	"x AS (SELECT iv.grp AS grp, m.cls AS cls, m.lk AS lk, min(m.e, iv.e) - m.s AS ns FROM m " \
	"JOIN temp.lp_tail_iv iv ON iv.rowid = m.ivid AND iv.e > m.s) %s"
#define LP_TAIL_SYNC_SQL                                                                           \
	" UNION ALL SELECT a.thread_id, a.start_ns, a.end_ns, 5, NULL FROM syncs y JOIN cuda_api " \
	"a ON a.process_id = y.process_id AND a.correlation_id = y.correlation_id AND a.domain = " \
	"'runtime' WHERE y.correlation_id != 0 AND y.type != 'stream_wait_event'"

static int tail_waits(struct lp_findings_ctx *c, const char *stage, const char *domain,
		      struct tail_acc *a)
{
	const struct lp_breakdown *b = c->bd;
	int rc = lp_db_exec(c->db,
			    "CREATE TEMP TABLE IF NOT EXISTS lp_tail_req(id INTEGER, grp INTEGER);"
			    "CREATE TEMP TABLE IF NOT EXISTS lp_tail_iv(grp, th, s, e);"
			    "CREATE INDEX IF NOT EXISTS temp.lp_tail_iv_at ON lp_tail_iv(th, s);"
			    "DELETE FROM temp.lp_tail_req; DELETE FROM temp.lp_tail_iv;",
			    c->err, c->errlen);
	sqlite3_stmt *st;
	if (rc || (rc = lp_findings_prep(c, "INSERT INTO temp.lp_tail_req VALUES (?, ?)", &st)))
		return rc;
	for (size_t i = 0; i < c->nreq; i++) {
		int64_t d = c->req[i].end - c->req[i].start;
		int grp = d >= b->req.p99 ? 0 : d >= b->tail.p40_ns && d <= b->tail.p60_ns ? 1 : -1;
		if (grp < 0)
			continue;
		a->ntail += grp == 0;
		a->nmid += grp == 1;
		sqlite3_bind_int64(st, 1, c->req[i].id);
		sqlite3_bind_int(st, 2, grp);
		if (!rc)
			rc = lp_db_step_all(st, NULL, NULL, c->err, c->errlen);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc || !a->ntail || !a->nmid)
		return rc ? rc : -ENODATA;
	if ((rc = lp_findings_prep(
		 c,
		 "INSERT INTO temp.lp_tail_iv SELECT q.grp, s.start_thread_id, s.start_ns, "
		 "s.end_ns FROM temp.lp_tail_req q JOIN ranges_named s ON s.parent_id = q.id "
		 "AND s.name = ?1 AND coalesce(s.domain, '') = ?2",
		 &st)))
		return rc;
	sqlite3_bind_text(st, 1, stage, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, domain ? domain : "", -1, SQLITE_STATIC);
	rc = lp_db_step_all(st, NULL, NULL, c->err, c->errlen);
	sqlite3_finalize(st);
	const char *cuda = lp_db_has_table(c->db, "syncs") && lp_db_has_table(c->db, "cuda_api")
			       ? LP_TAIL_SYNC_SQL
			       : "";
	/* fixed text under 2 KB: the buffer holds it whole */
	_Static_assert(sizeof(LP_TAIL_WAITS_SQL LP_TAIL_SYNC_SQL) + 200 < 4096, "sql[] too small");
	char sql[4096];
	snprintf(sql, sizeof(sql), LP_TAIL_WAITS_SQL, cuda,
		 "SELECT grp, cls, 0, sum(ns) FROM x GROUP BY 1, 2");
	rc = rc ? rc : lp_db_each(c->db, sql, NULL, 0, tail_row, a, c->err, c->errlen);
	snprintf(sql, sizeof(sql), LP_TAIL_WAITS_SQL, cuda,
		 "SELECT lk, sum(CASE WHEN grp = 0 THEN ns ELSE 0 END), sum(CASE WHEN grp = 1 THEN "
		 "ns ELSE 0 END) FROM x WHERE cls = 0 GROUP BY lk");
	rc = rc ? rc : lp_db_each(c->db, sql, NULL, 0, tail_lock_row, a, c->err, c->errlen);
	return rc;
}

static const char *tail_cause_label(int k)
{
	static const char *const l[LP_TAIL_NCAUSE] = {"lock wait",
						      "GIL wait",
						      "idle wait",
						      "join wait",
						      "cond wait",
						      "sync wait",
						      "sleep",
						      "file I/O",
						      "socket I/O",
						      "poll wait",
						      "other wait",
						      "cpu",
						      "descheduled (runnable, not running)"};
	return k >= 0 && k < LP_TAIL_NCAUSE ? l[k] : "?";
}

/* Appends ", cause +X ms [on lock]" for every cause >= 20% of the stage's
 * growth, largest first; the causes also become sites. Returns 0 or
 * -ENODATA when the stage's intervals cannot be found (--stage-depth > 1). */
static int tail_causes(struct lp_findings_ctx *c, struct lp_finding *f, double grow, char *why,
		       size_t len, int n)
{
	const struct lp_breakdown *b = c->bd;
	const struct lp_breakdown_tail *t = &b->tail;
	const struct lp_breakdown_stage *sg = &b->stages[t->stage];
	if (b->stage_depth > 1 || grow <= 0)
		return -ENODATA;
	struct tail_acc a = {0};
	int rc = tail_waits(c, sg->name, sg->domain, &a);
	if (rc)
		return rc;
	double waits_tail = 0, waits_mid = 0, wgrow = 0;
	for (int k = 0; k < LP_TAIL_NWAIT; k++) {
		double tk = a.ns[0][k] / a.ntail, mk = a.ns[1][k] / a.nmid;
		a.cause[k].growth_ns = tk - mk;
		waits_tail += tk;
		waits_mid += mk;
		wgrow += tk - mk;
	}
	double rest = grow - wgrow, desched = 0;
	if (t->has_cnt) /* off-CPU net of the recorded waits, never negative */
		desched = fmax(0, fmax(0, t->offcpu_tail_ns - waits_tail) -
				      fmax(0, t->offcpu_mid_ns - waits_mid));
	desched = fmin(desched, fmax(0, rest));
	a.cause[LP_TAIL_NWAIT].growth_ns = rest - desched;
	a.cause[LP_TAIL_NWAIT + 1].growth_ns = desched;
	int done[LP_TAIL_NCAUSE] = {0}, listed = 0;
	for (;;) {
		int best = -1;
		for (int k = 0; k < LP_TAIL_NCAUSE; k++)
			if (!done[k] && a.cause[k].growth_ns >= 0.2 * grow &&
			    (best < 0 || a.cause[k].growth_ns > a.cause[best].growth_ns))
				best = k;
		if (best < 0)
			break;
		done[best] = 1;
		const struct lp_lock_row *lr = best == LP_WAIT_CONTENTION && a.cause[best].lock
						   ? lp_findings_lock_row(c, a.cause[best].lock)
						   : NULL;
		char *what = lp_findings_fmt("%s%s%s", tail_cause_label(best), lr ? " on " : "",
					     lr && lr->name ? lr->name : "");
		if (n > 0 && (size_t)n < len)
			n += snprintf(why + n, len - (size_t)n, "%s%s +%.3f ms",
				      listed ? ", " : "; by cause: ", what ? what : "",
				      a.cause[best].growth_ns / 1e6);
		lp_findings_site(f, what, (int64_t)a.ntail,
				 (int64_t)(a.cause[best].growth_ns * a.ntail));
		free(what);
		listed++;
	}
	return listed ? 0 : -ENODATA;
}

static int rule_tail(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	const struct lp_breakdown *b = c->bd;
	if (!b->tail.valid || b->req.p50 <= 0)
		return lp_findings_skip(c, "too few requests for a p99 (the breakdown needs 20)");
	double ratio = (double)b->req.p99 / (double)b->req.p50;
	if (!lp_findings_judge(c, ratio))
		return 0;
	struct lp_finding *f = lp_findings_new(c, r, ratio);
	if (!f)
		return -ENOMEM;
	/* Basis: the tail requests' time above the median. */
	int64_t tail_ns = 0, excess = 0, ntail = 0;
	lp_findings_stake_reset(c);
	for (size_t i = 0; i < c->nreq; i++) {
		int64_t d = c->req[i].end - c->req[i].start;
		if (d < b->req.p99)
			continue;
		ntail++;
		tail_ns += d;
		excess += d - b->req.p50;
		c->stake[i] = d - b->req.p50;
	}
	const struct lp_breakdown_tail *t = &b->tail;
	int64_t saving = excess;
	char why[600] = "";
	if (t->stage >= 0 && (size_t)t->stage < b->nstages) {
		const char *sn = b->stages[t->stage].name;
		f->subject = strdup(sn);
		double grow = t->stage_tail_ns - t->stage_mid_ns;
		saving = lp_findings_min64(excess, (int64_t)(grow * (double)ntail));
		int n = snprintf(why, sizeof(why), "; stage %s grows from %.3f ms to %.3f ms", sn,
				 t->stage_mid_ns / 1e6, t->stage_tail_ns / 1e6);
		f->site_kind = "stages";
		lp_findings_site(f, sn, ntail, (int64_t)(grow * (double)ntail));
		/* the breakdown's category first, as its tail section names it;
		 * then every cause of the growth, by wait class */
		if (t->cat >= 0 && t->cat < b->ncat && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n, ", mostly %s (+%.3f ms)",
				      b->cat_label[t->cat], (t->cat_tail_ns - t->cat_mid_ns) / 1e6);
		if (t->has_key && t->key_name && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n, " %s %s",
				      t->key_site ? "at" : "on", t->key_name);
		int causes = tail_causes(c, f, grow, why, sizeof(why), n);
		if (causes && causes != -ENODATA)
			return causes;
		if (causes == 0)
			f->site_kind = "the tail stage, then what grew in it";
		if (t->cat >= 0 && t->cat < b->ncat) {
			lp_findings_num(f, "stage_tail_ns", "stage mean in p99 requests", "ns",
					t->stage_tail_ns);
			lp_findings_num(f, "stage_median_ns", "stage mean in median requests", "ns",
					t->stage_mid_ns);
			lp_findings_num(f, "category_growth_ns", b->cat_label[t->cat], "ns",
					t->cat_tail_ns - t->cat_mid_ns);
		}
	}
	lp_findings_num(f, "p50_ns", "p50", "ns", (double)b->req.p50);
	lp_findings_num(f, "p99_ns", "p99", "ns", (double)b->req.p99);
	lp_findings_num(f, "ratio", "p99 / p50", "ratio", ratio);
	lp_findings_num(f, "tail_requests", "requests at or above p99", "count", (double)ntail);
	f->summary = lp_findings_fmt("p99 is %.1fx the median (%.3f ms vs %.3f ms)%s", ratio,
				     b->req.p99 / 1e6, b->req.p50 / 1e6, why);
	/* the category the breakdown's tail names: its time, in the account */
	if (t->stage >= 0 && (size_t)t->stage < b->nstages && t->cat >= 0 && t->cat < b->ncat)
		lp_findings_category(f, b->cat_name[t->cat]);
	lp_findings_saving(f, saving, excess, "tail requests' time above the median");
	(void)tail_ns;
	lp_findings_example(c, f);
	return 1;
}

const struct lp_rule lp_rule_tail_outlier = {
    .id = "tail-outlier",
    .unit = "ratio",
    .cmp = LP_CMP_GE,
    .threshold = 3.0,
    .needs = LP_NEED_REQUESTS,
    .title = "The p99 tail is far from the median",
    .measures = "p99 / p50 of request latency; the stage and category that grow in the tail",
    .fix = "Look at the stage and category named in the evidence: that is where the slow requests "
	   "spend their extra time; fix that, not the median path.",
    .eval = rule_tail,
    .symptom = 1,
};
