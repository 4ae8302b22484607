/* SPDX-License-Identifier: MIT */
/*
 * Rows of a foreign capture (lp_import_foreign.h): one prepared insert per
 * table, small maps for the ids the sources give, and the passes that need
 * every row: nesting ranges per thread, classifying syncs by the API call
 * that caused them, and the meta rows the reports read.
 */
#define _GNU_SOURCE
#include "lp_import_foreign.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lp_db.h"
#include "lp_nvtx_db.h"

/* ---- setup ---------------------------------------------------------------- */

#define LP_COMMON "process_id, device, context, stream, correlation_id, start_ns, end_ns"

int lp_foreign_begin(struct lp_foreign *fx, struct lp_import *imp)
{
	fx->imp = imp;
	struct {
		sqlite3_stmt **st;
		const char *sql;
	} v[] = {
	    {&fx->ins_proc, "INSERT INTO processes(pid, ppid, cmdline, exe, start_ns, log_closed) "
			    "VALUES (?1, 0, ?2, ?2, 0, 1)"},
	    {&fx->ins_thread, "INSERT INTO threads(process_id, tid) VALUES (?,?)"},
	    {&fx->ins_kernel,
	     "INSERT INTO kernels(" LP_COMMON ", name_id, mangled_id, grid_x, grid_y, grid_z, "
	     "block_x, block_y, block_z, static_smem, dynamic_smem, registers, graph_id) VALUES "
	     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
	    {&fx->ins_memcpy, "INSERT INTO memcpys(" LP_COMMON ", bytes, copy_kind, src_kind, "
			      "dst_kind, async) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"},
	    {&fx->ins_memset, "INSERT INTO memsets(" LP_COMMON ", bytes, value, memory_kind, "
			      "async) VALUES (?,?,?,?,?,?,?,?,?,?,?)"},
	    {&fx->ins_sync, "INSERT INTO syncs(process_id, type, context, stream, event, "
			    "correlation_id, start_ns, end_ns) VALUES (?,?,?,?,?,?,?,?)"},
	    {&fx->ins_api, "INSERT INTO cuda_api(process_id, thread_id, domain, cbid, name_id, "
			   "correlation_id, start_ns, end_ns, return_value) VALUES "
			   "(?,?,?,?,?,?,?,?,?)"},
	    {&fx->ins_range,
	     "INSERT INTO ranges(process_id, domain_id, name_id, category, start_ns, end_ns, "
	     "start_thread_id, end_thread_id, payload, color, flags) VALUES "
	     "(?,?,?,?,?,?,?,?,?,?,?)"},
	    {&fx->ins_mark, "INSERT INTO marks(process_id, domain_id, name_id, category, ts_ns, "
			    "thread_id) VALUES (?,?,?,?,?,?)"},
	    {&fx->ins_domain, "INSERT INTO domains(process_id, name) VALUES (?,?)"},
	    {&fx->ins_dev,
	     "INSERT INTO gpu_devices(process_id, device, name, sm_count, cc_major, cc_minor, "
	     "memory_bytes, core_clock_khz, mem_bandwidth_kbs) VALUES (?1,?2,?3,nullif(?4,-1),"
	     "nullif(?5,-1),nullif(?6,-1),nullif(?7,-1),nullif(?8,-1),nullif(?9,-1))"},
	    {&fx->ins_alloc, "INSERT INTO gpu_allocs(process_id, op, ts_ns, address, bytes, "
			     "memory_kind, device, context, correlation_id) VALUES "
			     "(?,?,?,?,?,?,?,?,?)"},
	    {&fx->ins_lock, "INSERT INTO locks(process_id, address, kind, name) VALUES (?,0,?,?)"},
	    {&fx->ins_wait, "INSERT INTO lock_waits(lock_id, thread_id, start_ns, dur_ns, id) "
			    "VALUES (?,?,?,?,?)"},
	    {&fx->ins_cond, "INSERT INTO cond_waits(thread_id, cond_addr, start_ns, dur_ns, "
			    "timed) VALUES (?,0,?,?,?)"},
	    {&fx->ins_block, "INSERT INTO blocking_calls(thread_id, start_ns, dur_ns, call, "
			     "category, fd, fd_kind, result) VALUES (?,?,?,?,?,NULL,?,?)"},
	};
	int rc = lp_db_exec(imp->db,
			    "CREATE TEMP TABLE lp_nest(domain_id INTEGER PRIMARY KEY, grp INTEGER)",
			    imp->err, imp->errlen);
	for (size_t i = 0; rc == 0 && i < sizeof(v) / sizeof(v[0]); i++)
		if (!(*v[i].st = lp_import_prepare(imp, v[i].sql)))
			rc = -EIO;
	if (rc == 0 && !(fx->ins_nest = lp_import_prepare(
			     imp, "INSERT OR REPLACE INTO temp.lp_nest VALUES (?,?)")))
		rc = -EIO;
	return rc;
}

void lp_foreign_end(struct lp_foreign *fx)
{
	sqlite3_stmt *v[] = {fx->ins_proc,   fx->ins_thread, fx->ins_kernel, fx->ins_memcpy,
			     fx->ins_memset, fx->ins_sync,   fx->ins_api,    fx->ins_range,
			     fx->ins_mark,   fx->ins_domain, fx->ins_dev,    fx->ins_alloc,
			     fx->ins_lock,   fx->ins_wait,   fx->ins_cond,   fx->ins_block,
			     fx->ins_nest};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		sqlite3_finalize(v[i]);
	lp_map_free(&fx->procs);
	lp_map_free(&fx->threads);
	lp_map_free(&fx->domains);
	lp_map_free(&fx->locks);
	lp_corrtally_free(&fx->tally);
	free(fx->lo);
	free(fx->hi);
	free(fx->calls);
}

/* ---- identities ------------------------------------------------------------- */

static int fx_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int64_t fx_insert(struct lp_foreign *fx, sqlite3_stmt *st)
{
	if (lp_import_step(fx->imp, st))
		return 0;
	return sqlite3_last_insert_rowid(fx->imp->db);
}

int64_t lp_foreign_process(struct lp_foreign *fx, int64_t pid, const char *name)
{
	uint64_t id;
	if (lp_map_get(&fx->procs, (uint64_t)pid + 1, &id))
		return (int64_t)id;
	sqlite3_bind_int64(fx->ins_proc, 1, pid);
	fx_bind_text(fx->ins_proc, 2, name);
	id = (uint64_t)fx_insert(fx, fx->ins_proc);
	if (id && lp_map_put(&fx->procs, (uint64_t)pid + 1, id))
		return 0;
	return (int64_t)id;
}

int64_t lp_foreign_thread(struct lp_foreign *fx, int64_t proc, int64_t pid, int64_t tid)
{
	uint64_t key = ((uint64_t)pid << 32 | (uint32_t)tid) + 1, id;
	if (lp_map_get(&fx->threads, key, &id))
		return (int64_t)id;
	sqlite3_bind_int64(fx->ins_thread, 1, proc);
	sqlite3_bind_int64(fx->ins_thread, 2, tid);
	id = (uint64_t)fx_insert(fx, fx->ins_thread);
	if (id && lp_map_put(&fx->threads, key, id))
		return 0;
	return (int64_t)id;
}

int lp_foreign_thread_name(struct lp_foreign *fx, int64_t thread, const char *name)
{
	sqlite3_stmt *st =
	    lp_import_prepare(fx->imp, "UPDATE threads SET name = ? WHERE id = ? AND name IS NULL");
	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, thread);
	int rc = lp_import_step(fx->imp, st);
	sqlite3_finalize(st);
	return rc;
}

