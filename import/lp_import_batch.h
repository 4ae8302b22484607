/* SPDX-License-Identifier: MIT */
/* Rows of integers inserted many at a time through a virtual table
 * (lp_import_batch.c says why). */
#ifndef LP_IMPORT_BATCH_H
#define LP_IMPORT_BATCH_H

#include <stdint.h>

#include "lp_import.h"

#define LP_BATCH_ROWS 1024
#define LP_BATCH_MAX_COLS 10

struct lp_batch {
	const char *name; /* the virtual table */
	const char *head; /* "INSERT INTO table(cols) SELECT " */
	int ncols;
	uint32_t null_if_zero; /* bit c: a 0 in column c stores NULL */
	uint32_t null_if_neg;  /* bit c: a negative value in column c stores NULL */
	uint32_t sparse;       /* bit c: column c is often 0 in a whole batch */
	/* By the sparse columns that are 0 in every row of a batch: the
	 * INSERT that takes them as constants (prepared when first needed). */
	sqlite3_stmt *ins[1u << LP_BATCH_MAX_COLS];
	int n;
	int64_t v[LP_BATCH_ROWS][LP_BATCH_MAX_COLS];
};

/* Readies b to insert rows of ncols values through `head`, "INSERT INTO
 * t(col0, col1, ...) SELECT " (the batch's columns follow, in order).
 * name and head must outlive b. 0, or -EIO with imp->err filled. The
 * caller may set b->null_if_neg after. */
int lp_batch_init(struct lp_import *imp, struct lp_batch *b, const char *name, const char *head,
		  int ncols, uint32_t null_if_zero, uint32_t sparse);

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
