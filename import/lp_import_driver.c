/* SPDX-License-Identifier: MIT */
/*
 * Import driver: validates every log before the output exists, then per log
 * runs two passes (definitions, then events in per-thread order) and hands
 * each record to the source that owns its type; a foreign capture's rows
 * go through the same setup, finish and publication.
 */
#define _GNU_SOURCE
#include "lp_import.h"
#include "lp_import_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lp_db.h"
#include "lp_import_proctab.h"
#include "lp_import_sources.h"
#include "lp_logread.h"
#include "lp_inf_table.h"
#include "lp_progress.h"
#include "lp_symbols.h"

/* The driver's state around the framework's: imp->priv points at fw. */
struct import_run {
	struct lp_import_priv fw;
	const struct lp_import_source *by_type[256];
	int source_of_type[256];
	uint64_t records;
	uint64_t sym_ns0;
	long long jit_symbols, jit_maps_missing; /* lp_symtab_time_ns() when this import began */
	struct lp_inf_waits inf;		 /* waits in progress in the run's shared table */
	uint32_t inf_stack_id;			 /* local ids of the sites made for them */
	long long inf_written; /* of those, written for an image that ended unclosed */
};

static struct import_run *run_of(struct lp_import *imp)
{
	return (struct import_run *)((char *)imp->priv - offsetof(struct import_run, fw));
}

/* ---- pass 1: definitions ---------------------------------------------- */

struct pass1 {
	struct lp_import *imp;
	const struct lp_rec_header **stack_defs;
	size_t n_stack_defs, cap_stack_defs;
	sqlite3_stmt *ins_module;
};

static int pass1_cb(void *ctx, uint32_t tid, const struct lp_rec_header *h, const void *payload,
		    size_t len)
{
	struct pass1 *p1 = ctx;
	struct lp_import *imp = p1->imp;

	if (h->type == LP_REC_STRING) {
		const struct lp_rec_string *s = payload;
		if (len < sizeof(*s) || h->aux > len - sizeof(*s) || !s->id)
			return 0;
		int64_t id = lp_import_intern(imp, (const char *)(s + 1), h->aux);
		if (!id)
			return -EIO;
		return lp_map_put(&imp->proc->strings, s->id, (uint64_t)id) ? -ENOMEM : 0;
	}
	if (h->type == LP_REC_STACK) {
		if (p1->n_stack_defs == p1->cap_stack_defs) {
			p1->cap_stack_defs = p1->cap_stack_defs ? 2 * p1->cap_stack_defs : 256;
			void *n = realloc(p1->stack_defs, p1->cap_stack_defs * sizeof(void *));
			if (!n)
				return -ENOMEM;
			p1->stack_defs = n;
		}
		p1->stack_defs[p1->n_stack_defs++] = h;
		return 0;
	}
	if (h->type == LP_REC_MODULE) {
		const struct lp_rec_module *m = payload;
		if (len < sizeof(*m) || h->aux > len - sizeof(*m) || m->start >= m->end)
			return 0;
		char path[PATH_MAX];
		size_t n = h->aux < sizeof(path) - 1 ? h->aux : sizeof(path) - 1;
		memcpy(path, m + 1, n);
		path[n] = 0;
		lp_symtab_add_module(imp->proc->symtab, path, m->load_bias, m->start, m->end);
		sqlite3_stmt *st = p1->ins_module;
		sqlite3_bind_int64(st, 1, imp->proc->id);
		sqlite3_bind_text(st, 2, path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 3, (int64_t)m->load_bias);
		sqlite3_bind_int64(st, 4, (int64_t)m->start);
		sqlite3_bind_int64(st, 5, (int64_t)m->end);
		sqlite3_bind_int64(st, 6, imp->proc->id);
		sqlite3_bind_text(st, 7, path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 8, (int64_t)m->load_bias);
		return lp_import_step(imp, st);
	}
	struct import_run *p = run_of(imp);
	if (h->type < 256 && p->by_type[h->type] && p->by_type[h->type]->define) {
		int i = p->source_of_type[h->type];
		return p->by_type[h->type]->define(imp, p->fw.state[i], tid, h, payload, len);
	}
	return lp_core_pass1(imp, tid, h, payload, len);
}

