/* SPDX-License-Identifier: MIT */
/*
 * CPU counter records (format/lp_log_counters.h) -> counter_config,
 * counter_events, counter_samples/values, thread_counters and, once the
 * NVTX source has written every range, range_counters (schemas/counters.sql).
 *
 * Records arrive per thread, so a thread's samples may come before the
 * CONFIG record another thread wrote: event rows are created on first
 * sight and completed when the CONFIG record shows up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_import.h"
#include "lp_import_sources.h"
#include "lp_log_counters.h"
#include "lp_util.h"

extern const char lp_schema_counters_sql[];

struct cnt_imp {
	sqlite3_stmt *ins_cfg, *ins_ev, *upd_ev, *ins_sample, *ins_val, *ins_total, *upd_runq;
	int64_t proc; /* processes.id that ev[] belongs to */
	int64_t ev[LP_CNT_MAX_EVENTS];
	long long samples;
	uint64_t cpu_union; /* the recorded threads' affinities, CPUs 0..63 */
	uint32_t cpus_most; /* the largest affinity a thread had */
	int cpus_wide;	    /* some thread's affinity had no mask (a CPU past 63) */
	int64_t *nofd;	    /* threads.id of threads whose group ran out of descriptors */
	size_t n_nofd, cap_nofd;
};

static int cnt_begin(struct lp_import *imp, void **state)
{
	struct cnt_imp *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*state = s;
	s->ins_cfg = lp_import_prepare(
	    imp, "INSERT OR REPLACE INTO counter_config(process_id, paranoid, user_only, denied, "
		 "no_libpfm, note) VALUES (?1, ?2, ?3, ?4, ?5, "
		 "(SELECT value FROM strings WHERE id = ?6))");
	s->ins_ev =
	    lp_import_prepare(imp, "INSERT INTO counter_events(process_id, idx, name, available) "
				   "VALUES (?1, ?2, 'event#' || ?2, 1)");
	s->upd_ev = lp_import_prepare(
	    imp, "UPDATE counter_events SET name = COALESCE((SELECT value FROM strings WHERE "
		 "id = ?2), name), available = ?3, error = ?4, "
		 "reason = (SELECT value FROM strings WHERE id = ?5) WHERE id = ?1");
	s->ins_sample = lp_import_prepare(
	    imp, "INSERT INTO counter_samples(thread_id, ts_ns, enabled_ns, running_ns) "
		 "VALUES (?, ?, ?, ?)");
	s->ins_val = lp_import_prepare(
	    imp, "INSERT OR REPLACE INTO counter_values(sample_id, event_id, value) "
		 "VALUES (?, ?, ?)");
	s->ins_total = lp_import_prepare(
	    imp, "INSERT OR REPLACE INTO thread_counters(thread_id, event_id, value, raw, "
		 "scaled, start_ns, end_ns, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
	s->upd_runq = lp_import_prepare(imp, "UPDATE threads SET run_delay_ns = ?1 WHERE id = ?2");
	if (!s->ins_cfg || !s->ins_ev || !s->upd_ev || !s->ins_sample || !s->ins_val ||
	    !s->ins_total || !s->upd_runq)
		return -EIO;
	return 0;
}

/* counter_events.id of event idx of the current process (created if new). */
static int64_t cnt_event(struct lp_import *imp, struct cnt_imp *s, unsigned idx)
{
	if (s->proc != imp->proc->id) {
		memset(s->ev, 0, sizeof(s->ev));
		s->proc = imp->proc->id;
	}
	if (s->ev[idx])
		return s->ev[idx];
	sqlite3_bind_int64(s->ins_ev, 1, imp->proc->id);
	sqlite3_bind_int(s->ins_ev, 2, (int)idx);
	if (lp_import_step(imp, s->ins_ev))
		return 0;
	s->ev[idx] = sqlite3_last_insert_rowid(imp->db);
	return s->ev[idx];
}

static int cnt_config(struct lp_import *imp, struct cnt_imp *s, const struct lp_rec_header *h,
		      const struct lp_rec_cnt_config *c, size_t len)
{
	size_t n = (len - sizeof(*c)) / sizeof(struct lp_cnt_event_def);
	if (n > h->aux)
		n = h->aux;
	if (n > LP_CNT_MAX_EVENTS)
		n = LP_CNT_MAX_EVENTS;
	sqlite3_stmt *st = s->ins_cfg;
	sqlite3_bind_int64(st, 1, imp->proc->id);
	if (c->paranoid == INT32_MIN)
		sqlite3_bind_null(st, 2);
	else
		sqlite3_bind_int(st, 2, c->paranoid);
	sqlite3_bind_int(st, 3, !!(c->flags & LP_CNTF_EXCLUDE_KERNEL));
	sqlite3_bind_int(st, 4, !!(c->flags & LP_CNTF_DENIED));
	sqlite3_bind_int(st, 5, !!(c->flags & LP_CNTF_NO_LIBPFM));
	sqlite3_bind_int64(st, 6, lp_import_string(imp, c->note));
	if (lp_import_step(imp, st))
		return -EIO;
	const struct lp_cnt_event_def *d = (const void *)(c + 1);
	for (size_t i = 0; i < n; i++) {
		int64_t id = cnt_event(imp, s, (unsigned)i);
		if (!id)
			return -EIO;
		st = s->upd_ev;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, lp_import_string(imp, d[i].name));
		sqlite3_bind_int(st, 3, d[i].err == 0);
		if (d[i].err)
			sqlite3_bind_int(st, 4, d[i].err);
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, d[i].err ? lp_import_string(imp, d[i].reason) : 0);
		if (lp_import_step(imp, st))
			return -EIO;
	}
	return 0;
}

