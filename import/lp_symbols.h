/* SPDX-License-Identifier: MIT */
/*
 * Symbolization at import time with elfutils libdwfl: code addresses to
 * function and file:line (module+offset without debug info), data addresses
 * to the variable that holds them (a global `model_lock` -> "model_lock").
 * C++ names come out demangled ("ns::Worker::run()", "ns::g_mutex").
 * One lp_symtab per recorded process, built from its LP_REC_MODULE records.
 */
#ifndef LP_SYMBOLS_H
#define LP_SYMBOLS_H

#include <stdint.h>

struct lp_symtab;

struct lp_sym {
	const char *module;   /* path of the module, NULL if none covers addr */
	uint64_t offset;      /* addr - module load bias (ELF vaddr) */
	const char *function; /* or variable, for data lookups; NULL if unknown */
	uint64_t sym_offset;  /* addr - symbol start */
	const char *file;     /* source file, NULL without debug info */
	int line;	      /* 0 without debug info */
	const char *section;  /* data lookups without a symbol: ".bss", ".data"... */
};

struct lp_symtab *lp_symtab_new(void);
void lp_symtab_free(struct lp_symtab *st);
/* Duplicate (path, bias) pairs are ignored. */
void lp_symtab_add_module(struct lp_symtab *st, const char *path, uint64_t load_bias,
			  uint64_t start, uint64_t end);
/* Names code outside every module from a JIT's perf map ("START SIZE name"
 * lines, hex: the JVM's -XX:+DumpPerfMapAtExit, Node's --perf-basic-prof,
 * CPython's perf trampoline write /tmp/perf-<pid>.map). The names are read
 * now; such frames report the map's path as module and the pc as offset.
 * Returns the symbols added, or a negative errno when the map can't be read. */
int lp_symtab_add_perfmap(struct lp_symtab *st, const char *path);
/* Code address (a return address: looked up at pc-1). Strings stay valid
 * until lp_symtab_free. Returns 0 when a module covers pc, -1 otherwise. */
int lp_symtab_lookup_pc(struct lp_symtab *st, uint64_t pc, struct lp_sym *out);
/* Data address: the object symbol (STT_OBJECT/TLS) containing addr, from
 * .symtab, the dynamic symbols of a stripped file, or a separate debug file
 * found by build-id (/usr/lib/debug/.build-id). Returns 0 when a named
 * object covers it, -1 otherwise: then module and offset are still set when
 * a module's mapping covers addr (with section when its ELF file says which:
 * a stripped binary's static lock), and both are NULL/0 for heap and stack. */
int lp_symtab_lookup_data(struct lp_symtab *st, uint64_t addr, struct lp_sym *out);

/* Time this process spent in the lookups above, cache included (ns). */
uint64_t lp_symtab_time_ns(void);

/* The demangled form of a C++ symbol (one starting with _Z), malloc'd for
 * the caller to free; NULL for any other name or one that does not
 * demangle, so callers keep the name they had (lp_demangle.c). */
char *lp_demangle(const char *name);

#endif