int64_t lp_foreign_domain(struct lp_foreign *fx, int64_t proc, const char *name)
{
	uint64_t key = XXH3_64bits_withSeed(name, strlen(name), (uint64_t)proc) | 1, id;
	if (lp_map_get(&fx->domains, key, &id))
		return (int64_t)id;
	sqlite3_bind_int64(fx->ins_domain, 1, proc);
	sqlite3_bind_text(fx->ins_domain, 2, name, -1, SQLITE_TRANSIENT);
	id = (uint64_t)fx_insert(fx, fx->ins_domain);
	if (id && lp_map_put(&fx->domains, key, id))
		return 0;
	return (int64_t)id;
}

int lp_foreign_nest_group(struct lp_foreign *fx, int64_t domain, int64_t group)
{
	sqlite3_bind_int64(fx->ins_nest, 1, domain);
	sqlite3_bind_int64(fx->ins_nest, 2, group);
	return lp_import_step(fx->imp, fx->ins_nest);
}

void lp_foreign_seen(struct lp_foreign *fx, int64_t proc, int64_t start, int64_t end)
{
	if (proc < 0)
		return;
	if ((size_t)proc >= fx->nbounds) {
		size_t n = (size_t)proc * 2 + 8;
		int64_t *lo = realloc(fx->lo, n * sizeof(*lo));
		if (lo)
			fx->lo = lo;
		int64_t *hi = lo ? realloc(fx->hi, n * sizeof(*hi)) : NULL;
		if (hi)
			fx->hi = hi;
		long long *calls = hi ? realloc(fx->calls, n * sizeof(*calls)) : NULL;
		if (!calls)
			return; /* bounds stay at the rows' own values */
		fx->calls = calls;
		for (size_t i = fx->nbounds; i < n; i++) {
			fx->lo[i] = INT64_MAX;
			fx->hi[i] = INT64_MIN;
			fx->calls[i] = 0;
		}
		fx->nbounds = n;
	}
	if (start < fx->lo[proc])
		fx->lo[proc] = start;
	if (end > fx->hi[proc])
		fx->hi[proc] = end;
}

/* ---- rows -------------------------------------------------------------------- */

/* NULL for a column's "none" value, bound from C: a nullif() in the
 * INSERT was a SQL function call per row. */
