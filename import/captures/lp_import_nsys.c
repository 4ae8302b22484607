/* SPDX-License-Identifier: MIT */
/*
 * Nsight Systems SQLite exports (`nsys export --type sqlite`) -> a latprof
 * database. Columns come and go between export schema versions, so every
 * table is read by column name (PRAGMA table_info): a column the mapping
 * needs and the table lacks is one error naming it; an optional one reads as
 * NULL. Names are ids into StringIds; globalTid packs the pid in bits 24-47
 * and the tid in bits 0-23 (NVIDIA's own nsys stats scripts decode it so).
 */
#define _GNU_SOURCE
#include "lp_import_nsys.h"
#include "lp_captures.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_db.h"
#include "lp_import_foreign.h"
#include "lp_nvtx_db.h"
#include "lp_util.h"

#define LP_NSYS_MAXCOL 24

struct col;

/* The input's SHA-256 (meta import.sha256), hashed on a thread of its own
 * while the rows move. */
struct nsys_hash {
	pthread_t thread;
	int started, rc;
	const char *path;
	char hex[65];
};

struct nsys {
	sqlite3 *src;
	const char *path;
	struct lp_foreign fx;
	struct lp_import *imp;
	sqlite3_stmt *get_string, *get_pname;
	struct lp_map strs;	   /* (StringIds.id << 2 | how) + 1 -> strings.id */
	struct lp_map dom_names;   /* (pid << 32 | domainId) + 1 -> domains.id */
	struct lp_map gpu_procs;   /* processes.id -> 1: processes with GPU work */
	struct lp_map osrt_kinds;  /* StringIds.id + 1 -> nsys_osrt_kind() */
	struct lp_map call_kinds;  /* StringIds.id + 1 -> nsys_call_kind() */
	struct lp_map sync_copies; /* (processes.id << 32 | correlationId) + 1 -> LP_CALL_SYNC_* */
	int sync_copies_unfit;	   /* a call that does not fit the key: SQL decides */
	struct lp_map devices;	   /* (processes.id << 32 | device) + 1 of GPU work */
	uint64_t last_device;	   /* the last key put there */
	int devices_unfit;	   /* a pair that does not fit the key */
	long long alloc_calls;	   /* allocation API calls */
	int64_t prev_tid, prev_corr; /* API de-duplication (schema 2.9.1) */
	int twins;		     /* the export lists calls twice: read them sorted */
	int sorted;		     /* the calls being read come sorted */
	int64_t last_gpid;	     /* nsys_op: the last globalPid */
	int64_t last_gproc;	     /* and its processes.id */
	long long api_duplicates, osrt_calls;
	long long unsized_allocs; /* allocation calls without memory-usage events */
	char not_recorded[512];
	const char *table;	/* the table being read, for errors */
	const struct col *cols; /* and its columns, in the order the SQL functions get them */
	char *uri;		/* the export, for ATTACH */
	int fn_rc;		/* a SQL function's failure (imp->err says why) */
	int64_t row[3];		/* nsys_api's process, thread and name, for nsys_v */
	long long *count[4];	/* rows moved by nsys_op, per LP_OP_* */
	struct nsys_hash *hash; /* the input's sha256, in a thread of its own */
};

/* ---- reading tables by column name -------------------------------------------- */

/* A column wanted from a table; required ones missing are an error. */
struct col {
	const char *name;
	int flags; /* 1 required, LP_COL_INT */
};

/* nsys_move reads the column as sqlite3_column_int64 would: NULL is 0 */
#define LP_COL_INT 2

