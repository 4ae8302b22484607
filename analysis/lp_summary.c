/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_locks.h"
#include "lp_util.h"

static char *meta_dup(sqlite3 *db, const char *key)
{
	char buf[4096];
	const char *v = lp_db_meta(db, key, buf, sizeof(buf));
	return v ? strdup(v) : NULL;
}

static void summary_row(sqlite3_stmt *st, struct lp_summary_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = sqlite3_column_int(st, 0);
	p->ppid = sqlite3_column_int(st, 1);
	p->cmdline = lp_db_col_strdup(st, 2);
	p->exit_how = lp_db_col_strdup(st, 3);
	p->has_status = sqlite3_column_type(st, 4) != SQLITE_NULL;
	p->exit_status = sqlite3_column_int(st, 4);
	p->exit_signal = sqlite3_column_int(st, 5);
	p->start_ns = sqlite3_column_int64(st, 6);
	p->end_ns = sqlite3_column_int64(st, 7);
	p->threads = sqlite3_column_int64(st, 8);
	p->dropped_records = sqlite3_column_int64(st, 9);
	p->dropped_chunks = sqlite3_column_int64(st, 10);
	p->dropped_strings = sqlite3_column_int64(st, 11);
	p->log_closed = sqlite3_column_int(st, 12);
	p->title = lp_db_col_strdup(st, 13);
	p->events = sqlite3_column_int64(st, 14);
}

struct summary_load {
	struct lp_run_summary *s;
	size_t cap;
};

static int summary_proc_row(sqlite3_stmt *st, void *ctx)
{
	struct summary_load *l = ctx;
	struct lp_run_summary *s = l->s;
	if (LP_GROW(s->procs, s->n_procs, l->cap))
		return -ENOMEM;
	struct lp_summary_proc *p = &s->procs[s->n_procs++];
	summary_row(st, p);
	s->threads += p->threads;
	s->dropped_records += p->dropped_records;
	s->dropped_chunks += p->dropped_chunks;
	s->dropped_strings += p->dropped_strings;
	if (!s->start_ns || p->start_ns < s->start_ns)
		s->start_ns = p->start_ns;
	if (p->end_ns > s->end_ns)
		s->end_ns = p->end_ns;
	return 0;
}

/* Ranges per process. With one process that is every range, and SQLite
 * counts a whole table from its smallest index, far faster than the
 * grouped scan the general case needs (docs/perf-notes.md). */
#define LP_RANGES_PER_PROCESS "(SELECT process_id AS id, count(*) AS n FROM ranges GROUP BY 1)"
#define LP_RANGES_ONE_PROCESS                                                                      \
	"(SELECT p1.id AS id, (SELECT count(*) FROM ranges) AS n "                                 \
	"FROM processes p1)"
#define LP_SUMMARY_PROCS(RANGES)                                                                   \
	"SELECT pid, ppid, cmdline, exit_how, exit_status, exit_signal, "                          \
	"start_ns, end_ns, (SELECT count(*) FROM threads t WHERE "                                 \
	"t.process_id = p.id), dropped_records, dropped_chunks, "                                  \
	"dropped_strings, log_closed, title, coalesce(lw.n, 0) + "                                 \
	"coalesce(cw.n, 0) + coalesce(rg.n, 0) FROM processes p "                                  \
	"LEFT JOIN (SELECT t.process_id AS id, SUM(w.n) AS n FROM temp.lp_wagg w "                 \
	"JOIN threads t ON t.id = w.thread_id WHERE w.src = 0 GROUP BY 1) lw ON lw.id = p.id "     \
	"LEFT JOIN (SELECT t.process_id AS id, count(*) AS n FROM cond_waits w "                   \
	"JOIN threads t ON t.id = w.thread_id GROUP BY 1) cw ON cw.id = p.id "                     \
	"LEFT JOIN " RANGES " rg ON rg.id = p.id ORDER BY start_ns, p.id"

static int summary_procs(sqlite3 *db, struct lp_run_summary *s, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	/* lock waits per thread: the lock analysis's one grouped pass */
	if (lp_locks_group(db, err, errlen))
		return -EIO;
	int one = lp_db_int(db, "SELECT count(*) FROM processes", 0) == 1;
	if (sqlite3_prepare_v2(db,
			       one ? LP_SUMMARY_PROCS(LP_RANGES_ONE_PROCESS)
				   : LP_SUMMARY_PROCS(LP_RANGES_PER_PROCESS),
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database error: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	struct summary_load l = {s, 0};
	int rc = lp_db_step_all(st, summary_proc_row, &l, err, errlen);
	sqlite3_finalize(st);
	return rc;
}

int lp_summary_analyze(sqlite3 *db, struct lp_run_summary *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->latprof_version = meta_dup(db, "latprof_version");
	s->host = meta_dup(db, "host");
	s->wall_start = meta_dup(db, "wall_start");
	s->run_cmdline = meta_dup(db, "run.cmdline");
	s->import_source = meta_dup(db, "import.source");
	char *cap = meta_dup(db, "cuda.captured");
	s->gpu_captured = cap && strcmp(cap, "0") != 0 && cap[0];
	free(cap);
	s->gpu_status = meta_dup(db, "cuda.status");
	s->lock_waits = lp_db_count(db, "lock_waits");
	s->cond_waits = lp_db_count(db, "cond_waits");
	return summary_procs(db, s, err, errlen);
}

void lp_summary_free(struct lp_run_summary *s)
{
	for (size_t i = 0; i < s->n_procs; i++) {
		free(s->procs[i].cmdline);
		free(s->procs[i].title);
		free(s->procs[i].exit_how);
	}
	free(s->procs);
	free(s->latprof_version);
	free(s->host);
	free(s->wall_start);
	free(s->run_cmdline);
	free(s->import_source);
	free(s->gpu_status);
	memset(s, 0, sizeof(*s));
}
