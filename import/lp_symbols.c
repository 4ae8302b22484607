/* SPDX-License-Identifier: MIT */
/*
 * Symbolization with elfutils libdwfl, offline: every module is reported
 * with dwfl_report_elf(path, bias) from the recorded LP_REC_MODULE records,
 * so no live process is needed. A module whose file is gone (or a pseudo
 * module like [vdso]) stays in our own range table and yields module+offset.
 */
#define _GNU_SOURCE
#include "lp_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lp_symcache.h"

struct obj {
	uint64_t addr, size;
	const char *name; /* interned */
	int global;
};

struct symmod {
	const char *path; /* interned */
	uint64_t bias, start, end;
	Dwfl_Module *mod; /* NULL when libdwfl could not open the file */
	struct obj *objs;
	size_t n_objs;
	int objs_loaded;
	int reported;		   /* dwfl_report_elf done (mod_report) */
	struct lp_symcache *cache; /* answers kept across imports; NULL = none */
	int cache_tried;
};

/* One symbol of a runtime's perf map: code a JIT wrote outside any module. */
struct jitsym {
	uint64_t start, end;
	const char *name; /* interned */
};

struct lp_symtab {
	Dwfl *dwfl;
	struct jitsym *jit; /* sorted by start */
	size_t n_jit;
	const char *jit_path; /* interned: the map the names came from */
	struct symmod *mods;
	size_t n_mods, cap_mods;
	size_t last; /* index of the last module hit: lookups cluster */
	/* Interned strings: open addressing on xxh3, owned by the symtab. */
	char **strs;
	size_t n_strs, cap_strs;
};

static char *lp_debuginfo_path;

static const Dwfl_Callbacks lp_dwfl_cb = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &lp_debuginfo_path,
};

/* ---- string interning ------------------------------------------------- */

static int strs_grow(struct lp_symtab *st)
{
	size_t ncap = st->cap_strs ? 2 * st->cap_strs : 256;
	char **n = calloc(ncap, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < st->cap_strs; i++) {
		char *s = st->strs[i];
		if (!s)
			continue;
		size_t j = XXH3_64bits(s, strlen(s)) & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = s;
	}
	free(st->strs);
	st->strs = n;
	st->cap_strs = ncap;
	return 0;
}

/* Returns a copy owned by st, or NULL for NULL input or out of memory. */
static const char *symbols_intern(struct lp_symtab *st, const char *s)
{
	if (!s)
		return NULL;
	if (2 * (st->n_strs + 1) > st->cap_strs && strs_grow(st))
		return NULL;
	size_t len = strlen(s), mask = st->cap_strs - 1;
	size_t j = XXH3_64bits(s, len) & mask;
	for (; st->strs[j]; j = (j + 1) & mask)
		if (!strcmp(st->strs[j], s))
			return st->strs[j];
	st->strs[j] = strdup(s);
	if (!st->strs[j])
		return NULL;
	st->n_strs++;
	return st->strs[j];
}

/* "memcpy@@GLIBC_2.14" -> "memcpy": the version tag is noise in a report. */
static const char *intern_sym(struct lp_symtab *st, const char *name)
{
	const char *at = strchr(name, '@');
	if (!at || at == name)
		return symbols_intern(st, name);
	char *base = strndup(name, (size_t)(at - name));
	const char *s = base ? symbols_intern(st, base) : NULL;
	free(base);
	return s;
}

/* What a report shows: "ns::Worker::run()" for _ZN2ns6Worker3runEv, the
 * name as is when it is not C++ or does not demangle. */
static const char *intern_shown(struct lp_symtab *st, const char *name)
{
	char *d = lp_demangle(name);
	const char *s = symbols_intern(st, d ? d : name);
	free(d);
	return s;
}

/* ---- modules ---------------------------------------------------------- */

struct lp_symtab *lp_symtab_new(void)
{
	struct lp_symtab *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->dwfl = dwfl_begin(&lp_dwfl_cb);
	/* Without a Dwfl every lookup still gives module+offset. */
	return st;
}

void lp_symtab_free(struct lp_symtab *st)
{
	if (!st)
		return;
	if (st->dwfl)
		dwfl_end(st->dwfl);
	for (size_t i = 0; i < st->n_mods; i++) {
		free(st->mods[i].objs);
		lp_symcache_close(st->mods[i].cache);
	}
	free(st->mods);
	free(st->jit);
	for (size_t i = 0; i < st->cap_strs; i++)
		free(st->strs[i]);
	free(st->strs);
	free(st);
}

