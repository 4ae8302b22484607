/* SPDX-License-Identifier: MIT */
/* Core records: processes, threads, lock and condition waits. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "lp_db.h"
#include "lp_import_sources.h"
#include "lp_logread.h"
#include "lp_symbols.h"
#include "lp_util.h"

extern const char lp_schema_core_sql[];

struct lp_child_status {
	uint32_t pid;
	int32_t status;
};

struct lp_core_state {
	sqlite3_stmt *ins_proc, *upd_start, *upd_exit, *upd_exec, *upd_thread_start,
	    *upd_thread_name, *upd_thread_end, *ins_lock, *ins_wait, *ins_cond, *upd_lock_name,
	    *upd_proc_end;
	struct lp_map locks; /* address -> locks.id, current process */
	struct lp_child_status *children;
	size_t n_children, cap_children;
	uint64_t first_realtime_ns;
	uint64_t max_ts; /* latest timestamp in the current process */
	long long dropped_records, dropped_chunks, dropped_strings;
	int unclosed;
};

/* The state pointer is also needed in pass 1, which has no source slot. */
static struct lp_core_state *lp_core;

static void lp_core_seen(uint64_t ts)
{
	if (ts > lp_core->max_ts)
		lp_core->max_ts = ts;
}

int lp_core_begin_process(struct lp_import *imp, const struct lp_log *log)
{
	struct lp_core_state *s = lp_core;
	const struct lp_log_header *h = &log->hdr;
	sqlite3_stmt *st = s->ins_proc;
	sqlite3_bind_int64(st, 1, h->pid);
	sqlite3_bind_int64(st, 2, h->ppid);
	sqlite3_bind_int64(st, 3, (int64_t)h->start_ns);
	sqlite3_bind_int(st, 4, !!(h->flags & LP_LOGF_CLOSED));
	sqlite3_bind_int64(st, 5, (int64_t)h->dropped_records);
	sqlite3_bind_int64(st, 6, (int64_t)h->dropped_chunks);
	sqlite3_bind_int64(st, 7, (int64_t)h->dropped_strings);
	if (h->exit_ns)
		sqlite3_bind_int64(st, 8, (int64_t)h->exit_ns);
	else
		sqlite3_bind_null(st, 8);
	if (lp_import_step(imp, st))
		return -EIO;
	imp->proc->id = sqlite3_last_insert_rowid(imp->db);
	s->max_ts = h->exit_ns > h->start_ns ? h->exit_ns : h->start_ns;
	s->dropped_records += (long long)h->dropped_records;
	s->dropped_chunks += (long long)h->dropped_chunks;
	s->dropped_strings += (long long)h->dropped_strings;
	s->unclosed += !(h->flags & LP_LOGF_CLOSED);
	if (!s->first_realtime_ns || h->start_realtime_ns < s->first_realtime_ns)
		s->first_realtime_ns = h->start_realtime_ns;
	lp_map_free(&s->locks);
	return 0;
}

/* argv is NUL-separated; store it space-separated for display. */
static int lp_core_proc_start(struct lp_import *imp, const struct lp_rec_header *h,
			      const struct lp_rec_proc_start *r, size_t len)
{
	size_t n = h->aux <= len - sizeof(*r) ? h->aux : len - sizeof(*r);
	char *cmd = malloc(n + 1);
	if (!cmd)
		return -ENOMEM;
	memcpy(cmd, r + 1, n);
	while (n && cmd[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == 0)
			cmd[i] = ' ';
	cmd[n] = 0;
	sqlite3_stmt *st = lp_core->upd_start;
	sqlite3_bind_text(st, 1, cmd, -1, SQLITE_TRANSIENT);
	size_t exe_len = strnlen((const char *)(r + 1), n);
	sqlite3_bind_text(st, 2, (const char *)(r + 1), (int)exe_len, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, imp->proc->id);
	free(cmd);
	return lp_import_step(imp, st);
}

static int lp_core_proc_exit(struct lp_import *imp, const struct lp_rec_proc_exit *r)
{
	static const char *const how[] = {"", "exit", "_exit", "signal", "returned"};
	sqlite3_stmt *st = lp_core->upd_exit;
	sqlite3_bind_int64(st, 1, (int64_t)r->ts);
	if (r->how == LP_EXIT_RETURN || r->how == LP_EXIT_UNDERSCORE)
		sqlite3_bind_int(st, 2, r->status);
	else
		sqlite3_bind_null(st, 2);
	if (r->how == LP_EXIT_SIGNAL)
		sqlite3_bind_int(st, 3, r->status);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, r->how < 5 ? how[r->how] : "unknown", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, imp->proc->id);
	lp_core_seen(r->ts);
	return lp_import_step(imp, st);
}