static void fx_bind_opt(sqlite3_stmt *st, int i, int64_t v, int64_t none)
{
	if (v == none)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

/* The tally's key for rows of process proc: a process not known yet (0)
 * turns a per-process tally off (-1), lp_foreign_finish then counts by SQL. */
static int64_t fx_tally_key(const struct lp_foreign *fx, int64_t proc)
{
	return !fx->tally_per_process ? 0 : proc > 0 ? proc : -1;
}

/* GPU work: is its launching call in the capture (count_unattributed)? */
static void fx_attribute(struct lp_foreign *fx, const struct lp_foreign_op *o)
{
	if (fx->count_unattributed)
		lp_corrtally_work(&fx->tally, fx_tally_key(fx, o->proc), o->corr);
}

/* Bounds of GPU work not yet owned go to slot 0, moved by lp_foreign_adopt. */
static void fx_seen_op(struct lp_foreign *fx, const struct lp_foreign_op *o, int64_t end)
{
	int64_t proc = o->proc == fx->provisional ? 0 : o->proc;
	fx->unowned += o->proc == 0;
	lp_foreign_seen(fx, proc, o->start, end);
}

void lp_foreign_op_seen(struct lp_foreign *fx, const struct lp_foreign_op *o, int attribute)
{
	if (attribute)
		fx_attribute(fx, o);
	fx_seen_op(fx, o, o->end >= o->start ? o->end : o->start);
}

static void fx_bind_op(struct lp_foreign *fx, sqlite3_stmt *st, const struct lp_foreign_op *o)
{
	int64_t end = o->end >= o->start ? o->end : o->start;
	sqlite3_bind_int64(st, 1, o->proc);
	sqlite3_bind_int64(st, 2, o->device);
	sqlite3_bind_int64(st, 3, o->context);
	sqlite3_bind_int64(st, 4, o->stream);
	sqlite3_bind_int64(st, 5, o->corr);
	sqlite3_bind_int64(st, 6, o->start);
	sqlite3_bind_int64(st, 7, end);
	fx_seen_op(fx, o, end);
}

int lp_foreign_kernel(struct lp_foreign *fx, const struct lp_foreign_op *o, int64_t name_id,
		      int64_t mangled_id, const int64_t grid[3], const int64_t block[3],
		      int64_t static_smem, int64_t dyn_smem, int64_t regs, int64_t graph_id)
{
	sqlite3_stmt *st = fx->ins_kernel;
	fx_attribute(fx, o);
	fx_bind_op(fx, st, o);
	fx_bind_opt(st, 8, name_id, 0);
	fx_bind_opt(st, 9, mangled_id, 0);
	for (int i = 0; i < 3; i++) {
		sqlite3_bind_int64(st, 10 + i, grid[i]);
		sqlite3_bind_int64(st, 13 + i, block[i]);
	}
	sqlite3_bind_int64(st, 16, static_smem);
	sqlite3_bind_int64(st, 17, dyn_smem);
	sqlite3_bind_int64(st, 18, regs);
	sqlite3_bind_int64(st, 19, graph_id);
	fx->kernels++;
	return lp_import_step(fx->imp, st);
}

int lp_foreign_memcpy(struct lp_foreign *fx, const struct lp_foreign_op *o, int64_t bytes,
		      const char *kind, const char *src, const char *dst, int async)
{
	sqlite3_stmt *st = fx->ins_memcpy;
	fx_attribute(fx, o);
	fx_bind_op(fx, st, o);
	sqlite3_bind_int64(st, 8, bytes);
	sqlite3_bind_text(st, 9, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 10, src, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 11, dst, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 12, async);
	fx->memcpys++;
	return lp_import_step(fx->imp, st);
}

int lp_foreign_memset(struct lp_foreign *fx, const struct lp_foreign_op *o, int64_t bytes,
		      int64_t value, const char *mem_kind, int async)
{
	sqlite3_stmt *st = fx->ins_memset;
	fx_attribute(fx, o);
	fx_bind_op(fx, st, o);
	sqlite3_bind_int64(st, 8, bytes);
	sqlite3_bind_int64(st, 9, value);
	sqlite3_bind_text(st, 10, mem_kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 11, async);
	fx->memsets++;
	return lp_import_step(fx->imp, st);
}

int lp_foreign_sync(struct lp_foreign *fx, const struct lp_foreign_op *o, const char *type,
		    int64_t event)
{
	sqlite3_stmt *st = fx->ins_sync;
	int64_t end = o->end >= o->start ? o->end : o->start;
	sqlite3_bind_int64(st, 1, o->proc);
	sqlite3_bind_text(st, 2, type, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, o->context);
	sqlite3_bind_int64(st, 4, o->stream);
	fx_bind_opt(st, 5, event, -1);
	sqlite3_bind_int64(st, 6, o->corr);
	sqlite3_bind_int64(st, 7, o->start);
	sqlite3_bind_int64(st, 8, end);
	fx_seen_op(fx, o, end);
	fx->syncs++;
	return lp_import_step(fx->imp, st);
}

int lp_foreign_api_seen(struct lp_foreign *fx, int64_t proc, int64_t corr, int64_t start,
			int64_t end)
{
	if (fx->count_unattributed)
		lp_corrtally_call(&fx->tally, fx_tally_key(fx, proc), corr);
	lp_foreign_seen(fx, proc, start, end);
	fx->api++;
	if (proc >= 0 && (size_t)proc < fx->nbounds)
		fx->calls[proc]++;
	else
		fx->calls_lost = 1;
	return 0;
}

int lp_foreign_api(struct lp_foreign *fx, int64_t proc, int64_t thread, const char *domain,
		   int64_t cbid, int64_t name_id, int64_t corr, int64_t start, int64_t end,
		   int64_t ret)
{
	sqlite3_stmt *st = fx->ins_api;
	if (end < start)
		end = start;
	int rc = lp_foreign_api_seen(fx, proc, corr, start, end);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, proc);
	sqlite3_bind_int64(st, 2, thread);
	sqlite3_bind_text(st, 3, domain, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, cbid);
	fx_bind_opt(st, 5, name_id, 0);
	sqlite3_bind_int64(st, 6, corr);
	sqlite3_bind_int64(st, 7, start);
	sqlite3_bind_int64(st, 8, end);
	sqlite3_bind_int64(st, 9, ret);
	return lp_import_step(fx->imp, st);
}