void lp_symtab_add_module(struct lp_symtab *st, const char *path, uint64_t load_bias,
			  uint64_t start, uint64_t end)
{
	if (!st || !path || start >= end)
		return;
	for (size_t i = 0; i < st->n_mods; i++)
		if (st->mods[i].bias == load_bias && !strcmp(st->mods[i].path, path))
			return;
	if (st->n_mods == st->cap_mods) {
		size_t ncap = st->cap_mods ? 2 * st->cap_mods : 32;
		void *n = realloc(st->mods, ncap * sizeof(*st->mods));
		if (!n)
			return;
		st->mods = n;
		st->cap_mods = ncap;
	}
	struct symmod *m = &st->mods[st->n_mods];
	memset(m, 0, sizeof(*m));
	m->path = symbols_intern(st, path);
	if (!m->path)
		return;
	m->bias = load_bias;
	m->start = start;
	m->end = end;
	st->n_mods++;
}

static int jitsym_cmp(const void *a, const void *b)
{
	const struct jitsym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* One "START SIZE name" line (hex, no 0x needed) into out; 0 if it is one. */
static int perfmap_parse(struct lp_symtab *st, char *line, struct jitsym *out)
{
	char *end;
	uint64_t start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return -1;
	char *p = end + 1;
	uint64_t size = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || !size || start + size < start)
		return -1;
	char *name = end + 1;
	name[strcspn(name, "\n")] = 0;
	if (!name[0])
		return -1;
	out->start = start;
	out->end = start + size;
	out->name = symbols_intern(st, name);
	return out->name ? 0 : -1;
}

int lp_symtab_add_perfmap(struct lp_symtab *st, const char *path)
{
	if (!st || !path)
		return -EINVAL;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0, n = st->n_jit, alloc = st->n_jit;
	struct jitsym *v = st->jit;
	int rc = 0;
	while (getline(&line, &cap, f) > 0) {
		struct jitsym s;
		if (perfmap_parse(st, line, &s))
			continue;
		if (n == alloc) {
			size_t ncap = alloc ? 2 * alloc : 1024;
			struct jitsym *nv = realloc(v, ncap * sizeof(*v));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			alloc = ncap;
		}
		v[n++] = s;
	}
	free(line);
	fclose(f);
	qsort(v, n, sizeof(*v), jitsym_cmp);
	int added = (int)(n - st->n_jit);
	st->jit = v;
	st->n_jit = n;
	if (added > 0)
		st->jit_path = symbols_intern(st, path);
	return rc ? rc : added;
}

/* The perf-map symbol covering pc (a return address: looked up at pc-1):
 * of those covering it, the one starting nearest below it. */