static int64_t cnt_scale(uint64_t v, uint64_t enabled, uint64_t running)
{
	/* Damaged values must not overflow the conversion (found by fuzz_import). */
	if (running && running < enabled) {
		double x = (double)v * (double)enabled / (double)running + 0.5;
		return x < 9.2e18 ? (int64_t)x : INT64_MAX;
	}
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int cnt_sample(struct lp_import *imp, struct cnt_imp *s, uint32_t tid, uint32_t mask,
		      const struct lp_rec_cnt_sample *r, size_t len)
{
	const uint64_t *v = (const uint64_t *)(r + 1);
	size_t nv = (len - sizeof(*r)) / sizeof(uint64_t);
	if ((size_t)__builtin_popcount(mask) > nv)
		return 0; /* damaged: fewer values than the mask says */
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	sqlite3_stmt *st = s->ins_sample;
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, (int64_t)r->ts);
	sqlite3_bind_int64(st, 3, (int64_t)r->enabled);
	sqlite3_bind_int64(st, 4, (int64_t)r->running);
	if (lp_import_step(imp, st))
		return -EIO;
	int64_t sample = sqlite3_last_insert_rowid(imp->db);
	s->samples++;
	for (unsigned i = 0, k = 0; i < LP_CNT_MAX_EVENTS; i++) {
		if (!(mask & (1u << i)))
			continue;
		int64_t ev = cnt_event(imp, s, i);
		if (!ev)
			return -EIO;
		st = s->ins_val;
		sqlite3_bind_int64(st, 1, sample);
		sqlite3_bind_int64(st, 2, ev);
		sqlite3_bind_int64(st, 3, (int64_t)v[k++]);
		if (lp_import_step(imp, st))
			return -EIO;
	}
	return 0;
}

static int cnt_total(struct lp_import *imp, struct cnt_imp *s, uint32_t tid, uint32_t mask,
		     const struct lp_rec_cnt_total *r, size_t len, const char *source)
{
	const uint64_t *v = (const uint64_t *)(r + 1);
	size_t nv = (len - sizeof(*r)) / sizeof(uint64_t);
	if ((size_t)__builtin_popcount(mask) > nv)
		return 0;
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	for (unsigned i = 0, k = 0; i < LP_CNT_MAX_EVENTS; i++) {
		if (!(mask & (1u << i)))
			continue;
		int64_t ev = cnt_event(imp, s, i);
		if (!ev)
			return -EIO;
		sqlite3_stmt *st = s->ins_total;
		sqlite3_bind_int64(st, 1, thread);
		sqlite3_bind_int64(st, 2, ev);
		sqlite3_bind_int64(st, 3, cnt_scale(v[k], r->enabled, r->running));
		sqlite3_bind_int64(st, 4, (int64_t)v[k]);
		sqlite3_bind_int(st, 5, r->running < r->enabled);
		sqlite3_bind_int64(st, 6, (int64_t)r->open_ns);
		sqlite3_bind_int64(st, 7, (int64_t)r->ts);
		sqlite3_bind_text(st, 8, source, -1, SQLITE_STATIC);
		k++;
		if (lp_import_step(imp, st))
			return -EIO;
	}
	return 0;
}

