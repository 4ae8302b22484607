/* SPDX-License-Identifier: MIT */
/* Core records: processes, threads, lock and condition waits, blocking calls. */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "lp_db.h"
#include "lp_import_batch.h"
#include "lp_import_sources.h"
#include "lp_inf_table.h"
#include "lp_logread.h"
#include "lp_symbols.h"
#include "lp_util.h"
#include "lp_waitsort.h"

extern const char lp_schema_core_sql[];

/*
 * Lock and condition waits are most of a recording, so they go into the
 * database LP_BATCH_ROWS rows per INSERT through lp_import_batch.c: lock
 * waits in start order, all of them at the end of the import (below),
 * condition waits (few) in log order, flushed at the end of each process.
 * A 0 in an optional column (owner, mutex, stack) stores NULL, as bind_opt.
 *
 * The row, not the reading of the log, decides the rate: SQLite's INSERT
 * and the start_ns index are most of a wait's cost (docs/perf-notes.md,
 * "Import: lock waits"). So lock waits are stored in start order
 * (lp_waitsort.h), across processes, into lock_waits, a WITHOUT ROWID
 * table keyed by (start_ns, id): each key lands on the table's last page,
 * where SQLite appends without a search from the root, one b-tree grows
 * where a table and its index would, and no sort of all keys follows. A
 * large import's pages are 64 KiB (lp_import_driver.c import_page_size),
 * which makes splits 16 times rarer. The importer numbers the rows in the
 * order they go in (id).
 */
#define LP_WAIT_OPT ((1u << 2) | (1u << 6)) /* owner_tid, stack_id */
#define LP_COND_OPT ((1u << 2) | (1u << 6)) /* mutex_lock_id, stack_id */
/* Often 0 in a whole batch: owner_tid, mode, flags; timed, flags. */
#define LP_WAIT_SPARSE ((1u << 2) | (1u << 5) | (1u << 7))
#define LP_COND_SPARSE ((1u << 5) | (1u << 7))

static const char lp_wait_insert[] =
    "INSERT INTO lock_waits(lock_id, thread_id, owner_tid, start_ns, dur_ns, mode, stack_id, "
    "flags, id, runq_ns) SELECT ";
static const char lp_cond_insert[] =
    "INSERT INTO cond_waits(thread_id, cond_addr, mutex_lock_id, start_ns, dur_ns, timed, "
    "stack_id, flags, runq_ns) SELECT ";

/* Only the importer sets it: a wait the process died in, whose end is not
 * known until its death is (core_died). */
#define LP_WAITF_PENDING 0x100u
/* The same in the SQL text below. */
#define LP_WAITF_PENDING_SQL "256"
_Static_assert(LP_WAITF_PENDING == 256, "LP_WAITF_PENDING_SQL must spell LP_WAITF_PENDING");

struct child_status {
	uint32_t pid;
	int32_t status;
	uint64_t ts; /* when it was reaped; 0 unknown */
};

/* A process-shared lock: one locks row for every process that maps it. */
struct shared_key {
	uint64_t dev, ino, offset;
	int64_t lock_id; /* 0 until its first wait */
	char *path;
};

struct core_state {
	sqlite3_stmt *ins_proc, *upd_start, *upd_exit, *upd_title, *upd_exec, *upd_thread_start,
	    *upd_thread_name, *upd_thread_end, *ins_lock, *upd_lock_name, *upd_proc_end, *ins_block,
	    *sel_fd_kind, *ins_hold;
	struct lp_batch waits, conds;
	struct lp_waitsort sorted; /* lock waits not yet in waits */
	struct lp_map locks;	   /* address -> locks.id, current process */
	struct lp_map shared;	   /* address -> 1 + index in skeys, current process */
	struct shared_key *skeys;  /* process-shared locks of the run, by mapping */
	size_t n_skeys, cap_skeys;
	struct child_status *children;
	size_t n_children, cap_children;
	uint64_t first_realtime_ns;
	uint64_t max_ts; /* latest timestamp in the current process */
	long long dropped_records, dropped_chunks, dropped_strings, dropped_holds;
	int unclosed;
	int low_fd;		/* logs whose descriptor took one of the app's (LP_LOGF_LOWFD) */
	long long died_pending; /* waits written by lp_core_inflight */
	int64_t wait_ids;	/* the last lock_waits.id given */
};

extern const struct lp_import_source lp_src_core;

/* This import's core state, for the functions the driver calls outside
 * record() (pass 1, the run's tables) and the helpers they share. */
static struct core_state *core_of(struct lp_import *imp)
{
	return lp_import_state(imp, &lp_src_core);
}

static void core_seen(struct lp_import *imp, uint64_t ts)
{
	struct core_state *s = core_of(imp);
	if (ts > s->max_ts)
		s->max_ts = ts;
}

int lp_core_begin_process(struct lp_import *imp, const struct lp_log *log)
{
	struct core_state *s = core_of(imp);
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
	s->dropped_holds += (long long)h->dropped_holds;
	s->unclosed += !(h->flags & LP_LOGF_CLOSED);
	s->low_fd += !!(h->flags & LP_LOGF_LOWFD);
	if (!s->first_realtime_ns || h->start_realtime_ns < s->first_realtime_ns)
		s->first_realtime_ns = h->start_realtime_ns;
	lp_map_free(&s->locks);
	lp_map_free(&s->shared);
	return 0;
}