int lp_core_pass1(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
		  const void *payload, size_t len)
{
	switch (h->type) {
	case LP_REC_PROC_START:
		if (len >= sizeof(struct lp_rec_proc_start))
			return lp_core_proc_start(imp, h, payload, len);
		break;
	case LP_REC_PROC_EXIT:
		if (len >= sizeof(struct lp_rec_proc_exit))
			return lp_core_proc_exit(imp, payload);
		break;
	case LP_REC_EXEC:
		if (len >= sizeof(struct lp_rec_exec)) {
			const struct lp_rec_exec *r = payload;
			sqlite3_bind_int64(lp_core->upd_exec, 1, (int64_t)r->ts);
			sqlite3_bind_int64(lp_core->upd_exec, 2, imp->proc->id);
			lp_core_seen(r->ts);
			return lp_import_step(imp, lp_core->upd_exec);
		}
		break;
	}
	return 0;
}

static int64_t lp_core_lock(struct lp_import *imp, uint64_t addr, uint32_t kind)
{
	static const char *const kinds[] = {"?", "mutex", "rwlock", "rwlock", "sem", "spin"};
	struct lp_core_state *s = lp_core;
	uint64_t id;
	if (lp_map_get(&s->locks, addr, &id))
		return (int64_t)id;
	sqlite3_bind_int64(s->ins_lock, 1, imp->proc->id);
	sqlite3_bind_int64(s->ins_lock, 2, (int64_t)addr);
	sqlite3_bind_text(s->ins_lock, 3, kinds[kind < 6 ? kind : 0], -1, SQLITE_STATIC);
	if (lp_import_step(imp, s->ins_lock))
		return 0;
	id = (uint64_t)sqlite3_last_insert_rowid(imp->db);
	lp_map_put(&s->locks, addr, id);
	return (int64_t)id;
}

static void lp_bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int lp_core_lock_wait(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
			     const struct lp_rec_lock_wait *r)
{
	struct lp_core_state *s = lp_core;
	int64_t lock = r->lock ? lp_core_lock(imp, r->lock, h->aux) : 0;
	int64_t thread = lp_import_thread(imp, tid);
	if (!lock || !thread || r->end < r->start)
		return lock && thread ? 0 : -EIO;
	sqlite3_stmt *st = s->ins_wait;
	sqlite3_bind_int64(st, 1, lock);
	sqlite3_bind_int64(st, 2, thread);
	lp_bind_opt(st, 3, r->owner);
	sqlite3_bind_int64(st, 4, (int64_t)r->start);
	sqlite3_bind_int64(st, 5, (int64_t)(r->end - r->start));
	sqlite3_bind_int(st, 6, h->aux == LP_LOCK_RWLOCK_RD);
	lp_bind_opt(st, 7, lp_import_stack(imp, r->stack));
	sqlite3_bind_int(st, 8, (int)r->flags);
	lp_core_seen(r->end);
	return lp_import_step(imp, st);
}

static int lp_core_cond_wait(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
			     const struct lp_rec_cond_wait *r)
{
	struct lp_core_state *s = lp_core;
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	if (r->end < r->start)
		return 0;
	sqlite3_stmt *st = s->ins_cond;
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, (int64_t)r->cond);
	lp_bind_opt(st, 3, r->mutex ? lp_core_lock(imp, r->mutex, LP_LOCK_MUTEX) : 0);
	sqlite3_bind_int64(st, 4, (int64_t)r->start);
	sqlite3_bind_int64(st, 5, (int64_t)(r->end - r->start));
	sqlite3_bind_int(st, 6, h->aux == LP_COND_TIMEDWAIT);
	lp_bind_opt(st, 7, lp_import_stack(imp, r->stack));
	sqlite3_bind_int(st, 8, (int)r->flags);
	lp_core_seen(r->end);
	return lp_import_step(imp, st);
}

