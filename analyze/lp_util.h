/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by analyze/, report/ and cli/: the element count of
 * an array and growable arrays. Checked allocation that exits on failure
 * (xmalloc and friends) is for the CLI only and lives in cli/lp_cli.h:
 * library code returns -ENOMEM instead.
 */
#ifndef LP_UTIL_H
#define LP_UTIL_H

#include <stddef.h>
#include <stdlib.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/*
 * Grows arr (element size elem, capacity *cap) so that `need` elements fit,
 * doubling from 64. Returns the (maybe moved) array, or NULL with arr still
 * valid and *cap unchanged: the caller keeps ownership either way.
 */
static inline void *lp_grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return arr;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *p = realloc(arr, c * elem);
	if (p)
		*cap = c;
	return p;
}

/* Makes room for one more element of arr (n used, cap allocated); 0 or
 * -ENOMEM with arr unchanged. Needs <errno.h>. */
#define LP_GROW(arr, n, cap)                                                                       \
	({                                                                                         \
		void *lp_p_ = lp_grow((arr), &(cap), (n) + 1, sizeof(*(arr)));                     \
		if (lp_p_)                                                                         \
			(arr) = lp_p_;                                                             \
		lp_p_ ? 0 : -ENOMEM;                                                               \
	})

#endif