static int cnt_runq(struct lp_import *imp, struct cnt_imp *s, const struct lp_rec_cnt_runq *r)
{
	int64_t thread = lp_import_thread(imp, r->tid);
	if (!thread)
		return -EIO;
	sqlite3_bind_int64(s->upd_runq, 1,
			   r->run_delay > INT64_MAX ? INT64_MAX : (int64_t)r->run_delay);
	sqlite3_bind_int64(s->upd_runq, 2, thread);
	if (r->cpus) {
		s->cpu_union |= r->cpu_mask;
		s->cpus_wide |= !r->cpu_mask;
		s->cpus_most = r->cpus > s->cpus_most ? r->cpus : s->cpus_most;
	}
	return lp_import_step(imp, s->upd_runq) ? -EIO : 0;
}

static int cnt_record(struct lp_import *imp, void *state, uint32_t tid,
		      const struct lp_rec_header *h, const void *payload, size_t len)
{
	struct cnt_imp *s = state;
	switch (h->type) {
	case LP_REC_CNT_CONFIG:
		if (len >= sizeof(struct lp_rec_cnt_config))
			return cnt_config(imp, s, h, payload, len);
		break;
	case LP_REC_CNT_SAMPLE:
		if (len >= sizeof(struct lp_rec_cnt_sample))
			return cnt_sample(imp, s, tid, h->aux, payload, len);
		break;
	case LP_REC_CNT_TOTAL:
		if (len >= sizeof(struct lp_rec_cnt_total))
			return cnt_total(imp, s, tid, h->aux, payload, len, "exit");
		break;
	case LP_REC_CNT_TOTAL_OF:
		if (len >= sizeof(struct lp_rec_cnt_total_of)) {
			const struct lp_rec_cnt_total_of *o = payload;
			return cnt_total(imp, s, o->tid, h->aux, &o->total,
					 len - offsetof(struct lp_rec_cnt_total_of, total),
					 "alive_at_exit");
		}
		break;
	case LP_REC_CNT_RUNQ:
		if (len >= sizeof(struct lp_rec_cnt_runq))
			return cnt_runq(imp, s, payload);
		break;
	case LP_REC_CNT_NOFD: {
		int64_t thread = lp_import_thread(imp, tid);
		if (!thread)
			return -EIO;
		if (LP_GROW(s->nofd, s->n_nofd, s->cap_nofd))
			return -ENOMEM;
		s->nofd[s->n_nofd++] = thread;
		break;
	}
	default:
		imp->unknown_records++;
	}
	return 0;
}

/* Threads that have no counters because their group ran out of file
 * descriptors (others without counters ended before their counts were
 * read): meta counters.threads_no_fd, for latprof run's summary. */
static int cnt_nofd_meta(struct lp_import *imp, struct cnt_imp *s)
{
	long long n = 0;
	for (size_t i = 0; i < s->n_nofd; i++) {
		struct lp_db_arg id = LP_DB_INT(s->nofd[i]);
		int64_t none;
		if (lp_db_get_int(imp->db,
				  "SELECT NOT EXISTS (SELECT 1 FROM thread_counters WHERE "
				  "thread_id = ?1) AND NOT EXISTS (SELECT 1 FROM counter_samples "
				  "WHERE thread_id = ?1)",
				  &id, 1, 0, &none, imp->err, imp->errlen))
			return -EIO;
		n += none != 0;
	}
	return lp_import_meta(imp, "counters.threads_no_fd", NULL, n);
}

/* Delta of a running total between two samples, scaled by the share of
 * that interval the group spent on the PMU. s0/s1/v0/v1 are SQL aliases. */
#define LP_CNT_DELTA                                                                               \
	"CASE WHEN s1.running_ns - s0.running_ns > 0 AND s1.running_ns - s0.running_ns < "         \
	"s1.enabled_ns - s0.enabled_ns THEN CAST(round((v1.value - v0.value) * 1.0 * "             \
	"(s1.enabled_ns - s0.enabled_ns) / (s1.running_ns - s0.running_ns)) AS INTEGER) "          \
	"ELSE v1.value - v0.value END"