static int lookup_jit(struct lp_symtab *st, uint64_t pc, struct lp_sym *out)
{
	uint64_t a = pc - 1;
	size_t lo = 0, hi = st->n_jit;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->jit[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* jit[0..lo) start at or below a: the nearest that covers a. */
	for (size_t i = lo; i-- > 0 && lo - i <= 64;)
		if (a < st->jit[i].end) {
			out->module = st->jit_path;
			out->offset = pc;
			out->function = st->jit[i].name;
			out->sym_offset = pc - st->jit[i].start;
			return 0;
		}
	return -1;
}

/* The module opened with libdwfl, on the first lookup the cache cannot
 * answer (a re-import never opens it). */
static void mod_report(struct lp_symtab *st, struct symmod *m)
{
	if (m->reported)
		return;
	m->reported = 1;
	if (st->dwfl && m->path[0] && m->path[0] != '[') {
		/* add_p_vaddr=false: base is the bias (dlpi_addr), not the
		 * address of the first PT_LOAD (libdwfl.h, dwfl_report_elf). */
		dwfl_report_begin_add(st->dwfl);
		m->mod = dwfl_report_elf(st->dwfl, m->path, m->path, -1, m->bias, false);
		dwfl_report_end(st->dwfl, NULL, NULL);
	}
}

static struct symmod *find_mod(struct lp_symtab *st, uint64_t addr)
{
	if (st->last < st->n_mods && addr >= st->mods[st->last].start &&
	    addr < st->mods[st->last].end)
		return &st->mods[st->last];
	for (size_t i = 0; i < st->n_mods; i++)
		if (addr >= st->mods[i].start && addr < st->mods[i].end) {
			st->last = i;
			return &st->mods[i];
		}
	return NULL;
}

/* ---- code ------------------------------------------------------------- */

/* When addr lies in code inlined into the symbol's function (std::mutex::lock
 * into the caller, say), the line table gives the inlined body's line, in a
 * header. The frame is named after the outer function, so give the line in
 * it: the call site of the outermost inlined instance (DW_AT_call_file and
 * DW_AT_call_line, DWARF 5 section 3.3.8.2). 0 when addr is not inlined. */
static int inline_call_site(Dwfl_Module *mod, Dwarf_Addr addr, const char **file, int *line)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	Dwarf_Die *scopes = NULL, inner;
	if (!cu || dwarf_getscopes(cu, addr - bias, &scopes) <= 0) {
		free(scopes);
		return 0;
	}
	/* dwarf_getscopes follows an inlined instance into its abstract
	 * definition; the concrete chain of instances comes from the innermost
	 * scope's own parents (as eu-addr2line -i does). */
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	int n = dwarf_getscopes_die(&inner, &scopes);
	int found = 0;
	for (int i = n - 1; i >= 0 && !found; i--) { /* outermost first */
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Attribute at;
		Dwarf_Word fidx, ln;
		Dwarf_Files *files;
		size_t nfiles;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &at), &fidx) ||
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &at), &ln) ||
		    dwarf_getsrcfiles(cu, &files, &nfiles) || fidx >= nfiles)
			break;
		*file = dwarf_filesrc(files, fidx, NULL, NULL);
		*line = (int)ln;
		found = *file != NULL;
	}
	free(scopes);
	return found;
}

static int lookup_pc_dwfl(struct lp_symtab *st, uint64_t pc, struct lp_sym *out)
{
	memset(out, 0, sizeof(*out));
	if (!st || !pc)
		return -1;
	/* A return address points after the call, possibly into the next
	 * line or even the next function: look up the call itself. */
	uint64_t a = pc - 1;
	struct symmod *m = find_mod(st, a);
	if (!m)
		return -1;
	out->module = m->path;
	out->offset = pc - m->bias;
	if (!m->mod)
		return 0;

	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m->mod, a, &off, &sym, NULL, NULL, NULL);
	if (name) {
		const char *base = intern_sym(st, name);
		out->function = base ? intern_shown(st, base) : NULL;
		out->sym_offset = off + 1; /* relative to pc, like a backtrace */
	}
	const char *file = NULL;
	int lineno = 0;
	if (!inline_call_site(m->mod, a, &file, &lineno)) {
		Dwfl_Line *line = dwfl_module_getsrc(m->mod, a);
		file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	}
	if (file) {
		out->file = symbols_intern(st, file);
		out->line = lineno;
	}
	return 0;
}

/* ---- data ------------------------------------------------------------- */

/* Collect the module's data objects once. STT_TLS symbols are left out:
 * their value is an offset in each thread's TLS block, not an address in
 * the module's mapping, so no recorded address can be matched against it. */
static void load_objs(struct lp_symtab *st, struct symmod *m)
{
	m->objs_loaded = 1;
	int n = dwfl_module_getsymtab(m->mod);
	if (n <= 0)
		return;
	m->objs = calloc((size_t)n, sizeof(*m->objs));
	if (!m->objs)
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name =
		    dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_OBJECT && type != STT_COMMON))
			continue;
		struct obj *o = &m->objs[m->n_objs];
		o->name = intern_sym(st, name);
		if (!o->name)
			continue;
		o->addr = addr;
		o->size = sym.st_size;
		o->global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
		m->n_objs++;
	}
}

/* The tightest object containing addr; globals win ties (an alias of a
 * static under a public name is what users wrote). */
static const struct obj *find_obj(const struct symmod *m, uint64_t addr)
{
	const struct obj *best = NULL;
	for (size_t i = 0; i < m->n_objs; i++) {
		const struct obj *o = &m->objs[i];
		int in = o->size ? addr >= o->addr && addr - o->addr < o->size : addr == o->addr;
		if (!in)
			continue;
		if (!best || o->size < best->size ||
		    (o->size == best->size && o->global > best->global))
			best = o;
	}
	return best;
}

