/* SPDX-License-Identifier: MIT */
/*
 * C++ names for reports: one demangler for every importer (kernel names,
 * stack frames, lock variables), declared in lp_symbols.h.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lp_symbols.h"

/* libstdc++'s demangler (Itanium C++ ABI, cxxabi.h): returns a malloc'd
 * string and status 0 on success; -2 for a name it cannot parse. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Rust's legacy mangling is Itanium's with a last component "h" + 16 hex
 * digits, a hash of the crate's build: noise in a report, so it goes
 * ("rust_mutex::SESSIONS", not "rust_mutex::SESSIONS::h3e0fe84161121740"). */
static void demangle_rust_hash(const char *name, char *d)
{
	size_t m = strlen(name), n = strlen(d);
	if (m < 23 || name[m - 1] != 'E' || memcmp(name + m - 20, "17h", 3) != 0)
		return; /* not "..17h<16 hex>E": no Rust hash */
	if (n < 21 || memcmp(d + n - 19, "::h", 3) != 0)
		return;
	for (size_t i = n - 16; i < n; i++)
		if (!strchr("0123456789abcdef", d[i]))
			return;
	d[n - 19] = 0;
}

char *lp_demangle(const char *name)
{
	/* Only _Z symbols: given "i" or "f" the demangler would return the
	 * type name ("int"), which for a C symbol is wrong. */
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	int status = -1;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (d && status == 0) {
		demangle_rust_hash(name, d);
		return d;
	}
	free(d);
	return NULL;
}