static const char lp_cnt_finish_sql[] =
    "CREATE INDEX IF NOT EXISTS counter_samples_thread_ts ON counter_samples(thread_id, ts_ns);"
    "UPDATE counter_events SET multiplexed = 1 WHERE EXISTS (SELECT 1 FROM counter_values v "
    "JOIN counter_samples s ON s.id = v.sample_id WHERE v.event_id = counter_events.id AND "
    "s.running_ns < s.enabled_ns) OR EXISTS (SELECT 1 FROM thread_counters t WHERE "
    "t.event_id = counter_events.id AND t.scaled);"
    /* Threads that wrote no exit record: their last sample is the total. */
    "INSERT OR IGNORE INTO thread_counters(thread_id, event_id, value, raw, scaled, start_ns, "
    "end_ns, source) SELECT s.thread_id, v.event_id, CASE WHEN s.running_ns > 0 AND "
    "s.running_ns < s.enabled_ns THEN CAST(round(v.value * 1.0 * s.enabled_ns / s.running_ns) "
    "AS INTEGER) ELSE v.value END, v.value, s.running_ns < s.enabled_ns, NULL, s.ts_ns, "
    "'last_sample' FROM counter_samples s JOIN counter_values v ON v.sample_id = s.id WHERE "
    "s.id IN (SELECT max(id) FROM counter_samples GROUP BY thread_id);";

/*
 * A thread reads its group at most once per interval (lp_counters.c) and the
 * values are running totals, so a boundary pairs with the thread's latest
 * sample at or before it (the latest by ts, then by log order: a pop and
 * the next push can share a nanosecond). The delta then covers
 * [s0.ts, s1.ts] instead of [start, end]: kept only when s1 is a later
 * sample than s0 and the misplaced time, (start - s0.ts) + (end - s1.ts),
 * is at most 10% of the range. Exactly sampled boundaries misplace nothing.
 * Ranges shorter than the interval usually fail this and get no delta.
 */
#define LP_CNT_AT(col)                                                                             \
	"(SELECT id FROM counter_samples WHERE thread_id = r.start_thread_id AND ts_ns <= "        \
	"r." col " ORDER BY ts_ns DESC, id DESC LIMIT 1)"

static const char lp_cnt_ranges_sql[] =
    "WITH p AS (SELECT r.id, r.start_ns, r.end_ns, " LP_CNT_AT("start_ns") " AS a, " LP_CNT_AT(
	"end_ns") " AS b FROM ranges r WHERE r.end_thread_id = r.start_thread_id) "
		  "INSERT OR IGNORE INTO range_counters(range_id, event_id, delta, scaled) "
		  "SELECT p.id, v1.event_id, " LP_CNT_DELTA ", "
		  "s1.running_ns - s0.running_ns < s1.enabled_ns - s0.enabled_ns "
		  "FROM p JOIN counter_samples s0 ON s0.id = p.a JOIN counter_samples s1 ON s1.id "
		  "= p.b "
		  "JOIN counter_values v0 ON v0.sample_id = s0.id "
		  "JOIN counter_values v1 ON v1.sample_id = s1.id AND v1.event_id = v0.event_id "
		  "WHERE p.b <> p.a AND s1.ts_ns >= s0.ts_ns AND v1.value >= v0.value AND "
		  "10 * ((p.start_ns - s0.ts_ns) + (p.end_ns - s1.ts_ns)) <= p.end_ns - p.start_ns";

/* Ranges without a delta: one thread but unsampled, or across threads. */
static const char lp_cnt_unsampled_sql[] =
    "SELECT count(*) FILTER (WHERE end_thread_id = start_thread_id AND NOT EXISTS (SELECT 1 "
    "FROM range_counters rc WHERE rc.range_id = ranges.id)), count(*) FILTER (WHERE "
    "end_thread_id <> start_thread_id) FROM ranges";

struct unavail_line {
	char line[2048];
	size_t used;
};

static int unavail_row(sqlite3_stmt *st, void *ctx)
{
	struct unavail_line *u = ctx;
	const char *names = (const char *)sqlite3_column_text(st, 0);
	const char *why = (const char *)sqlite3_column_text(st, 1);
	if (u->used >= sizeof(u->line))
		return LP_DB_STOP;
	u->used += (size_t)snprintf(u->line + u->used, sizeof(u->line) - u->used, "%s%s: %s",
				    u->used ? "; " : "", names ? names : "?", why ? why : "?");
	return 0;
}

struct note_meta {
	struct lp_import *imp;
	int rc;
};

static int note_row(sqlite3_stmt *st, void *ctx)
{
	struct note_meta *n = ctx;
	n->rc =
	    lp_import_meta(n->imp, "counters_note", (const char *)sqlite3_column_text(st, 0), 0);
	return LP_DB_STOP;
}

/* meta counters_unavailable: "cycles, instructions: <reason>; ...", less
 * the events the paranoid note (meta counters_note) already explains. */
