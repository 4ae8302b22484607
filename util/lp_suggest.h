/* SPDX-License-Identifier: MIT */
/*
 * "Did you mean": the name closest to a misspelt word, for every place that
 * refuses a name (commands, options, finding ids, categories).
 */
#ifndef LP_SUGGEST_H
#define LP_SUGGEST_H

#include <stddef.h>

/* The candidate within 2 edits of word (insert, delete, substitute, swap
 * two neighbours), the first of the closest; NULL when none is or a name
 * is longer than 40 bytes. */
const char *lp_suggest(const char *word, const char *const *candidates, size_t n);

#endif