static int lp_core_thread(struct lp_import *imp, sqlite3_stmt *st, uint32_t tid, int64_t a,
			  int64_t b, int has_b)
{
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	sqlite3_bind_int64(st, 1, a);
	if (has_b)
		lp_bind_opt(st, 2, b);
	sqlite3_bind_int64(st, has_b ? 3 : 2, thread);
	return lp_import_step(imp, st);
}

static int lp_core_child(const struct lp_rec_child_status *r)
{
	struct lp_core_state *s = lp_core;
	if (s->n_children == s->cap_children) {
		s->cap_children = s->cap_children ? 2 * s->cap_children : 64;
		void *n = realloc(s->children, s->cap_children * sizeof(*s->children));
		if (!n)
			return -ENOMEM;
		s->children = n;
	}
	s->children[s->n_children].pid = r->pid;
	s->children[s->n_children++].status = r->status;
	return 0;
}

static int lp_core_record(struct lp_import *imp, void *state, uint32_t tid,
			  const struct lp_rec_header *h, const void *p, size_t len)
{
	struct lp_core_state *s = state;
	const struct lp_rec_thread_start *ts = p;
	const struct lp_rec_thread_name *tn = p;
	switch (h->type) {
	case LP_REC_LOCK_WAIT:
		return len >= sizeof(struct lp_rec_lock_wait) ? lp_core_lock_wait(imp, tid, h, p)
							      : 0;
	case LP_REC_COND_WAIT:
		return len >= sizeof(struct lp_rec_cond_wait) ? lp_core_cond_wait(imp, tid, h, p)
							      : 0;
	case LP_REC_THREAD_START:
		if (len < sizeof(*ts))
			return 0;
		lp_core_seen(ts->ts);
		return lp_core_thread(imp, s->upd_thread_start, ts->tid ? ts->tid : tid,
				      (int64_t)ts->ts, ts->parent_tid, 1);
	case LP_REC_THREAD_NAME:
		if (len < sizeof(*tn))
			return 0;
		return lp_core_thread(imp, s->upd_thread_name, tn->tid ? tn->tid : tid,
				      lp_import_string(imp, tn->name), 0, 0);
	case LP_REC_THREAD_END:
		if (len < sizeof(struct lp_rec_thread_end))
			return 0;
		lp_core_seen(((const struct lp_rec_thread_end *)p)->ts);
		return lp_core_thread(imp, s->upd_thread_end, tid,
				      (int64_t)((const struct lp_rec_thread_end *)p)->ts, 0, 0);
	case LP_REC_CHILD_STATUS:
		return len >= sizeof(struct lp_rec_child_status) ? lp_core_child(p) : 0;
	default:
		/* CTX, STRING, STACK, MODULE, PROC_*, EXEC: handled in pass 1. */
		if (len >= 8 && (h->type == LP_REC_PROC_START))
			return lp_import_thread(imp, tid) ? 0 : -EIO;
		return 0;
	}
}