/* ---- pass 2: events --------------------------------------------------- */

static int pass2_cb(void *ctx, uint32_t tid, const struct lp_rec_header *h, const void *payload,
		    size_t len)
{
	struct lp_import *imp = ctx;
	struct import_run *p = run_of(imp);
	p->records++;
	if (h->type < 256 && p->by_type[h->type]) {
		int i = p->source_of_type[h->type];
		return p->by_type[h->type]->record(imp, p->fw.state[i], tid, h, payload, len);
	}
	if (h->type > LP_REC_CORE_LAST || h->type == 0)
		imp->unknown_records++;
	return 0;
}

/* ---- waits the image died in ------------------------------------------ */

/* A one-frame stack for a site known by its return address only, under a
 * local id above those the process handed out (they count up from 1). */
static uint32_t import_site_stack(struct lp_import *imp, uint64_t ra)
{
	struct import_run *p = run_of(imp);
	struct {
		struct lp_rec_header h;
		struct lp_rec_stack s;
		uint64_t pc;
	} d = {.h = {.type = LP_REC_STACK, .size = sizeof(d), .aux = 1},
	       .s = {.id = p->inf_stack_id--},
	       .pc = ra};
	if (!ra)
		return 0;
	return lp_import_stack_def(imp, &d.h, &d.s, sizeof(d) - sizeof(d.h)) ? 0 : d.s.id;
}

/* An image whose log was never closed ran no exit path: killed by a signal
 * it did not handle, or still running. The waits its threads were in, from
 * the run's shared table, go in as unfinished, flagged LP_WAITF_DIED, with
 * no length yet: the importer's core gives them their end once it knows
 * when the process died, or drops them (core_died in lp_import_core.c). */
static int import_inflight(struct lp_import *imp, const struct lp_log *log)
{
	struct import_run *p = run_of(imp);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < p->inf.n; i++) {
		const struct lp_inf_wait *w = &p->inf.v[i];
		if (w->pid != log->hdr.pid || w->image != log->hdr.start_ns)
			continue;
		uint32_t type = w->what >> 8;
		uint32_t stack =
		    type == LP_REC_LOCK_WAIT && w->stack ? w->stack : import_site_stack(imp, w->ra);
		rc = lp_core_inflight(imp, w, stack);
		p->inf_written += rc == 0;
		p->inf.v[i].imported = 1;
	}
	return rc;
}

/* An image without a log (it recorded nothing but its life) that died in a
 * blocking call: its one thread (an image gets a log before its second
 * thread starts) slept, read or waited for a child. No module of it is
 * recorded: the call site is a bare address. Lock and condition waits of
 * such an image are left out (a lone thread rarely has them). */
static int import_inflight_unlogged(struct lp_import *imp)
{
	struct import_run *p = run_of(imp);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < p->inf.n; i++) {
		const struct lp_inf_wait *w = &p->inf.v[i];
		if (w->imported || w->what >> 8 != LP_REC_BLOCK)
			continue;
		struct lp_db_arg key[] = {LP_DB_INT(w->pid), LP_DB_INT(w->image)};
		int64_t proc = lp_db_int_args(imp->db,
					      "SELECT id FROM processes WHERE pid = ? AND "
					      "start_ns = ? AND log_closed = 0",
					      key, 2, 0);
		struct lp_db_arg tkey[] = {LP_DB_INT(proc), LP_DB_INT(w->tid)};
		int64_t thread =
		    proc ? lp_db_int_args(imp->db,
					  "SELECT id FROM threads WHERE process_id = ? AND tid = ?",
					  tkey, 2, 0)
			 : 0;
		if (!thread)
			continue;
		struct lp_proc one = {.id = proc, .pid = w->pid, .start_ns = w->image};
		rc = lp_map_put(&one.threads, w->tid, (uint64_t)thread) ? -ENOMEM : 0;
		imp->proc = &one;
		uint32_t stack = rc ? 0 : import_site_stack(imp, w->ra);
		rc = rc ? rc : lp_core_inflight(imp, w, stack);
		p->inf_written += rc == 0;
		imp->proc = NULL;
		lp_map_free(&one.threads);
		lp_map_free(&one.stacks);
		lp_map_free(&one.pcs);
	}
	return rc;
}