/* 0 when table has no column col, 2 when it is declared NOT NULL, else 1. */
static int nsys_has_col(struct nsys *n, const char *table, const char *col)
{
	sqlite3_stmt *st;
	int has = 0;
	if (sqlite3_prepare_v2(n->src,
			       "SELECT 1 + (\"notnull\" <> 0) FROM pragma_table_info(?1) WHERE "
			       "name = ?2",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	if (lp_db_step_row(st))
		has = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return has;
}

/* "SELECT a, b, NULL, ... FROM table [tail]" over the columns the table has;
 * with a schema, "SELECT a AS c0, ... FROM schema.table": the columns of
 * an INSERT ... SELECT (nsys_move) by their position in cols. */
static int nsys_select(struct nsys *n, const char *schema, const char *table,
		       const struct col *cols, int ncols, const char *tail, char *sql, size_t len)
{
	size_t off = (size_t)snprintf(sql, len, "SELECT ");
	for (int i = 0; i < ncols; i++) {
		int has = nsys_has_col(n, table, cols[i].name);
		if (!has && (cols[i].flags & 1)) {
			snprintf(n->imp->err, n->imp->errlen,
				 "%s: table %s has no column %s, which latprof needs to import "
				 "it (export schema changed?)",
				 n->path, table, cols[i].name);
			return -EINVAL;
		}
		/* NOT NULL: nsys declares its integer columns so (a value of
		 * another type, a damaged export, is then copied as it is) */
		int i64 = schema && (cols[i].flags & LP_COL_INT) && has != 2;
		off += (size_t)snprintf(sql + off, len - off, "%s%s%s%s%s%s", i ? ", " : "",
					i64 ? "ifnull(CAST(" : "", has ? "\"" : "NULL",
					has ? cols[i].name : "", has ? "\"" : "",
					i64 ? " AS INTEGER), 0)" : "");
		if (schema && off < len)
			off += (size_t)snprintf(sql + off, len - off, " AS c%d", i);
		if (off >= len)
			return -ENAMETOOLONG;
	}
	if ((size_t)snprintf(sql + off, len - off, " FROM %s%s\"%s\" %s", schema ? schema : "",
			     schema ? "." : "", table, tail ? tail : "") >= len - off)
		return -ENAMETOOLONG;
	return 0;
}

/* Required time and id columns must hold integers: a table of another type
 * is a damaged or foreign export, not zeros. */
static int nsys_ints(struct nsys *n, sqlite3_stmt *st, int ncheck)
{
	for (int i = 0; i < ncheck; i++)
		if (sqlite3_column_type(st, i) != SQLITE_INTEGER) {
			snprintf(n->imp->err, n->imp->errlen,
				 "%s: table %s, column %s holds %s where the export schema has an "
				 "integer",
				 n->path, n->table, sqlite3_column_name(st, i),
				 sqlite3_column_type(st, i) == SQLITE_NULL ? "NULL"
									   : "another type");
			return -EINVAL;
		}
	return 0;
}

static int nsys_each(struct nsys *n, const char *table, const struct col *cols, int ncols,
		     const char *tail, lp_db_row_fn fn)
{
	char sql[2048];
	if (!lp_db_has_table(n->src, table))
		return 0;
	int rc = nsys_select(n, NULL, table, cols, ncols, tail, sql, sizeof(sql));
	if (rc)
		return rc;
	n->table = table;
	rc = lp_db_each(n->src, sql, NULL, 0, fn, n, n->imp->err, n->imp->errlen);
	if (rc == -EIO && !strstr(n->imp->err, n->path)) {
		char e[512];
		snprintf(e, sizeof(e), "%s", n->imp->err);
		snprintf(n->imp->err, n->imp->errlen, "%s: reading %s: %s", n->path, table, e);
	}
	return rc;
}

/* ---- names --------------------------------------------------------------------- */

enum { LP_NAME_AS_IS, LP_NAME_API, LP_NAME_NVTX };

/* API names carry the version they appeared in (cudaLaunchKernel_v7000,
 * from schema 3.13 on); one name per call across versions. PyTorch's
 * emit_nvtx appends a per-call ", op_id = N" or ", seq = N": one name per op. */
static size_t nsys_trim(const char *s, int how)
{
	size_t len = strlen(s);
	if (how == LP_NAME_API) {
		const char *v = strrchr(s, '_');
		if (v && v[1] == 'v' && v[2] && strspn(v + 2, "0123456789") == strlen(v + 2))
			len = (size_t)(v - s);
	} else if (how == LP_NAME_NVTX) {
		const char *cut = strstr(s, ", op_id = ");
		const char *seq = strstr(s, ", seq = ");
		if (seq && (!cut || seq < cut))
			cut = seq;
		if (cut)
			len = (size_t)(cut - s);
	}
	return len;
}

static int64_t nsys_text(struct nsys *n, const char *s, int how)
{
	return lp_import_intern(n->imp, s, nsys_trim(s, how));
}

/* strings.id of StringIds[sid]; 0 when unknown. */
static int64_t nsys_sid(struct nsys *n, int64_t sid, int how)
{
	uint64_t key = ((uint64_t)sid << 2 | (uint64_t)how) + 1, id = 0;
	if (lp_map_get(&n->strs, key, &id))
		return (int64_t)id;
	sqlite3_bind_int64(n->get_string, 1, sid);
	if (lp_db_step_row(n->get_string) && sqlite3_column_text(n->get_string, 0))
		id = (uint64_t)nsys_text(n, (const char *)sqlite3_column_text(n->get_string, 0),
					 how);
	sqlite3_reset(n->get_string);
	lp_map_put(&n->strs, key, id);
	return (int64_t)id;
}

static int64_t nsys_string(struct nsys *n, sqlite3_stmt *row, int col, int how)
{
	return sqlite3_column_type(row, col) == SQLITE_NULL
		   ? 0
		   : nsys_sid(n, sqlite3_column_int64(row, col), how);
}

/* StringIds[sid] (malloc'd) or NULL. */
static char *nsys_src_string(struct nsys *n, int64_t sid)
{
	sqlite3_bind_int64(n->get_string, 1, sid);
	char *s = lp_db_step_row(n->get_string) ? lp_db_col_strdup(n->get_string, 0) : NULL;
	sqlite3_reset(n->get_string);
	return s;
}

enum {
	LP_CALL_ALLOC = 1,     /* cudaMalloc*, cudaFree*, cuMemAlloc*, cuMemFree* */
	LP_CALL_SYNC_COPY = 2, /* a copy API without Async in its name */
	LP_CALL_SYNC_SET = 4,  /* a memset API without Async in its name */
};

/* What an API call is, by its StringIds id (LP_CALL_*; cached per id).
 * Allocations are counted where the export has no memory-usage events; the
 * synchronous copy and memset calls decide their work's async flag with
 * lp_foreign's own patterns (GLOB there, fnmatch here: the same for these). */
static int nsys_call_kind(struct nsys *n, int64_t sid)
{
	static const char *const prefix[] = {"cudaMalloc", "cudaFree", "cuMemAlloc", "cuMemFree"};
	uint64_t v;
	if (lp_map_get(&n->call_kinds, (uint64_t)sid + 1, &v))
		return (int)v;
	char *s = nsys_src_string(n, sid);
	v = 0;
	for (size_t i = 0; s && !v && i < sizeof(prefix) / sizeof(prefix[0]); i++)
		v = !strncmp(s, prefix[i], strlen(prefix[i])) ? LP_CALL_ALLOC : 0;
	if (s && fnmatch("*Async*", s, 0) != 0) {
		if (fnmatch(LP_FOREIGN_COPY_CALLS, s, 0) == 0)
			v |= LP_CALL_SYNC_COPY;
		if (fnmatch(LP_FOREIGN_SET_CALLS, s, 0) == 0)
			v |= LP_CALL_SYNC_SET;
	}
	free(s);
	lp_map_put(&n->call_kinds, (uint64_t)sid + 1, v);
	return (int)v;
}

/* (processes.id << 32 | id) + 1, the key of a process's device or call in
 * the maps above; 0 where the pair does not fit it. */
static uint64_t nsys_proc_key(int64_t proc, int64_t id)
{
	if (proc < 0 || proc >= INT32_MAX || id < 0 || id > UINT32_MAX)
		return 0;
	return ((uint64_t)proc << 32 | (uint64_t)id) + 1;
}

/* A synchronous copy or memset call remembered for its work's async flag;
 * where the key cannot hold it, the SQL of lp_foreign_finish decides instead. */
static int nsys_sync_copy(struct nsys *n, int64_t proc, int64_t corr, int kind)
{
	uint64_t key = nsys_proc_key(proc, corr), v = 0;
	if (!key) {
		n->sync_copies_unfit = 1;
		return 0;
	}
	lp_map_get(&n->sync_copies, key, &v);
	return lp_map_put(&n->sync_copies, key, v | (uint64_t)kind) ? -ENOMEM : 0;
}

/* ---- processes and threads ------------------------------------------------------ */

static int64_t nsys_proc(struct nsys *n, int64_t global)
{
	int64_t pid = (global >> 24) & 0xffffff;
	uint64_t id;
	if (lp_map_get(&n->fx.procs, (uint64_t)pid + 1, &id))
		return (int64_t)id;
	char *name = NULL;
	if (n->get_pname) {
		sqlite3_bind_int64(n->get_pname, 1, pid);
		if (lp_db_step_row(n->get_pname))
			name = lp_db_col_strdup(n->get_pname, 0);
		sqlite3_reset(n->get_pname);
	}
	int64_t row = lp_foreign_process(&n->fx, pid, name);
	free(name);
	return row;
}

static int64_t nsys_thread(struct nsys *n, int64_t proc, int64_t global)
{
	return lp_foreign_thread(&n->fx, proc, (global >> 24) & 0xffffff, global & 0xffffff);
}

static int nsys_gpu_proc(struct nsys *n, int64_t proc)
{
	return lp_map_put(&n->gpu_procs, (uint64_t)proc, 1) ? -ENOMEM : 0;
}

/* ---- moving rows inside SQLite ---------------------------------------------------------- */

/* The big tables (API calls, kernels, copies, syncs) move with one INSERT ...
 * SELECT each over the export ATTACHed to the output, instead of each row
 * stepping out to C and being bound into an insert: a row is then one pass
 * of the VDBE, not two statements' worth of calls. What only C knows
 * (processes, threads and names by the export's ids, the API
 * de-duplication, bounds, attribution, type checks) is done by the SQL
 * functions below, called once per row in the order the rows are read: the
 * INSERT has no ORDER BY (SQLite would call them before sorting); a sorted
 * source is a MATERIALIZED CTE, read back in its order. So processes,
 * threads and strings get the ids they got row by row. */

static void nsys_fn_fail(sqlite3_context *c, struct nsys *n, int rc)
{
	if (rc == -ENOMEM)
		snprintf(n->imp->err, n->imp->errlen, "out of memory importing %s", n->path);
	n->fn_rc = rc;
	sqlite3_result_error(c, n->imp->err, -1);
}

/* Required time and id columns must hold integers: a table of another type
 * is a damaged or foreign export, not zeros. Argument i is column i. */
static int nsys_vints(struct nsys *n, sqlite3_value **v, int ncheck)
{
	for (int i = 0; i < ncheck; i++)
		if (sqlite3_value_type(v[i]) != SQLITE_INTEGER) {
			snprintf(n->imp->err, n->imp->errlen,
				 "%s: table %s, column %s holds %s where the export schema has an "
				 "integer",
				 n->path, n->table, n->cols[i].name,
				 sqlite3_value_type(v[i]) == SQLITE_NULL ? "NULL" : "another type");
			return -EINVAL;
		}
	return 0;
}

#define LP_OP_COLS                                                                                 \
	{"start", 1}, {"end", 1}, {"deviceId", 1}, {"contextId", 1}, {"streamId", 1},              \
	    {"correlationId", 1},                                                                  \
	{                                                                                          \
		"globalPid", 1                                                                     \
	}

enum { LP_OP_KERNEL, LP_OP_MEMCPY, LP_OP_MEMSET, LP_OP_SYNC };

/* GPU work comes in long runs of one process: look it up on a change. */
static int nsys_op_proc(struct nsys *n, int64_t g, int64_t *proc)
{
	if (n->last_gproc && g == n->last_gpid) {
		*proc = n->last_gproc;
		return 0;
	}
	*proc = nsys_proc(n, g);
	int rc = *proc ? nsys_gpu_proc(n, *proc) : -EIO;
	n->last_gpid = g;
	n->last_gproc = rc ? 0 : *proc;
	return rc;
}

/* The (process, device) pairs of kernels, copies and memsets, for an export
 * without TARGET_INFO_GPU (nsys_devices): kept as the rows move, where a
 * scan of every row for them came after. */
static int nsys_device_seen(struct nsys *n, int64_t proc, int64_t device)
{
	uint64_t key = nsys_proc_key(proc, device);
	if (!key) {
		n->devices_unfit = 1;
		return 0;
	}
	if (key == n->last_device)
		return 0;
	n->last_device = key;
	return lp_map_put(&n->devices, key, 1) ? -ENOMEM : 0;
}

static int nsys_key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* No TARGET_INFO_GPU (cut or older exports): the devices the work ran on,
 * by process and device, their properties not recorded (NULL). */
static int nsys_devices(struct nsys *n)
{
	struct lp_import *imp = n->imp;
	if (n->devices_unfit)
		return lp_db_exec(imp->db,
				  "INSERT INTO gpu_devices(process_id, device) SELECT DISTINCT "
				  "process_id, device FROM (SELECT process_id, device FROM kernels "
				  "UNION SELECT process_id, device FROM memcpys UNION SELECT "
				  "process_id, device FROM memsets)",
				  imp->err, imp->errlen);
	uint64_t *keys = malloc((n->devices.len + 1) * sizeof(*keys));
	sqlite3_stmt *st =
	    lp_import_prepare(imp, "INSERT INTO gpu_devices(process_id, device) VALUES (?, ?)");
	size_t nkeys = 0;
	int rc = !keys ? -ENOMEM : !st ? -EIO : 0;
	for (size_t i = 0; rc == 0 && i < n->devices.cap; i++)
		if (n->devices.keys[i])
			keys[nkeys++] = n->devices.keys[i] - 1;
	if (rc == 0)
		qsort(keys, nkeys, sizeof(*keys), nsys_key_cmp);
	for (size_t i = 0; rc == 0 && i < nkeys; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)(keys[i] >> 32));
		sqlite3_bind_int64(st, 2, (int64_t)(keys[i] & 0xffffffff));
		rc = lp_import_step(imp, st);
	}
	if (rc == -ENOMEM)
		snprintf(imp->err, imp->errlen, "out of memory importing %s", n->path);
	sqlite3_finalize(st);
	free(keys);
	return rc;
}

