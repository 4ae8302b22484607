/* SPDX-License-Identifier: MIT */
/* Rows of integers inserted many at a time through a virtual table
 * (lp_import_batch.c says why). */
#ifndef LP_IMPORT_BATCH_H
#define LP_IMPORT_BATCH_H

#include <stdint.h>

#include "lp_import.h"

#define LP_BATCH_ROWS 1024
#define LP_BATCH_MAX_COLS 8

struct lp_batch {
	sqlite3_stmt *ins;     /* INSERT INTO table(cols) SELECT * FROM the batch */
	uint32_t null_if_zero; /* bit c: a 0 in column c stores NULL */
	int n;
	int64_t v[LP_BATCH_ROWS][LP_BATCH_MAX_COLS];
};

/* Readies b for `insert`, an INSERT ... SELECT c0, c1, ... FROM `name`
 * ORDER BY rowid (columns c0 to c7 hold each row's values, in order).
 * 0, or -EIO with imp->err filled. */
int lp_batch_init(struct lp_import *imp, struct lp_batch *b, const char *name, const char *insert,
		  uint32_t null_if_zero);

/* The next row to fill; the caller flushes when lp_batch_full(). */
static inline int64_t *lp_batch_row(struct lp_batch *b)
{
	return b->v[b->n++];
}

static inline int lp_batch_full(const struct lp_batch *b)
{
	return b->n == LP_BATCH_ROWS;
}

/* Inserts the rows held, in order, and empties b: 0 or -EIO. */
int lp_batch_flush(struct lp_import *imp, struct lp_batch *b);

void lp_batch_free(struct lp_batch *b);

#endif