static int import_inflight_meta(struct lp_import *imp, void *ctx)
{
	struct import_run *p = run_of(imp);
	(void)ctx;
	int rc = 0;
	if (p->inf_written)
		rc = lp_import_meta(imp, "import.inflight_found", NULL, p->inf_written);
	if (rc == 0 && p->inf.unconverted)
		rc = lp_import_meta(imp, "import.inflight_unconverted", NULL, p->inf.unconverted);
	if (rc == 0 && p->inf.full)
		rc = lp_import_meta(imp, "import.inflight_full", NULL, p->inf.full);
	return rc;
}

static int64_t logs_bytes(const struct lp_log *logs, size_t n);

static int import_log(struct lp_import *imp, const struct lp_log *log)
{
	struct import_run *p = run_of(imp);
	struct lp_proc proc = {0};
	struct pass1 p1 = {.imp = imp};
	int rc;

	proc.pid = log->hdr.pid;
	proc.start_ns = log->hdr.start_ns;
	proc.symtab = lp_symtab_new();
	/* A JIT's code lies in no module: its perf map names it, read now (the
	 * runtime rewrites or leaves it; the database keeps the names). */
	char map[64];
	snprintf(map, sizeof(map), "/tmp/perf-%u.map", proc.pid);
	proc.jit_symbols = lp_symtab_add_perfmap(proc.symtab, map);
	imp->proc = &proc;
	rc = lp_core_begin_process(imp, log);
	if (rc)
		goto out;
	p1.ins_module = lp_import_prepare(
	    imp, "INSERT INTO modules(process_id, path, load_bias, start_addr, end_addr) "
		 "SELECT ?1, ?2, ?3, ?4, ?5 WHERE NOT EXISTS (SELECT 1 FROM modules WHERE "
		 "process_id = ?6 AND path = ?7 AND load_bias = ?8)");
	rc = p1.ins_module ? lp_log_foreach(log, pass1_cb, &p1) : -EIO;
	lp_progress_add((uint64_t)logs_bytes(log, 1));
	for (size_t i = 0; rc == 0 && i < p1.n_stack_defs; i++) {
		const struct lp_rec_header *h = p1.stack_defs[i];
		rc = lp_import_stack_def(imp, h, h + 1, h->size - sizeof(*h));
	}
	if (proc.jit_symbols > 0)
		p->jit_symbols += proc.jit_symbols;
	else if (proc.unmapped)
		p->jit_maps_missing++;
	if (rc == 0)
		rc = lp_log_foreach(log, pass2_cb, imp);
	lp_progress_add((uint64_t)logs_bytes(log, 1));
	if (rc == 0 && !(log->hdr.flags & LP_LOGF_CLOSED))
		rc = import_inflight(imp, log);
	for (int i = 0; rc == 0 && lp_import_sources[i]; i++)
		if (lp_import_sources[i]->end_process)
			rc = lp_import_sources[i]->end_process(imp, p->fw.state[i]);
out:
	if (rc && !imp->err[0])
		snprintf(imp->err, imp->errlen, "%s: import failed (%s)", log->path, strerror(-rc));
	sqlite3_finalize(p1.ins_module);
	free(p1.stack_defs);
	lp_map_free(&proc.strings);
	lp_map_free(&proc.stacks);
	lp_map_free(&proc.threads);
	lp_map_free(&proc.pcs);
	lp_symtab_free(proc.symtab);
	imp->proc = NULL;
	return rc;
}

