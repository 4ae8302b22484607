/* SPDX-License-Identifier: MIT */
/* The ranges table as compact arrays (analyze/lp_rset.h). */
#include "lp_rset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_util.h"

void lp_rset_free(struct lp_rset *rs)
{
	free(rs->r);
	free(rs->id);
	for (size_t i = 0; i < rs->nkeys; i++) {
		free(rs->keys[i].domain);
		free(rs->keys[i].name);
	}
	free(rs->keys);
	lp_map_free(&rs->keymap);
	memset(rs, 0, sizeof(*rs));
}

static int key_of(struct lp_rset *rs, int64_t dom, int64_t name)
{
	uint64_t mk = ((uint64_t)(dom + 1) << 32) ^ (uint64_t)(name + 1), v;
	if (lp_map_get(&rs->keymap, mk, &v))
		return (int)v - 1;
	struct lp_rkey *k = lp_grow(rs->keys, &rs->keycap, rs->nkeys + 1, sizeof(*k));
	if (!k)
		return -1;
	rs->keys = k;
	k[rs->nkeys] = (struct lp_rkey){.domain_id = dom, .name_id = name};
	if (lp_map_put(&rs->keymap, mk, rs->nkeys + 1))
		return -1;
	return (int)rs->nkeys++;
}

struct load {
	struct lp_rset *rs;
	int64_t *pid; /* parent ids, resolved to indexes after the scan */
	size_t cap;
};

static int load_grow(struct load *l)
{
	struct lp_rset *rs = l->rs;
	size_t cap = l->cap * 2;
	struct lp_rg *r2 = realloc(rs->r, cap * sizeof(*r2));
	rs->r = r2 ? r2 : rs->r;
	int64_t *i2 = realloc(rs->id, cap * sizeof(*i2));
	rs->id = i2 ? i2 : rs->id;
	int64_t *p2 = realloc(l->pid, cap * sizeof(*p2));
	l->pid = p2 ? p2 : l->pid;
	if (!r2 || !i2 || !p2)
		return -ENOMEM;
	l->cap = cap;
	return 0;
}

static int load_row(sqlite3_stmt *st, void *ctx)
{
	struct load *l = ctx;
	struct lp_rset *rs = l->rs;
	size_t n = rs->n;
	if (n == l->cap && load_grow(l))
		return -ENOMEM;
	int key = key_of(rs, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	if (key < 0)
		return -ENOMEM;
	rs->id[n] = sqlite3_column_int64(st, 0);
	l->pid[n] = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
	rs->r[n] = (struct lp_rg){.start = sqlite3_column_int64(st, 4),
				  .end = sqlite3_column_int64(st, 5),
				  .key = key,
				  .thread = (int32_t)sqlite3_column_int64(st, 6),
				  .depth = (int16_t)sqlite3_column_int(st, 7),
				  .flags = (uint16_t)sqlite3_column_int(st, 8)};
	rs->n++;
	return 0;
}

static int text_row(sqlite3_stmt *st, void *ctx)
{
	*(char **)ctx = lp_db_col_strdup(st, 0);
	return 0;
}

/* Text of a one-row lookup by id; "" when there is none, NULL on ENOMEM. */
static char *text_by_id(sqlite3 *db, const char *sql, int64_t id)
{
	char *v = NULL;
	struct lp_db_arg a = LP_DB_INT(id);
	lp_db_lookup(db, sql, &a, 1, text_row, &v);
	return v ? v : strdup("");
}

uint8_t *lp_rset_keys_named(const struct lp_rset *rs, const char *domain, const char *name)
{
	uint8_t *is = calloc(rs->nkeys + 1, 1);
	for (size_t k = 0; is && k < rs->nkeys; k++)
		is[k] = !strcmp(rs->keys[k].name, name) &&
			!strcmp(rs->keys[k].domain, domain ? domain : "");
	return is;
}

int lp_rset_load(sqlite3 *db, struct lp_rset *rs, int max_depth, char *err, size_t errlen)
{
	size_t cap = (size_t)lp_db_int(db, "SELECT max(id) FROM ranges", 0);
	struct lp_db_arg depth = LP_DB_INT(max_depth);

	memset(rs, 0, sizeof(*rs));
	if (cap > ((size_t)1 << 26))
		cap = (size_t)1 << 26;
	if (cap < 64)
		cap = 64;
	struct load l = {rs, malloc(cap * sizeof(int64_t)), cap};
	rs->r = malloc(cap * sizeof(*rs->r));
	rs->id = malloc(cap * sizeof(*rs->id));
	int rc = !rs->r || !rs->id || !l.pid ? -ENOMEM : 0;
	if (!rc)
		rc = lp_db_query(db,
				 "SELECT id, parent_id, domain_id, name_id, start_ns, end_ns, "
				 "start_thread_id, depth, flags FROM ranges WHERE ?1 < 0 OR depth "
				 "<= ?1 ORDER BY id",
				 &depth, 1, load_row, &l, err, errlen);
	if (!rc)
		for (size_t i = 0; i < rs->n; i++)
			rs->r[i].parent = l.pid[i] < 0 ? -1 : lp_rset_index(rs, l.pid[i]);
	free(l.pid);
	for (size_t k = 0; !rc && k < rs->nkeys; k++) {
		rs->keys[k].name =
		    text_by_id(db, "SELECT value FROM strings WHERE id = ?", rs->keys[k].name_id);
		rs->keys[k].domain =
		    text_by_id(db, "SELECT name FROM domains WHERE id = ?", rs->keys[k].domain_id);
		if (!rs->keys[k].name || !rs->keys[k].domain)
			rc = -ENOMEM;
	}
	if (rc == -EIO)
		snprintf(err, errlen, "database error reading ranges: %s", sqlite3_errmsg(db));
	else if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory loading %zu ranges", rs->n);
	return rc;
}
