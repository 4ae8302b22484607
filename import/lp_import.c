/* SPDX-License-Identifier: MIT */
/*
 * The import framework the sources call: prepared statements, checked
 * steps, interned strings, threads, stacks symbolized once per address,
 * meta rows. The driver that runs the sources is lp_import_driver.c.
 */
#define _GNU_SOURCE
#include "lp_import.h"
#include "lp_import_priv.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lp_db.h"
#include "lp_symbols.h"

sqlite3_stmt *lp_import_prepare(struct lp_import *imp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v3(imp->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(imp->err, imp->errlen, "internal error preparing SQL: %s",
			 sqlite3_errmsg(imp->db));
		return NULL;
	}
	return st;
}

int lp_import_step(struct lp_import *imp, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	snprintf(imp->err, imp->errlen, "database write failed: %s", sqlite3_errmsg(imp->db));
	return -EIO;
}

int64_t lp_import_intern(struct lp_import *imp, const char *s, size_t len)
{
	struct lp_import_priv *p = imp->priv;
	uint64_t key = XXH3_64bits(s, len) | 1, id;
	if (lp_map_get(&p->strings, key, &id))
		return (int64_t)id;
	sqlite3_bind_text(p->ins_string, 1, s, (int)len, SQLITE_TRANSIENT);
	if (lp_import_step(imp, p->ins_string))
		return 0;
	id = (uint64_t)sqlite3_last_insert_rowid(imp->db);
	lp_map_put(&p->strings, key, id);
	return (int64_t)id;
}

int64_t lp_import_string(struct lp_import *imp, uint32_t local_id)
{
	uint64_t id;
	return local_id && lp_map_get(&imp->proc->strings, local_id, &id) ? (int64_t)id : 0;
}

int64_t lp_import_stack(struct lp_import *imp, uint32_t local_id)
{
	uint64_t id;
	return local_id && lp_map_get(&imp->proc->stacks, local_id, &id) ? (int64_t)id : 0;
}

int64_t lp_import_thread(struct lp_import *imp, uint32_t tid)
{
	struct lp_import_priv *p = imp->priv;
	uint64_t id;
	if (!tid)
		tid = imp->proc->pid;
	if (lp_map_get(&imp->proc->threads, tid, &id))
		return (int64_t)id;
	sqlite3_bind_int64(p->ins_thread, 1, imp->proc->id);
	sqlite3_bind_int64(p->ins_thread, 2, tid);
	if (lp_import_step(imp, p->ins_thread))
		return 0;
	id = (uint64_t)sqlite3_last_insert_rowid(imp->db);
	lp_map_put(&imp->proc->threads, tid, id);
	return (int64_t)id;
}

void *lp_import_state(struct lp_import *imp, const struct lp_import_source *src)
{
	struct lp_import_priv *p = imp->priv;
	for (int i = 0; i < LP_IMPORT_MAX_SOURCES && p->src[i]; i++)
		if (p->src[i] == src)
			return p->state[i];
	return NULL;
}

int lp_import_meta(struct lp_import *imp, const char *key, const char *text, int64_t num)
{
	sqlite3_stmt *st = imp->priv->ins_meta;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (text)
		sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_int64(st, 2, num);
	return lp_import_step(imp, st);
}

/* ---- stacks: symbolized once per process, frames shared across stacks -- */