/* ---- driver ----------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted list of the .lplog paths in dir (caller frees). */
static int list_logs(const char *dir, char ***out, size_t *n, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot read log directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	char **v = NULL;
	size_t len = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 6 || strcmp(e->d_name + l - 6, ".lplog"))
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (asprintf(&v[len], "%s/%s", dir, e->d_name) < 0)
			break;
		len++;
	}
	closedir(d);
	if (len) /* qsort(NULL, 0): undefined; a run may have no log, only its table */
		qsort(v, len, sizeof(*v), name_cmp);
	*out = v;
	*n = len;
	if (!len) {
		snprintf(err, errlen, "%s holds no latprof event logs (*.lplog)", dir);
		return -ENOENT;
	}
	return 0;
}

/* The rule for every file latprof writes: into a directory that exists and
 * is writable, never through a symbolic link, only over a regular file, and
 * over an existing one only with force. */
static int output_check(const char *out, int force, char *err, size_t errlen)
{
	struct stat st;
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", out) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "output path '%.60s...' is %zu characters; the limit is %d",
			 out, strlen(out), PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	const char *dir = dirname(tmp);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "output directory %s does not exist", dir);
		return -ENOENT;
	}
	if (access(dir, W_OK) != 0) {
		snprintf(err, errlen, "output directory %s is not writable", dir);
		return -EACCES;
	}
	if (lstat(out, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s is a symbolic link; refusing to write through it",
				 out);
			return -ELOOP;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, errlen,
				 "%s exists and is not a regular file; refusing to write it", out);
			return -EEXIST;
		}
		if (!force) {
			snprintf(err, errlen, "%s exists; use --force to overwrite it", out);
			return -EEXIST;
		}
	}
	return 0;
}

#define LP_IMPORT_TMP_SUFFIX ".tmp-XXXXXX"

/*
 * A database is first written as OUT.tmp-XXXXXX in OUT's directory, so
 * that name must fit the directory's NAME_MAX, and SQLite must accept its
 * absolute path: its unix VFS refuses a path longer than mxPathname less
 * the 8 characters of a "-journal" suffix ("unable to open database
 * file", found only after the app ran). Symbolic links in the directory
 * count as SQLite resolves them.
 */
