/* SPDX-License-Identifier: MIT */
/*
 * The symbol cache (import/lp_symcache.c) on its own and under lp_symbols:
 * answers survive a close/open; damaged entries (a flipped bit, truncation,
 * garbage, an empty file, another module's entry under this name, a header
 * that lies about its sizes) are ignored and rebuilt, never a crash;
 * concurrent writers and readers of one entry never see a torn file; the
 * directory stays within LATPROF_SYMCACHE_MB, least recently used first;
 * LATPROF_SYMCACHE=off turns it off. Each case runs in a child process with
 * its own XDG_CACHE_HOME (the cache reads its environment once).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lp_symbols.h"
#include "lp_symcache.h"

static int failures;
static char root[] = "/tmp/symcache_unit-XXXXXX";

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		int ok_ = !!(c);                                                                   \
		printf(ok_ ? "ok: " : "FAIL: ");                                                   \
		failures += !ok_;                                                                  \
		printf(__VA_ARGS__);                                                               \
		putchar('\n');                                                                     \
		fflush(stdout);                                                                    \
	} while (0)

/* ---- helpers ---------------------------------------------------------- */

static char self[4096];

static void fn_name(uint64_t off, char *buf, size_t len)
{
	snprintf(buf, len, "fn_%llu_padding_to_make_entries_realistic", (unsigned long long)off);
}

/* n answers for offsets base..base+n-1 into the cache of module path. */
static void fill(const char *path, uint64_t base, int n)
{
	struct lp_symcache *c = lp_symcache_open(path);
	for (int i = 0; i < n; i++) {
		char name[96];
		fn_name(base + (uint64_t)i, name, sizeof(name));
		struct lp_symc_ent e = {.found = 1,
					.function = name,
					.sym_offset = (base + (uint64_t)i) % 7,
					.file = "x.c",
					.line = (int)((base + (uint64_t)i) % 1000)};
		lp_symcache_put(c, LP_SYMC_PC, base + (uint64_t)i, &e);
	}
	lp_symcache_close(c);
}

/* How many of base..base+n-1 are cached; -1 if any answer is wrong. */
static int count_hits(const char *path, uint64_t base, int n)
{
	struct lp_symcache *c = lp_symcache_open(path);
	int hits = 0;
	for (int i = 0; i < n; i++) {
		struct lp_symc_ent e;
		if (!lp_symcache_get(c, LP_SYMC_PC, base + (uint64_t)i, &e))
			continue;
		char name[96];
		fn_name(base + (uint64_t)i, name, sizeof(name));
		if (!e.found || !e.function || strcmp(e.function, name) || !e.file ||
		    strcmp(e.file, "x.c") || e.line != (int)((base + (uint64_t)i) % 1000) ||
		    e.sym_offset != (base + (uint64_t)i) % 7) {
			hits = -1;
			break;
		}
		hits++;
	}
	lp_symcache_close(c);
	return hits;
}

/* The one .lpsym file in the cache directory (first found), or "". */
static void entry_path(char *out, size_t len)
{
	out[0] = 0;
	DIR *d = opendir(lp_symcache_dir());
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".lpsym")) {
			snprintf(out, len, "%s/%s", lp_symcache_dir(), e->d_name);
			break;
		}
	if (d)
		closedir(d);
}

static long long dir_bytes(int *files, int *tmps)
{
	long long total = 0;
	*files = *tmps = 0;
	DIR *d = opendir(lp_symcache_dir());
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char p[4096];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", lp_symcache_dir(), e->d_name);
		if (e->d_name[0] == '.' && strncmp(e->d_name, ".tmp-", 5))
			continue;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			total += st.st_size;
			*files += !!strstr(e->d_name, ".lpsym");
			*tmps += !strncmp(e->d_name, ".tmp-", 5);
		}
	}
	if (d)
		closedir(d);
	return total;
}

static void write_file(const char *p, const void *buf, size_t n)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		if (write(fd, buf, n) != (ssize_t)n)
			perror("write");
		close(fd);
	}
}

static char *read_file(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	char *buf = NULL;
	if (f && fseek(f, 0, SEEK_END) == 0) {
		long sz = ftell(f);
		rewind(f);
		buf = malloc((size_t)sz + 1);
		*n = buf ? fread(buf, 1, (size_t)sz, f) : 0;
	}
	if (f)
		fclose(f);
	return buf;
}

/* Run case fn in a child with XDG_CACHE_HOME=root/name (+ extra env). */
static void run_case(const char *name, void (*fn)(void), const char *env_k, const char *env_v)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("XDG_CACHE_HOME", dir, 1);
		if (env_k)
			setenv(env_k, env_v, 1);
		failures = 0;
		fn();
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %s: exited cleanly (status %#x)", name,
	      st);
}

/* ---- cases ------------------------------------------------------------ */