int lp_foreign_range(struct lp_foreign *fx, int64_t proc, int64_t domain, int64_t name_id,
		     int64_t category, int64_t start, int64_t end, int64_t thread,
		     int64_t end_thread, int64_t payload, int64_t color, unsigned flags)
{
	sqlite3_stmt *st = fx->ins_range;
	if (end < start)
		end = start;
	if (end_thread && end_thread != thread)
		flags |= LP_RANGEF_CROSS_THREAD;
	sqlite3_bind_int64(st, 1, proc);
	sqlite3_bind_int64(st, 2, domain);
	fx_bind_opt(st, 3, name_id, 0);
	sqlite3_bind_int64(st, 4, category);
	sqlite3_bind_int64(st, 5, start);
	sqlite3_bind_int64(st, 6, end);
	sqlite3_bind_int64(st, 7, thread);
	fx_bind_opt(st, 8, end_thread ? end_thread : thread, 0);
	fx_bind_opt(st, 9, payload, -1);
	fx_bind_opt(st, 10, color, -1);
	sqlite3_bind_int(st, 11, (int)flags);
	lp_foreign_seen(fx, proc, start, end);
	fx->ranges++;
	return lp_import_step(fx->imp, st);
}

int lp_foreign_mark(struct lp_foreign *fx, int64_t proc, int64_t domain, int64_t name_id,
		    int64_t category, int64_t ts, int64_t thread)
{
	sqlite3_stmt *st = fx->ins_mark;
	sqlite3_bind_int64(st, 1, proc);
	sqlite3_bind_int64(st, 2, domain);
	fx_bind_opt(st, 3, name_id, 0);
	sqlite3_bind_int64(st, 4, category);
	sqlite3_bind_int64(st, 5, ts);
	sqlite3_bind_int64(st, 6, thread);
	lp_foreign_seen(fx, proc, ts, ts);
	fx->marks++;
	return lp_import_step(fx->imp, st);
}

int lp_foreign_device(struct lp_foreign *fx, int64_t proc, int64_t device, const char *name,
		      int64_t sm_count, int64_t cc_major, int64_t cc_minor, int64_t mem_bytes,
		      int64_t clock_khz, int64_t bw_kbs)
{
	sqlite3_stmt *st = fx->ins_dev;
	sqlite3_bind_int64(st, 1, proc);
	sqlite3_bind_int64(st, 2, device);
	fx_bind_text(st, 3, name);
	sqlite3_bind_int64(st, 4, sm_count);
	sqlite3_bind_int64(st, 5, cc_major);
	sqlite3_bind_int64(st, 6, cc_minor);
	sqlite3_bind_int64(st, 7, mem_bytes);
	sqlite3_bind_int64(st, 8, clock_khz);
	sqlite3_bind_int64(st, 9, bw_kbs);
	fx->devices++;
	return lp_import_step(fx->imp, st);
}

int lp_foreign_alloc(struct lp_foreign *fx, int64_t proc, int free_op, int64_t ts, int64_t address,
		     int64_t bytes, const char *mem_kind, int64_t device, int64_t context,
		     int64_t corr)
{
	sqlite3_stmt *st = fx->ins_alloc;
	sqlite3_bind_int64(st, 1, proc);
	sqlite3_bind_text(st, 2, free_op ? "free" : "alloc", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, ts);
	sqlite3_bind_int64(st, 4, address);
	sqlite3_bind_int64(st, 5, bytes);
	sqlite3_bind_text(st, 6, mem_kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 7, device);
	sqlite3_bind_int64(st, 8, context);
	sqlite3_bind_int64(st, 9, corr);
	fx->allocs++;
	return lp_import_step(fx->imp, st);
}

static const char *fx_lock_kind(const char *fn)
{
	if (strstr(fn, "rwlock"))
		return "rwlock";
	if (strstr(fn, "spin"))
		return "spin";
	if (!strncmp(fn, "sem_", 4))
		return "sem";
	return "mutex";
}