/* nsys_op(start, end, deviceId, contextId, streamId, correlationId,
 * globalPid, LP_OP_*) -> processes.id of one GPU operation. */
static void nsys_op_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
	struct nsys *n = sqlite3_user_data(c);
	struct lp_foreign_op o;
	int what = sqlite3_value_int(v[7]);
	int rc = nsys_vints(n, v, 7);
	assert(argc == 8 && what >= 0 && what < 4);
	if (rc == 0)
		rc = nsys_op_proc(n, sqlite3_value_int64(v[6]), &o.proc);
	if (rc) {
		nsys_fn_fail(c, n, rc);
		return;
	}
	o.start = sqlite3_value_int64(v[0]);
	o.end = sqlite3_value_int64(v[1]);
	o.corr = sqlite3_value_int64(v[5]);
	if (what != LP_OP_SYNC && nsys_device_seen(n, o.proc, sqlite3_value_int64(v[2]))) {
		nsys_fn_fail(c, n, -ENOMEM);
		return;
	}
	/* syncs are not launched work: no attribution */
	lp_foreign_op_seen(&n->fx, &o, what != LP_OP_SYNC);
	(*n->count[what])++;
	sqlite3_result_int64(c, o.proc);
}

/* nsys_api(start, end, globalTid, correlationId, nameId, eventClass): 1
 * when the call is imported, 0 for schema 2.9's twin; nsys_v(0..2) then
 * give its process, thread and name. */
static void nsys_api_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
	struct nsys *n = sqlite3_user_data(c);
	int rc = nsys_vints(n, v, 5);
	assert(argc == 6);
	/* A twin's class in calls read unsorted: the import starts again with
	 * them sorted (lp_import_nsys), which the first such row decides. */
	int64_t class = sqlite3_value_int64(v[5]);
	if (rc == 0 && !n->sorted && class != 0 && class != 1) {
		snprintf(n->imp->err, n->imp->errlen, "%s: API calls listed twice", n->path);
		rc = -EAGAIN;
	}
	if (rc) {
		nsys_fn_fail(c, n, rc);
		return;
	}
	int64_t g = sqlite3_value_int64(v[2]), corr = sqlite3_value_int64(v[3]);
	/* Schema 2.9 lists each call twice under one correlation id (eventClass
	 * 0 with the versioned name, 67 without): rows come ordered by
	 * (globalTid, correlationId, eventClass), the first one counts. */
	if (corr && g == n->prev_tid && corr == n->prev_corr) {
		n->api_duplicates++;
		sqlite3_result_int(c, 0);
		return;
	}
	n->prev_tid = g;
	n->prev_corr = corr;
	int64_t proc = nsys_proc(n, g);
	int64_t thread = proc ? nsys_thread(n, proc, g) : 0;
	if (!thread) {
		nsys_fn_fail(c, n, -EIO);
		return;
	}
	int64_t start = sqlite3_value_int64(v[0]), end = sqlite3_value_int64(v[1]);
	n->row[0] = proc;
	n->row[1] = thread;
	n->row[2] = nsys_sid(n, sqlite3_value_int64(v[4]), LP_NAME_API);
	int kind = nsys_call_kind(n, sqlite3_value_int64(v[4]));
	n->alloc_calls += kind & LP_CALL_ALLOC;
	rc = kind & ~LP_CALL_ALLOC ? nsys_sync_copy(n, proc, corr, kind & ~LP_CALL_ALLOC) : 0;
	rc = rc ? rc : lp_foreign_api_seen(&n->fx, proc, corr, start, end >= start ? end : start);
	if (rc) {
		nsys_fn_fail(c, n, rc);
		return;
	}
	sqlite3_result_int(c, 1);
}

/* nsys_v(i): nsys_api's row[i], NULL for 0 (no name). */
static void nsys_v_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
	struct nsys *n = sqlite3_user_data(c);
	int i = sqlite3_value_int(v[0]);
	assert(argc == 1 && i >= 0 && i < 3);
	if (n->row[i])
		sqlite3_result_int64(c, n->row[i]);
	else
		sqlite3_result_null(c);
}

/* nsys_async(globalPid, correlationId, LP_CALL_SYNC_*) -> memcpys.async
 * (memsets.async): 0 where a synchronous call launched the work. */
static void nsys_async_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
	struct nsys *n = sqlite3_user_data(c);
	int64_t proc = 0;
	uint64_t key = 0, kinds = 0;
	assert(argc == 3);
	if (n->sync_copies.len && nsys_op_proc(n, sqlite3_value_int64(v[0]), &proc) == 0)
		key = nsys_proc_key(proc, sqlite3_value_int64(v[1]));
	if (key)
		lp_map_get(&n->sync_copies, key, &kinds);
	sqlite3_result_int(c, !(kinds & (uint64_t)sqlite3_value_int(v[2])));
}