static int output_db_limits(const char *out, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", out);
	const char *dir = dirname(tmp);
	const char *base = strrchr(out, '/');
	base = base ? base + 1 : out;
	size_t name = strlen(base) + strlen(LP_IMPORT_TMP_SUFFIX);
	long name_max = pathconf(dir, _PC_NAME_MAX);
	if (name_max <= 0)
		name_max = NAME_MAX;
	if (name > (size_t)name_max) {
		snprintf(err, errlen,
			 "output file name '%.40s...' is %zu characters; the import writes it "
			 "first as NAME" LP_IMPORT_TMP_SUFFIX ", which NAME_MAX (%ld) allows "
			 "up to %zu",
			 base, strlen(base), name_max,
			 (size_t)name_max - strlen(LP_IMPORT_TMP_SUFFIX));
		return -ENAMETOOLONG;
	}
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
	size_t max = (size_t)(vfs ? vfs->mxPathname : 512) - strlen("-journal");
	char *real = realpath(dir, NULL);
	size_t full = (real ? strlen(real) : strlen(dir)) + 1 + name;
	free(real);
	if (full > max) {
		snprintf(err, errlen,
			 "output path '%.60s...' is too long for SQLite: %zu characters as an "
			 "absolute path with the import's %zu-character temporary suffix, and "
			 "SQLite opens at most %zu",
			 out, full, strlen(LP_IMPORT_TMP_SUFFIX), max);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int output_db_check(const char *out, int force, char *err, size_t errlen)
{
	int rc = output_check(out, force, err, errlen);
	return rc ? rc : output_db_limits(out, err, errlen);
}

int lp_import_output_check(const char *out, int force, char *err, size_t errlen)
{
	return output_db_check(out, force, err, errlen);
}

int lp_file_output_check(const char *out, int force, char *err, size_t errlen)
{
	return output_check(out, force, err, errlen);
}

/*
 * A large import's database has 64 KiB pages: SQLite splits a b-tree page
 * that is full, and a bulk load of 10^6 rows into 4 KiB pages splits (and
 * rebalances) one every 90 rows or so; reports read such a database as
 * fast (docs/perf-notes.md, "Import: page size"). Small imports keep
 * SQLite's default 4 KiB: every table and index takes at least one page,
 * and 51 of them at 64 KiB are 3.3 MiB.
 */
#define LP_IMPORT_BIG_BYTES ((int64_t)16 << 20)

static int import_page_size(struct lp_import *imp, int64_t input_bytes)
{
	if (input_bytes < LP_IMPORT_BIG_BYTES)
		return 0;
	return lp_db_exec(imp->db, "PRAGMA page_size=65536", imp->err, imp->errlen);
}

/* secure_delete, on in Debian's SQLite, zeroes the space a cell leaves
 * when b-tree pages are rebalanced or rewritten. Nothing the importer
 * overwrites needs wiping: the file is new, and every value it replaces is
 * its own. */
static int import_setup(struct lp_import *imp, int64_t input_bytes)
{
	struct import_run *p = run_of(imp);
	int rc = import_page_size(imp, input_bytes); /* before the first page */
	rc = rc ? rc
		: lp_db_exec(imp->db,
			     "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
			     "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536; "
			     "PRAGMA temp_store=MEMORY; PRAGMA secure_delete=OFF; BEGIN;",
			     imp->err, imp->errlen);
	for (int i = 0; rc == 0 && lp_import_sources[i]; i++) {
		const struct lp_import_source *s = lp_import_sources[i];
		if (s->schema)
			rc = lp_db_exec(imp->db, s->schema, imp->err, imp->errlen);
		for (int t = s->first_type; rc == 0 && s->record && t <= s->last_type && t < 256;
		     t++) {
			p->by_type[t] = s;
			p->source_of_type[t] = i;
		}
	}
	if (rc)
		return rc;
	if (lp_import_fw_open(imp))
		return -EIO;
	for (int i = 0; lp_import_sources[i]; i++) {
		p->fw.src[i] = lp_import_sources[i];
		if (lp_import_sources[i]->begin &&
		    (rc = lp_import_sources[i]->begin(imp, &p->fw.state[i])))
			return rc;
	}
	return 0;
}

/* after: a foreign import's meta rows, written over the sources' defaults. */
static int import_finish(struct lp_import *imp, int (*after)(struct lp_import *, void *), void *ctx)
{
	struct import_run *p = run_of(imp);
	int rc = 0;
	for (int i = 0; rc == 0 && lp_import_sources[i]; i++)
		if (lp_import_sources[i]->finish)
			rc = lp_import_sources[i]->finish(imp, p->fw.state[i]);
	if (rc == 0 && after)
		rc = after(imp, ctx);
	if (rc == 0)
		rc = lp_import_meta(imp, "import.records", NULL, (int64_t)p->records);
	if (rc == 0)
		rc = lp_import_meta(imp, "import.unknown_records", NULL,
				    (int64_t)imp->unknown_records);
	if (rc == 0 && p->jit_symbols)
		rc = lp_import_meta(imp, "import.jit_symbols", NULL, p->jit_symbols);
	if (rc == 0 && p->jit_maps_missing)
		rc = lp_import_meta(imp, "import.jit_maps_missing", NULL, p->jit_maps_missing);
	if (rc == 0)
		rc = lp_import_meta(imp, "import.symbolize_ns", NULL,
				    (int64_t)(lp_symtab_time_ns() - p->sym_ns0));
	if (rc == 0)
		rc = lp_db_exec(imp->db, "COMMIT", imp->err, imp->errlen);
	/* CREATE INDEX sorts its keys in SQLite's external sorter, which with
	 * temp_store=MEMORY mallocs every key, and with FILE packs them into
	 * page-sized blocks up to cache_size before it spills to a temporary
	 * file: 16% fewer instructions to index 1 M lock waits' start_ns. */
	int64_t temp_store = lp_db_int(imp->db, "PRAGMA temp_store", 0);
	if (rc == 0)
		rc = lp_db_exec(imp->db, "PRAGMA temp_store=FILE", imp->err, imp->errlen);
	for (int i = 0; rc == 0 && lp_import_sources[i]; i++)
		if (lp_import_sources[i]->indexes)
			rc = lp_db_exec(imp->db, lp_import_sources[i]->indexes, imp->err,
					imp->errlen);
	if (rc == 0) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA temp_store=%d", (int)temp_store);
		rc = lp_db_exec(imp->db, sql, imp->err, imp->errlen);
	}
	for (int i = 0; rc == 0 && lp_import_sources[i]; i++)
		if (lp_import_sources[i]->after_indexes)
			rc = lp_import_sources[i]->after_indexes(imp);
	if (rc == 0) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", LP_SCHEMA_VERSION);
		rc = lp_db_exec(imp->db, sql, imp->err, imp->errlen);
	}
	return rc;
}

