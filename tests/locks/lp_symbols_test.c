/* SPDX-License-Identifier: MIT */
/*
 * lp_symbols against this very binary: modules come from dl_iterate_phdr
 * (what the interposer records), then code and data addresses we know must
 * come back with their names and, for code, this file and a plausible line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_symbols.h"
#include "lp_check.h"

pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
struct lp_stats {
	long hits;
	pthread_mutex_t lock;
} stats_table = {0, PTHREAD_MUTEX_INITIALIZER};

static int lp_add_phdr(struct dl_phdr_info *info, size_t size, void *ctx)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	char exe[4096];
	const char *path = info->dlpi_name;
	if (!path[0]) { /* the main program: dl_iterate_phdr gives "" */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		path = exe;
	}
	if (lo < hi)
		lp_symtab_add_module(ctx, path, info->dlpi_addr, lo, hi);
	return 0;
}

/* noinline + a call after the marker line: the return address lands here. */
__attribute__((noinline)) static uint64_t lp_here(void)
{
	return (uint64_t)__builtin_return_address(0);
}

__attribute__((noinline)) static uint64_t lp_caller(int *line)
{
	*line = __LINE__ + 1;
	uint64_t pc = lp_here();
	__asm__ volatile("" ::: "memory");
	return pc;
}

int main(void)
{
	struct lp_symtab *st = lp_symtab_new();
	struct lp_sym s;
	dl_iterate_phdr(lp_add_phdr, st);
	dl_iterate_phdr(lp_add_phdr, st); /* duplicates are ignored */

	CHECK(lp_symtab_lookup_data(st, (uint64_t)&model_lock, &s) == 0 && s.function &&
		  !strcmp(s.function, "model_lock") && s.sym_offset == 0,
	      "global model_lock -> %s", s.function ? s.function : "(null)");
	CHECK(lp_symtab_lookup_data(st, (uint64_t)&cache_lock, &s) == 0 && s.function &&
		  !strcmp(s.function, "cache_lock"),
	      "static cache_lock -> %s", s.function ? s.function : "(null)");
	CHECK(lp_symtab_lookup_data(st, (uint64_t)&stats_table.lock, &s) == 0 && s.function &&
		  !strcmp(s.function, "stats_table") &&
		  s.sym_offset == offsetof(struct lp_stats, lock),
	      "member lock -> %s+0x%llx", s.function ? s.function : "(null)",
	      (unsigned long long)s.sym_offset);
	CHECK(s.module && strstr(s.module, "lp_symbols_test"), "data module %s",
	      s.module ? s.module : "(null)");

	void *heap = malloc(64);
	int local;
	CHECK(lp_symtab_lookup_data(st, (uint64_t)heap, &s) == -1, "heap address has no symbol");
	CHECK(lp_symtab_lookup_data(st, (uint64_t)&local, &s) == -1, "stack address has no symbol");
	free(heap);

	int line = 0;
	uint64_t pc = lp_caller(&line);
	CHECK(lp_symtab_lookup_pc(st, pc, &s) == 0 && s.function &&
		  !strcmp(s.function, "lp_caller"),
	      "return address -> %s", s.function ? s.function : "(null)");
	CHECK(s.file && strstr(s.file, "lp_symbols_test.c") && s.line == line,
	      "file:line %s:%d (want %d)", s.file ? s.file : "(null)", s.line, line);

	/* A libc function: symbol from .dynsym at least, module = libc. Looked
	 * up in libc itself: under ASan, &pthread_mutex_lock is the sanitizer's
	 * interceptor in libasan.so. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *lock_fn = libc ? dlsym(libc, "pthread_mutex_lock") : NULL;
	CHECK(lock_fn != NULL, "libc's own pthread_mutex_lock: %p", lock_fn);
	CHECK(lp_symtab_lookup_pc(st, (uint64_t)lock_fn + 4, &s) == 0 && s.module &&
		  strstr(s.module, "libc") && s.function,
	      "libc pc -> %s in %s", s.function ? s.function : "(null)",
	      s.module ? s.module : "(null)");
	if (libc)
		dlclose(libc);

	CHECK(lp_symtab_lookup_pc(st, 0x10, &s) == -1 && !s.module, "unmapped pc -> -1");

	/* A module whose file is gone: module+offset, no crash. */
	lp_symtab_add_module(st, "/nonexistent/libgone.so", 0x7f0000000000ull, 0x7f0000001000ull,
			     0x7f0000009000ull);
	lp_symtab_add_module(st, "[vdso]", 0x7e0000000000ull, 0x7e0000000000ull, 0x7e0000002000ull);
	CHECK(lp_symtab_lookup_pc(st, 0x7f0000001234ull, &s) == 0 && s.module &&
		  !strcmp(s.module, "/nonexistent/libgone.so") && s.offset == 0x1234 &&
		  !s.function && !s.file,
	      "missing file -> %s+0x%llx", s.module ? s.module : "(null)",
	      (unsigned long long)s.offset);
	CHECK(lp_symtab_lookup_data(st, 0x7f0000001234ull, &s) == -1, "missing file data -> -1");
	CHECK(lp_symtab_lookup_pc(st, 0x7e0000000100ull, &s) == 0 && !strcmp(s.module, "[vdso]"),
	      "pseudo module -> module+offset");
	lp_symtab_free(st);
	lp_symtab_free(NULL);
	printf("%d failure(s)\n", lp_check_failures);
	return lp_check_failures != 0;
}