/* nsys_str(StringIds.id, LP_NAME_*) -> strings.id, NULL for NULL or unknown. */
static void nsys_str_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
	struct nsys *n = sqlite3_user_data(c);
	assert(argc == 2);
	int64_t id = sqlite3_value_type(v[0]) == SQLITE_NULL
			 ? 0
			 : nsys_sid(n, sqlite3_value_int64(v[0]), sqlite3_value_int(v[1]));
	if (id)
		sqlite3_result_int64(c, id);
	else
		sqlite3_result_null(c);
}

/* nsys_kind(value, 0 copy kind | 1 memory kind | 2 sync type) -> its name. */
static void nsys_kind_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
	int64_t x = sqlite3_value_int64(v[0]);
	int which = sqlite3_value_int(v[1]);
	assert(argc == 2);
	const char *s = which == 0   ? lp_cuda_copy_kind(x)
			: which == 1 ? lp_cuda_mem_kind(x)
				     : lp_cuda_sync_type(x);
	sqlite3_result_text(c, s, -1, SQLITE_STATIC);
}

/* nsys_ts(start, end, lp_foreign_kind) -> 0 for a record lp_foreign_bad_time drops
 * (counted), 1 otherwise: a non-integer time is for nsys_op and nsys_api to
 * refuse. */
static void nsys_ts_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
	struct nsys *n = sqlite3_user_data(c);
	assert(argc == 3);
	int keep = sqlite3_value_type(v[0]) != SQLITE_INTEGER ||
		   sqlite3_value_type(v[1]) != SQLITE_INTEGER ||
		   !lp_foreign_bad_time(&n->fx, (enum lp_foreign_kind)sqlite3_value_int(v[2]),
					sqlite3_value_int64(v[0]), sqlite3_value_int64(v[1]));
	sqlite3_result_int(c, keep);
}

static int nsys_functions(struct nsys *n)
{
	static const struct {
		const char *name;
		int nargs;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} f[] = {{"nsys_op", 8, nsys_op_fn},	   {"nsys_api", 6, nsys_api_fn},
		 {"nsys_async", 3, nsys_async_fn}, {"nsys_v", 1, nsys_v_fn},
		 {"nsys_str", 2, nsys_str_fn},	   {"nsys_kind", 2, nsys_kind_fn},
		 {"nsys_ts", 3, nsys_ts_fn}};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		/* not SQLITE_DETERMINISTIC: called for every row, in order */
		if (sqlite3_create_function(n->imp->db, f[i].name, f[i].nargs,
					    SQLITE_UTF8 | SQLITE_DIRECTONLY, n, f[i].fn, NULL,
					    NULL) != SQLITE_OK) {
			snprintf(n->imp->err, n->imp->errlen, "internal error: %s",
				 sqlite3_errmsg(n->imp->db));
			return -EIO;
		}
	return 0;
}

/* The export as schema nsys_src of the output (ATTACH is refused inside a
 * transaction; the import's own is ended and begun again), or detached. */
static int nsys_attach(struct nsys *n, int on)
{
	char *sql = on ? sqlite3_mprintf("COMMIT; ATTACH %Q AS nsys_src; BEGIN", n->uri)
		       : sqlite3_mprintf("COMMIT; DETACH nsys_src; BEGIN");
	int rc = sql ? lp_db_exec(n->imp->db, sql, n->imp->err, n->imp->errlen) : -ENOMEM;
	sqlite3_free(sql);
	return rc;
}

/* "WITH s AS (SELECT col AS c0, ... FROM nsys_src.table [ORDER BY order])
 * insert", insert reading c0... from s. */
static int nsys_move(struct nsys *n, const char *table, const struct col *cols, int ncols,
		     const char *order, const char *insert)
{
	char src[2048];
	if (!lp_db_has_table(n->src, table))
		return 0;
	int rc = nsys_select(n, "nsys_src", table, cols, ncols, NULL, src, sizeof(src));
	if (rc)
		return rc;
	char *sql = sqlite3_mprintf("WITH s AS %s(%s%s%s) %s", order ? "MATERIALIZED " : "", src,
				    order ? " ORDER BY " : "", order ? order : "", insert);
	if (!sql)
		return -ENOMEM;
	n->table = table;
	n->cols = cols;
	n->fn_rc = 0;
	char err[512];
	rc = lp_db_exec(n->imp->db, sql, err, sizeof(err));
	sqlite3_free(sql);
	if (rc && n->fn_rc)
		return n->fn_rc; /* imp->err set by the function */
	if (rc)
		snprintf(n->imp->err, n->imp->errlen, "%s: reading %s: %s", n->path, table, err);
	return rc;
}

/* ---- GPU activity ----------------------------------------------------------------- */

#define LP_END "CASE WHEN c1 >= c0 THEN c1 ELSE c0 END"

static const struct col lp_kernel_cols[] = {
    LP_OP_COLS,
    {"demangledName", 1},
    {"mangledName", 0},
    {"gridX", LP_COL_INT},
    {"gridY", LP_COL_INT},
    {"gridZ", LP_COL_INT},
    {"blockX", LP_COL_INT},
    {"blockY", LP_COL_INT},
    {"blockZ", LP_COL_INT},
    {"staticSharedMemory", LP_COL_INT},
    {"dynamicSharedMemory", LP_COL_INT},
    {"registersPerThread", LP_COL_INT},
    {"graphId", LP_COL_INT},
};

/* The mangled name is interned first, as the row-by-row import did (its
 * arguments evaluated right to left), so that strings keep their ids. */
static const char lp_kernel_sql[] =
    "INSERT INTO kernels(process_id, device, context, stream, correlation_id, start_ns, end_ns, "
    "mangled_id, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, static_smem, "
    "dynamic_smem, registers, graph_id) "
    "SELECT nsys_op(c0, c1, c2, c3, c4, c5, c6, 0), c2, c3, c4, c5, c0, " LP_END ", "
    "nsys_str(c8, 0), nsys_str(c7, 0), c9, c10, c11, c12, c13, c14, c15, c16, c17, c18 FROM s "
    "WHERE nsys_ts(c0, c1, 0)";

/* nsys does not say which API issued a copy; CUPTI's async flag is not
 * exported, so the runtime call's name decides (lp_foreign_finish). */
static const struct col lp_memcpy_cols[] = {
    LP_OP_COLS, {"bytes", 1 | LP_COL_INT}, {"copyKind", 1}, {"srcKind", 0}, {"dstKind", 0}};

static const char lp_memcpy_sql[] =
    "INSERT INTO memcpys(process_id, device, context, stream, correlation_id, start_ns, end_ns, "
    "bytes, copy_kind, src_kind, dst_kind, async) "
    "SELECT nsys_op(c0, c1, c2, c3, c4, c5, c6, 1), c2, c3, c4, c5, c0, " LP_END ", "
    "c7, nsys_kind(c8, 0), nsys_kind(c9, 1), nsys_kind(c10, 1), nsys_async(c6, c5, 2) FROM s "
    "WHERE nsys_ts(c0, c1, 1)";

static const struct col lp_memset_cols[] = {
    LP_OP_COLS, {"bytes", 1 | LP_COL_INT}, {"value", LP_COL_INT}, {"memKind", 0}};

static const char lp_memset_sql[] =
    "INSERT INTO memsets(process_id, device, context, stream, correlation_id, start_ns, end_ns, "
    "bytes, value, memory_kind, async) "
    "SELECT nsys_op(c0, c1, c2, c3, c4, c5, c6, 2), c2, c3, c4, c5, c0, " LP_END ", "
    "c7, c8, nsys_kind(c9, 1), nsys_async(c6, c5, 4) FROM s WHERE nsys_ts(c0, c1, 2)";

