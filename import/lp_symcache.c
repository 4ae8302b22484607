/* SPDX-License-Identifier: MIT */
/*
 * Symbol cache: the answers lp_symbols.c gave for one module file, kept
 * across imports.
 *
 * Workload: symbolization at import opens every module a process mapped
 * with libdwfl and, on the first lookup, reads and sorts its whole symbol
 * table and the line table of each CU it touches: ~0.7 s after a short run
 * linked with a large shared library (onnxruntime, libpython, libsqlite3),
 * paid again on every import of a run of the same binaries, and again per
 * process. The answers depend only on the file and on this code, so they
 * are cached per module file: one file per build-id (or, without one, per
 * path + device + inode + size + mtime) holding (module offset, kind) ->
 * (function, offset in it, file, line). A re-import finds every address it
 * needs there and never opens the ELF. Lookups that miss still go to
 * libdwfl and are added.
 *
 * Where: $XDG_CACHE_HOME/latprof/symbols (default ~/.cache/latprof/symbols),
 * directories 0700, files 0600. LATPROF_SYMCACHE=off disables it;
 * LATPROF_SYMCACHE_MB bounds its size (default 128): after each write the
 * least recently used files (mtime, refreshed on every read) are removed
 * until it holds 3/4 of that.
 *
 * Safety:
 *  - Concurrent writers: each writes a private temp file (mkstemp in the
 *    same directory) and rename()s it over the entry, so a reader sees the
 *    old file or the new one, never a mix. Of two imports adding different
 *    answers at once, the last rename wins; the other's are looked up again
 *    next time.
 *  - Damaged or foreign entries (truncated, flipped bits, another version,
 *    another file's identity): the header's XXH64 of the body, the sizes
 *    and every string offset are checked before use; a file that fails is
 *    ignored and rewritten, never trusted and never a crash.
 *
 * File layout (host byte order; a cache is not shared between machines):
 *   struct symc_hdr, identity string (ident_len bytes, no NUL),
 *   n_recs x struct symc_rec, string blob (strs_len bytes, each string
 *   NUL-terminated; rec string fields are blob offset + 1, 0 = none).
 *
 * An entry's identity includes LP_SYMBOLS_CODE, a hash of lp_symbols.c and
 * lp_demangle.c made by the build (import/CMakeLists.txt): when the code
 * that makes the answers changes, old entries are simply not found.
 * LP_SYMCACHE_VERSION is this file's format.
 */
#define _GNU_SOURCE
#include "lp_symcache.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define LP_SYMCACHE_VERSION 1
#ifndef LP_SYMBOLS_CODE
#define LP_SYMBOLS_CODE "?"
#endif
#define LP_SYMC_MAGIC "LPSYMC\0\1"
#define LP_SYMC_MAX_RECS (1u << 20)   /* per module file */
#define LP_SYMC_MAX_STRS (64u << 20)  /* per module file */
#define LP_SYMC_DEFAULT_MB 128	      /* whole cache */
#define LP_SYMC_TMP_STALE_S (60 * 60) /* a writer's temp file older than this died */

struct symc_hdr {
	char magic[8];
	uint32_t version;
	uint32_t ident_len;
	uint64_t n_recs;
	uint64_t strs_len;
	uint64_t sum; /* XXH64 of everything after the header */
};

struct symc_rec {
	uint64_t key; /* module offset << 1 | kind */
	uint64_t sym_offset;
	uint32_t function; /* blob offset + 1, 0 = none */
	uint32_t file;
	int32_t line;
	uint32_t found;
};

struct lp_symcache {
	char *path;  /* the entry's file */
	char *ident; /* what the file must say it is */
	struct symc_rec *recs;
	size_t n, cap;
	uint32_t *slots; /* open addressing on key: rec index + 1 */
	size_t n_slots;
	char *strs;
	size_t strs_len, strs_cap;
	int dirty;
};

/* ---- where ------------------------------------------------------------ */

static char lp_symc_dir[PATH_MAX];
static int lp_symc_dir_done;
static uint64_t lp_symc_max_bytes;

