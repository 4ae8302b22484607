/* SPDX-License-Identifier: MIT */
/* The ranges table as compact arrays (analysis/lp_rset.h). */
#include "lp_rset.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_progress.h"
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
	int unordered; /* an id not above the one before it */
	int progress;  /* this thread's part counts in lp_progress */
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

/* One range, from the fold's values (the columns of LP_RSET_SQL). */
static int load_row(sqlite3_value **v, void *ctx)
{
	struct load *l = ctx;
	struct lp_rset *rs = l->rs;
	size_t n = rs->n;
	if (l->progress)
		lp_progress_add(1);
	if (n == l->cap && load_grow(l))
		return -ENOMEM;
	int key = key_of(rs, sqlite3_value_int64(v[2]), sqlite3_value_int64(v[3]));
	if (key < 0)
		return -ENOMEM;
	rs->id[n] = sqlite3_value_int64(v[0]);
	if (n && rs->id[n] <= rs->id[n - 1])
		l->unordered = 1;
	l->pid[n] = sqlite3_value_type(v[1]) == SQLITE_NULL ? -1 : sqlite3_value_int64(v[1]);
	rs->r[n] = (struct lp_rg){.start = sqlite3_value_int64(v[4]),
				  .end = sqlite3_value_int64(v[5]),
				  .key = key,
				  .thread = (int32_t)sqlite3_value_int64(v[6]),
				  .depth = (int16_t)sqlite3_value_int(v[7]),
				  .flags = (uint16_t)sqlite3_value_int(v[8])};
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

/* The columns load_row reads, in rowid order: a scan of a rowid range
 * visits rows in that order, which the load checks (lp_rset_index needs
 * ascending ids). Integers only are formatted into the SQL. */
#define LP_RSET_SQL                                                                                \
	"SELECT lp_rows(id, parent_id, domain_id, name_id, start_ns, end_ns, start_thread_id, "    \
	"depth, flags) FROM ranges WHERE (%d < 0 OR depth <= %d) AND id > %lld AND id <= %lld"

/* Rows with lo < id <= hi into l (keys interned in l->rs), read inside
 * SQLite (lp_db_fold: less CPU than stepping each row out). Not mapped
 * (PRAGMA mmap_size): at 2 M ranges that saved 2% and put the whole file
 * in the report's resident size. */
static int load_part(sqlite3 *db, int max_depth, int64_t lo, int64_t hi, struct load *l, char *err,
		     size_t errlen)
{
	char sql[512];
	snprintf(sql, sizeof(sql), LP_RSET_SQL, max_depth, max_depth, (long long)lo, (long long)hi);
	int rc = lp_db_fold(db, sql, load_row, l, err, errlen);
	if (!rc && l->unordered) {
		snprintf(err, errlen, "ranges were not read in id order");
		rc = -EPROTO;
	}
	return rc;
}

static int load_init(struct load *l, struct lp_rset *rs, size_t cap)
{
	memset(rs, 0, sizeof(*rs));
	cap = cap < 64 ? 64 : cap > ((size_t)1 << 26) ? (size_t)1 << 26 : cap;
	*l = (struct load){rs, malloc(cap * sizeof(int64_t)), cap, 0, 0};
	rs->r = malloc(cap * sizeof(*rs->r));
	rs->id = malloc(cap * sizeof(*rs->id));
	return !rs->r || !rs->id || !l->pid ? -ENOMEM : 0;
}

/* The upper half of the ids, read on a connection of its own. */
struct half {
	const char *path;
	int max_depth;
	int64_t lo, hi;
	struct lp_rset rs;
	struct load l;
	int rc;
	char err[512];
};

static void *half_load(void *p)
{
	struct half *h = p;
	sqlite3 *db = NULL;
	h->rc = lp_db_open_ro(h->path, &db, h->err, sizeof(h->err));
	if (!h->rc)
		h->rc = load_part(db, h->max_depth, h->lo, h->hi, &h->l, h->err, sizeof(h->err));
	if (!h->rc)
		h->rc = lp_db_fault(db, h->err, sizeof(h->err));
	sqlite3_close(db);
	return NULL;
}

/* Appends h's rows to l, its keys mapped into l's. */
static int half_append(struct load *l, struct half *h)
{
	struct lp_rset *rs = l->rs, *hs = &h->rs;
	size_t n = rs->n + hs->n;
	int32_t *map = malloc((hs->nkeys + 1) * sizeof(*map));
	int rc = map ? 0 : -ENOMEM;
	for (size_t k = 0; !rc && k < hs->nkeys; k++)
		if ((map[k] = key_of(rs, hs->keys[k].domain_id, hs->keys[k].name_id)) < 0)
			rc = -ENOMEM;
	while (!rc && l->cap < n)
		rc = load_grow(l);
	if (!rc) {
		for (size_t i = 0; i < hs->n; i++) {
			rs->r[rs->n + i] = hs->r[i];
			rs->r[rs->n + i].key = map[hs->r[i].key];
		}
		memcpy(rs->id + rs->n, hs->id, hs->n * sizeof(*rs->id));
		memcpy(l->pid + rs->n, h->l.pid, hs->n * sizeof(*l->pid));
		rs->n = n;
	}
	free(map);
	return rc;
}

/*
 * Below this many ranges one scan is quick enough; above it the upper half
 * of the ids is read by a second thread on its own connection: SQLite's
 * reading of rows was over half of a breakdown's CPU (perf, 2 M ranges),
 * and a second core takes half of it. An error on that connection is
 * reported with its own message (the first connection's says nothing).
 */
#define LP_RSET_SPLIT 1000000

int lp_rset_load(sqlite3 *db, struct lp_rset *rs, int max_depth, char *err, size_t errlen)
{
	int64_t lo = lp_db_int(db, "SELECT min(id) FROM ranges", 0) - 1;
	int64_t hi = lp_db_int(db, "SELECT max(id) FROM ranges", 0);
	const char *path = sqlite3_db_filename(db, "main");
	struct half h = {.path = path, .max_depth = max_depth, .lo = lo + (hi - lo) / 2, .hi = hi};
	pthread_t th;
	int split = hi - lo > LP_RSET_SPLIT && path && path[0], half_failed = 0;
	struct load l;

	int rc = load_init(&l, rs, (size_t)(split ? h.lo - lo : hi - lo));
	if (split && !rc) {
		rc = load_init(&h.l, &h.rs, (size_t)(hi - h.lo));
		split = !rc && pthread_create(&th, NULL, half_load, &h) == 0;
	}
	l.progress = 1; /* the other half's thread never touches it */
	if (!rc)
		lp_progress_begin("reading ranges", (uint64_t)((split ? h.lo : hi) - lo), "rows");
	if (!rc)
		rc = load_part(db, max_depth, lo, split ? h.lo : hi, &l, err, errlen);
	lp_progress_end();
	if (split) {
		pthread_join(th, NULL);
		if (!rc && h.rc) { /* its own connection's sentence, kept as is below */
			rc = h.rc;
			half_failed = 1;
			snprintf(err, errlen, "reading ranges: %s", h.err);
		}
		if (!rc)
			rc = half_append(&l, &h);
	}
	free(h.l.pid);
	lp_rset_free(&h.rs);
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
	if (half_failed)
		return rc;
	if (rc == -EIO)
		snprintf(err, errlen, "database error reading ranges: %s", sqlite3_errmsg(db));
	else if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory loading %zu ranges", rs->n);
	return rc;
}