int lp_foreign_lock_call(struct lp_foreign *fx, int64_t proc, int64_t thread, const char *function,
			 int64_t start, int64_t end, int cond)
{
	if (end < start)
		end = start;
	lp_foreign_seen(fx, proc, start, end);
	if (cond) {
		sqlite3_bind_int64(fx->ins_cond, 1, thread);
		sqlite3_bind_int64(fx->ins_cond, 2, start);
		sqlite3_bind_int64(fx->ins_cond, 3, end - start);
		sqlite3_bind_int(fx->ins_cond, 4, strstr(function, "timed") != NULL);
		fx->cond_waits++;
		return lp_import_step(fx->imp, fx->ins_cond);
	}
	uint64_t key = XXH3_64bits_withSeed(function, strlen(function), (uint64_t)proc) | 1, id;
	if (!lp_map_get(&fx->locks, key, &id)) {
		/* The source recorded the call, not the lock: one row per function,
		 * named so that no report mistakes it for a variable. */
		char name[160];
		snprintf(name, sizeof(name), "%s (lock address not recorded in the source capture)",
			 function);
		sqlite3_bind_int64(fx->ins_lock, 1, proc);
		sqlite3_bind_text(fx->ins_lock, 2, fx_lock_kind(function), -1, SQLITE_STATIC);
		sqlite3_bind_text(fx->ins_lock, 3, name, -1, SQLITE_TRANSIENT);
		if (!(id = (uint64_t)fx_insert(fx, fx->ins_lock)) ||
		    lp_map_put(&fx->locks, key, id))
			return -EIO;
	}
	sqlite3_bind_int64(fx->ins_wait, 1, (int64_t)id);
	sqlite3_bind_int64(fx->ins_wait, 2, thread);
	sqlite3_bind_int64(fx->ins_wait, 3, start);
	sqlite3_bind_int64(fx->ins_wait, 4, end - start);
	/* lock_waits has no rowid to number its rows (schemas/core.sql), and
	 * this capture's are the only ones in the database. */
	sqlite3_bind_int64(fx->ins_wait, 5, ++fx->lock_waits);
	return lp_import_step(fx->imp, fx->ins_wait);
}

int lp_foreign_block_call(struct lp_foreign *fx, int64_t proc, int64_t thread, const char *call,
			  const char *category, const char *fd_kind, int64_t start, int64_t end,
			  int64_t result)
{
	sqlite3_stmt *st = fx->ins_block;
	if (end < start)
		end = start;
	lp_foreign_seen(fx, proc, start, end);
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, start);
	sqlite3_bind_int64(st, 3, end - start);
	sqlite3_bind_text(st, 4, call, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, category, -1, SQLITE_STATIC);
	fx_bind_text(st, 6, fd_kind);
	sqlite3_bind_int64(st, 7, result);
	fx->blocking++;
	return lp_import_step(fx->imp, st);
}

/* ---- after every row ------------------------------------------------------------ */

static int fx_exec(struct lp_foreign *fx, const char *sql)
{
	return lp_db_exec(fx->imp->db, sql, fx->imp->err, fx->imp->errlen);
}

#define LP_ADOPT_ONE(t) "UPDATE " t " SET process_id = ?1 WHERE process_id IN (0, ?2)"
#define LP_ADOPT_BY_CORR(t)                                                                        \
	"UPDATE " t " SET process_id = coalesce((SELECT a.process_id FROM cuda_api a WHERE "       \
	"a.correlation_id = " t ".correlation_id AND " t ".correlation_id <> 0 LIMIT 1), ?1) "     \
	"WHERE process_id IN (0, ?2)"

int lp_foreign_adopt(struct lp_foreign *fx, int64_t fallback)
{
	static const char *const one_sql[] = {LP_ADOPT_ONE("kernels"), LP_ADOPT_ONE("memcpys"),
					      LP_ADOPT_ONE("memsets"), LP_ADOPT_ONE("syncs")};
	static const char *const corr_sql[] = {
	    LP_ADOPT_BY_CORR("kernels"), LP_ADOPT_BY_CORR("memcpys"), LP_ADOPT_BY_CORR("memsets"),
	    LP_ADOPT_BY_CORR("syncs")};
	/* One host process (the usual trace): no lookup, and when the rows
	 * were written with its id (provisional) and none with 0, nothing to
	 * rewrite. Else by correlation id, through an index that exists only
	 * for this. */
	int one = lp_db_int(fx->imp->db, "SELECT count(*) FROM processes", 0) <= 1;
	int done = one && fx->provisional == fallback && !fx->unowned;
	int rc = one ? 0 : fx_exec(fx, "CREATE INDEX lp_tmp_corr ON cuda_api(correlation_id)");
	for (size_t i = 0; rc == 0 && !done && i < 4; i++) {
		sqlite3_stmt *st = lp_import_prepare(fx->imp, one ? one_sql[i] : corr_sql[i]);
		if (!st)
			return -EIO;
		sqlite3_bind_int64(st, 1, fallback);
		sqlite3_bind_int64(st, 2, fx->provisional);
		rc = lp_import_step(fx->imp, st);
		sqlite3_finalize(st);
	}
	if (rc == 0 && !one)
		rc = fx_exec(fx, "DROP INDEX lp_tmp_corr");
	if (rc == 0 && fx->nbounds) {
		int64_t lo = fx->lo[0], hi = fx->hi[0];
		fx->lo[0] = INT64_MAX;
		fx->hi[0] = INT64_MIN;
		if (lo <= hi)
			lp_foreign_seen(fx, fallback, lo, hi);
	}
	return rc;
}

/* Nesting: one sorted scan per (thread, nest group), a stack of open ranges. */
struct nest {
	struct lp_foreign *fx;
	sqlite3_stmt *upd;
	int64_t thread, group;
	struct {
		int64_t id, end;
	} * stack;
	size_t n, cap;
	int rc;
};