static int cnt_meta(struct lp_import *imp)
{
	sqlite3_stmt *st = NULL;
	const char *sql =
	    "SELECT group_concat(name, ', '), reason FROM (SELECT name, reason, "
	    "min(idx) AS k FROM counter_events e WHERE available = 0 AND NOT (error = "
	    "13 AND EXISTS (SELECT 1 FROM counter_config c WHERE c.process_id = "
	    "e.process_id AND c.note IS NOT NULL)) GROUP BY name, reason ORDER BY k) "
	    "GROUP BY reason ORDER BY min(k)";
	if (sqlite3_prepare_v2(imp->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	struct unavail_line u = {"", 0};
	int rc = lp_db_step_all(st, unavail_row, &u, imp->err, imp->errlen);
	sqlite3_finalize(st);
	if (rc == 0 && u.line[0])
		rc = lp_import_meta(imp, "counters_unavailable", u.line, 0);
	if (rc == 0 && sqlite3_prepare_v2(imp->db,
					  "SELECT note FROM counter_config WHERE note IS NOT NULL "
					  "ORDER BY process_id LIMIT 1",
					  -1, &st, NULL) == SQLITE_OK) {
		struct note_meta n = {imp, 0};
		rc = lp_db_step_all(st, note_row, &n, imp->err, imp->errlen);
		rc = rc ? rc : n.rc;
		sqlite3_finalize(st);
	}
	return rc;
}

static int cnt_has_ranges(struct lp_import *imp)
{
	return lp_db_has_table(imp->db, "ranges");
}

static int cnt_exec(struct lp_import *imp, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(imp->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(imp->err, imp->errlen, "counters: %s", msg ? msg : "SQL error");
	sqlite3_free(msg);
	return -EIO;
}

static int two_ints_row(sqlite3_stmt *st, void *ctx)
{
	int64_t *v = ctx;
	v[0] = sqlite3_column_int64(st, 0);
	v[1] = sqlite3_column_int64(st, 1);
	return LP_DB_STOP;
}

/* meta counters.ranges_unsampled / counters.ranges_cross_thread. */
static int cnt_range_meta(struct lp_import *imp)
{
	sqlite3_stmt *st = NULL;
	int64_t v[2] = {-1, -1};
	if (sqlite3_prepare_v2(imp->db, lp_cnt_unsampled_sql, -1, &st, NULL) != SQLITE_OK ||
	    lp_db_step_all(st, two_ints_row, v, imp->err, imp->errlen) || v[0] < 0) {
		snprintf(imp->err, imp->errlen, "counters: %s", sqlite3_errmsg(imp->db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	int64_t unsampled = v[0], cross = v[1];
	int rc = lp_import_meta(imp, "counters.ranges_unsampled", NULL, unsampled);
	return rc ? rc : lp_import_meta(imp, "counters.ranges_cross_thread", NULL, cross);
}

static int cnt_finish(struct lp_import *imp, void *state)
{
	struct cnt_imp *s = state;
	if (cnt_exec(imp, lp_cnt_finish_sql))
		return -EIO;
	if (s->samples && cnt_has_ranges(imp) &&
	    (cnt_exec(imp, lp_cnt_ranges_sql) || cnt_range_meta(imp)))
		return -EIO;
	int rc = cnt_nofd_meta(imp, s);
	/* the cores the recorded threads could run on, together: their
	 * affinities' union (a thread's own count where one was past CPU 63,
	 * then at least the largest) */
	if (!rc && s->cpus_most) {
		int64_t n = __builtin_popcountll(s->cpu_union);
		if (s->cpus_wide && n < (int64_t)s->cpus_most)
			n = s->cpus_most;
		rc = lp_import_meta(imp, "run.cpus_threads", NULL, n);
	}
	return rc ? rc : cnt_meta(imp);
}

static void cnt_destroy(void *state)
{
	struct cnt_imp *s = state;
	if (!s)
		return;
	sqlite3_finalize(s->ins_cfg);
	sqlite3_finalize(s->ins_ev);
	sqlite3_finalize(s->upd_ev);
	sqlite3_finalize(s->ins_sample);
	sqlite3_finalize(s->ins_val);
	sqlite3_finalize(s->ins_total);
	sqlite3_finalize(s->upd_runq);
	free(s->nofd);
	free(s);
}

const struct lp_import_source lp_src_counters = {
    .name = "counters",
    .first_type = LP_REC_COUNTERS_FIRST,
    .last_type = LP_REC_COUNTERS_LAST,
    .schema = lp_schema_counters_sql,
    .indexes = "CREATE INDEX counter_events_process ON counter_events(process_id);",
    .begin = cnt_begin,
    .record = cnt_record,
    .finish = cnt_finish,
    .destroy = cnt_destroy,
};