static void case_roundtrip(void)
{
	fill(self, 1000, 500);
	CHECK(count_hits(self, 1000, 500) == 500, "500 answers read back after close/open");
	struct lp_symcache *c = lp_symcache_open(self);
	struct lp_symc_ent none = {.found = 0};
	lp_symcache_put(c, LP_SYMC_DATA, 1000, &none);
	lp_symcache_close(c);
	c = lp_symcache_open(self);
	struct lp_symc_ent e = {.found = 1};
	int got = lp_symcache_get(c, LP_SYMC_DATA, 1000, &e);
	CHECK(got && !e.found && !e.function,
	      "a 'no symbol' data answer is kept, apart from the code answer at that offset");
	lp_symcache_close(c);
}

/* lp_symbols through the cache: the second symtab answers the same from it. */
static int add_phdr(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
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
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : self;
	if (lo < hi)
		lp_symtab_add_module(ctx, name, info->dlpi_addr, lo, hi);
	return 0;
}

static void case_symtab(void)
{
	uint64_t pc = (uint64_t)(uintptr_t)case_symtab + 8;
	uint64_t data = (uint64_t)(uintptr_t)&failures;
	struct lp_sym a, b, da, db;
	char a_fn[256] = "";
	for (int round = 0; round < 2; round++) {
		struct lp_symtab *st = lp_symtab_new();
		dl_iterate_phdr(add_phdr, st);
		uint64_t t0 = lp_symtab_time_ns();
		int r1 = lp_symtab_lookup_pc(st, pc, round ? &b : &a);
		int r2 = lp_symtab_lookup_data(st, data, round ? &db : &da);
		printf("info: round %d: lookups took %.3f ms\n", round,
		       (double)(lp_symtab_time_ns() - t0) / 1e6);
		CHECK(r1 == 0 && r2 == 0, "round %d: code and data lookups answer", round);
		if (!round && a.function) /* a's strings go with its symtab */
			snprintf(a_fn, sizeof(a_fn), "%s", a.function);
		if (round) {
			CHECK(a_fn[0] && b.function && !strcmp(a_fn, b.function) &&
				  a.line == b.line && a.sym_offset == b.sym_offset &&
				  a.offset == b.offset,
			      "code answer from the cache = libdwfl's (%s:%d)",
			      b.function ? b.function : "?", b.line);
			CHECK(db.function && !strcmp(db.function, "failures"),
			      "data answer from the cache names `failures` (%s)",
			      db.function ? db.function : "?");
		}
		lp_symtab_free(st);
		if (!round) {
			char p[4096];
			entry_path(p, sizeof(p));
			CHECK(p[0] != 0, "a cache entry was written (%s)", p);
		}
	}
}

static void damage(const char *what, void (*mutate)(const char *p))
{
	fill(self, 0, 300);
	char p[4096];
	entry_path(p, sizeof(p));
	mutate(p);
	CHECK(count_hits(self, 0, 300) == 0, "%s: entry ignored, no wrong answer", what);
	fill(self, 0, 300); /* rebuilt by the next import */
	CHECK(count_hits(self, 0, 300) == 300, "%s: rebuilt, all answers back", what);
}

static void flip_bit(const char *p)
{
	size_t n;
	char *b = read_file(p, &n);
	b[n / 2] ^= 0x10;
	write_file(p, b, n);
	free(b);
}

static void truncate_half(const char *p)
{
	size_t n;
	char *b = read_file(p, &n);
	write_file(p, b, n / 2);
	free(b);
}

static void empty(const char *p)
{
	write_file(p, "", 0);
}

static void garbage(const char *p)
{
	char b[5000];
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (char)(i * 2654435761u >> 13);
	memcpy(b, "LPSYMC\0\1", 8); /* right magic, nonsense after it */
	write_file(p, b, sizeof(b));
}

/* Header fields lie (huge counts) while the checksum field is left alone. */
static void lying_header(const char *p)
{
	size_t n;
	char *b = read_file(p, &n);
	uint64_t huge = 1ull << 40;
	memcpy(b + 16, &huge, 8); /* n_recs */
	write_file(p, b, n);
	free(b);
}

/* A valid entry of another module file under this one's name. */
static void foreign(const char *p)
{
	char other[4096];
	snprintf(other, sizeof(other), "%s/other-module", root);
	write_file(other, "not an ELF file, identified by path and stat", 44);
	fill(other, 0, 300);
	DIR *d = opendir(lp_symcache_dir());
	struct dirent *e;
	char op[4096] = "";
	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".lpsym") && !strstr(p, e->d_name))
			snprintf(op, sizeof(op), "%s/%s", lp_symcache_dir(), e->d_name);
	closedir(d);
	CHECK(op[0] && rename(op, p) == 0, "other module's entry moved over this one's");
}