const char *lp_symcache_dir(void)
{
	if (lp_symc_dir_done)
		return lp_symc_dir;
	lp_symc_dir_done = 1;
	const char *off = getenv("LATPROF_SYMCACHE");
	if (off && (!strcmp(off, "off") || !strcmp(off, "0")))
		return lp_symc_dir;
	const char *mb = getenv("LATPROF_SYMCACHE_MB");
	long m = mb ? atol(mb) : LP_SYMC_DEFAULT_MB;
	lp_symc_max_bytes = (uint64_t)(m > 0 ? m : LP_SYMC_DEFAULT_MB) << 20;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (xdg && xdg[0] == '/') /* the XDG spec: relative paths are invalid */
		n = snprintf(lp_symc_dir, sizeof(lp_symc_dir), "%s/latprof/symbols", xdg);
	else if (home && home[0] == '/')
		n = snprintf(lp_symc_dir, sizeof(lp_symc_dir), "%s/.cache/latprof/symbols", home);
	else
		n = -1;
	if (n < 0 || (size_t)n >= sizeof(lp_symc_dir))
		lp_symc_dir[0] = 0;
	return lp_symc_dir;
}

/* mkdir -p of the cache directory, 0700 for the parts we create. */
static int symc_mkdirs(void)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", lp_symcache_dir());
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, 0700) && errno != EEXIST ? -errno : 0;
}

/* ---- identity --------------------------------------------------------- */

/* "bid:HEX" from the file's GNU build-id, else "file:PATH:DEV:INO:SIZE:MTIME";
 * plus whether separate debug info for that build-id is installed (more
 * answers: file and line). NULL when the file cannot be read. */
