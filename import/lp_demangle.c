/* SPDX-License-Identifier: MIT */
/*
 * C++ names for reports: one demangler for every importer (kernel names,
 * stack frames, lock variables), declared in lp_symbols.h.
 */
#include <stddef.h>
#include <stdlib.h>

#include "lp_symbols.h"

/* libstdc++'s demangler (Itanium C++ ABI, cxxabi.h): returns a malloc'd
 * string and status 0 on success; -2 for a name it cannot parse. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *lp_demangle(const char *name)
{
	/* Only _Z symbols: given "i" or "f" the demangler would return the
	 * type name ("int"), which for a C symbol is wrong. */
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	int status = -1;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (d && status == 0)
		return d;
	free(d);
	return NULL;
}