static void import_teardown(struct lp_import *imp)
{
	struct import_run *p = run_of(imp);
	for (int i = 0; lp_import_sources[i]; i++)
		if (lp_import_sources[i]->destroy)
			lp_import_sources[i]->destroy(p->fw.state[i]);
	lp_import_fw_close(imp);
}

/* Move the finished temporary database into place without ever replacing a
 * file the user has unless force: link() fails on an existing name. */
static int publish(const char *tmp, const char *out, int force, char *err, size_t errlen)
{
	if (force ? rename(tmp, out) : link(tmp, out)) {
		int e = errno;
		snprintf(err, errlen, "cannot create %s: %s", out, strerror(e));
		unlink(tmp);
		return -e;
	}
	if (!force)
		unlink(tmp);
	lp_db_check_trust(out); /* every table was created in one transaction */
	return 0;
}

/* The temporary databases of out that killed imports left: OUT.tmp-XXXXXX
 * files no importer holds. A live one's importer holds an flock on it from
 * its creation, which happens under the directory's flock (held here), so
 * one that can be locked now has no importer left. */
static void tmp_db_sweep(int dfd, const char *base)
{
	size_t blen = strlen(base), slen = strlen(LP_IMPORT_TMP_SUFFIX);
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (strlen(e->d_name) != blen + slen || strncmp(e->d_name, base, blen) ||
		    strncmp(e->d_name + blen, LP_IMPORT_TMP_SUFFIX, slen - 6))
			continue;
		struct stat st;
		int t = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (t < 0)
			continue;
		if (fstat(t, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(t, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dfd, e->d_name, 0);
		close(t);
	}
	closedir(d);
}

/* The temporary database next to out (made 0666 & ~umask, as a normal user
 * file) that publish later moves into place, held by an flock on *lock_fd
 * until then (close it after publish or unlink). Stale ones of the same
 * out are removed first. -EIO: tmp exists, unlink it. */
static int tmp_db(const char *out, char *tmp, sqlite3 **db, int *lock_fd, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	*lock_fd = -1;
	if (snprintf(tmp, PATH_MAX, "%s" LP_IMPORT_TMP_SUFFIX, out) >= PATH_MAX) {
		snprintf(err, errlen, "output path too long");
		return -ENAMETOOLONG;
	}
	snprintf(dir, sizeof(dir), "%s", out);
	const char *base = strrchr(out, '/');
	int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int dir_locked = dfd >= 0 && flock(dfd, LOCK_EX) == 0;
	if (dir_locked)
		tmp_db_sweep(dfd, base ? base + 1 : out);
	int fd = mkstemp(tmp);
	int e = errno;
	if (fd >= 0)
		flock(fd, LOCK_EX | LOCK_NB); /* new: no one else holds it */
	if (dfd >= 0)
		close(dfd); /* and its lock */
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(e));
		return -e;
	}
	*lock_fd = fd;
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	if (sqlite3_open_v2(tmp, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", tmp, sqlite3_errmsg(*db));
		return -EIO;
	}
	return 0;
}

