/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the tool code (db/ to cli/): the element count of
 * an array and growable arrays. Checked allocation that exits on failure
 * (xmalloc and friends) is for the CLI only and lives in cli/lp_cli.h:
 * library code returns -ENOMEM instead.
 */
#ifndef LP_UTIL_H
#define LP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The size of the file at path; 0 when it cannot be found out. */
static inline int64_t lp_file_bytes(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
}

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

/*
 * Asks for transparent huge pages on the 2 MB-aligned part of a large
 * array where the system leaves it to the program (THP "madvise", as on
 * Debian): one page fault per 2 MB instead of 512. Arrays of millions of
 * samples (latprof diff: ~200 MB per database) are faulted in, written
 * once and read back; the fault path was 9% of the diff's CPU. Advice
 * only: errors are ignored.
 */
static inline void lp_huge_advise(void *p, size_t len)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(huge - 1);
	if (p && hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

#endif
