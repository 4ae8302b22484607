/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"

static char *lp_meta_dup(sqlite3 *db, const char *key)
{
	char buf[4096];
	const char *v = lp_db_meta(db, key, buf, sizeof(buf));
	return v ? strdup(v) : NULL;
}

static char *lp_dup_col(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? strdup((const char *)s) : NULL;
}

static void lp_summary_row(sqlite3_stmt *st, struct lp_summary_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = sqlite3_column_int(st, 0);
	p->ppid = sqlite3_column_int(st, 1);
	p->cmdline = lp_dup_col(st, 2);
	p->exit_how = lp_dup_col(st, 3);
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
}

static int lp_summary_procs(sqlite3 *db, struct lp_run_summary *s, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
			       "SELECT pid, ppid, cmdline, exit_how, exit_status, exit_signal, "
			       "start_ns, end_ns, (SELECT count(*) FROM threads t WHERE "
			       "t.process_id = p.id), dropped_records, dropped_chunks, "
			       "dropped_strings, log_closed FROM processes p ORDER BY start_ns, id",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database error: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (s->n_procs == cap) {
			cap = cap ? 2 * cap : 8;
			void *n = realloc(s->procs, cap * sizeof(*s->procs));
			if (!n) {
				sqlite3_finalize(st);
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			s->procs = n;
		}
		struct lp_summary_proc *p = &s->procs[s->n_procs++];
		lp_summary_row(st, p);
		s->threads += p->threads;
		s->dropped_records += p->dropped_records;
		s->dropped_chunks += p->dropped_chunks;
		s->dropped_strings += p->dropped_strings;
		if (!s->start_ns || p->start_ns < s->start_ns)
			s->start_ns = p->start_ns;
		if (p->end_ns > s->end_ns)
			s->end_ns = p->end_ns;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "database error: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

int lp_summary_analyze(sqlite3 *db, struct lp_run_summary *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->latprof_version = lp_meta_dup(db, "latprof_version");
	s->host = lp_meta_dup(db, "host");
	s->wall_start = lp_meta_dup(db, "wall_start");
	s->run_cmdline = lp_meta_dup(db, "run.cmdline");
	s->import_source = lp_meta_dup(db, "import.source");
	char *cap = lp_meta_dup(db, "cuda.captured");
	s->gpu_captured = cap && strcmp(cap, "0") != 0 && cap[0];
	free(cap);
	s->gpu_status = lp_meta_dup(db, "cuda.status");
	s->lock_waits = lp_db_count(db, "lock_waits");
	s->cond_waits = lp_db_count(db, "cond_waits");
	return lp_summary_procs(db, s, err, errlen);
}

void lp_summary_free(struct lp_run_summary *s)
{
	for (size_t i = 0; i < s->n_procs; i++) {
		free(s->procs[i].cmdline);
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