int lp_import_foreign(const char *out, const struct lp_import_opts *opts, int64_t input_bytes,
		      const struct lp_import_foreign_ops *ops, void *ctx, char *err, size_t errlen)
{
	struct import_run priv = {0};
	struct lp_import imp = {.err = err, .errlen = errlen, .priv = &priv.fw};
	char tmp[PATH_MAX];
	int force = opts && opts->force, tmp_fd = -1;

	err[0] = 0;
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	int rc = output_db_check(out, force, err, errlen);
	if (rc)
		return rc;
	rc = tmp_db(out, tmp, &imp.db, &tmp_fd, err, errlen);
	if (rc && rc != -EIO)
		return rc;
	if (rc == 0)
		rc = import_setup(&imp, input_bytes);
	/* Sorts of multi-GB captures (range nesting) spill to disk, not RAM.
	 * A capture's rows go in once and are read back by a few passes, so
	 * a page cache of 16 MiB, not import_setup's 64 MiB, which serves the
	 * logs' classification passes over every lock wait: an nsys export of
	 * 1 M rows took 0.98 s of wall time with it against 1.08 s (median of
	 * 5, alternating; fewer pages faulted in), at 30 MB of peak RSS
	 * against 81 MB; a Kineto trace of 128 MiB the same time, 33 MB
	 * against 49 MB. */
	if (rc == 0)
		rc = lp_db_exec(imp.db, "PRAGMA temp_store=FILE; PRAGMA cache_size=-16384", err,
				errlen);
	if (rc == 0)
		rc = ops->fill(&imp, ctx);
	if (rc == 0)
		rc = import_finish(&imp, ops->meta, ctx);
	/* Statistics, so that the reports' planner picks the import's partial
	 * indexes (lp_import_foreign.c); sampled, so it stays cheap. */
	if (rc == 0)
		rc = lp_db_exec(imp.db, "PRAGMA analysis_limit=1000; ANALYZE", err, errlen);
	if (ops->end)
		ops->end(&imp, ctx);
	import_teardown(&imp);
	sqlite3_close(imp.db);
	if (rc == 0) {
		rc = publish(tmp, out, force, err, errlen);
		close(tmp_fd);
		return rc;
	}
	if (!err[0])
		snprintf(err, errlen, "import failed: %s", strerror(-rc));
	unlink(tmp);
	close(tmp_fd);
	return rc;
}

/* The records the logs hold (their files are mostly unwritten space). */
static int64_t logs_bytes(const struct lp_log *logs, size_t n)
{
	int64_t bytes = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t s = 0; s < logs[i].n_stretches; s++)
			bytes += logs[i].stretches[s].end - logs[i].stretches[s].begin;
	return bytes;
}

int lp_import_dir(const char *dir, const char *out, const struct lp_import_opts *opts,
		  struct lp_import_stats *stats, char *err, size_t errlen)
{
	struct import_run priv = {0};
	struct lp_import imp = {.err = err, .errlen = errlen, .priv = &priv.fw};
	struct lp_import_stats local = {0};
	char **paths = NULL;
	size_t n = 0;
	struct lp_log *logs = NULL;
	struct lp_ptab ptab = {0};
	struct lp_ptab_counts from_table = {0};
	char tmp[PATH_MAX];
	int rc, tmp_fd = -1;

