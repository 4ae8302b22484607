/* SPDX-License-Identifier: MIT */
/*
 * u64 -> u64 open-addressing map for the importer's per-record lookups
 * (thread by tid, lock by address, string and stack ids): a million lookups
 * a second need no per-entry allocation, which the generic table libraries
 * (uthash, GHashTable) do not give. Key 0 is reserved for "empty".
 */
#ifndef LP_MAP_H
#define LP_MAP_H

#include <stdint.h>
#include <stdlib.h>

struct lp_map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap; /* power of two */
	size_t len;
};

static inline uint64_t lp_map_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static inline void lp_map_free(struct lp_map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->len = 0;
}

static inline uint64_t *lp_map_slot(const struct lp_map *m, uint64_t key)
{
	size_t i = lp_map_mix(key) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return &m->keys[i];
}

/* Returns 1 and sets *val when found. */
static inline int lp_map_get(const struct lp_map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return 0;
	uint64_t *k = lp_map_slot(m, key);
	if (!*k)
		return 0;
	*val = m->vals[k - m->keys];
	return 1;
}

/* Returns 0, or -1 when out of memory. */
static inline int lp_map_put(struct lp_map *m, uint64_t key, uint64_t val)
{
	if ((m->len + 1) * 4 >= m->cap * 3) {
		struct lp_map n = {0};
		n.cap = m->cap ? m->cap * 2 : 64;
		n.keys = calloc(n.cap, sizeof(uint64_t));
		n.vals = calloc(n.cap, sizeof(uint64_t));
		if (!n.keys || !n.vals) {
			lp_map_free(&n);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i]) {
				uint64_t *k = lp_map_slot(&n, m->keys[i]);
				*k = m->keys[i];
				n.vals[k - n.keys] = m->vals[i];
				n.len++;
			}
		lp_map_free(m);
		*m = n;
	}
	uint64_t *k = lp_map_slot(m, key);
	if (!*k) {
		*k = key;
		m->len++;
	}
	m->vals[k - m->keys] = val;
	return 0;
}

#endif