static int nest_row(sqlite3_stmt *st, void *ctx)
{
	struct nest *ns = ctx;
	int64_t id = sqlite3_column_int64(st, 0), thread = sqlite3_column_int64(st, 1),
		group = sqlite3_column_int64(st, 2), start = sqlite3_column_int64(st, 3),
		end = sqlite3_column_int64(st, 4);
	if (thread != ns->thread || group != ns->group) {
		ns->thread = thread;
		ns->group = group;
		ns->n = 0;
	}
	while (ns->n && ns->stack[ns->n - 1].end <= start)
		ns->n--;
	if (ns->n) {
		sqlite3_bind_int64(ns->upd, 1, ns->stack[ns->n - 1].id);
		sqlite3_bind_int64(ns->upd, 2, (int64_t)ns->n);
		sqlite3_bind_int64(ns->upd, 3, id);
		if (lp_import_step(ns->fx->imp, ns->upd))
			return -EIO;
	}
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 64;
		void *v = realloc(ns->stack, cap * sizeof(*ns->stack));
		if (!v)
			return -ENOMEM;
		ns->stack = v;
		ns->cap = cap;
	}
	ns->stack[ns->n].id = id;
	ns->stack[ns->n++].end = end;
	return 0;
}

static int fx_nest(struct lp_foreign *fx)
{
	struct nest ns = {.fx = fx, .thread = -1, .group = -1};
	struct lp_import *imp = fx->imp;
	ns.upd = lp_import_prepare(imp, "UPDATE ranges SET parent_id = ?, depth = ? WHERE id = ?");
	if (!ns.upd)
		return -EIO;
	/* ORDER BY sorts every row before the first comes back, so updating
	 * the rows during the scan cannot disturb it. */
	int rc = lp_db_each(imp->db,
			    "SELECT r.id, r.start_thread_id, coalesce(n.grp, -r.domain_id), "
			    "r.start_ns, r.end_ns FROM ranges r LEFT JOIN temp.lp_nest n ON "
			    "n.domain_id = r.domain_id WHERE (r.flags & 2) = 0 ORDER BY 2, 3, 4, "
			    "5 DESC, 1",
			    NULL, 0, nest_row, &ns, imp->err, imp->errlen);
	if (rc == -ENOMEM)
		snprintf(imp->err, imp->errlen, "out of memory nesting ranges");
	sqlite3_finalize(ns.upd);
	free(ns.stack);
	return rc;
}

/* syncType does not follow the API that waited (cudaStreamSynchronize reads
 * "stream wait" in some nsys versions): the call's name decides when known.
 * CROSS JOIN: each sync looks its call up through cuda_api_corr; without
 * statistics yet, the planner scanned every call instead (10^6 of them for
 * no sync at all). */
static const char lp_sync_by_name[] =
    "CREATE TEMP TABLE lp_sync_api AS SELECT y.id, CASE"
    " WHEN s.value GLOB 'cu*StreamSynchronize*' THEN 'stream_synchronize'"
    " WHEN s.value GLOB 'cu*EventSynchronize*' THEN 'event_synchronize'"
    " WHEN s.value GLOB 'cu*StreamWaitEvent*' THEN 'stream_wait_event'"
    " WHEN s.value GLOB 'cudaDeviceSynchronize*' OR s.value GLOB 'cudaThreadSynchronize*'"
    "   OR s.value GLOB 'cuCtxSynchronize*' THEN 'context_synchronize' END AS t"
    " FROM syncs y CROSS JOIN cuda_api a ON a.process_id = y.process_id AND a.correlation_id ="
    " y.correlation_id JOIN strings s ON s.id = a.name_id WHERE y.correlation_id <> 0;"
    "DELETE FROM temp.lp_sync_api WHERE t IS NULL OR t = (SELECT type FROM syncs WHERE"
    " syncs.id = lp_sync_api.id);"
    "UPDATE syncs SET type = (SELECT t FROM temp.lp_sync_api l WHERE l.id = syncs.id)"
    " WHERE id IN (SELECT id FROM temp.lp_sync_api);";

/* Neither format says whether a copy was asynchronous: the API does (an
 * importer that saw every call before the work sets it as rows come,
 * lp_foreign.async_from_calls). */
static const char lp_async_by_name[] =
    "UPDATE memcpys SET async = 0 WHERE EXISTS (SELECT 1 FROM cuda_api a JOIN strings s ON"
    " s.id = a.name_id WHERE a.process_id = memcpys.process_id AND a.correlation_id ="
    " memcpys.correlation_id AND s.value GLOB '" LP_FOREIGN_COPY_CALLS "' AND s.value NOT GLOB"
    " '*Async*');"
    "UPDATE memsets SET async = 0 WHERE EXISTS (SELECT 1 FROM cuda_api a JOIN strings s ON"
    " s.id = a.name_id WHERE a.process_id = memsets.process_id AND a.correlation_id ="
    " memsets.correlation_id AND s.value GLOB '" LP_FOREIGN_SET_CALLS "' AND s.value NOT GLOB"
    " '*Async*');";

