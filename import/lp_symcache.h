/* SPDX-License-Identifier: MIT */
/*
 * Per-user cache of symbolization results, one file per module file
 * (build-id), so that importing a run of the same binaries again (or the
 * same run twice) does not open, index and search their ELF and DWARF again.
 * See lp_symcache.c for the workload it is built for and the file format.
 */
#ifndef LP_SYMCACHE_H
#define LP_SYMCACHE_H

#include <stdint.h>

struct lp_symcache;

enum lp_symc_kind { LP_SYMC_PC = 0, LP_SYMC_DATA = 1 };

/* A cached answer: what lp_symtab_lookup_pc/_data gave for module offset
 * `off`. found = 0 records "no symbol" (the lookup's -1), which is an answer
 * too. Strings stay valid until the next lp_symcache_put or _close. */
struct lp_symc_ent {
	int found;
	const char *function;
	uint64_t sym_offset;
	const char *file;
	int line;
};

/* The cache of the module file at path, read from $XDG_CACHE_HOME/latprof
 * (~/.cache/latprof) when there is a valid entry; NULL when the cache is off
 * (LATPROF_SYMCACHE=off), the file cannot be identified, or no memory. */
struct lp_symcache *lp_symcache_open(const char *path);
/* 1 and *out filled when (kind, off) is cached, else 0. */
int lp_symcache_get(struct lp_symcache *c, enum lp_symc_kind kind, uint64_t off,
		    struct lp_symc_ent *out);
/* Remember an answer (strings are copied); dropped silently when full. */
void lp_symcache_put(struct lp_symcache *c, enum lp_symc_kind kind, uint64_t off,
		     const struct lp_symc_ent *e);
/* Write the file back if anything was added (temp file + rename), evict
 * the least recently used files beyond the size bound, free c. */
void lp_symcache_close(struct lp_symcache *c);

/* The cache directory this process uses, "" when the cache is off. */
const char *lp_symcache_dir(void);

#endif
