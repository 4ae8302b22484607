/* SPDX-License-Identifier: MIT */
/*
 * The ranges table loaded into compact arrays, for the breakdown and
 * `report --ranges`: one rowid-ordered scan, 32 bytes per range, parents
 * resolved to indexes, (domain, name) pairs interned as keys.
 */
#ifndef LP_RSET_H
#define LP_RSET_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_map.h"

/* A range name: (domain, name string) pair. */
struct lp_rkey {
	int64_t domain_id, name_id;
	char *domain, *name;
};

/* 32 bytes per range: 10M ranges fit in 320 MB plus 80 MB of ids. */
struct lp_rg {
	int64_t start, end;
	int32_t parent; /* index, -1 for none */
	int32_t key;	/* index into keys */
	int32_t thread;
	int16_t depth;
	uint16_t flags; /* ranges.flags (LP_RANGEF_*) */
};

struct lp_rset {
	struct lp_rg *r;
	int64_t *id; /* ranges.id, ascending */
	size_t n;
	struct lp_rkey *keys;
	size_t nkeys, keycap;
	struct lp_map keymap; /* (domain_id, name_id) -> key index + 1 */
};

/* One scan in rowid order; max_depth < 0 loads every depth. 0, or -errno
 * with err (rs is then to be freed all the same). */
int lp_rset_load(sqlite3 *db, struct lp_rset *rs, int max_depth, char *err, size_t errlen);
/* Index of range id, or -1. Inline: called per range and per counter
 * delta when loading. */
static inline int32_t lp_rset_index(const struct lp_rset *rs, int64_t id)
{
	if (!rs->n)
		return -1;
	int64_t guess = id - rs->id[0]; /* ids are usually dense */
	if (guess >= 0 && (size_t)guess < rs->n && rs->id[guess] == id)
		return (int32_t)guess;
	size_t lo = 0, hi = rs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rs->id[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rs->n && rs->id[lo] == id ? (int32_t)lo : -1;
}
void lp_rset_free(struct lp_rset *rs);
/* keys[k] is named name in domain (NULL domain = NULL or ''): a calloc'd
 * flag per key (nkeys + 1), or NULL when out of memory. */
uint8_t *lp_rset_keys_named(const struct lp_rset *rs, const char *domain, const char *name);

#endif
