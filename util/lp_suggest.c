/* SPDX-License-Identifier: MIT */
/*
 * Names closest to a misspelt word (lp_suggest.h). Optimal string alignment
 * distance: Levenshtein plus a swap of two neighbours as one edit, so
 * "reprot" is one edit from "report". Names are short (commands, options,
 * rule ids), so a full table on the stack is cheap.
 */
#include "lp_suggest.h"

#include <string.h>

#define LP_SUGGEST_MAX 40

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > LP_SUGGEST_MAX || lb > LP_SUGGEST_MAX)
		return (size_t)-1;
	size_t d[LP_SUGGEST_MAX + 1][LP_SUGGEST_MAX + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t m = min3(d[i - 1][j - 1] + (a[i - 1] != b[j - 1]), d[i - 1][j] + 1,
					d[i][j - 1] + 1);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < m)
				m = d[i - 2][j - 2] + 1;
			d[i][j] = m;
		}
	return d[la][lb];
}

const char *lp_suggest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t best_d = 3;
	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best;
}