/* An eventId of -1 (or none) is no event. */
static const struct col lp_sync_cols[] = {LP_OP_COLS, {"syncType", 1}, {"eventId", 0}};

static const char lp_sync_sql[] =
    "INSERT INTO syncs(process_id, type, context, stream, event, correlation_id, start_ns, "
    "end_ns) "
    "SELECT nsys_op(c0, c1, c2, c3, c4, c5, c6, 3), nsys_kind(c7, 2), c3, c4, "
    "nullif(CAST(c8 AS INTEGER), -1), c5, c0, " LP_END " FROM s WHERE nsys_ts(c0, c1, 3)";

/* ---- API calls ---------------------------------------------------------------------- */

static const struct col lp_api_cols[] = {
    {"start", 1},
    {"end", 1},
    {"globalTid", 1},
    {"correlationId", 1},
    {"nameId", 1},
    {"eventClass", 0},
    {"returnValue", LP_COL_INT},
};

/* domain: the SQL of the call's domain */
#define LP_API_SQL(domain)                                                                         \
	"INSERT INTO cuda_api(process_id, thread_id, domain, cbid, name_id, correlation_id, "      \
	"start_ns, end_ns, return_value) "                                                         \
	"SELECT nsys_v(0), nsys_v(1), " domain ", 0, nsys_v(2), c3, c0, " LP_END ", c6 "           \
	"FROM s WHERE nsys_ts(c0, c1, 4) AND nsys_api(c0, c1, c2, c3, c4, ifnull(c5, 0))"

/* ---- NVTX ----------------------------------------------------------------------------- */

enum {
	LP_NVTX_CATEGORY = 33,
	LP_NVTX_MARK = 34,
	LP_NVTX_PUSHPOP = 59,
	LP_NVTX_STARTEND = 60,
	LP_NVTXT_CATEGORY = 64,
	LP_NVTXT_MARK = 65,
	LP_NVTXT_PUSHPOP = 70,
	LP_NVTXT_STARTEND = 71,
	LP_NVTX_DOMAIN_CREATE = 75,
};

static const struct col lp_nvtx_cols[] = {
    {"start", 1},      {"end", 0},	    {"eventType", 1},  {"globalTid", 1},
    {"text", 0},       {"textId", 0},	    {"domainId", 0},   {"category", 0},
    {"color", 0},      {"endGlobalTid", 0}, {"int64Value", 0}, {"uint64Value", 0},
    {"int32Value", 0}, {"uint32Value", 0},
};

static int64_t nsys_domain(struct nsys *n, int64_t proc, int64_t pid, sqlite3_stmt *st)
{
	int64_t dom = sqlite3_column_int64(st, 6);
	uint64_t key = ((uint64_t)pid << 32 | (uint32_t)dom) + 1, id;
	if (lp_map_get(&n->dom_names, key, &id))
		return (int64_t)id;
	char name[32] = ""; /* NVTX's default domain */
	if (dom)
		snprintf(name, sizeof(name), "(domain %lld)", (long long)dom);
	id = (uint64_t)lp_foreign_domain(&n->fx, proc, name);
	if (id)
		lp_map_put(&n->dom_names, key, id);
	return (int64_t)id;
}

static int nsys_domain_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	if (sqlite3_column_int64(st, 2) != LP_NVTX_DOMAIN_CREATE)
		return 0;
	int64_t g = sqlite3_column_int64(st, 3), pid = (g >> 24) & 0xffffff;
	int64_t proc = nsys_proc(n, g);
	const char *text = (const char *)sqlite3_column_text(st, 4);
	char *owned = NULL;
	if (!text && sqlite3_column_type(st, 5) != SQLITE_NULL) {
		sqlite3_bind_int64(n->get_string, 1, sqlite3_column_int64(st, 5));
		if (lp_db_step_row(n->get_string))
			owned = lp_db_col_strdup(n->get_string, 0);
		sqlite3_reset(n->get_string);
		text = owned;
	}
	int64_t dom = proc ? lp_foreign_domain(&n->fx, proc, text ? text : "") : 0;
	free(owned);
	uint64_t key = ((uint64_t)pid << 32 | (uint32_t)sqlite3_column_int64(st, 6)) + 1;
	return dom && !lp_map_put(&n->dom_names, key, (uint64_t)dom) ? 0 : -EIO;
}

static int64_t nsys_payload(sqlite3_stmt *st)
{
	for (int c = 10; c < 14; c++)
		if (sqlite3_column_type(st, c) == SQLITE_INTEGER)
			return sqlite3_column_int64(st, c);
	return -1;
}

static int nsys_nvtx_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	int rc = nsys_ints(n, st, 1);
	int64_t type = sqlite3_column_int64(st, 2);
	if (rc ||
	    (type != LP_NVTX_MARK && type != LP_NVTXT_MARK && type != LP_NVTX_PUSHPOP &&
	     type != LP_NVTXT_PUSHPOP && type != LP_NVTX_STARTEND && type != LP_NVTXT_STARTEND))
		return rc;
	int64_t t0 = sqlite3_column_int64(st, 0);
	int open = type == LP_NVTX_MARK || type == LP_NVTXT_MARK ||
		   sqlite3_column_type(st, 1) == SQLITE_NULL;
	if (lp_foreign_bad_time(&n->fx, LP_FOREIGN_RANGE, t0,
				open ? t0 : sqlite3_column_int64(st, 1)))
		return 0;
	int64_t g = sqlite3_column_int64(st, 3), pid = (g >> 24) & 0xffffff;
	int64_t proc = nsys_proc(n, g);
	int64_t thread = proc ? nsys_thread(n, proc, g) : 0;
	int64_t dom = thread ? nsys_domain(n, proc, pid, st) : 0;
	if (!dom)
		return -EIO;
	int64_t name = sqlite3_column_type(st, 4) != SQLITE_NULL
			   ? nsys_text(n, (const char *)sqlite3_column_text(st, 4), LP_NAME_NVTX)
			   : nsys_string(n, st, 5, LP_NAME_NVTX);
	int64_t start = sqlite3_column_int64(st, 0), cat = sqlite3_column_int64(st, 7);
	if (type == LP_NVTX_MARK || type == LP_NVTXT_MARK)
		return lp_foreign_mark(&n->fx, proc, dom, name, cat, start, thread);
	unsigned flags = 0;
	int64_t end = sqlite3_column_int64(st, 1), end_thread = thread;
	if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
		flags |= LP_RANGEF_OPEN_AT_EXIT; /* never ended within the capture */
		end = start;
	}
	if (type == LP_NVTX_STARTEND || type == LP_NVTXT_STARTEND) {
		flags |= LP_RANGEF_STARTEND;
		if (sqlite3_column_type(st, 9) == SQLITE_INTEGER)
			end_thread = nsys_thread(n, proc, sqlite3_column_int64(st, 9));
	}
	int64_t color =
	    sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 8);
	return lp_foreign_range(&n->fx, proc, dom, name, cat, start, end, thread, end_thread,
				nsys_payload(st), color, flags);
}

/* ---- OS runtime calls: lock calls become lock and cond waits, blocking
 * calls blocking_calls ---------------------------------------------------------- */

static const struct col lp_osrt_cols[] = {
    {"start", 1}, {"end", 1}, {"globalTid", 1}, {"nameId", 1}, {"returnValue", 0}};

static int nsys_lock_fn(const char *s)
{
	static const char *const locks[] = {"pthread_mutex_lock",
					    "pthread_mutex_timedlock",
					    "pthread_mutex_clocklock",
					    "pthread_rwlock_rdlock",
					    "pthread_rwlock_wrlock",
					    "pthread_rwlock_timedrdlock",
					    "pthread_rwlock_timedwrlock",
					    "pthread_spin_lock",
					    "sem_wait",
					    "sem_timedwait",
					    "sem_clockwait"};
	for (size_t i = 0; i < sizeof(locks) / sizeof(locks[0]); i++)
		if (!strcmp(s, locks[i]))
			return 1;
	if (!strcmp(s, "pthread_cond_wait") || !strcmp(s, "pthread_cond_timedwait") ||
	    !strcmp(s, "pthread_cond_clockwait"))
		return 2;
	return 0;
}