/* The allocated section of the module's ELF file holding vaddr (".bss",
 * ".data"): stripped files keep their section headers. NULL if none. */
static const char *section_of(struct lp_symtab *st, struct symmod *m, uint64_t vaddr)
{
	GElf_Addr bias;
	Elf *elf = m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (vaddr >= sh.sh_addr && vaddr - sh.sh_addr < sh.sh_size) {
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			return name ? symbols_intern(st, name) : NULL;
		}
	}
	return NULL;
}

static int lookup_data_dwfl(struct lp_symtab *st, uint64_t addr, struct lp_sym *out)
{
	memset(out, 0, sizeof(*out));
	if (!st)
		return -1;
	struct symmod *m = find_mod(st, addr);
	if (!m)
		return -1;
	/* In a module's mapping but not in a named object (a stripped binary's
	 * static): the caller still gets the module, offset and section. */
	out->module = m->path;
	out->offset = addr - m->bias;
	if (!m->mod)
		return -1;
	if (!m->objs_loaded)
		load_objs(st, m);
	const struct obj *o = find_obj(m, addr);
	if (!o) {
		out->section = section_of(st, m, out->offset);
		return -1;
	}
	out->module = m->path;
	out->offset = addr - m->bias;
	/* Demangled here, for the few objects that hold a lock, rather than
	 * for every object of every module in load_objs. */
	out->function = intern_shown(st, o->name);
	out->sym_offset = addr - o->addr;
	return 0;
}

/* ---- cache hooks (lp_symcache.c) --------------------------------------- */

static uint64_t lp_sym_ns; /* time spent symbolizing, this process */

static uint64_t sym_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t lp_symtab_time_ns(void)
{
	return lp_sym_ns;
}

/* The cached answer for (kind, addr) in out; else the lookup itself, whose
 * answer is then cached. Either way the strings are the symtab's own. */
static int lookup_cached(struct lp_symtab *st, enum lp_symc_kind kind, uint64_t addr,
			 struct lp_sym *out)
{
	memset(out, 0, sizeof(*out));
	if (!st || (kind == LP_SYMC_PC && !addr))
		return -1;
	struct symmod *m = find_mod(st, kind == LP_SYMC_PC ? addr - 1 : addr);
	if (!m)
		return kind == LP_SYMC_PC && st->n_jit ? lookup_jit(st, addr, out) : -1;
	uint64_t t0 = sym_now(), off = addr - m->bias;
	if (!m->cache_tried) {
		m->cache_tried = 1;
		m->cache = lp_symcache_open(m->path);
	}
	struct lp_symc_ent e;
	int rc;
	if (lp_symcache_get(m->cache, kind, off, &e)) {
		out->module = m->path;
		out->offset = off;
		out->function = e.function ? symbols_intern(st, e.function) : NULL;
		out->sym_offset = e.sym_offset;
		out->file = e.file ? symbols_intern(st, e.file) : NULL;
		out->line = e.line;
		rc = kind == LP_SYMC_PC || e.found ? 0 : -1;
		if (rc) {
			/* A data address in the module but in no named object: the
			 * module, offset and section stay (lookup_data_dwfl). */
			out->function = NULL;
			out->section = out->file;
			out->file = NULL;
		}
	} else {
		mod_report(st, m);
		rc = kind == LP_SYMC_PC ? lookup_pc_dwfl(st, addr, out)
					: lookup_data_dwfl(st, addr, out);
		/* An unnamed data address keeps its section in the file slot. */
		e = (struct lp_symc_ent){.found = rc == 0,
					 .function = out->function,
					 .sym_offset = out->sym_offset,
					 .file = rc ? out->section : out->file,
					 .line = out->line};
		/* A module libdwfl cannot open is not cached: it may be back
		 * next time (lp_symcache_open found the file, though). */
		if (m->mod)
			lp_symcache_put(m->cache, kind, off, &e);
	}
	lp_sym_ns += sym_now() - t0;
	return rc;
}

int lp_symtab_lookup_pc(struct lp_symtab *st, uint64_t pc, struct lp_sym *out)
{
	return lookup_cached(st, LP_SYMC_PC, pc, out);
}

int lp_symtab_lookup_data(struct lp_symtab *st, uint64_t addr, struct lp_sym *out)
{
	return lookup_cached(st, LP_SYMC_DATA, addr, out);
}