static int64_t import_frame(struct lp_import *imp, uint64_t pc)
{
	struct lp_import_priv *p = imp->priv;
	struct lp_sym sym = {0};
	uint64_t id;
	/* 40,000 distinct stacks may share a dozen addresses: each address is
	 * symbolized once, not once per stack (docs/perf-notes.md). */
	if (pc && lp_map_get(&imp->proc->pcs, pc, &id))
		return (int64_t)id;
	int found = imp->proc->symtab && lp_symtab_lookup_pc(imp->proc->symtab, pc, &sym) == 0;
	if (!found && pc)
		imp->proc->unmapped++;
	uint64_t off = found ? sym.offset : pc;
	const char *mod = found ? sym.module : "";
	uint64_t key = (XXH3_64bits_withSeed(mod, strlen(mod), off) | 1);
	if (lp_map_get(&p->frames, key, &id))
		return pc && lp_map_put(&imp->proc->pcs, pc, id) ? 0 : (int64_t)id;
	sqlite3_stmt *st = p->ins_frame;
	if (found && sym.module)
		sqlite3_bind_text(st, 1, sym.module, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 1);
	sqlite3_bind_int64(st, 2, (int64_t)off);
	if (sym.function)
		sqlite3_bind_text(st, 3, sym.function, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 3);
	if (sym.file)
		sqlite3_bind_text(st, 4, sym.file, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 4);
	if (sym.line)
		sqlite3_bind_int(st, 5, sym.line);
	else
		sqlite3_bind_null(st, 5);
	if (lp_import_step(imp, st))
		return 0;
	id = (uint64_t)sqlite3_last_insert_rowid(imp->db);
	lp_map_put(&p->frames, key, id);
	if (pc)
		lp_map_put(&imp->proc->pcs, pc, id);
	return (int64_t)id;
}

int lp_import_stack_def(struct lp_import *imp, const struct lp_rec_header *h, const void *payload,
			size_t len)
{
	struct lp_import_priv *p = imp->priv;
	const struct lp_rec_stack *s = payload;
	uint32_t n = h->aux;
	if (len < sizeof(*s) || n > (len - sizeof(*s)) / 8 || !s->id)
		return 0; /* damaged definition: the stack stays unknown */
	const uint64_t *pcs = (const uint64_t *)(s + 1);
	int64_t frame_ids[64];
	if (n > 64)
		n = 64;
	assert(n <= sizeof(frame_ids) / sizeof(frame_ids[0]));
	for (uint32_t i = 0; i < n; i++)
		if (!(frame_ids[i] = import_frame(imp, pcs[i])))
			return -EIO;
	sqlite3_bind_int(p->ins_stack, 1, (int)n);
	sqlite3_bind_int64(p->ins_stack, 2, n ? frame_ids[0] : 0);
	if (lp_import_step(imp, p->ins_stack))
		return -EIO;
	int64_t sid = sqlite3_last_insert_rowid(imp->db);
	for (uint32_t i = 0; i < n; i++) {
		sqlite3_bind_int64(p->ins_stack_frame, 1, sid);
		sqlite3_bind_int(p->ins_stack_frame, 2, (int)i);
		sqlite3_bind_int64(p->ins_stack_frame, 3, frame_ids[i]);
		if (lp_import_step(imp, p->ins_stack_frame))
			return -EIO;
	}
	lp_map_put(&imp->proc->stacks, s->id, (uint64_t)sid);
	return 0;
}

int lp_import_fw_open(struct lp_import *imp)
{
	struct lp_import_priv *p = imp->priv;
	p->ins_string = lp_import_prepare(imp, "INSERT INTO strings(value) VALUES (?)");
	p->ins_frame = lp_import_prepare(
	    imp, "INSERT INTO frames(module, offset, function, file, line) VALUES (?,?,?,?,?)");
	p->ins_stack = lp_import_prepare(imp, "INSERT INTO stacks(depth, top_frame) VALUES (?,?)");
	p->ins_stack_frame = lp_import_prepare(
	    imp, "INSERT INTO stack_frames(stack_id, depth, frame_id) VALUES (?,?,?)");
	p->ins_thread = lp_import_prepare(imp, "INSERT INTO threads(process_id, tid) VALUES (?,?)");
	p->ins_meta =
	    lp_import_prepare(imp, "INSERT OR REPLACE INTO meta(key, value) VALUES (?,?)");
	if (!p->ins_string || !p->ins_frame || !p->ins_stack || !p->ins_stack_frame ||
	    !p->ins_thread || !p->ins_meta)
		return -EIO;
	return 0;
}

void lp_import_fw_close(struct lp_import *imp)
{
	struct lp_import_priv *p = imp->priv;
	sqlite3_finalize(p->ins_string);
	sqlite3_finalize(p->ins_frame);
	sqlite3_finalize(p->ins_stack);
	sqlite3_finalize(p->ins_stack_frame);
	sqlite3_finalize(p->ins_thread);
	sqlite3_finalize(p->ins_meta);
	lp_map_free(&p->strings);
	lp_map_free(&p->frames);
}
