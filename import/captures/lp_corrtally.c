/* SPDX-License-Identifier: MIT */
/* Correlation-id tally: see lp_corrtally.h for the workload. */
#include "lp_corrtally.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void lp_corrtally_free(struct lp_corrtally *t)
{
	for (size_t i = 0; i < t->nkeys; i++) {
		free(t->keys[i].call);
		free(t->keys[i].work);
	}
	free(t->keys);
	t->keys = NULL;
	t->nkeys = t->bytes = 0;
	t->off = 1;
}

/* Room for the key's slot. */
static int corrtally_key_room(struct lp_corrtally *t, size_t key)
{
	if (key < t->nkeys)
		return 0;
	size_t n = key * 2 + 1 < LP_CORRTALLY_MAX_KEY ? key * 2 + 1 : LP_CORRTALLY_MAX_KEY;
	void *v = realloc(t->keys, n * sizeof(*t->keys));
	if (!v)
		return -1;
	t->keys = v;
	memset(t->keys + t->nkeys, 0, (n - t->nkeys) * sizeof(*t->keys));
	t->nkeys = n;
	return 0;
}

/* Room for id corr in key k's arrays, doubling them. */
static int corrtally_id_room(struct lp_corrtally *t, struct lp_corrtally_key *k, size_t corr)
{
	if (corr < k->cap)
		return 0;
	size_t cap = k->cap ? k->cap : 1 << 12;
	while (cap <= corr)
		cap *= 2;
	/* bytes per id: 1/8 for the bit, 2 for the count */
	size_t more = (cap - k->cap) / 8 + (cap - k->cap) * sizeof(*k->work);
	if (t->bytes + more > LP_CORRTALLY_MAX_BYTES)
		return -1;
	uint64_t *call = realloc(k->call, cap / 8);
	if (!call)
		return -1;
	k->call = call;
	uint16_t *work = realloc(k->work, cap * sizeof(*work));
	if (!work)
		return -1;
	k->work = work;
	memset((char *)call + k->cap / 8, 0, (cap - k->cap) / 8);
	memset(work + k->cap, 0, (cap - k->cap) * sizeof(*work));
	k->cap = cap;
	t->bytes += more;
	return 0;
}

/* Key k's arrays holding id corr, or NULL: the tally is then off. */
static struct lp_corrtally_key *corrtally_slot(struct lp_corrtally *t, int64_t key, int64_t corr)
{
	if (t->off)
		return NULL;
	if (key < 0 || key >= LP_CORRTALLY_MAX_KEY || corr < 0 ||
	    corrtally_key_room(t, (size_t)key) ||
	    corrtally_id_room(t, &t->keys[key], (size_t)corr)) {
		lp_corrtally_free(t);
		return NULL;
	}
	return &t->keys[key];
}

void lp_corrtally_call(struct lp_corrtally *t, int64_t key, int64_t corr)
{
	struct lp_corrtally_key *k = corrtally_slot(t, key, corr);
	if (k)
		k->call[corr / 64] |= 1ull << (corr % 64);
}

void lp_corrtally_work(struct lp_corrtally *t, int64_t key, int64_t corr)
{
	struct lp_corrtally_key *k = corrtally_slot(t, key, corr);
	if (k && ++k->work[corr] == UINT16_MAX)
		lp_corrtally_free(t); /* a count that no longer fits */
}

long long lp_corrtally_unmatched(const struct lp_corrtally *t)
{
	long long n = 0;
	if (t->off)
		return -1;
	for (size_t i = 0; i < t->nkeys; i++) {
		const struct lp_corrtally_key *k = &t->keys[i];
		assert(k->cap % 64 == 0);
		for (size_t c = 0; c < k->cap; c++)
			if (k->work[c] && !(k->call[c / 64] >> (c % 64) & 1))
				n += k->work[c];
	}
	return n;
}