/* The blocking calls latprof's interposer times (preload/lp_block.c), by the
 * names nsys gives them, with the breakdown category docs/schema.md defines.
 * nsys records no descriptor: a call that only works on sockets is socket
 * I/O; any other descriptor's kind is "unknown", so its I/O is other_block
 * (whether a read was of a file or a pipe is not in the capture). */
struct osrt_block {
	const char *name, *call, *category, *fd_kind;
};

static const struct osrt_block lp_osrt_blocks[] = {
    {"nanosleep", "nanosleep", "sleep", NULL},
    {"clock_nanosleep", "clock_nanosleep", "sleep", NULL},
    {"usleep", "usleep", "sleep", NULL},
    {"sleep", "sleep", "sleep", NULL},
    {"read", "read", "other_block", "unknown"},
    {"write", "write", "other_block", "unknown"},
    {"pread", "pread", "other_block", "unknown"},
    {"pwrite", "pwrite", "other_block", "unknown"},
    {"readv", "readv", "other_block", "unknown"},
    {"writev", "writev", "other_block", "unknown"},
    {"sendfile", "sendfile", "other_block", "unknown"},
    {"recv", "recv", "socket_io", "socket"},
    {"send", "send", "socket_io", "socket"},
    {"recvfrom", "recvfrom", "socket_io", "socket"},
    {"sendto", "sendto", "socket_io", "socket"},
    {"recvmsg", "recvmsg", "socket_io", "socket"},
    {"sendmsg", "sendmsg", "socket_io", "socket"},
    {"accept", "accept", "socket_io", "socket"},
    {"accept4", "accept", "socket_io", "socket"},
    {"connect", "connect", "socket_io", "socket"},
    {"poll", "poll", "poll_wait", NULL},
    {"ppoll", "ppoll", "poll_wait", NULL},
    {"select", "select", "poll_wait", NULL},
    {"pselect", "pselect", "poll_wait", NULL},
    {"pselect6", "pselect", "poll_wait", NULL},
    {"epoll_wait", "epoll_wait", "poll_wait", NULL},
    {"epoll_pwait", "epoll_pwait", "poll_wait", NULL},
    {"epoll_pwait2", "epoll_pwait", "poll_wait", NULL},
    {"fsync", "fsync", "file_io", "unknown"},
    {"fdatasync", "fdatasync", "file_io", "unknown"},
    {"pthread_join", "pthread_join", "other_block", NULL},
    {"pthread_timedjoin_np", "pthread_join", "other_block", NULL},
    {"pthread_clockjoin_np", "pthread_join", "other_block", NULL},
};

#define LP_OSRT_NBLOCK (sizeof(lp_osrt_blocks) / sizeof(lp_osrt_blocks[0]))

/* 0 other, 1 lock, 2 cond wait, 3 + i blocking call lp_osrt_blocks[i]. The
 * _chk and 64 forms count under their plain names, as the interposer's do. */
static int nsys_osrt_kind(const char *s)
{
	int lock = nsys_lock_fn(s);
	if (lock)
		return lock;
	char plain[64];
	size_t len = strlen(s);
	if (!strncmp(s, "__", 2) && len > 6 && !strcmp(s + len - 4, "_chk")) {
		s += 2;
		len -= 6;
	}
	if (len > 2 && !strncmp(s + len - 2, "64", 2))
		len -= 2;
	if (len >= sizeof(plain))
		return 0;
	memcpy(plain, s, len);
	plain[len] = 0;
	for (size_t i = 0; i < LP_OSRT_NBLOCK; i++)
		if (!strcmp(plain, lp_osrt_blocks[i].name))
			return 3 + (int)i;
	return 0;
}

static int nsys_osrt_call(struct nsys *n, sqlite3_stmt *st, uint64_t kind, int64_t sid)
{
	int64_t g = sqlite3_column_int64(st, 2);
	int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
	int64_t proc = nsys_proc(n, g);
	int64_t thread = proc ? nsys_thread(n, proc, g) : 0;
	if (!thread)
		return -EIO;
	if (kind >= 3) {
		const struct osrt_block *b = &lp_osrt_blocks[kind - 3];
		assert(kind - 3 < LP_OSRT_NBLOCK);
		return lp_foreign_block_call(&n->fx, proc, thread, b->call, b->category, b->fd_kind,
					     start, end, sqlite3_column_int64(st, 4));
	}
	char *fn = nsys_src_string(n, sid);
	int rc = fn ? lp_foreign_lock_call(&n->fx, proc, thread, fn, start, end, kind == 2) : 0;
	free(fn);
	return rc;
}

static int nsys_osrt_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	int rc = nsys_ints(n, st, 4);
	if (rc)
		return rc;
	n->osrt_calls++;
	int64_t sid = sqlite3_column_int64(st, 3);
	uint64_t kind;
	if (!lp_map_get(&n->osrt_kinds, (uint64_t)sid + 1, &kind)) {
		char *fn = nsys_src_string(n, sid);
		kind = fn ? (uint64_t)nsys_osrt_kind(fn) : 0;
		free(fn);
		if (lp_map_put(&n->osrt_kinds, (uint64_t)sid + 1, kind))
			return -ENOMEM;
	}
	if (kind && lp_foreign_bad_time(&n->fx, LP_FOREIGN_OSRT, sqlite3_column_int64(st, 0),
					sqlite3_column_int64(st, 1)))
		return 0;
	return kind ? nsys_osrt_call(n, st, kind, sid) : 0;
}

/* ---- GPU memory, devices, thread names, session ----------------------------------- */

static const struct col lp_mem_cols[] = {
    {"start", 1},	 {"globalPid", 1}, {"deviceId", 0}, {"contextId", 0},
    {"address", 0},	 {"bytes", 1},	   {"memKind", 0},  {"memoryOperationType", 1},
    {"correlationId", 0}};

static int nsys_mem_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	int rc = nsys_ints(n, st, 2);
	int64_t proc = rc ? 0 : nsys_proc(n, sqlite3_column_int64(st, 1));
	if (rc || !proc)
		return rc ? rc : -EIO;
	/* ENUM_CUDA_DEV_MEM_EVENT_OPER: 0 allocation, 1 deallocation */
	return lp_foreign_alloc(
	    &n->fx, proc, sqlite3_column_int64(st, 7) == 1, sqlite3_column_int64(st, 0),
	    sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
	    lp_cuda_mem_kind(sqlite3_column_int64(st, 6)), sqlite3_column_int64(st, 2),
	    sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 8));
}

static const struct col lp_gpu_cols[] = {
    {"id", 1},		{"cuDevice", 0},     {"name", 0},
    {"smCount", 0},	{"computeMajor", 0}, {"computeMinor", 0},
    {"totalMemory", 0}, {"clockRate", 0},    {"memoryBandwidth", 0}};

static int64_t import_nsys_opt(sqlite3_stmt *st, int c, int64_t div)
{
	return sqlite3_column_type(st, c) == SQLITE_INTEGER ? sqlite3_column_int64(st, c) / div
							    : -1;
}