/* argv is NUL-separated; a malloc'd space-separated copy for display
 * (trailing NULs and spaces, a rewritten title's padding, dropped). */
char *lp_import_argv_str(const void *p, size_t n)
{
	char *cmd = malloc(n + 1);
	if (!cmd)
		return NULL;
	memcpy(cmd, p, n);
	while (n && (cmd[n - 1] == 0 || cmd[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == 0)
			cmd[i] = ' ';
	cmd[n] = 0;
	return cmd;
}

static int core_proc_start(struct lp_import *imp, const struct lp_rec_header *h,
			   const struct lp_rec_proc_start *r, size_t len)
{
	size_t n = h->aux <= len - sizeof(*r) ? h->aux : len - sizeof(*r);
	char *cmd = lp_import_argv_str(r + 1, n);
	if (!cmd)
		return -ENOMEM;
	sqlite3_stmt *st = core_of(imp)->upd_start;
	sqlite3_bind_text(st, 1, cmd, -1, SQLITE_TRANSIENT);
	size_t exe_len = strnlen((const char *)(r + 1), n);
	sqlite3_bind_text(st, 2, (const char *)(r + 1), (int)exe_len, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, imp->proc->id);
	free(cmd);
	return lp_import_step(imp, st);
}

/* The title at exit, stored only when it differs from the exec command
 * line (the process rewrote it). */
static int core_proc_title(struct lp_import *imp, const struct lp_rec_header *h,
			   const struct lp_rec_proc_exit *r, size_t len)
{
	size_t n = h->aux <= len - sizeof(*r) ? h->aux : len - sizeof(*r);
	if (!n)
		return 0;
	char *title = lp_import_argv_str(r + 1, n);
	if (!title)
		return -ENOMEM;
	sqlite3_stmt *st = core_of(imp)->upd_title;
	sqlite3_bind_text(st, 1, title, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, imp->proc->id);
	free(title);
	return lp_import_step(imp, st);
}

static int core_proc_exit(struct lp_import *imp, const struct lp_rec_proc_exit *r)
{
	static const char *const how[] = {"", "exit", "_exit", "signal", "returned"};
	sqlite3_stmt *st = core_of(imp)->upd_exit;
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
	core_seen(imp, r->ts);
	return lp_import_step(imp, st);
}

int lp_core_pass1(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
		  const void *payload, size_t len)
{
	switch (h->type) {
	case LP_REC_PROC_START:
		if (len >= sizeof(struct lp_rec_proc_start))
			return core_proc_start(imp, h, payload, len);
		break;
	case LP_REC_PROC_EXIT:
		if (len >= sizeof(struct lp_rec_proc_exit)) {
			int rc = core_proc_exit(imp, payload);
			return rc ? rc : core_proc_title(imp, h, payload, len);
		}
		break;
	case LP_REC_EXEC:
		if (len >= sizeof(struct lp_rec_exec)) {
			const struct lp_rec_exec *r = payload;
			size_t n = len - sizeof(*r) < h->aux ? len - sizeof(*r) : h->aux;
			const char *path = (const char *)(r + 1);
			size_t pl = strnlen(path, n);
			sqlite3_stmt *st = core_of(imp)->upd_exec;
			sqlite3_bind_int64(st, 1, (int64_t)r->ts);
			sqlite3_bind_text(st, 2, path, (int)pl, SQLITE_TRANSIENT);
			/* why the program will not be recorded, after the path's NUL */
			if (pl + 1 < n)
				sqlite3_bind_text(st, 3, path + pl + 1,
						  (int)strnlen(path + pl + 1, n - pl - 1),
						  SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(st, 3);
			sqlite3_bind_int64(st, 4, imp->proc->id);
			core_seen(imp, r->ts);
			return lp_import_step(imp, st);
		}
		break;
	}
	return 0;
}

/* LP_REC_LOCK_SHARED: this process's address of a shared lock. */
static int core_lock_shared(struct core_state *s, const struct lp_rec_header *h,
			    const struct lp_rec_lock_shared *r, size_t len)
{
	uint64_t k;
	if (len < sizeof(*r) || !r->lock || lp_map_get(&s->shared, r->lock, &k))
		return 0;
	size_t i = 0;
	while (i < s->n_skeys && (s->skeys[i].dev != r->dev || s->skeys[i].ino != r->ino ||
				  s->skeys[i].offset != r->offset))
		i++;
	if (i == s->n_skeys) {
		if (s->n_skeys == s->cap_skeys) {
			size_t cap = s->cap_skeys ? 2 * s->cap_skeys : 16;
			void *n = realloc(s->skeys, cap * sizeof(*s->skeys));
			if (!n)
				return -ENOMEM;
			s->skeys = n;
			s->cap_skeys = cap;
		}
		size_t plen = len - sizeof(*r) < h->aux ? len - sizeof(*r) : h->aux;
		char *path = strndup((const char *)(r + 1), plen);
		if (!path)
			return -ENOMEM;
		s->skeys[s->n_skeys++] = (struct shared_key){r->dev, r->ino, r->offset, 0, path};
	}
	return lp_map_put(&s->shared, r->lock, i + 1) ? -ENOMEM : 0;
}

/* The row of a shared lock another process already made, else 0; a new
 * row gets the mapping's name ("sem.mp-x1y2+0x0", module the path). */
static int64_t core_lock_shared_id(struct lp_import *imp, uint64_t addr, int64_t made)
{
	struct core_state *s = core_of(imp);
	uint64_t k;
	if (!lp_map_get(&s->shared, addr, &k))
		return 0;
	struct shared_key *key = &s->skeys[k - 1];
	if (!made)
		return key->lock_id;
	key->lock_id = made;
	const char *base = strrchr(key->path, '/');
	char name[320];
	/* inherited MAP_SHARED | MAP_ANONYMOUS memory maps as /dev/zero */
	snprintf(name, sizeof(name), "%s+0x%llx",
		 !strcmp(key->path, "/dev/zero") ? "shared anonymous memory"
		 : base				 ? base + 1
						 : key->path,
		 (unsigned long long)key->offset);
	sqlite3_bind_text(s->upd_lock_name, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s->upd_lock_name, 2, key->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s->upd_lock_name, 3, made);
	return lp_import_step(imp, s->upd_lock_name) ? -1 : made;
}

static int64_t core_lock(struct lp_import *imp, uint64_t addr, uint32_t kind)
{
	static const char *const kinds[] = {"?",   "mutex", "rwlock", "rwlock",
					    "sem", "spin",  "futex"};
	struct core_state *s = core_of(imp);
	uint64_t id;
	if (lp_map_get(&s->locks, addr, &id))
		return (int64_t)id;
	int64_t shared = s->shared.len ? core_lock_shared_id(imp, addr, 0) : 0;
	if (shared > 0) {
		lp_map_put(&s->locks, addr, (uint64_t)shared);
		return shared;
	}
	sqlite3_bind_int64(s->ins_lock, 1, imp->proc->id);
	sqlite3_bind_int64(s->ins_lock, 2, (int64_t)addr);
	sqlite3_bind_text(s->ins_lock, 3, kinds[kind < 7 ? kind : 0], -1, SQLITE_STATIC);
	if (lp_import_step(imp, s->ins_lock))
		return 0;
	id = (uint64_t)sqlite3_last_insert_rowid(imp->db);
	if (s->shared.len && core_lock_shared_id(imp, addr, (int64_t)id) < 0)
		return 0;
	lp_map_put(&s->locks, addr, id);
	return (int64_t)id;
}

static void bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int sorted_emit(void *ctx, const struct lp_waitsort_row *r)
{
	struct lp_import *imp = ctx;
	struct lp_batch *b = &core_of(imp)->waits;
	int64_t *v = lp_batch_row(b);
	v[0] = r->lock_id;
	v[1] = r->thread_id;
	v[2] = r->owner_tid;
	v[3] = r->start_ns;
	v[4] = r->dur_ns;
	v[5] = r->mode;
	v[6] = r->stack_id;
	v[7] = r->flags;
	v[8] = ++core_of(imp)->wait_ids; /* start order, as they go in */
	v[9] = r->runq_ns;
	return lp_batch_full(b) ? lp_batch_flush(imp, b) : 0;
}

/* Every lock wait held so far into the database, in start order. */
static int waits_flush_sorted(struct lp_import *imp)
{
	int rc = lp_waitsort_drain(&core_of(imp)->sorted, sorted_emit, imp);
	return rc ? rc : lp_batch_flush(imp, &core_of(imp)->waits);
}

/* A record's runq as the database stores it: -1 (NULL) when unknown, at
 * most the wait's duration. */
static int64_t core_runq(uint64_t runq, uint64_t dur)
{
	if (runq == LP_RUNQ_UNKNOWN)
		return -1;
	return (int64_t)(runq < dur ? runq : dur);
}

static int core_lock_wait(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
			  const struct lp_rec_lock_wait *r)
{
	struct core_state *s = core_of(imp);
	int64_t lock = r->lock ? core_lock(imp, r->lock, h->aux) : 0;
	int64_t thread = lp_import_thread(imp, tid);
	if (!lock || !thread || r->end < r->start)
		return lock && thread ? 0 : -EIO;
	int64_t stack = lp_import_stack(imp, r->stack);
	/* Database ids: far below 2^32 in any import this holds in memory. */
	assert(lock <= UINT32_MAX && thread <= UINT32_MAX && stack <= UINT32_MAX);
	struct lp_waitsort_row row = {
	    .start_ns = (int64_t)r->start,
	    .dur_ns = (int64_t)(r->end - r->start),
	    .runq_ns = core_runq(r->runq, r->end - r->start),
	    .lock_id = (uint32_t)lock,
	    .thread_id = (uint32_t)thread,
	    .stack_id = (uint32_t)stack,
	    .owner_tid = r->owner,
	    .flags = r->flags,
	    .mode = h->aux == LP_LOCK_RWLOCK_RD,
	};
	core_seen(imp, r->end);
	/* Without memory to hold it, the wait goes in now, out of order: the
	 * same rows, only a slower index. */
	if (lp_waitsort_add(&s->sorted, &row))
		return sorted_emit(imp, &row);
	return lp_waitsort_full(&s->sorted) ? waits_flush_sorted(imp) : 0;
}

static int core_cond_wait(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
			  const struct lp_rec_cond_wait *r)
{
	struct core_state *s = core_of(imp);
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	if (r->end < r->start)
		return 0;
	int64_t *v = lp_batch_row(&s->conds);
	v[0] = thread;
	v[1] = (int64_t)r->cond;
	v[2] = r->mutex ? core_lock(imp, r->mutex, LP_LOCK_MUTEX) : 0;
	v[3] = (int64_t)r->start;
	v[4] = (int64_t)(r->end - r->start);
	v[5] = h->aux == LP_COND_TIMEDWAIT;
	v[6] = lp_import_stack(imp, r->stack);
	v[7] = (int)r->flags;
	v[8] = core_runq(r->runq, r->end - r->start);
	core_seen(imp, r->end);
	return lp_batch_full(&s->conds) ? lp_batch_flush(imp, &s->conds) : 0;
}

static const char *block_call_name(uint32_t call)
{
	static const char *const names[LP_BLK_CALL_MAX + 1] = {
	    [LP_BLK_NANOSLEEP] = "nanosleep",
	    [LP_BLK_CLOCK_NANOSLEEP] = "clock_nanosleep",
	    [LP_BLK_USLEEP] = "usleep",
	    [LP_BLK_SLEEP] = "sleep",
	    [LP_BLK_READ] = "read",
	    [LP_BLK_WRITE] = "write",
	    [LP_BLK_PREAD] = "pread",
	    [LP_BLK_PWRITE] = "pwrite",
	    [LP_BLK_READV] = "readv",
	    [LP_BLK_WRITEV] = "writev",
	    [LP_BLK_FFLUSH] = "fflush",
	    [LP_BLK_RECV] = "recv",
	    [LP_BLK_SEND] = "send",
	    [LP_BLK_RECVFROM] = "recvfrom",
	    [LP_BLK_SENDTO] = "sendto",
	    [LP_BLK_RECVMSG] = "recvmsg",
	    [LP_BLK_SENDMSG] = "sendmsg",
	    [LP_BLK_ACCEPT] = "accept",
	    [LP_BLK_CONNECT] = "connect",
	    [LP_BLK_SENDFILE] = "sendfile",
	    [LP_BLK_POLL] = "poll",
	    [LP_BLK_PPOLL] = "ppoll",
	    [LP_BLK_SELECT] = "select",
	    [LP_BLK_PSELECT] = "pselect",
	    [LP_BLK_EPOLL_WAIT] = "epoll_wait",
	    [LP_BLK_EPOLL_PWAIT] = "epoll_pwait",
	    [LP_BLK_IO_URING_ENTER] = "io_uring_enter",
	    [LP_BLK_FSYNC] = "fsync",
	    [LP_BLK_FDATASYNC] = "fdatasync",
	    [LP_BLK_GETADDRINFO] = "getaddrinfo",
	    [LP_BLK_GETNAMEINFO] = "getnameinfo",
	    [LP_BLK_GETHOSTBYNAME] = "gethostbyname",
	    [LP_BLK_GETHOSTBYADDR] = "gethostbyaddr",
	    [LP_BLK_FUTEX] = "futex",
	    [LP_BLK_PTHREAD_JOIN] = "pthread_join",
	    [LP_BLK_WAIT] = "wait",
	    [LP_BLK_WAITPID] = "waitpid",
	    [LP_BLK_WAIT3] = "wait3",
	    [LP_BLK_WAIT4] = "wait4",
	    [LP_BLK_WAITID] = "waitid",
	    [LP_BLK_PAUSE] = "pause",
	    [LP_BLK_SIGSUSPEND] = "sigsuspend",
	    [LP_BLK_SIGWAIT] = "sigwait",
	    [LP_BLK_SIGWAITINFO] = "sigwaitinfo",
	    [LP_BLK_SIGTIMEDWAIT] = "sigtimedwait",
	    [LP_BLK_FLOCK] = "flock",
	    [LP_BLK_FCNTL] = "fcntl",
	    [LP_BLK_LOCKF] = "lockf",
	};
	return call <= LP_BLK_CALL_MAX ? names[call] : NULL;
}

/* The breakdown category of a blocking call (docs/schema.md): the call
 * decides for sleeps, waits and syncs; the descriptor for I/O. */
static const char *block_category(uint32_t call, uint32_t fd_kind)
{
	if (call < LP_BLK_READ)
		return "sleep";
	if (call >= LP_BLK_POLL && call < LP_BLK_FSYNC)
		return "poll_wait";
	if (call == LP_BLK_FSYNC || call == LP_BLK_FDATASYNC)
		return "file_io";
	if (call >= LP_BLK_GETADDRINFO && call <= LP_BLK_GETHOSTBYADDR)
		return "socket_io"; /* a name lookup waits on its DNS server */
	if (call >= LP_BLK_FUTEX)
		return "other_block";
	return fd_kind == LP_FD_FILE	 ? "file_io"
	       : fd_kind == LP_FD_SOCKET ? "socket_io"
					 : "other_block";
}

/* blocking_calls.fd_kind by enum lp_fd_kind (LP_FD_NONE: NULL) */
static const char *const core_fd_kinds[] = {NULL,      "file", "socket", "pipe",
					    "eventfd", "tty",  "other",	 "unknown"};

static int core_block(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
		      const struct lp_rec_block *r)
{
	const char *call = block_call_name(h->aux);
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	if (!call || r->end < r->start)
		return 0; /* a call id this importer does not know: skipped */
	sqlite3_stmt *st = core_of(imp)->ins_block;
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, (int64_t)r->start);
	sqlite3_bind_int64(st, 3, (int64_t)(r->end - r->start));
	sqlite3_bind_text(st, 4, call, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, block_category(h->aux, r->fd_kind), -1, SQLITE_STATIC);
	if (r->fd >= 0)
		sqlite3_bind_int64(st, 6, r->fd);
	else
		sqlite3_bind_null(st, 6);
	if (r->fd_kind && r->fd_kind < ARRAY_SIZE(core_fd_kinds))
		sqlite3_bind_text(st, 7, core_fd_kinds[r->fd_kind], -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 7);
	sqlite3_bind_int64(st, 8, r->result);
	bind_opt(st, 9, lp_import_stack(imp, r->stack));
	sqlite3_bind_int64(st, 10,
			   r->flags & (LP_WAITF_UNFINISHED | LP_WAITF_DIED | LP_WAITF_PENDING));
	int64_t runq = core_runq(r->runq, r->end - r->start);
	if (runq >= 0)
		sqlite3_bind_int64(st, 11, runq);
	else
		sqlite3_bind_null(st, 11);
	core_seen(imp, r->end);
	return lp_import_step(imp, st);
}

/* LP_REC_LOCK_HOLD: a long hold of a lock some thread waited on. */
static int core_lock_hold(struct lp_import *imp, uint32_t tid, const struct lp_rec_header *h,
			  const struct lp_rec_lock_hold *r)
{
	int64_t lock = r->lock ? core_lock(imp, r->lock, h->aux) : 0;
	int64_t thread = lp_import_thread(imp, tid);
	if (!lock || !thread || r->end < r->start)
		return lock && thread ? 0 : -EIO;
	sqlite3_stmt *st = core_of(imp)->ins_hold;
	sqlite3_bind_int64(st, 1, lock);
	sqlite3_bind_int64(st, 2, thread);
	sqlite3_bind_int64(st, 3, (int64_t)r->start);
	sqlite3_bind_int64(st, 4, (int64_t)(r->end - r->start));
	bind_opt(st, 5, lp_import_stack(imp, r->stack));
	core_seen(imp, r->end);
	return lp_import_step(imp, st);
}

/* The kind of descriptor fd last had in this process's recorded calls: a
 * dead process's descriptor cannot be looked at. */
static uint32_t core_fd_kind_seen(struct lp_import *imp, int fd)
{
	sqlite3_stmt *st = core_of(imp)->sel_fd_kind;
	uint32_t kind = LP_FD_UNKNOWN;
	sqlite3_bind_int64(st, 1, imp->proc->id);
	sqlite3_bind_int(st, 2, fd);
	if (lp_db_step_row(st) && sqlite3_column_text(st, 0))
		for (uint32_t k = LP_FD_FILE; k < LP_FD_UNKNOWN; k++)
			if (!strcmp((const char *)sqlite3_column_text(st, 0), core_fd_kinds[k]))
				kind = k;
	sqlite3_reset(st);
	return kind;
}

int lp_core_inflight(struct lp_import *imp, const struct lp_inf_wait *w, uint32_t stack)
{
	uint32_t type = w->what >> 8, aux = w->what & 0xff;
	uint32_t flags = LP_WAITF_UNFINISHED | LP_WAITF_PENDING;
	struct lp_rec_header h = {.type = (uint16_t)type, .aux = aux};
	if (type == LP_REC_LOCK_WAIT && w->obj) { /* no lock: a damaged slot */
		struct lp_rec_lock_wait r = {.lock = w->obj,
					     .start = w->start,
					     .end = w->start,
					     .stack = stack,
					     .flags = flags,
					     .runq = LP_RUNQ_UNKNOWN};
		core_of(imp)->died_pending++;
		return core_lock_wait(imp, w->tid, &h, &r);
	}
	if (type == LP_REC_COND_WAIT) {
		struct lp_rec_cond_wait r = {.cond = w->obj,
					     .mutex = w->obj2,
					     .start = w->start,
					     .end = w->start,
					     .stack = stack,
					     .flags = flags,
					     .runq = LP_RUNQ_UNKNOWN};
		core_of(imp)->died_pending++;
		return core_cond_wait(imp, w->tid, &h, &r);
	}
	if (type == LP_REC_BLOCK) {
		int fd = (int)(int64_t)w->obj;
		struct lp_rec_block r = {.start = w->start,
					 .end = w->start,
					 .fd = fd,
					 .stack = stack,
					 .fd_kind =
					     fd >= 0 ? core_fd_kind_seen(imp, fd) : LP_FD_NONE,
					 .flags = flags,
					 .runq = LP_RUNQ_UNKNOWN};
		core_of(imp)->died_pending += block_call_name(w->what & 0xff) != NULL;
		return core_block(imp, w->tid, &h, &r);
	}
	return 0;
}

static int core_thread(struct lp_import *imp, sqlite3_stmt *st, uint32_t tid, int64_t a, int64_t b,
		       int has_b)
{
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	sqlite3_bind_int64(st, 1, a);
	if (has_b)
		bind_opt(st, 2, b);
	sqlite3_bind_int64(st, has_b ? 3 : 2, thread);
	return lp_import_step(imp, st);
}

static int core_child(struct core_state *s, const struct lp_rec_child_status *r)
{
	if (s->n_children == s->cap_children) {
		s->cap_children = s->cap_children ? 2 * s->cap_children : 64;
		void *n = realloc(s->children, s->cap_children * sizeof(*s->children));
		if (!n)
			return -ENOMEM;
		s->children = n;
	}
	s->children[s->n_children].pid = r->pid;
	s->children[s->n_children].ts = r->ts;
	s->children[s->n_children++].status = r->status;
	return 0;
}

/* A wait record of len bytes at p into *out (size bytes): 1, or 0 when it
 * is shorter than the first layout (v1, before runq: its runq is then
 * unknown). */
static int core_widen(void *out, size_t size, const void *p, size_t len, size_t v1, uint64_t *runq)
{
	if (len < v1)
		return 0;
	*runq = LP_RUNQ_UNKNOWN;
	memcpy(out, p, len < size ? len : size);
	return 1;
}

static int core_record(struct lp_import *imp, void *state, uint32_t tid,
		       const struct lp_rec_header *h, const void *p, size_t len)
{
	struct core_state *s = state;
	const struct lp_rec_thread_start *ts = p;
	const struct lp_rec_thread_name *tn = p;
	switch (h->type) {
	case LP_REC_LOCK_WAIT: {
		struct lp_rec_lock_wait r;
		return core_widen(&r, sizeof(r), p, len, LP_REC_LOCK_WAIT_V1_SIZE, &r.runq)
			   ? core_lock_wait(imp, tid, h, &r)
			   : 0;
	}
	case LP_REC_COND_WAIT: {
		struct lp_rec_cond_wait r;
		return core_widen(&r, sizeof(r), p, len, LP_REC_COND_WAIT_V1_SIZE, &r.runq)
			   ? core_cond_wait(imp, tid, h, &r)
			   : 0;
	}
	case LP_REC_THREAD_START:
		if (len < sizeof(*ts))
			return 0;
		core_seen(imp, ts->ts);
		return core_thread(imp, s->upd_thread_start, ts->tid ? ts->tid : tid,
				   (int64_t)ts->ts, ts->parent_tid, 1);
	case LP_REC_THREAD_NAME:
		if (len < sizeof(*tn))
			return 0;
		return core_thread(imp, s->upd_thread_name, tn->tid ? tn->tid : tid,
				   lp_import_string(imp, tn->name), 0, 0);
	case LP_REC_THREAD_END:
		if (len < sizeof(struct lp_rec_thread_end))
			return 0;
		core_seen(imp, ((const struct lp_rec_thread_end *)p)->ts);
		return core_thread(imp, s->upd_thread_end, tid,
				   (int64_t)((const struct lp_rec_thread_end *)p)->ts, 0, 0);
	case LP_REC_CHILD_STATUS:
		return len >= sizeof(struct lp_rec_child_status) ? core_child(s, p) : 0;
	case LP_REC_LOCK_SHARED:
		return core_lock_shared(s, h, p, len);
	case LP_REC_LOCK_HOLD:
		return len >= sizeof(struct lp_rec_lock_hold) ? core_lock_hold(imp, tid, h, p) : 0;
	case LP_REC_BLOCK: {
		struct lp_rec_block r;
		return core_widen(&r, sizeof(r), p, len, LP_REC_BLOCK_V1_SIZE, &r.runq)
			   ? core_block(imp, tid, h, &r)
			   : 0;
	}
	default:
		/* CTX, STRING, STACK, MODULE, PROC_*, EXEC: handled in pass 1. */
		if (len >= 8 && (h->type == LP_REC_PROC_START))
			return lp_import_thread(imp, tid) ? 0 : -EIO;
		return 0;
	}
}

void lp_core_add_table_counts(struct lp_import *imp, long long dropped_records, int unclosed,
			      uint64_t realtime_ns)
{
	struct core_state *s = core_of(imp);
	s->dropped_records += dropped_records;
	s->unclosed += unclosed;
	if (realtime_ns && (!s->first_realtime_ns || realtime_ns < s->first_realtime_ns))
		s->first_realtime_ns = realtime_ns;
}

/* Name each lock of this process after the variable that holds it. */
static int core_end_process(struct lp_import *imp, void *state)
{
	struct core_state *s = state;
	/* Lock waits stay held: in start order across processes, the index
	 * still grows at its end where processes overlap in time. */
	if (lp_batch_flush(imp, &s->conds))
		return -EIO;
	for (size_t i = 0; i < s->locks.cap; i++) {
		if (!s->locks.keys[i])
			continue;
		struct lp_sym sym;
		int named = lp_symtab_lookup_data(imp->proc->symtab, s->locks.keys[i], &sym) == 0 &&
			    sym.function;
		if (!named && !sym.module)
			continue; /* heap or stack */
		char name[512];
		if (!named) { /* static data of a stripped module: module+0xOFF (.bss) */
			const char *base = strrchr(sym.module, '/');
			snprintf(name, sizeof(name), "%s+0x%llx%s%s%s",
				 base ? base + 1 : sym.module, (unsigned long long)sym.offset,
				 sym.section ? " (" : "", sym.section ? sym.section : "",
				 sym.section ? ")" : "");
		} else if (sym.sym_offset)
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

static int core_apply_children(struct lp_import *imp, struct core_state *s)
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
int lp_import_core_reaped(struct lp_import *imp, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	struct lp_rec_child_status r = {0};
	unsigned pid;
	int status;
	unsigned long long ts;
	char line[128];
	/* "pid status ts"; runs before the time was written: "pid status" */
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%u %d %llu", &pid, &status, &ts);
		if (n < 2)
			continue;
		r.pid = pid;
		r.status = status;
		r.ts = n == 3 ? ts : 0;
		core_child(core_of(imp), &r);
	}
	fclose(f);
	return 0;
}

/* The waits processes died in (lp_core_inflight) end at their death: the
 * time `latprof run` or a recorded parent reaped them, killed by a signal.
 * Those of an image with no such death (still running, or gone another
 * way) are dropped, counted. The process lived until then too. */
#define LP_DIED_PROC "(SELECT id FROM processes WHERE pid = ?2 ORDER BY start_ns DESC LIMIT 1)"
#define LP_DIED_SET(table)                                                                         \
	"UPDATE " table                                                                            \
	" SET dur_ns = max(0, ?1 - start_ns), flags = (flags & ~" LP_WAITF_PENDING_SQL ") | 8 "    \
	"WHERE flags & " LP_WAITF_PENDING_SQL                                                      \
	" AND thread_id IN (SELECT id FROM threads WHERE process_id "                              \
	"= " LP_DIED_PROC ")"

static int core_died(struct lp_import *imp, struct core_state *s)
{
	static const char *const set[] = {
	    LP_DIED_SET("lock_waits"), LP_DIED_SET("cond_waits"), LP_DIED_SET("blocking_calls"),
	    "UPDATE processes SET end_ns = max(coalesce(end_ns, 0), ?1) "
	    "WHERE id = " LP_DIED_PROC};
	static const char drop[] =
	    "DELETE FROM lock_waits WHERE flags & " LP_WAITF_PENDING_SQL ";"
	    "DELETE FROM cond_waits WHERE flags & " LP_WAITF_PENDING_SQL ";"
	    "DELETE FROM blocking_calls WHERE flags & " LP_WAITF_PENDING_SQL ";";
	/* not a scan of the wait tables: a run with no killed process pays nothing */
	long long pending = s->died_pending;
	if (!pending)
		return 0;
	sqlite3_stmt *st[ARRAY_SIZE(set)] = {0};
	int rc = 0;
	long long found = 0;
	for (size_t k = 0; rc == 0 && k < ARRAY_SIZE(set); k++)
		rc = (st[k] = lp_import_prepare(imp, set[k])) ? 0 : -EIO;
	for (size_t i = 0; rc == 0 && i < s->n_children; i++) {
		const struct child_status *c = &s->children[i];
		if (!WIFSIGNALED(c->status) || !c->ts)
			continue;
		int changed = 0;
		for (size_t k = 0; rc == 0 && k < ARRAY_SIZE(set); k++) {
			if (k == ARRAY_SIZE(set) - 1 && !changed)
				break; /* the process lived until then only if it waited */
			sqlite3_bind_int64(st[k], 1, (int64_t)c->ts);
			sqlite3_bind_int64(st[k], 2, c->pid);
			rc = lp_import_step(imp, st[k]);
			changed += k < ARRAY_SIZE(set) - 1 ? sqlite3_changes(imp->db) : 0;
		}
		found += changed;
	}
	for (size_t k = 0; k < ARRAY_SIZE(set); k++)
		sqlite3_finalize(st[k]);
	rc = rc ? rc : lp_db_exec(imp->db, drop, imp->err, imp->errlen);
	rc = rc ? rc : lp_import_meta(imp, "import.died_waits", NULL, found);
	return rc || pending == found
		   ? rc
		   : lp_import_meta(imp, "import.died_waits_no_death", NULL, pending - found);
}

static int core_finish(struct lp_import *imp, void *state)
{
	struct core_state *s = state;
	char buf[256];
	struct utsname u;
	/* Each statement below finds a process by pid and start: without an
	 * index, a scan of the table per process. The import of 2,000 forked
	 * children took 0.90 s, 97% of it here; with the index, 0.04 s in all.
	 * Readers that look a pid up use it too. */
	int rc = waits_flush_sorted(imp);
	rc = rc ? rc
		: lp_db_exec(imp->db,
			     "CREATE INDEX IF NOT EXISTS processes_pid ON processes(pid, start_ns)",
			     imp->err, imp->errlen);
	rc = rc ? rc : core_apply_children(imp, s);
	rc = rc ? rc : core_died(imp, s);
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
	rc = rc ? rc : lp_import_meta(imp, "dropped_holds", NULL, s->dropped_holds);
	rc = rc ? rc : lp_import_meta(imp, "unclosed_logs", NULL, s->unclosed);
	rc = rc ? rc : lp_import_meta(imp, "low_fd_logs", NULL, s->low_fd);
	return rc;
}

static int core_begin(struct lp_import *imp, void **state)
{
	struct core_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*state = s;
	s->ins_proc = lp_import_prepare(
	    imp, "INSERT INTO processes(pid, ppid, start_ns, log_closed, dropped_records, "
		 "dropped_chunks, dropped_strings, end_ns) VALUES (?,?,?,?,?,?,?,?)");
	s->upd_start =
	    lp_import_prepare(imp, "UPDATE processes SET cmdline = ?, exe = ? WHERE id = ?");
	s->upd_title = lp_import_prepare(
	    imp, "UPDATE processes SET title = ?1 WHERE id = ?2 AND cmdline IS NOT ?1");
	s->upd_exit = lp_import_prepare(
	    imp, "UPDATE processes SET end_ns = ?, exit_status = ?, exit_signal = ?, exit_how = ?, "
		 "exec_path = NULL, exec_unrecorded = NULL WHERE id = ?"); /* the exec failed */
	s->upd_exec = lp_import_prepare(imp, "UPDATE processes SET end_ns = ?, exit_how = 'exec', "
					     "exec_path = ?, exec_unrecorded = ? WHERE id = ?");
	s->upd_proc_end = lp_import_prepare(
	    imp, "UPDATE processes SET end_ns = max(coalesce(end_ns, 0), ?) WHERE id = ?");
	s->upd_thread_start =
	    lp_import_prepare(imp, "UPDATE threads SET start_ns = ?, parent_tid = ? WHERE id = ?");
	s->upd_thread_name = lp_import_prepare(
	    imp, "UPDATE threads SET name = (SELECT value FROM strings WHERE id = ?) WHERE id = ?");
	s->upd_thread_end = lp_import_prepare(imp, "UPDATE threads SET end_ns = ? WHERE id = ?");
	s->ins_lock =
	    lp_import_prepare(imp, "INSERT INTO locks(process_id, address, kind) VALUES (?,?,?)");
	s->upd_lock_name =
	    lp_import_prepare(imp, "UPDATE locks SET name = ?, module = ? WHERE id = ?");
	s->ins_block = lp_import_prepare(
	    imp, "INSERT INTO blocking_calls(thread_id, start_ns, dur_ns, call, category, fd, "
		 "fd_kind, result, stack_id, flags, runq_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
	s->sel_fd_kind = lp_import_prepare(
	    imp, "SELECT b.fd_kind FROM blocking_calls b JOIN threads t ON t.id = b.thread_id "
		 "WHERE t.process_id = ?1 AND b.fd = ?2 AND b.fd_kind IS NOT 'unknown' "
		 "ORDER BY b.start_ns DESC LIMIT 1");
	s->ins_hold = lp_import_prepare(imp, "INSERT INTO lock_holds(lock_id, thread_id, start_ns, "
					     "dur_ns, stack_id) VALUES (?,?,?,?,?)");
	if (!s->ins_block || !s->sel_fd_kind || !s->ins_hold)
		return -EIO;
	if (!s->ins_proc || !s->upd_start || !s->upd_exit || !s->upd_title || !s->upd_exec ||
	    !s->upd_proc_end || !s->upd_thread_start || !s->upd_thread_name || !s->upd_thread_end ||
	    !s->ins_lock || !s->upd_lock_name)
		return -EIO;
	int rc = lp_batch_init(imp, &s->waits, "lp_wait_batch", lp_wait_insert, 10, LP_WAIT_OPT,
			       LP_WAIT_SPARSE);
	rc = rc ? rc
		: lp_batch_init(imp, &s->conds, "lp_cond_batch", lp_cond_insert, 9, LP_COND_OPT,
				LP_COND_SPARSE);
	s->waits.null_if_neg = 1u << 9; /* runq_ns */
	s->conds.null_if_neg = 1u << 8;
	return rc;
}

static void core_destroy(void *state)
{
	struct core_state *s = state;
	if (!s)
		return;
	sqlite3_stmt *all[] = {s->ins_proc,	  s->upd_start,	       s->upd_exit,
			       s->upd_exec,	  s->upd_thread_start, s->upd_thread_name,
			       s->upd_thread_end, s->ins_lock,	       s->upd_lock_name,
			       s->upd_proc_end,	  s->ins_block,	       s->upd_title,
			       s->sel_fd_kind,	  s->ins_hold};
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		sqlite3_finalize(all[i]);
	lp_batch_free(&s->waits);
	lp_batch_free(&s->conds);
	lp_waitsort_free(&s->sorted);
	lp_map_free(&s->locks);
	lp_map_free(&s->shared);
	for (size_t i = 0; i < s->n_skeys; i++)
		free(s->skeys[i].path);
	free(s->skeys);
	free(s->children);
	free(s);
}

/* lock_waits needs none: it is clustered by start (schemas/core.sql). */
static const char lp_core_indexes[] =
    "CREATE INDEX cond_waits_start ON cond_waits(start_ns);"
    "CREATE INDEX blocking_calls_start ON blocking_calls(start_ns);"
    "CREATE INDEX threads_tid ON threads(process_id, tid);";

const struct lp_import_source lp_src_core = {
    .name = "core",
    .first_type = 1,
    .last_type = LP_REC_CORE_LAST,
    .schema = lp_schema_core_sql,
    .indexes = lp_core_indexes,
    .begin = core_begin,
    .record = core_record,
    .end_process = core_end_process,
    .finish = core_finish,
    .destroy = core_destroy,
};