static void case_damaged(void)
{
	damage("one flipped bit", flip_bit);
	damage("truncated", truncate_half);
	damage("empty file", empty);
	damage("garbage after the magic", garbage);
	damage("header with huge counts", lying_header);
	damage("another module's entry", foreign);
}

/* 6 writers rewrite one entry 15 times each with their own 1,500 answers
 * while 2 readers keep reading it: every read is one writer's whole set or
 * nothing (never torn), the final file is whole, and no temp file is left. */
static void case_concurrent(void)
{
	enum { WRITERS = 6, READERS = 2, ROUNDS = 15, N = 1500 };
	pid_t pids[WRITERS + READERS];
	for (int w = 0; w < WRITERS + READERS; w++) {
		pids[w] = fork();
		if (pids[w])
			continue;
		int bad = 0;
		for (int r = 0; r < ROUNDS; r++) {
			if (w < WRITERS) {
				fill(self, (uint64_t)w * 100000, N);
				continue;
			}
			for (int k = 0; k < WRITERS; k++) {
				int h = count_hits(self, (uint64_t)k * 100000, N);
				bad += h != 0 && h != N;
			}
		}
		_exit(bad ? 1 : 0);
	}
	int ok = 1;
	for (int w = 0; w < WRITERS + READERS; w++) {
		int st;
		waitpid(pids[w], &st, 0);
		ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	CHECK(ok, "%d writers x %d rewrites, %d readers: no reader saw a partial entry", WRITERS,
	      ROUNDS, READERS);
	/* A writer rewrites what it read plus its own: sets are whole or absent. */
	int whole = 0, torn = 0;
	for (int k = 0; k < WRITERS; k++) {
		int h = count_hits(self, (uint64_t)k * 100000, N);
		whole += h == N;
		torn += h != N && h != 0;
	}
	int files, tmps;
	dir_bytes(&files, &tmps);
	CHECK(whole >= 1 && !torn && files == 1 && tmps == 0,
	      "final entry: %d whole writer sets, %d partial, 1 file (%d), no temp file left (%d)",
	      whole, torn, files, tmps);
}

/* 1 MiB bound; 20 modules of ~170 KiB each, written in turn, module 0
 * read again after each: least recently used goes first, so it stays. */
static void case_evict(void)
{
	enum { MODS = 20, N = 2000 };
	char paths[MODS][4096];
	for (int m = 0; m < MODS; m++) {
		snprintf(paths[m], sizeof(paths[m]), "%s/mod-%d", root, m);
		write_file(paths[m], paths[m], strlen(paths[m]));
		fill(paths[m], 0, N);
		if (count_hits(paths[0], 0, N) != N)
			CHECK(0, "module 0, read after each write, evicted at module %d", m);
	}
	int files, tmps;
	long long bytes = dir_bytes(&files, &tmps);
	CHECK(bytes <= 1 << 20, "cache within LATPROF_SYMCACHE_MB=1: %lld bytes in %d files", bytes,
	      files);
	CHECK(files >= 3 && files < MODS, "some entries kept, the rest evicted (%d of %d)", files,
	      MODS);
	CHECK(count_hits(paths[MODS - 1], 0, N) == N, "the newest entry is kept");
	CHECK(count_hits(paths[1], 0, N) == 0, "an old entry, never read again, is evicted");
	CHECK(count_hits(paths[0], 0, N) == N, "the oldest entry, read after every write, is kept");
}

static void case_off(void)
{
	CHECK(lp_symcache_dir()[0] == 0, "LATPROF_SYMCACHE=off: no cache directory");
	CHECK(lp_symcache_open(self) == NULL, "LATPROF_SYMCACHE=off: nothing opened");
	struct lp_symtab *st = lp_symtab_new();
	dl_iterate_phdr(add_phdr, st);
	struct lp_sym s;
	CHECK(lp_symtab_lookup_pc(st, (uint64_t)(uintptr_t)case_off + 4, &s) == 0 && s.function &&
		  !strcmp(s.function, "case_off"),
	      "lookups still answer without the cache (%s)", s.function ? s.function : "?");
	lp_symtab_free(st);
	struct stat sb;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/off/latprof", root);
	CHECK(stat(dir, &sb) != 0, "nothing written under XDG_CACHE_HOME");
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || !mkdtemp(root))
		return 2;
	self[n] = 0;
	run_case("roundtrip", case_roundtrip, NULL, NULL);
	run_case("symtab", case_symtab, NULL, NULL);
	run_case("damaged", case_damaged, NULL, NULL);
	run_case("concurrent", case_concurrent, NULL, NULL);
	run_case("evict", case_evict, "LATPROF_SYMCACHE_MB", "1");
	run_case("off", case_off, "LATPROF_SYMCACHE", "off");
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (!failures && system(cmd) != 0)
		return 1;
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