static int nsys_gpu_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	int64_t dev = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int64(st, 1)
								   : sqlite3_column_int64(st, 0);
	int rc = 0;
	/* One row per process that used the GPU, as CUPTI writes them. */
	for (size_t i = 0; rc == 0 && i < n->gpu_procs.cap; i++)
		if (n->gpu_procs.keys[i])
			rc = lp_foreign_device(&n->fx, (int64_t)n->gpu_procs.keys[i], dev,
					       (const char *)sqlite3_column_text(st, 2),
					       import_nsys_opt(st, 3, 1), import_nsys_opt(st, 4, 1),
					       import_nsys_opt(st, 5, 1), import_nsys_opt(st, 6, 1),
					       import_nsys_opt(st, 7, 1000),
					       import_nsys_opt(st, 8, 1000));
	return rc;
}

static const struct col lp_tname_cols[] = {{"nameId", 1}, {"globalTid", 1}};

static int nsys_tname_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	int64_t g = sqlite3_column_int64(st, 1);
	uint64_t key = ((uint64_t)((g >> 24) & 0xffffff) << 32 | (uint32_t)(g & 0xffffff)) + 1, id;
	if (!lp_map_get(&n->fx.threads, key, &id))
		return 0; /* a thread of the machine that did nothing we import */
	sqlite3_bind_int64(n->get_string, 1, sqlite3_column_int64(st, 0));
	char *name = lp_db_step_row(n->get_string) ? lp_db_col_strdup(n->get_string, 0) : NULL;
	sqlite3_reset(n->get_string);
	int rc = name ? lp_foreign_thread_name(&n->fx, (int64_t)id, name) : 0;
	free(name);
	return rc;
}

static int nsys_meta_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	const char *k = (const char *)sqlite3_column_text(st, 0);
	const char *v = (const char *)sqlite3_column_text(st, 1);
	if (!k || !v)
		return 0;
	if (!strcmp(k, "EXPORT_PRODUCT_VERSION"))
		snprintf(n->fx.producer_version, sizeof(n->fx.producer_version), "%s", v);
	else if (!strcmp(k, "EXPORT_SCHEMA_VERSION"))
		snprintf(n->fx.schema_version, sizeof(n->fx.schema_version), "%s", v);
	else if (!strcmp(k, "EXPORT_PRODUCT_NAME") && !strstr(v, "Nsight Systems")) {
		snprintf(n->imp->err, n->imp->errlen,
			 "%s: an SQLite export of '%s', not of NVIDIA Nsight Systems; latprof "
			 "imports nsys exports and Kineto traces",
			 n->path, v);
		return -EINVAL;
	}
	return 0;
}

static int nsys_session_row(sqlite3_stmt *st, void *ctx)
{
	struct nsys *n = ctx;
	const char *t = (const char *)sqlite3_column_text(st, 0);
	if (t)
		snprintf(n->fx.wall_start, sizeof(n->fx.wall_start), "%.30sZ", t);
	return 0;
}

extern const struct lp_import_source lp_src_cuda;

/* ---- driver --------------------------------------------------------------------------- */

#define LP_EACH(tab, cols, tail, fn)                                                               \
	nsys_each(n, tab, cols, (int)(sizeof(cols) / sizeof(cols[0])), tail, fn)
#define LP_MOVE(tab, cols, order, sql)                                                             \
	nsys_move(n, tab, cols, (int)(sizeof(cols) / sizeof(cols[0])), order, sql)

static int nsys_fill(struct lp_import *imp, void *ctx)
{
	struct nsys *n = ctx;
	static const struct col meta_cols[] = {{"name", 1}, {"value", 1}};
	static const struct col session_cols[] = {{"utcTime", 1}};
	n->imp = imp;
	int rc = lp_foreign_begin(&n->fx, imp);
	if (rc)
		return rc;
	n->get_string = NULL;
	if (sqlite3_prepare_v2(n->src, "SELECT value FROM StringIds WHERE id = ?", -1,
			       &n->get_string, NULL) != SQLITE_OK) {
		snprintf(imp->err, imp->errlen, "%s: cannot read table StringIds: %s", n->path,
			 sqlite3_errmsg(n->src));
		return -EINVAL;
	}
	if (lp_db_has_table(n->src, "PROCESSES") && nsys_has_col(n, "PROCESSES", "pid") &&
	    nsys_has_col(n, "PROCESSES", "name"))
		sqlite3_prepare_v2(n->src, "SELECT name FROM PROCESSES WHERE pid = ? LIMIT 1", -1,
				   &n->get_pname, NULL);
	rc = LP_EACH("EXPORT_META_DATA", meta_cols, NULL, nsys_meta_row);
	rc = rc ? rc : LP_EACH("META_DATA_EXPORT", meta_cols, NULL, nsys_meta_row);
	rc = rc ? rc
		: LP_EACH("TARGET_INFO_SESSION_START_TIME", session_cols, NULL, nsys_session_row);
	n->prev_tid = n->prev_corr = -1;
	/* lp_foreign tallies the work without its call as rows come; CUPTI counts
	 * correlation ids from 1 in each process. */
	n->fx.count_unattributed = 1;
	n->fx.tally_per_process = 1;
	n->count[LP_OP_KERNEL] = &n->fx.kernels;
	n->count[LP_OP_MEMCPY] = &n->fx.memcpys;
	n->count[LP_OP_MEMSET] = &n->fx.memsets;
	n->count[LP_OP_SYNC] = &n->fx.syncs;
	rc = rc ? rc : nsys_functions(n);
	rc = rc ? rc : nsys_attach(n, 1);
	/* The CUDA source's indexes (lp_foreign_finish makes them if not made),
	 * before the rows: an export's rows come by start time and mostly by
	 * correlation id, so each key lands at the end of its index, where
	 * building them after sorts every key. */
	rc = rc ? rc : lp_db_exec(imp->db, lp_src_cuda.indexes, imp->err, imp->errlen);
	/* Only exports that list calls twice (eventClass 67 twins, schema 2.9)
	 * pay for the sort that brings twins together: the first attempt reads
	 * them as they are and gives up at the first twin (nsys_api), where a
	 * scan for one read every call of the others (4% of an import). */
	n->sorted = n->twins;
	rc = rc ? rc
		: LP_MOVE("CUPTI_ACTIVITY_KIND_RUNTIME", lp_api_cols,
			  n->twins ? "globalTid, correlationId, eventClass, start" : NULL,
			  LP_API_SQL("CASE WHEN c5 = 1 THEN 'driver' ELSE 'runtime' END"));
	n->prev_tid = n->prev_corr = -1;
	n->sorted = 1;
	rc = rc ? rc
		: LP_MOVE("CUPTI_ACTIVITY_KIND_DRIVER", lp_api_cols,
			  "globalTid, correlationId, start", LP_API_SQL("'driver'"));
	/* every call has come: the work's async flags from the calls' names */
	n->fx.async_from_calls = !n->sync_copies_unfit;
	rc = rc ? rc : LP_MOVE("CUPTI_ACTIVITY_KIND_KERNEL", lp_kernel_cols, NULL, lp_kernel_sql);
	rc = rc ? rc : LP_MOVE("CUPTI_ACTIVITY_KIND_MEMCPY", lp_memcpy_cols, NULL, lp_memcpy_sql);
	rc = rc ? rc : LP_MOVE("CUPTI_ACTIVITY_KIND_MEMSET", lp_memset_cols, NULL, lp_memset_sql);
	rc = rc ? rc
		: LP_MOVE("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", lp_sync_cols, NULL, lp_sync_sql);
	rc = rc ? rc : nsys_attach(n, 0);
	rc =
	    rc ? rc : LP_EACH("NVTX_EVENTS", lp_nvtx_cols, "WHERE eventType = 75", nsys_domain_row);
	rc = rc ? rc : LP_EACH("NVTX_EVENTS", lp_nvtx_cols, "WHERE eventType <> 75", nsys_nvtx_row);
	rc = rc ? rc : LP_EACH("OSRT_API", lp_osrt_cols, NULL, nsys_osrt_row);
	rc = rc ? rc : LP_EACH("CUDA_GPU_MEMORY_USAGE_EVENTS", lp_mem_cols, NULL, nsys_mem_row);
	/* Without that table (nsys --cuda-memory-usage off) an allocation is only
	 * its API call: size, address and device are not in the capture, so no
	 * gpu_allocs row is made up; the calls stay in cuda_api, and are counted. */
	if (rc == 0 && !lp_db_has_table(n->src, "CUDA_GPU_MEMORY_USAGE_EVENTS"))
		n->unsized_allocs = n->alloc_calls;
	rc = rc ? rc : LP_EACH("TARGET_INFO_GPU", lp_gpu_cols, NULL, nsys_gpu_row);
	if (rc == 0 && !n->fx.devices)
		rc = nsys_devices(n);
	rc = rc ? rc : LP_EACH("ThreadNames", lp_tname_cols, NULL, nsys_tname_row);
	if (rc == 0 && !n->fx.procs.len) {
		snprintf(imp->err, imp->errlen,
			 "%s: the export holds no CUDA, NVTX or OS runtime rows latprof can import",
			 n->path);
		rc = -EINVAL;
	}
	return rc ? rc : lp_foreign_finish(&n->fx);
}

