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
	CHECK(s.module && strstr(s.module, "symbols_unit"), "data module %s",
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
	CHECK(s.file && strstr(s.file, "test_symbols.c") && s.line == line,
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

	/* A JIT's perf map names code outside every module; bad lines are
	 * skipped, a missing map is an error and changes nothing. */
	st = lp_symtab_new();
	char map[] = "/tmp/lp-perfmap-XXXXXX";
	int fd = mkstemp(map);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(f != NULL, "temporary perf map");
	if (f) {
		fputs("7f00a0001000 80 void Foo.bar(int)\n"
		      "junk line\n"
		      "7f00a0000000 2000 Interpreter\n"
		      "7f00a0002000 0 empty\n",
		      f);
		fclose(f);
	}
	CHECK(lp_symtab_add_perfmap(st, "/nonexistent/perf-1.map") < 0, "missing map -> error");
	CHECK(lp_symtab_lookup_pc(st, 0x7f00a0001010ull, &s) == -1, "no map: JIT pc unnamed");
	CHECK(lp_symtab_add_perfmap(st, map) == 2, "two good lines of four");
	CHECK(lp_symtab_lookup_pc(st, 0x7f00a0001010ull, &s) == 0 && s.function &&
		  !strcmp(s.function, "void Foo.bar(int)") && !strcmp(s.module, map) &&
		  s.sym_offset == 0x10,
	      "JIT pc -> %s", s.function ? s.function : "(null)");
	CHECK(lp_symtab_lookup_pc(st, 0x7f00a0001081ull, &s) == 0 && s.function &&
		  !strcmp(s.function, "Interpreter"),
	      "past Foo.bar, inside the wider Interpreter -> %s",
	      s.function ? s.function : "(null)");
	CHECK(lp_symtab_lookup_pc(st, 0x7f00a0001001ull, &s) == 0 &&
		  !strcmp(s.function, "void Foo.bar(int)"),
	      "return address at the symbol's first byte + 1");
	CHECK(lp_symtab_lookup_pc(st, 0x7f00a0003000ull, &s) == -1, "past every symbol -> -1");
	unlink(map);
	lp_symtab_free(st);

	/* Rust's legacy mangling: the build hash goes; a C++ name keeps a
	 * last component that only looks like one. */
	struct {
		const char *in, *want;
	} dm[] = {
	    {"_ZN10rust_mutex8SESSIONS17h3e0fe84161121740E", "rust_mutex::SESSIONS"},
	    {"_ZN3foo18h3e0fe84161121740aE", "foo::h3e0fe84161121740a"},
	    {"_ZN3foo17h3e0fe8416112174xE", "foo::h3e0fe8416112174x"},
	    {"_ZN5model4lockEv", "model::lock()"},
	};
	for (size_t i = 0; i < sizeof(dm) / sizeof(dm[0]); i++) {
		char *d = lp_demangle(dm[i].in);
		CHECK(d && !strcmp(d, dm[i].want), "demangle %s: %s, want %s", dm[i].in,
		      d ? d : "(null)", dm[i].want);
		free(d);
	}
	printf("%d failure(s)\n", lp_check_failures);
	return lp_check_failures != 0;
}
