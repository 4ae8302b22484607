/* SPDX-License-Identifier: MIT */
/* Placeholder until the libdwfl implementation lands: no symbols. */
#include "lp_symbols.h"

#include <stdlib.h>

struct lp_symtab {
	int unused;
};

struct lp_symtab *lp_symtab_new(void)
{
	return calloc(1, sizeof(struct lp_symtab));
}

void lp_symtab_free(struct lp_symtab *st)
{
	free(st);
}

void lp_symtab_add_module(struct lp_symtab *st, const char *path, uint64_t load_bias, uint64_t start,
			  uint64_t end)
{
}

int lp_symtab_lookup_pc(struct lp_symtab *st, uint64_t pc, struct lp_sym *out)
{
	return -1;
}

int lp_symtab_lookup_data(struct lp_symtab *st, uint64_t addr, struct lp_sym *out)
{
	return -1;
}