static const char lp_unattributed_sql[] =
    "SELECT (SELECT count(*) FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM cuda_api a WHERE "
    "a.process_id = k.process_id AND a.correlation_id = k.correlation_id)) + (SELECT count(*) "
    "FROM memcpys m WHERE NOT EXISTS (SELECT 1 FROM cuda_api a WHERE a.process_id = "
    "m.process_id AND a.correlation_id = m.correlation_id)) + (SELECT count(*) FROM memsets m "
    "WHERE NOT EXISTS (SELECT 1 FROM cuda_api a WHERE a.process_id = m.process_id AND "
    "a.correlation_id = m.correlation_id))";

static int fx_bounds(struct lp_foreign *fx)
{
	sqlite3_stmt *st = lp_import_prepare(
	    fx->imp, "UPDATE processes SET start_ns = ?, end_ns = ?, exit_how = 'unknown' WHERE "
		     "id = ?");
	int rc = st ? 0 : -EIO;
	for (size_t i = 1; rc == 0 && i < fx->nbounds; i++) {
		if (fx->lo[i] > fx->hi[i])
			continue;
		sqlite3_bind_int64(st, 1, fx->lo[i]);
		sqlite3_bind_int64(st, 2, fx->hi[i]);
		sqlite3_bind_int64(st, 3, (int64_t)i);
		rc = lp_import_step(fx->imp, st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* The CUDA source's indexes (import/sources/lp_import_cuda.c, IF NOT EXISTS there):
 * built here, once, for the passes below that look calls up by correlation
 * id; the import's own index step then finds them made. */
extern const struct lp_import_source lp_src_cuda;

/* cuda_capture.records: each process's API calls, as counted while they
 * came (counting them back by the index read every call: 4% of an nsys
 * import of 1 M rows), or by SQL where a count was lost. */
static int fx_capture_records(struct lp_foreign *fx)
{
	if (fx->calls_lost)
		return fx_exec(fx, "UPDATE cuda_capture SET records = (SELECT count(*) FROM "
				   "cuda_api a WHERE a.process_id = cuda_capture.process_id)");
	sqlite3_stmt *st =
	    lp_import_prepare(fx->imp, "UPDATE cuda_capture SET records = ? WHERE process_id = ?");
	int rc = st ? 0 : -EIO;
	for (size_t i = 1; rc == 0 && i < fx->nbounds; i++) {
		if (!fx->calls[i])
			continue;
		sqlite3_bind_int64(st, 1, fx->calls[i]);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		rc = lp_import_step(fx->imp, st);
	}
	sqlite3_finalize(st);
	return rc;
}

int lp_foreign_finish(struct lp_foreign *fx)
{
	int rc = fx_nest(fx);
	rc = rc ? rc : fx_bounds(fx);
	rc = rc ? rc : fx_exec(fx, lp_src_cuda.indexes);
	rc = rc ? rc : fx_exec(fx, lp_sync_by_name);
	rc = rc || fx->async_from_calls ? rc : fx_exec(fx, lp_async_by_name);
	if (rc == 0)
		fx->syncs_by_name =
		    lp_db_int(fx->imp->db, "SELECT count(*) FROM temp.lp_sync_api", 0);
	if (rc == 0) {
		fx->unattributed = fx->count_unattributed ? lp_corrtally_unmatched(&fx->tally) : -1;
		if (fx->unattributed < 0)
			fx->unattributed = lp_db_int(fx->imp->db, lp_unattributed_sql, 0);
	}
	rc = rc ? rc : fx_exec(fx, "DROP TABLE temp.lp_sync_api");
	/* A capture of a real service has 10^4 API calls and 10^3 copies: the
	 * breakdown's sync-wait lookups (analysis/lp_cuda.c) need these to stay
	 * linear (docs/schema.md, "Imported captures"). */
	rc = rc ? rc
		: fx_exec(fx, "CREATE INDEX import_syncs_corr ON syncs(process_id, "
			      "correlation_id); CREATE INDEX import_memcpys_sync ON "
			      "memcpys(process_id, coalesce(runtime_correlation_id, "
			      "correlation_id)) WHERE async = 0;");
	/* Which processes have rows: one index probe per process and table,
	 * where a UNION of the tables' process ids read every row. */
	rc = rc ? rc
		: fx_exec(fx, "INSERT INTO cuda_capture(process_id, started, code, message, "
			      "records) SELECT p.id, 1, 0, 'imported', 0 FROM processes p WHERE "
			      "EXISTS (SELECT 1 FROM cuda_api WHERE process_id = p.id) OR EXISTS "
			      "(SELECT 1 FROM kernels WHERE process_id = p.id) OR EXISTS (SELECT "
			      "1 FROM memcpys WHERE process_id = p.id) OR EXISTS (SELECT 1 FROM "
			      "memsets WHERE process_id = p.id) OR EXISTS (SELECT 1 FROM syncs "
			      "WHERE process_id = p.id)");
	return rc ? rc : fx_capture_records(fx);
}

int lp_foreign_bad_time(struct lp_foreign *fx, enum lp_foreign_kind kind, int64_t start,
			int64_t end)
{
	if (start > 0 && end > 0 && end >= start)
		return 0;
	fx->bad_time[kind]++;
	return 1;
}

/* "1 kernel, 2 API calls": the records lp_foreign_bad_time dropped; "" for none. */
static long long fx_bad_time_text(const struct lp_foreign *fx, char *buf, size_t len)
{
	static const char *const what[LP_FOREIGN_N][2] = {
	    [LP_FOREIGN_KERNEL] = {"kernel", "kernels"},
	    [LP_FOREIGN_MEMCPY] = {"memcpy", "memcpys"},
	    [LP_FOREIGN_MEMSET] = {"memset", "memsets"},
	    [LP_FOREIGN_SYNC] = {"sync", "syncs"},
	    [LP_FOREIGN_API] = {"API call", "API calls"},
	    [LP_FOREIGN_RANGE] = {"range or mark", "ranges or marks"},
	    [LP_FOREIGN_OSRT] = {"OS runtime call", "OS runtime calls"},
	};
	long long total = 0;
	size_t off = 0;
	buf[0] = 0;
	for (int k = 0; k < LP_FOREIGN_N; k++) {
		long long n = fx->bad_time[k];
		if (!n)
			continue;
		total += n;
		int w = snprintf(buf + off, len - off, "%s%lld %s", off ? ", " : "", n,
				 what[k][n != 1]);
		off = w > 0 && (size_t)w < len - off ? off + (size_t)w : len - 1;
	}
	return total;
}

static int fx_meta_text(struct lp_foreign *fx, const char *key, const char *v)
{
	return v && v[0] ? lp_import_meta(fx->imp, key, v, 0) : 0;
}

int lp_foreign_meta(struct lp_foreign *fx)
{
	struct lp_import *imp = fx->imp;
	char status[512];
	long long gpu = fx->kernels + fx->memcpys + fx->memsets + fx->syncs + fx->api;
	snprintf(status, sizeof(status),
		 "imported from %s: %lld kernels, %lld memcpys, %lld memsets, %lld syncs, %lld "
		 "API calls (%lld GPU operations without their launching call in the capture)",
		 fx->file, fx->kernels, fx->memcpys, fx->memsets, fx->syncs, fx->api,
		 fx->unattributed);
	/* The sources' finish() wrote what a latprof recording would say; a
	 * foreign capture has none of that, so those rows go. */
	int rc = fx_exec(fx, "DELETE FROM meta WHERE key IN ('log_version', 'host', "
			     "'wall_start', 'dropped_records', 'dropped_chunks', "
			     "'dropped_strings', 'unclosed_logs', 'low_fd_logs')");
	rc = rc ? rc : lp_import_meta(imp, "import.source", fx->source, 0);
	rc = rc ? rc : lp_import_meta(imp, "import.producer", fx->producer, 0);
	rc = rc ? rc : fx_meta_text(fx, "import.producer_version", fx->producer_version);
	rc = rc ? rc : fx_meta_text(fx, "import.schema_version", fx->schema_version);
	rc = rc ? rc : lp_import_meta(imp, "import.sha256", fx->sha256, 0);
	rc = rc ? rc : lp_import_meta(imp, "import.file", fx->file, 0);
	rc = rc ? rc : lp_import_meta(imp, "import.not_recorded", fx->not_recorded, 0);
	rc = rc ? rc : lp_import_meta(imp, "import.unattributed_gpu_ops", NULL, fx->unattributed);
	rc = rc ? rc : lp_import_meta(imp, "import.syncs_by_api_name", NULL, fx->syncs_by_name);
	char bad[256];
	long long nbad = fx_bad_time_text(fx, bad, sizeof(bad));
	rc = rc ? rc : lp_import_meta(imp, "import.dropped_bad_time", NULL, nbad);
	rc = rc ? rc : fx_meta_text(fx, "import.dropped_bad_time_detail", bad);
	rc = rc ? rc : fx_meta_text(fx, "import.default_request", fx->default_request);
	rc = rc ? rc : fx_meta_text(fx, "host", fx->host);
	rc = rc ? rc : fx_meta_text(fx, "wall_start", fx->wall_start);
	rc = rc ? rc : lp_import_meta(imp, "clock", "the source capture's clock, in ns", 0);
	rc = rc ? rc : lp_import_meta(imp, "cuda.captured", NULL, gpu > 0);
	rc = rc ? rc : lp_import_meta(imp, "cuda.used", NULL, gpu > 0);
	rc = rc ? rc : lp_import_meta(imp, "cuda.status", status, 0);
	rc = rc ? rc : lp_import_meta(imp, "nvtx.ranges", NULL, fx->ranges);
	rc = rc ? rc : lp_import_meta(imp, "nvtx.marks", NULL, fx->marks);
	rc = rc ? rc
		: lp_import_meta(imp, "counters_note",
				 "CPU counters: not recorded in the source capture", 0);
	return rc;
}

/* ---- input identity ---------------------------------------------------------------- */

void lp_foreign_sha256_hex(const uint8_t digest[32], char hex[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

/* Nettle (Debian nettle-dev): a small, well-kept hash library with no global
 * state to initialize, unlike libgcrypt, and no TLS stack, unlike OpenSSL. */
int lp_foreign_sha256_file(const char *path, char hex[65])
{
	struct sha256_ctx c;
	uint8_t buf[1 << 16], d[SHA256_DIGEST_SIZE];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	sha256_init(&c);
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&c, (size_t)n, buf);
	int e = n < 0 ? -errno : 0;
	close(fd);
	sha256_digest(&c, sizeof(d), d);
	lp_foreign_sha256_hex(d, hex);
	return e;
}