/* Name each lock of this process after the variable that holds it. */
static int lp_core_end_process(struct lp_import *imp, void *state)
{
	struct lp_core_state *s = state;
	for (size_t i = 0; i < s->locks.cap; i++) {
		if (!s->locks.keys[i])
			continue;
		struct lp_sym sym;
		if (lp_symtab_lookup_data(imp->proc->symtab, s->locks.keys[i], &sym) != 0 ||
		    !sym.function)
			continue;
		char name[512];
		if (sym.sym_offset)
			snprintf(name, sizeof(name), "%s+0x%llx", sym.function,
				 (unsigned long long)sym.sym_offset);
		else
			snprintf(name, sizeof(name), "%s", sym.function);
		sqlite3_bind_text(s->upd_lock_name, 1, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(s->upd_lock_name, 2, sym.module, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s->upd_lock_name, 3, (int64_t)s->locks.vals[i]);
		if (lp_import_step(imp, s->upd_lock_name))
			return -EIO;
	}
	sqlite3_bind_int64(s->upd_proc_end, 1, (int64_t)s->max_ts);
	sqlite3_bind_int64(s->upd_proc_end, 2, imp->proc->id);
	return lp_import_step(imp, s->upd_proc_end);
}

static int lp_core_apply_children(struct lp_import *imp, struct lp_core_state *s)
{
	sqlite3_stmt *st = lp_import_prepare(
	    imp, "UPDATE processes SET exit_status = ?1, exit_signal = ?2, exit_how = ?3 "
		 "WHERE id = (SELECT id FROM processes WHERE pid = ?4 ORDER BY start_ns DESC "
		 "LIMIT 1)");
	if (!st)
		return -EIO;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < s->n_children; i++) {
		int w = s->children[i].status;
		if (WIFEXITED(w)) {
			sqlite3_bind_int(st, 1, WEXITSTATUS(w));
			sqlite3_bind_null(st, 2);
			sqlite3_bind_text(st, 3, "exit", -1, SQLITE_STATIC);
		} else if (WIFSIGNALED(w)) {
			sqlite3_bind_null(st, 1);
			sqlite3_bind_int(st, 2, WTERMSIG(w));
			sqlite3_bind_text(st, 3, "signal", -1, SQLITE_STATIC);
		} else {
			continue;
		}
		sqlite3_bind_int64(st, 4, s->children[i].pid);
		rc = lp_import_step(imp, st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Reaped statuses that `latprof run` saw as the subreaper: DIR/reaped. */
int lp_import_core_reaped(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	struct lp_rec_child_status r = {0};
	unsigned pid;
	int status;
	while (fscanf(f, "%u %d", &pid, &status) == 2) {
		r.pid = pid;
		r.status = status;
		lp_core_child(&r);
	}
	fclose(f);
	return 0;
}

static int lp_core_finish(struct lp_import *imp, void *state)
{
	struct lp_core_state *s = state;
	char buf[256];
	struct utsname u;
	int rc = lp_core_apply_children(imp, s);
	if (rc)
		return rc;
	rc = lp_db_exec(imp->db,
			"UPDATE processes SET parent_id = (SELECT p.id FROM processes p WHERE "
			"p.pid = processes.ppid AND p.start_ns <= processes.start_ns ORDER BY "
			"p.start_ns DESC LIMIT 1);"
			"UPDATE processes SET exec_from = (SELECT p.id FROM processes p WHERE "
			"p.pid = processes.pid AND p.start_ns < processes.start_ns ORDER BY "
			"p.start_ns DESC LIMIT 1);"
			"UPDATE processes SET parent_id = (SELECT p.parent_id FROM processes p "
			"WHERE p.id = processes.exec_from) WHERE exec_from IS NOT NULL;",
			imp->err, imp->errlen);
	if (rc)
		return rc;
	time_t secs = (time_t)(s->first_realtime_ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&secs, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rc = lp_import_meta(imp, "latprof_version", LATPROF_VERSION, 0);
	rc = rc ? rc : lp_import_meta(imp, "schema_version", NULL, LP_SCHEMA_VERSION);
	rc = rc ? rc : lp_import_meta(imp, "log_version", NULL, LP_LOG_VERSION);
	rc = rc ? rc : lp_import_meta(imp, "clock", "CLOCK_MONOTONIC", 0);
	rc = rc ? rc : lp_import_meta(imp, "host", uname(&u) == 0 ? u.nodename : "?", 0);
	rc = rc ? rc : lp_import_meta(imp, "wall_start", buf, 0);
	rc = rc ? rc : lp_import_meta(imp, "dropped_records", NULL, s->dropped_records);
	rc = rc ? rc : lp_import_meta(imp, "dropped_chunks", NULL, s->dropped_chunks);
	rc = rc ? rc : lp_import_meta(imp, "dropped_strings", NULL, s->dropped_strings);
	rc = rc ? rc : lp_import_meta(imp, "unclosed_logs", NULL, s->unclosed);
	return rc;
}

static int lp_core_begin(struct lp_import *imp, void **state)
{
	struct lp_core_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*state = s;
	lp_core = s;
	s->ins_proc = lp_import_prepare(
	    imp, "INSERT INTO processes(pid, ppid, start_ns, log_closed, dropped_records, "
		 "dropped_chunks, dropped_strings, end_ns) VALUES (?,?,?,?,?,?,?,?)");
	s->upd_start =
	    lp_import_prepare(imp, "UPDATE processes SET cmdline = ?, exe = ? WHERE id = ?");
	s->upd_exit = lp_import_prepare(
	    imp, "UPDATE processes SET end_ns = ?, exit_status = ?, exit_signal = ?, exit_how = ? "
		 "WHERE id = ?");
	s->upd_exec = lp_import_prepare(
	    imp, "UPDATE processes SET end_ns = ?, exit_how = 'exec' WHERE id = ?");
	s->upd_proc_end = lp_import_prepare(
	    imp, "UPDATE processes SET end_ns = max(coalesce(end_ns, 0), ?) WHERE id = ?");
	s->upd_thread_start =
	    lp_import_prepare(imp, "UPDATE threads SET start_ns = ?, parent_tid = ? WHERE id = ?");
	s->upd_thread_name = lp_import_prepare(
	    imp, "UPDATE threads SET name = (SELECT value FROM strings WHERE id = ?) WHERE id = ?");
	s->upd_thread_end = lp_import_prepare(imp, "UPDATE threads SET end_ns = ? WHERE id = ?");
	s->ins_lock =
	    lp_import_prepare(imp, "INSERT INTO locks(process_id, address, kind) VALUES (?,?,?)");
	s->ins_wait = lp_import_prepare(
	    imp, "INSERT INTO lock_waits(lock_id, thread_id, owner_tid, start_ns, dur_ns, mode, "
		 "stack_id, flags) VALUES (?,?,?,?,?,?,?,?)");
	s->ins_cond = lp_import_prepare(
	    imp, "INSERT INTO cond_waits(thread_id, cond_addr, mutex_lock_id, start_ns, dur_ns, "
		 "timed, stack_id, flags) VALUES (?,?,?,?,?,?,?,?)");
	s->upd_lock_name =
	    lp_import_prepare(imp, "UPDATE locks SET name = ?, module = ? WHERE id = ?");
	if (!s->ins_proc || !s->upd_start || !s->upd_exit || !s->upd_exec || !s->upd_proc_end ||
	    !s->upd_thread_start || !s->upd_thread_name || !s->upd_thread_end || !s->ins_lock ||
	    !s->ins_wait || !s->ins_cond || !s->upd_lock_name)
		return -EIO;
	return 0;
}

static void lp_core_destroy(void *state)
{
	struct lp_core_state *s = state;
	if (!s)
		return;
	sqlite3_stmt *all[] = {s->ins_proc,	  s->upd_start,	       s->upd_exit,
			       s->upd_exec,	  s->upd_thread_start, s->upd_thread_name,
			       s->upd_thread_end, s->ins_lock,	       s->ins_wait,
			       s->ins_cond,	  s->upd_lock_name,    s->upd_proc_end};
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		sqlite3_finalize(all[i]);
	lp_map_free(&s->locks);
	free(s->children);
	free(s);
	lp_core = NULL;
}

static const char lp_core_indexes[] = "CREATE INDEX lock_waits_start ON lock_waits(start_ns);"

				      "CREATE INDEX cond_waits_start ON cond_waits(start_ns);"
				      "CREATE INDEX threads_tid ON threads(process_id, tid);";

const struct lp_import_source lp_src_core = {
    .name = "core",
    .first_type = 1,
    .last_type = LP_REC_CORE_LAST,
    .schema = lp_schema_core_sql,
    .indexes = lp_core_indexes,
    .begin = lp_core_begin,
    .record = lp_core_record,
    .end_process = lp_core_end_process,
    .finish = lp_core_finish,
    .destroy = lp_core_destroy,
};
