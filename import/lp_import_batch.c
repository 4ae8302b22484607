/* SPDX-License-Identifier: MIT */
/*
 * Batched inserts of integer rows through an eponymous virtual table that
 * reads the caller's array in place: "INSERT INTO t(cols) SELECT c0, c1...
 * FROM name ORDER BY rowid" stores LP_BATCH_ROWS rows per statement in
 * array order (so ids follow it), with no bind call per value: binding
 * each value costs more than xColumn handing it over (docs/perf-notes.md,
 * "Import: lock waits"). A 0 in a column of null_if_zero stores NULL (xColumn sets no
 * result), as an unknown owner or stack always has; so does a negative
 * value in a column of null_if_neg (a wait's unknown run-queue time).
 *
 * A column that is 0 in every row of a batch (most lock waits have no
 * owner, are exclusive and neither timed out nor failed) is selected as
 * the constant 0 or NULL instead, which SQLite evaluates once per
 * statement rather than once per row: a statement per set of such
 * columns, among those declared sparse; the rows stored are the same.
 */
#include "lp_import_batch.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lp_util.h"

struct batch_cursor {
	sqlite3_vtab_cursor base;
	int i;
};

struct batch_vtab {
	sqlite3_vtab base;
	struct lp_batch *b;
};

static int batch_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
			 sqlite3_vtab **out, char **err)
{
	(void)argc;
	(void)argv;
	(void)err;
	/* Column names do not matter: the INSERT takes them by position. */
	int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9)");
	if (rc != SQLITE_OK)
		return rc;
	struct batch_vtab *t = sqlite3_malloc(sizeof(*t));
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	t->b = aux;
	*out = &t->base;
	return SQLITE_OK;
}

static int batch_disconnect(sqlite3_vtab *t)
{
	sqlite3_free(t);
	return SQLITE_OK;
}

static int batch_best_index(sqlite3_vtab *t, sqlite3_index_info *info)
{
	(void)t;
	/* The INSERT asks for rowid order, which is the array's: rows keep
	 * the order they were added in, and get their ids in it. */
	if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn < 0 && !info->aOrderBy[0].desc)
		info->orderByConsumed = 1;
	info->estimatedCost = LP_BATCH_ROWS;
	info->estimatedRows = LP_BATCH_ROWS;
	return SQLITE_OK;
}

static int batch_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out)
{
	(void)t;
	struct batch_cursor *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int batch_close(sqlite3_vtab_cursor *c)
{
	sqlite3_free(c);
	return SQLITE_OK;
}

static int batch_filter(sqlite3_vtab_cursor *c, int idx, const char *idx_str, int argc,
			sqlite3_value **argv)
{
	(void)idx;
	(void)idx_str;
	(void)argc;
	(void)argv;
	((struct batch_cursor *)c)->i = 0;
	return SQLITE_OK;
}

static int batch_next(sqlite3_vtab_cursor *c)
{
	((struct batch_cursor *)c)->i++;
	return SQLITE_OK;
}

static int batch_eof(sqlite3_vtab_cursor *c)
{
	const struct batch_vtab *t = (const struct batch_vtab *)c->pVtab;
	return ((struct batch_cursor *)c)->i >= t->b->n;
}

static int batch_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
	const struct lp_batch *b = ((const struct batch_vtab *)c->pVtab)->b;
	int64_t v = b->v[((struct batch_cursor *)c)->i][col];
	if ((v || !(b->null_if_zero & (1u << col))) && (v >= 0 || !(b->null_if_neg & (1u << col))))
		sqlite3_result_int64(ctx, v);
	return SQLITE_OK;
}

static int batch_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *rowid)
{
	*rowid = ((struct batch_cursor *)c)->i;
	return SQLITE_OK;
}

static const sqlite3_module batch_module = {
    .xConnect = batch_connect, /* no xCreate: eponymous only */
    .xBestIndex = batch_best_index,
    .xDisconnect = batch_disconnect,
    .xOpen = batch_open,
    .xClose = batch_close,
    .xFilter = batch_filter,
    .xNext = batch_next,
    .xEof = batch_eof,
    .xColumn = batch_column,
    .xRowid = batch_rowid,
};

int lp_batch_init(struct lp_import *imp, struct lp_batch *b, const char *name, const char *head,
		  int ncols, uint32_t null_if_zero, uint32_t sparse)
{
	assert(ncols > 0 && ncols <= LP_BATCH_MAX_COLS);
	memset(b->ins, 0, sizeof(b->ins));
	b->name = name;
	b->head = head;
	b->ncols = ncols;
	b->n = 0;
	b->null_if_zero = null_if_zero;
	b->null_if_neg = 0;
	b->sparse = sparse & ((1u << ncols) - 1);
	if (sqlite3_create_module(imp->db, name, &batch_module, b) != SQLITE_OK) {
		snprintf(imp->err, imp->errlen, "internal error creating module %s: %s", name,
			 sqlite3_errmsg(imp->db));
		return -EIO;
	}
	return 0;
}

/* The sparse columns that hold 0 in every row held. */
static uint32_t batch_zero_cols(const struct lp_batch *b)
{
	uint32_t nonzero = 0;
	for (int c = 0; c < b->ncols; c++) {
		if (!(b->sparse & (1u << c)))
			continue;
		for (int i = 0; i < b->n && !(nonzero & (1u << c)); i++)
			if (b->v[i][c])
				nonzero |= 1u << c;
	}
	return b->sparse & ~nonzero;
}

/* The INSERT that takes the columns of `zero` as constants. */
static sqlite3_stmt *batch_insert_for(struct lp_import *imp, struct lp_batch *b, uint32_t zero)
{
	if (b->ins[zero])
		return b->ins[zero];
	char sql[1024];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "%s", b->head);
	for (int c = 0; c < b->ncols && len < sizeof(sql); c++) {
		const char *sep = c ? ", " : "";
		if (!(zero & (1u << c)))
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%sc%d", sep, c);
		else
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s%s", sep,
						b->null_if_zero & (1u << c) ? "NULL" : "0");
	}
	if (len < sizeof(sql))
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, " FROM %s ORDER BY rowid",
					b->name);
	if (len >= sizeof(sql)) {
		snprintf(imp->err, imp->errlen, "internal error: statement for %s too long",
			 b->name);
		return NULL;
	}
	return b->ins[zero] = lp_import_prepare(imp, sql);
}

int lp_batch_flush(struct lp_import *imp, struct lp_batch *b)
{
	if (!b->n)
		return 0;
	sqlite3_stmt *st = batch_insert_for(imp, b, batch_zero_cols(b));
	int rc = st ? lp_import_step(imp, st) : -EIO;
	b->n = 0;
	return rc;
}

void lp_batch_free(struct lp_batch *b)
{
	for (size_t i = 0; i < sizeof(b->ins) / sizeof(b->ins[0]); i++) {
		sqlite3_finalize(b->ins[i]);
		b->ins[i] = NULL;
	}
}