	err[0] = 0;
	priv.sym_ns0 = lp_symtab_time_ns();
	/* Single-threaded bulk load: no allocator statistics (they take a
	 * global mutex per malloc). Only effective before SQLite initializes. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	stats = stats ? stats : &local;
	memset(stats, 0, sizeof(*stats));
	rc = output_db_check(out, opts && opts->force, err, errlen);
	if (rc)
		return rc;
	rc = lp_ptab_read(dir, &ptab, err, errlen);
	if (rc == 0)
		rc = list_logs(dir, &paths, &n, err, errlen);
	if (rc == -ENOENT && ptab.n) { /* every process is in the table alone */
		rc = 0;
		err[0] = 0;
	}
	if (rc)
		goto out_paths;
	logs = calloc(n, sizeof(*logs));
	rc = logs ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = lp_log_open(&logs[i], paths[i], err, errlen);
	if (rc)
		goto out_logs;

	rc = tmp_db(out, tmp, &imp.db, &tmp_fd, err, errlen);
	if (rc == -EIO)
		goto out_db;
	if (rc)
		goto out_logs;
	rc = import_setup(&imp, logs_bytes(logs, n));
	if (rc == 0) {
		char reaped[PATH_MAX];
		snprintf(reaped, sizeof(reaped), "%s/reaped", dir);
		lp_import_core_reaped(&imp, reaped);
		priv.inf_stack_id = UINT32_MAX;
		rc = lp_inflight_load(dir, &priv.inf);
	}
	if (rc == 0 && opts && opts->run_cmdline)
		rc = lp_import_meta(&imp, "run.cmdline", opts->run_cmdline, 0);
	if (rc == 0 && opts && opts->run_cpus_allowed > 0)
		rc = lp_import_meta(&imp, "run.cpus_allowed", NULL, opts->run_cpus_allowed);
	if (rc == 0 && opts && opts->host_cpus_online > 0)
		rc = lp_import_meta(&imp, "host.cpus_online", NULL, opts->host_cpus_online);
	if (rc == 0)
		rc = lp_ptab_begin(&imp, &ptab, logs, n);
	/* each log is read twice (modules and stacks, then events) */
	lp_progress_begin("importing event logs", 2 * (uint64_t)logs_bytes(logs, n), "bytes");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = lp_ptab_import_before(&imp, &ptab, &logs[i]);
		if (rc == 0)
			rc = import_log(&imp, &logs[i]);
		stats->damaged_chunks += (long long)logs[i].damaged_chunks;
		stats->dropped_records += (long long)logs[i].hdr.dropped_records;
		stats->dropped_strings += (long long)logs[i].hdr.dropped_strings;
		stats->dropped_holds += (long long)logs[i].hdr.dropped_holds;
	}
	lp_progress_end();
	if (rc == 0)
		rc = lp_ptab_import_before(&imp, &ptab, NULL);
	if (rc == 0)
		rc = import_inflight_unlogged(&imp);
	if (rc == 0)
		rc = lp_ptab_end(&imp, &ptab);
	from_table = ptab.counts;
	if (rc == 0) {
		lp_core_add_table_counts(&imp, from_table.lost, from_table.unclosed,
					 from_table.first_realtime_ns);
		stats->dropped_records += from_table.lost;
		rc = import_finish(&imp, import_inflight_meta, NULL);
	}
	import_teardown(&imp);
	lp_inflight_free(&priv.inf);
	if (rc == 0) {
		stats->processes = (int)n + from_table.processes;
		stats->records = (long long)priv.records;
		stats->unknown_records = (long long)imp.unknown_records;
		stats->threads = lp_db_count(imp.db, "threads");
		stats->lock_waits = lp_db_count(imp.db, "lock_waits");
	}
out_db:
	/* Before the close: an unfinalized statement makes sqlite3_close()
	 * fail, and the connection leaked (fuzz_import, a damaged log). */
	lp_ptab_release(&ptab);
	sqlite3_close(imp.db);
	if (rc == 0)
		rc = publish(tmp, out, opts && opts->force, err, errlen);
	else
		unlink(tmp);
	close(tmp_fd);
out_logs:
	for (size_t i = 0; logs && i < n; i++)
		lp_log_close(&logs[i]);
	free(logs);
out_paths:
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	lp_ptab_free(&ptab);
	return rc;
}