static void nsys_end(struct lp_import *imp, void *ctx)
{
	(void)imp;
	lp_foreign_end(&((struct nsys *)ctx)->fx);
}

static void *nsys_hash_run(void *arg)
{
	struct nsys_hash *h = arg;
	h->rc = lp_foreign_sha256_file(h->path, h->hex);
	return NULL;
}

static void nsys_hash_begin(struct nsys_hash *h)
{
	h->started = pthread_create(&h->thread, NULL, nsys_hash_run, h) == 0;
	if (!h->started)
		nsys_hash_run(h);
}

/* 0 once the hash is in h->hex, or -errno. */
static int nsys_hash_end(struct nsys_hash *h)
{
	if (h->started)
		pthread_join(h->thread, NULL);
	h->started = 0;
	return h->rc;
}

static int nsys_meta(struct lp_import *imp, void *ctx)
{
	struct nsys *n = ctx;
	int hashed = nsys_hash_end(n->hash);
	if (hashed) {
		snprintf(imp->err, imp->errlen, "cannot read %s: %s", n->path, strerror(-hashed));
		return hashed;
	}
	if (n->unsized_allocs) {
		snprintf(n->not_recorded, sizeof(n->not_recorded),
			 "%s, GPU allocation sizes and addresses (no CUDA_GPU_MEMORY_USAGE_EVENTS: "
			 "%lld allocation API calls, in cuda_api only)",
			 n->fx.not_recorded, n->unsized_allocs);
		n->fx.not_recorded = n->not_recorded;
	}
	memcpy(n->fx.sha256, n->hash->hex, sizeof(n->fx.sha256));
	int rc = lp_foreign_meta(&n->fx);
	rc = rc ? rc : lp_import_meta(imp, "import.unsized_alloc_calls", NULL, n->unsized_allocs);
	rc = rc ? rc : lp_import_meta(imp, "import.api_duplicates", NULL, n->api_duplicates);
	rc = rc ? rc : lp_import_meta(imp, "import.osrt_calls", NULL, n->osrt_calls);
	return rc ? rc : lp_import_meta(imp, "import.blocking_calls", NULL, n->fx.blocking);
}

/* "file:PATH?immutable=1", with the characters a URI gives a meaning
 * escaped (a '?' or '#' in the path would end it). */
static char *nsys_uri(const char *path)
{
	size_t len = strlen(path);
	char *uri = malloc(len * 3 + sizeof("file:?immutable=1")), *o = uri;
	if (!uri)
		return NULL;
	o += sprintf(o, "file:");
	for (const char *p = path; *p; p++)
		if (*p == '%' || *p == '?' || *p == '#')
			o += sprintf(o, "%%%02X", (unsigned char)*p);
		else
			*o++ = *p;
	strcpy(o, "?immutable=1");
	return uri;
}

/* One attempt's state, for a start afresh (twins). */
static void nsys_attempt_init(struct nsys *n, const char *path, int twins)
{
	*n = (struct nsys){.path = path, .twins = twins};
	n->fx.source = "nsys";
	n->fx.producer = "Nsight Systems";
	n->fx.not_recorded = "lock addresses and call sites, condition variables, the descriptors "
			     "of OS runtime calls, CPU counters, "
			     "process exit status";
	char *base = strdup(path);
	snprintf(n->fx.file, sizeof(n->fx.file), "%s", base ? basename(base) : path);
	free(base);
}

static void nsys_attempt_free(struct nsys *n)
{
	sqlite3_finalize(n->get_string);
	sqlite3_finalize(n->get_pname);
	lp_map_free(&n->strs);
	lp_map_free(&n->dom_names);
	lp_map_free(&n->gpu_procs);
	lp_map_free(&n->osrt_kinds);
	lp_map_free(&n->call_kinds);
	lp_map_free(&n->sync_copies);
	lp_map_free(&n->devices);
}

static int nsys_open(struct nsys *n, const char *uri, char *err, size_t errlen)
{
	/* immutable: the export is only read, never locked or journaled. */
	if (sqlite3_open_v2(uri, &n->src,
			    SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK ||
	    lp_db_int(n->src, "SELECT count(*) FROM sqlite_master", -1) < 0) {
		snprintf(err, errlen, "%s: not a readable SQLite database (%s)", n->path,
			 sqlite3_errmsg(n->src));
		return -EINVAL;
	}
	if (!lp_db_has_table(n->src, "StringIds")) {
		snprintf(err, errlen,
			 "%s: an SQLite database without the StringIds table, so not "
			 "an Nsight Systems export",
			 n->path);
		return -EINVAL;
	}
	return 0;
}

int lp_import_nsys(const char *path, const char *out, const struct lp_import_opts *opts, char *err,
		   size_t errlen)
{
	static const struct lp_import_foreign_ops ops = {nsys_fill, nsys_meta, nsys_end};
	struct nsys_hash hash = {.path = path};
	struct nsys n;
	char *uri = NULL;
	int rc;
	err[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	close(fd);
	nsys_hash_begin(&hash);
	/* No allocator statistics (a global mutex per malloc): only effective
	 * before SQLite initializes, which opening the export does. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* The output connection ATTACHes the export by this URI (nsys_attach);
	 * without URIs (SQLite initialized before), by its plain name. */
	int uris = sqlite3_config(SQLITE_CONFIG_URI, 1) == SQLITE_OK;
	if (!(uri = nsys_uri(path))) {
		nsys_hash_end(&hash);
		return -ENOMEM;
	}
	sqlite3 *src = NULL;
	for (int twins = 0; twins < 2; twins++) {
		nsys_attempt_init(&n, path, twins);
		n.hash = &hash;
		n.uri = uris ? uri : (char *)path;
		n.src = src;
		rc = src ? 0 : nsys_open(&n, uri, err, errlen);
		src = n.src;
		if (rc == 0)
			rc = lp_import_foreign(out, opts, lp_file_bytes(path), &ops, &n, err,
					       errlen);
		nsys_attempt_free(&n);
		if (rc != -EAGAIN)
			break;
	}
	nsys_hash_end(&hash);
	free(uri);
	sqlite3_close(src);
	return rc;
}

/* SQLite's header: the whole 16 bytes, its NUL included. */
static int nsys_probe(const unsigned char *head, size_t n)
{
	return n == 16 && !memcmp(head, "SQLite format 3", 16);
}

const struct lp_capture_format lp_capture_nsys = {
    .name = "nsys",
    .what = "Nsight Systems export",
    .noun = "an Nsight Systems SQLite export",
    .probe = nsys_probe,
    .import = lp_import_nsys,
};