static char *symc_ident(const char *path, char *name, size_t name_len)
{
	/* O_NONBLOCK: a damaged log may name a FIFO; only regular files count. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *id = NULL, hex[2 * 64 + 1] = "";
	int reg = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (reg) {
		elf_version(EV_CURRENT);
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		const void *bid = NULL;
		ssize_t len = elf ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
		for (ssize_t i = 0; bid && i < len && i < 64; i++)
			sprintf(hex + 2 * i, "%02x", ((const unsigned char *)bid)[i]);
		if (elf)
			elf_end(elf);
	}
	close(fd);
	if (!reg)
		return NULL;
	if (hex[0]) {
		char dbg[PATH_MAX];
		struct stat ds;
		snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		long long dbg_mtime = stat(dbg, &ds) == 0 ? (long long)ds.st_mtime : 0;
		if (asprintf(&id, "v%d:%s:%s:bid:%s:dbg:%lld", LP_SYMCACHE_VERSION, LATPROF_VERSION,
			     LP_SYMBOLS_CODE, hex, dbg_mtime) < 0)
			return NULL;
		snprintf(name, name_len, "%s.lpsym", hex);
		return id;
	}
	if (asprintf(&id, "v%d:%s:%s:file:%s:%llu:%llu:%lld:%lld.%09ld", LP_SYMCACHE_VERSION,
		     LATPROF_VERSION, LP_SYMBOLS_CODE, path, (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino, (long long)st.st_size,
		     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec) < 0)
		return NULL;
	snprintf(name, name_len, "f-%016llx.lpsym",
		 (unsigned long long)XXH3_64bits(id, strlen(id)));
	return id;
}

/* ---- in memory -------------------------------------------------------- */

static int symc_rehash(struct lp_symcache *c, size_t n_slots)
{
	uint32_t *s = calloc(n_slots, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		size_t j = XXH3_64bits(&c->recs[i].key, 8) & (n_slots - 1);
		while (s[j])
			j = (j + 1) & (n_slots - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(c->slots);
	c->slots = s;
	c->n_slots = n_slots;
	return 0;
}

static const struct symc_rec *symc_find(const struct lp_symcache *c, uint64_t key)
{
	if (!c->n_slots)
		return NULL;
	for (size_t j = XXH3_64bits(&key, 8) & (c->n_slots - 1); c->slots[j];
	     j = (j + 1) & (c->n_slots - 1))
		if (c->recs[c->slots[j] - 1].key == key)
			return &c->recs[c->slots[j] - 1];
	return NULL;
}

/* Blob offset + 1 of a copy of s (0 for NULL), or -1 when full. */
static int64_t symc_str(struct lp_symcache *c, const char *s)
{
	if (!s)
		return 0;
	size_t len = strlen(s) + 1;
	if (c->strs_len + len > LP_SYMC_MAX_STRS)
		return -1;
	if (c->strs_len + len > c->strs_cap) {
		size_t ncap = c->strs_cap ? 2 * c->strs_cap : 4096;
		while (ncap < c->strs_len + len)
			ncap *= 2;
		char *n = realloc(c->strs, ncap);
		if (!n)
			return -1;
		c->strs = n;
		c->strs_cap = ncap;
	}
	memcpy(c->strs + c->strs_len, s, len);
	c->strs_len += len;
	return (int64_t)(c->strs_len - len) + 1;
}

/* ---- reading ---------------------------------------------------------- */

/* The body after the header, checked: 0 and c filled, or -1 (ignore it). */
static int symc_parse(struct lp_symcache *c, const char *buf, size_t size)
{
	struct symc_hdr h;
	if (size < sizeof(h))
		return -1;
	memcpy(&h, buf, sizeof(h));
	size_t ident_len = strlen(c->ident);
	if (memcmp(h.magic, LP_SYMC_MAGIC, 8) || h.version != LP_SYMCACHE_VERSION ||
	    h.ident_len != ident_len || h.n_recs > LP_SYMC_MAX_RECS ||
	    h.strs_len > LP_SYMC_MAX_STRS ||
	    size != sizeof(h) + ident_len + h.n_recs * sizeof(struct symc_rec) + h.strs_len)
		return -1;
	if (XXH64(buf + sizeof(h), size - sizeof(h), 0) != h.sum ||
	    memcmp(buf + sizeof(h), c->ident, ident_len))
		return -1;
	const char *strs = buf + sizeof(h) + ident_len + h.n_recs * sizeof(struct symc_rec);
	if (h.strs_len && strs[h.strs_len - 1])
		return -1; /* every string must end inside the blob */
	size_t n = (size_t)h.n_recs;
	struct symc_rec *recs = n ? malloc(n * sizeof(*recs)) : NULL;
	char *blob = h.strs_len ? malloc(h.strs_len) : NULL;
	if ((n && !recs) || (h.strs_len && !blob)) {
		free(recs);
		free(blob);
		return -1;
	}
	if (n) /* memcpy(NULL, ..., 0) is undefined */
		memcpy(recs, buf + sizeof(h) + ident_len, n * sizeof(*recs));
	if (h.strs_len)
		memcpy(blob, strs, h.strs_len);
	for (size_t i = 0; i < n; i++)
		if (recs[i].function > h.strs_len || recs[i].file > h.strs_len) {
			free(recs);
			free(blob);
			return -1;
		}
	c->recs = recs;
	c->n = c->cap = n;
	c->strs = blob;
	c->strs_len = c->strs_cap = h.strs_len;
	size_t slots = 64;
	while (slots < 2 * n)
		slots *= 2;
	if (symc_rehash(c, slots))
		return -1;
	/* The same key twice would be a damaged file too. */
	for (size_t i = 0; i < n; i++)
		if (symc_find(c, recs[i].key) != &recs[i])
			return -1;
	return 0;
}

static void symc_reset(struct lp_symcache *c)
{
	free(c->recs);
	free(c->strs);
	free(c->slots);
	c->recs = NULL;
	c->strs = NULL;
	c->slots = NULL;
	c->n = c->cap = c->n_slots = c->strs_len = c->strs_cap = 0;
}

static void symc_load(struct lp_symcache *c)
{
	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= sizeof(struct symc_hdr) + PATH_MAX * 2ull +
					LP_SYMC_MAX_RECS * sizeof(struct symc_rec) +
					LP_SYMC_MAX_STRS)
		buf = malloc((size_t)st.st_size);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (buf && got == (size_t)st.st_size) {
		if (symc_parse(c, buf, got) == 0)
			futimens(fd, NULL); /* used now: last to be evicted */
		else {
			symc_reset(c);
			c->dirty = 1; /* damaged: rewrite it with what we find */
		}
	}
	free(buf);
	close(fd);
}

struct lp_symcache *lp_symcache_open(const char *path)
{
	const char *dir = lp_symcache_dir();
	char name[160];
	if (!dir[0] || !path || path[0] != '/')
		return NULL;
	struct lp_symcache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ident = symc_ident(path, name, sizeof(name));
	if (!c->ident || asprintf(&c->path, "%s/%s", dir, name) < 0) {
		free(c->ident);
		free(c);
		return NULL;
	}
	symc_load(c);
	return c;
}

int lp_symcache_get(struct lp_symcache *c, enum lp_symc_kind kind, uint64_t off,
		    struct lp_symc_ent *out)
{
	const struct symc_rec *r = c ? symc_find(c, off << 1 | kind) : NULL;
	if (!r)
		return 0;
	out->found = (int)r->found;
	out->function = r->function ? c->strs + r->function - 1 : NULL;
	out->sym_offset = r->sym_offset;
	out->file = r->file ? c->strs + r->file - 1 : NULL;
	out->line = r->line;
	return 1;
}

void lp_symcache_put(struct lp_symcache *c, enum lp_symc_kind kind, uint64_t off,
		     const struct lp_symc_ent *e)
{
	uint64_t key = off << 1 | kind;
	if (!c || c->n >= LP_SYMC_MAX_RECS || symc_find(c, key))
		return;
	if (2 * (c->n + 1) > c->n_slots && symc_rehash(c, c->n_slots ? 2 * c->n_slots : 64))
		return;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		void *n = realloc(c->recs, ncap * sizeof(*c->recs));
		if (!n)
			return;
		c->recs = n;
		c->cap = ncap;
	}
	int64_t fn = symc_str(c, e->function), file = symc_str(c, e->file);
	if (fn < 0 || file < 0)
		return;
	struct symc_rec *r = &c->recs[c->n];
	memset(r, 0, sizeof(*r));
	r->key = key;
	r->found = !!e->found;
	r->function = (uint32_t)fn;
	r->sym_offset = e->sym_offset;
	r->file = (uint32_t)file;
	r->line = e->line;
	size_t j = XXH3_64bits(&key, 8) & (c->n_slots - 1);
	while (c->slots[j])
		j = (j + 1) & (c->n_slots - 1);
	c->slots[j] = (uint32_t)++c->n;
	c->dirty = 1;
}

/* ---- writing ---------------------------------------------------------- */

static int symc_write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

static int symc_save(const struct lp_symcache *c)
{
	if (symc_mkdirs())
		return -1;
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", lp_symcache_dir()) >= (int)sizeof(tmp))
		return -1;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	struct symc_hdr h = {.version = LP_SYMCACHE_VERSION};
	size_t ident_len = strlen(c->ident), recs = c->n * sizeof(*c->recs);
	memcpy(h.magic, LP_SYMC_MAGIC, 8);
	h.ident_len = (uint32_t)ident_len;
	h.n_recs = c->n;
	h.strs_len = c->strs_len;
	XXH64_state_t *x = XXH64_createState();
	int rc = x ? 0 : -1;
	if (x) {
		XXH64_reset(x, 0);
		XXH64_update(x, c->ident, ident_len);
		XXH64_update(x, c->recs, recs);
		XXH64_update(x, c->strs, c->strs_len);
		h.sum = XXH64_digest(x);
		XXH64_freeState(x);
	}
	rc = rc ? rc : symc_write_all(fd, &h, sizeof(h));
	rc = rc ? rc : symc_write_all(fd, c->ident, ident_len);
	rc = rc ? rc : symc_write_all(fd, c->recs, recs);
	rc = rc ? rc : symc_write_all(fd, c->strs, c->strs_len);
	if (close(fd))
		rc = -1;
	if (rc == 0 && rename(tmp, c->path))
		rc = -1;
	if (rc)
		unlink(tmp);
	return rc;
}

struct symc_file {
	char *name;
	uint64_t mtime_ns;
	uint64_t bytes;
};

static int symc_older(const void *a, const void *b)
{
	const struct symc_file *x = a, *y = b;
	return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

/* Keep the directory within its bound: least recently used files first,
 * down to 3/4 of it; temp files of writers that died go too. */
static void symc_evict(void)
{
	DIR *d = opendir(lp_symcache_dir());
	if (!d)
		return;
	struct symc_file *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		int is_tmp = !strncmp(e->d_name, ".tmp-", 5);
		size_t l = strlen(e->d_name);
		if ((!is_tmp && (l < 7 || strcmp(e->d_name + l - 6, ".lpsym"))) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (is_tmp) {
			if (now - st.st_mtime > LP_SYMC_TMP_STALE_S)
				unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			void *nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n].name = strdup(e->d_name);
		if (!v[n].name)
			break;
		v[n].mtime_ns =
		    (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
		v[n].bytes = (uint64_t)st.st_size;
		total += v[n++].bytes;
	}
	if (total > lp_symc_max_bytes) {
		qsort(v, n, sizeof(*v), symc_older);
		for (size_t i = 0; i < n && total > lp_symc_max_bytes / 4 * 3; i++)
			if (unlinkat(dirfd(d), v[i].name, 0) == 0)
				total -= v[i].bytes;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	closedir(d);
}

void lp_symcache_close(struct lp_symcache *c)
{
	if (!c)
		return;
	if (c->dirty && symc_save(c) == 0)
		symc_evict();
	symc_reset(c);
	free(c->ident);
	free(c->path);
	free(c);
}
