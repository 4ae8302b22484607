/* SPDX-License-Identifier: MIT */
/* Unit tests of import/captures/lp_corrtally.h: random calls and work, in random
 * order and in calls-first order, against a brute-force count; every way
 * the tally turns itself off (an id or key out of range, the memory bound,
 * a saturated count), after which it answers -1 (the importer then counts
 * by SQL). */
#include "lp_corrtally.h"

#include <stdlib.h>
#include <string.h>

#include "lp_check.h"
#include "lp_rnd.h"

#define NKEY 5
#define NID 20000

struct ev {
	int call, key, corr;
};

/* n events over NKEY keys and NID ids; *want: work with no call of its key
 * and id, counted directly. */
static struct ev *events(size_t n, long long *want)
{
	struct ev *e = calloc(n, sizeof(*e));
	static unsigned char has_call[NKEY][NID];
	static unsigned works[NKEY][NID];
	memset(has_call, 0, sizeof(has_call));
	memset(works, 0, sizeof(works));
	for (size_t i = 0; i < n; i++) {
		e[i].call = rnd() % 3 == 0;
		e[i].key = (int)(rnd() % NKEY);
		e[i].corr = (int)(rnd() % NID);
		if (e[i].call)
			has_call[e[i].key][e[i].corr] = 1;
		else
			works[e[i].key][e[i].corr]++;
	}
	*want = 0;
	for (int k = 0; k < NKEY; k++)
		for (int c = 0; c < NID; c++)
			if (!has_call[k][c])
				*want += works[k][c];
	return e;
}

static long long feed(const struct ev *e, size_t n, int calls_first)
{
	struct lp_corrtally t = {0};
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			if (calls_first && e[i].call != !pass)
				continue;
			if (!calls_first && pass)
				break;
			if (e[i].call)
				lp_corrtally_call(&t, e[i].key, e[i].corr);
			else
				lp_corrtally_work(&t, e[i].key, e[i].corr);
		}
	long long got = lp_corrtally_unmatched(&t);
	lp_corrtally_free(&t);
	return got;
}

static void against_reference(void)
{
	for (int round = 0; round < 4; round++) {
		size_t n = (size_t)10000 << round;
		long long want;
		struct ev *e = events(n, &want);
		long long any = feed(e, n, 0), first = feed(e, n, 1);
		CHECK(any == want && first == want,
		      "%zu events over %d keys: %lld unmatched, as counted directly (%lld; calls "
		      "first: %lld)",
		      n, NKEY, want, any, first);
		free(e);
	}
}

static void edges(void)
{
	struct lp_corrtally t = {0};
	CHECK(lp_corrtally_unmatched(&t) == 0, "empty: 0 unmatched");
	lp_corrtally_work(&t, 0, 0);
	lp_corrtally_work(&t, 0, 63);
	lp_corrtally_work(&t, 0, 64);
	lp_corrtally_call(&t, 0, 64);
	lp_corrtally_call(&t, 1, 0); /* another key's call does not match key 0's work */
	CHECK(lp_corrtally_unmatched(&t) == 2,
	      "ids 0, 63 and 64 (a word's edges): 2 unmatched (%lld)", lp_corrtally_unmatched(&t));
	lp_corrtally_free(&t);

	static const struct {
		const char *what;
		int64_t key, corr;
	} off[] = {
	    {"a negative id", 1, -1},
	    {"a negative key", -1, 1},
	    {"a key past LP_CORRTALLY_MAX_KEY", LP_CORRTALLY_MAX_KEY, 1},
	    {"an id past the memory bound", 1, (int64_t)LP_CORRTALLY_MAX_BYTES * 8},
	};
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		struct lp_corrtally u = {0};
		lp_corrtally_call(&u, 1, 5);
		lp_corrtally_work(&u, off[i].key, off[i].corr);
		lp_corrtally_work(&u, 1, 7); /* after off: ignored */
		CHECK(lp_corrtally_unmatched(&u) == -1 && !u.keys && !u.bytes,
		      "%s turns the tally off, its memory freed", off[i].what);
		lp_corrtally_free(&u);
	}

	struct lp_corrtally s = {0};
	for (int i = 0; i < UINT16_MAX - 1; i++)
		lp_corrtally_work(&s, 2, 9);
	CHECK(lp_corrtally_unmatched(&s) == UINT16_MAX - 1, "65,534 operations of one id counted");
	lp_corrtally_work(&s, 2, 9);
	CHECK(lp_corrtally_unmatched(&s) == -1, "the 65,535th saturates the count: off");
	lp_corrtally_free(&s);

	struct lp_corrtally big = {0};
	lp_corrtally_work(&big, 3, 1000000);
	CHECK(big.bytes <= LP_CORRTALLY_MAX_BYTES && lp_corrtally_unmatched(&big) == 1,
	      "id 10^6: %zu bytes (bound %zu)", big.bytes, (size_t)LP_CORRTALLY_MAX_BYTES);
	lp_corrtally_free(&big);
}

int main(void)
{
	against_reference();
	edges();
	return lp_check_done();
}
