/* SPDX-License-Identifier: MIT */
/*
 * Python frames at a recorded wait. CPython keeps each thread's frame chain
 * in plain structures: the thread state (PyThreadState) points at the
 * innermost frame, each frame at its code object and the previous frame,
 * the code object at its file name, name, first line and line table.
 * These are read where they lie, never through a Python call and without
 * the GIL. Offsets are per minor version (3.10 to 3.12 from their headers,
 * 3.13 from the interpreter's own _Py_DebugOffsets); docs/python.md cites
 * them. Any other version records no frames and says so once.
 *
 * Nothing read here may fault the app. The waiting thread's own frames
 * cannot change or go away while it is blocked in a call it made from
 * them, so once one walk of them has been read through process_vm_readv
 * (which fails instead of faulting) and every object on the way had the
 * type it should (the layout is right), its walks read memory directly.
 * The GIL holder is another, running thread: its frames are read through
 * process_vm_readv only.
 */
#define _GNU_SOURCE
#include "lp_py.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lp_core.h"
#include "lp_preload.h"

#define PY_DEPTH 16
#define PY_STEPS 64	  /* frames looked at, skipped ones included */
#define PY_TEXT 3000	  /* bytes of one wait's frames */
#define PY_NAME 200	  /* bytes of one name or file name */
#define PY_FRAME_SEP 0x1e /* between frames */
#define PY_FIELD_SEP 0x1f /* between a frame's function, file and line */

/* Where the fields lie in one minor version; -1: not in this version. */
struct py_layout {
	int ts_interp, ts_thread_id, ts_native_tid;
	int ts_frame;  /* the innermost frame, or the _PyCFrame pointer (ts_cframe) */
	int ts_cframe; /* 1: ts_frame holds a _PyCFrame *, whose cf_frame is the frame */
	int cf_frame;
	int fr_back, fr_code, fr_instr, fr_owner;
	int lasti_int; /* 3.10: fr_instr is an int index, not a pointer */
	int co_filename, co_name, co_firstlineno, co_linetable, co_code;
	int str_state, str_length, str_ascii_size;
	int str_compact_size; /* PyCompactUnicodeObject: its code points follow */
	int gil_in_runtime;   /* >= 0: the GIL lies at _PyRuntime + this */
	int interp_gil;	      /* else: the interpreter's pointer to its GIL */
	int loc_table;	      /* 3.11+: the location table, else 3.10's pairs */
	/* A threading.Thread's name (its _name attribute): where a frame's
	 * first local lies, the type's fields, and how instances keep their
	 * attributes (the minor version: 10 to 13). */
	int fr_locals, tp_flags, tp_basicsize, tp_dictoffset, ht_cached_keys, attrs;
};

/* From each version's Include/cpython/pystate.h, Include/cpython/code.h,
 * Include/cpython/unicodeobject.h, Include/internal/pycore_frame.h and
 * pycore_gil.h (3.10.13, 3.11.7, 3.12.1 as installed by pyenv). */
static const struct py_layout py_310 = {.ts_interp = 16,
					.ts_thread_id = 176,
					.ts_native_tid = -1,
					.ts_frame = 24,
					.ts_cframe = 0,
					.cf_frame = 0,
					.fr_back = 24,
					.fr_code = 32,
					.fr_instr = 96,
					.fr_owner = -1,
					.lasti_int = 1,
					.co_filename = 104,
					.co_name = 112,
					.co_firstlineno = 40,
					.co_linetable = 120,
					.co_code = -1,
					.str_state = 32,
					.str_length = 16,
					.str_ascii_size = 48,
					.str_compact_size = 72,
					.gil_in_runtime = 352,
					.interp_gil = -1,
					.loc_table = 0,
					.fr_locals = 352,
					.tp_flags = 168,
					.tp_basicsize = 32,
					.tp_dictoffset = 288,
					.ht_cached_keys = 872,
					.attrs = 10};
static const struct py_layout py_311 = {.ts_interp = 16,
					.ts_thread_id = 152,
					.ts_native_tid = 160,
					.ts_frame = 56,
					.ts_cframe = 1,
					.cf_frame = 8,
					.fr_back = 48,
					.fr_code = 32,
					.fr_instr = 56,
					.fr_owner = 69,
					.lasti_int = 0,
					.co_filename = 112,
					.co_name = 120,
					.co_firstlineno = 72,
					.co_linetable = 136,
					.co_code = 184,
					.str_state = 32,
					.str_length = 16,
					.str_ascii_size = 48,
					.str_compact_size = 72,
					.gil_in_runtime = 360,
					.interp_gil = -1,
					.loc_table = 1,
					.fr_locals = 72,
					.tp_flags = 168,
					.tp_basicsize = 32,
					.tp_dictoffset = 288,
					.ht_cached_keys = 872,
					.attrs = 11};
static const struct py_layout py_312 = {.ts_interp = 16,
					.ts_thread_id = 136,
					.ts_native_tid = 144,
					.ts_frame = 56,
					.ts_cframe = 1,
					.cf_frame = 0,
					.fr_back = 8,
					.fr_code = 0,
					.fr_instr = 56,
					.fr_owner = 70,
					.lasti_int = 0,
					.co_filename = 112,
					.co_name = 120,
					.co_firstlineno = 68,
					.co_linetable = 136,
					.co_code = 192,
					.str_state = 32,
					.str_length = 16,
					.str_ascii_size = 40,
					.str_compact_size = 56,
					.gil_in_runtime = -1,
					.interp_gil = 384,
					.loc_table = 1,
					.fr_locals = 72,
					.tp_flags = 168,
					.tp_basicsize = 32,
					.tp_dictoffset = 288,
					.ht_cached_keys = 880,
					.attrs = 12};

/* The head of 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h),
 * at offset 0 of _PyRuntime: every field an offset or a size. */
struct py_debug_offsets {
	char cookie[8];
	uint64_t version, free_threaded;
	uint64_t rt_size, rt_finalizing, rt_interpreters_head;
	uint64_t is_size, is_id, is_next, is_threads_head, is_gc, is_imports_modules, is_sysdict,
	    is_builtins, is_ceval_gil, is_gil_runtime_state, is_gil_enabled, is_gil_locked,
	    is_gil_holder;
	uint64_t ts_size, ts_prev, ts_next, ts_interp, ts_current_frame, ts_thread_id,
	    ts_native_thread_id, ts_datastack_chunk, ts_status;
	uint64_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_localsplus, fr_owner;
	uint64_t co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
	    co_argcount, co_localsplusnames, co_localspluskinds, co_code_adaptive;
	uint64_t ob_size, ob_type;
	uint64_t tp_size, tp_name, tp_repr, tp_flags;
	uint64_t tu_size, tu_item, tu_ob_size;
	uint64_t li_size, li_item, li_ob_size;
	uint64_t di_size, di_keys, di_values;
	uint64_t fl_size, fl_fval;
	uint64_t lo_size, lo_tag, lo_digit;
	uint64_t by_size, by_ob_size, by_sval;
	uint64_t un_size, un_state, un_length, un_ascii_size;
};

enum { PY_OWNED_BY_CSTACK = 3 }; /* 3.12+: a shim frame of a C call */

static struct {
	uintptr_t runtime; /* _PyRuntime; 0: no CPython here */
	uintptr_t code_type, str_type, bytes_type, frame_type;
	void *(*this_ts)(void); /* PyGILState_GetThisThreadState */
	uint32_t version;
	uint32_t status; /* enum lp_py_status */
	int checked;	 /* one safe walk passed: direct reads */
	int noted;	 /* PY_INFO written in this image */
	pid_t pid;
	struct py_layout L;
} py;

/*
 * Recent stacks by what identifies them: each frame's code object, code
 * unit, name and file name objects (the strings of a code object are
 * immutable, so the same four values are the same text). A hit skips the
 * formatting and the interning, most of a walk's cost. One word a slot,
 * read and written whole: the key's upper 40 bits and the string id
 * (below 2^24); a miss or a torn race only costs the slow path.
 */
#define PY_CACHE 4096
static uint64_t py_cache[PY_CACHE];

/* This thread's state as last validated, and its GIL's condition. */
static __thread uintptr_t py_ts, py_ts_bad, py_gil;
static __thread int py_name_due; /* a new thread state: look for its Thread's name */

static void py_forked(void)
{
	py.noted = 0;
	memset(py_cache, 0, sizeof(py_cache)); /* string ids are the parent log's */
	py.pid = getpid();
}

/* n bytes at src into dst: directly, or through process_vm_readv (safe).
 * 0 or -1; never faults when safe. */
static int py_rd(void *dst, uintptr_t src, size_t n, int safe)
{
	if (src < 4096 || src + n < src || src + n > 0x800000000000ull)
		return -1;
	if (!safe) {
		memcpy(dst, (const void *)src, n);
		return 0;
	}
	struct iovec l = {dst, n}, r = {(void *)src, n};
	return syscall(SYS_process_vm_readv, py.pid, &l, 1UL, &r, 1UL, 0UL) == (long)n ? 0 : -1;
}

static int py_ptr(uintptr_t *out, uintptr_t src, int safe)
{
	return py_rd(out, src, sizeof(*out), safe);
}

static uintptr_t py_at(const unsigned char *h, int off)
{
	uintptr_t v;
	memcpy(&v, h + off, sizeof(v));
	return v;
}

static int py_typed(uintptr_t obj, uintptr_t type, int safe)
{
	uintptr_t t;
	return obj && type && py_ptr(&t, obj + 8, safe) == 0 && t == type;
}

/* The len code points of kind bytes each at data, as UTF-8 into out. */
static int py_str_ucs(uintptr_t data, int64_t len, unsigned kind, char *out, size_t cap, int safe)
{
	unsigned char raw[256];
	size_t o = 0;
	if ((kind != 1 && kind != 2 && kind != 4) || len < 0)
		return -1;
	size_t n = (size_t)len * kind < sizeof(raw) ? (size_t)len * kind : sizeof(raw) / 4 * 4;
	if (py_rd(raw, data, n, safe))
		return -1;
	for (size_t i = 0; i + kind <= n; i += kind) {
		uint32_t c = kind == 1	 ? raw[i]
			     : kind == 2 ? (uint32_t)(raw[i] | raw[i + 1] << 8)
					 : (uint32_t)(raw[i] | raw[i + 1] << 8 | raw[i + 2] << 16 |
						      (uint32_t)raw[i + 3] << 24);
		unsigned char u[4];
		size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
		if (c > 0x10ffff || o + k >= cap)
			break;
		if (k == 1)
			u[0] = (unsigned char)(c == PY_FRAME_SEP || c == PY_FIELD_SEP || c == '\n'
						   ? '?'
						   : c);
		else if (k == 2)
			u[0] = (unsigned char)(0xc0 | c >> 6),
			u[1] = (unsigned char)(0x80 | (c & 63));
		else if (k == 3)
			u[0] = (unsigned char)(0xe0 | c >> 12),
			u[1] = (unsigned char)(0x80 | (c >> 6 & 63)),
			u[2] = (unsigned char)(0x80 | (c & 63));
		else
			u[0] = (unsigned char)(0xf0 | c >> 18),
			u[1] = (unsigned char)(0x80 | (c >> 12 & 63)),
			u[2] = (unsigned char)(0x80 | (c >> 6 & 63)),
			u[3] = (unsigned char)(0x80 | (c & 63));
		memcpy(out + o, u, k);
		o += k;
	}
	out[o] = 0;
	return (int)o;
}

/* A str object's text (ASCII, or its code points as UTF-8) into out:
 * its length, or -1 when it is no str. The separators of the record
 * become '?'. */
static int py_str(uintptr_t o, char *out, size_t cap, int safe)
{
	unsigned char h[80];
	const struct py_layout *L = &py.L;
	size_t hs = (size_t)L->str_ascii_size; /* no further: a short string ends there */
	if (hs > sizeof(h) || py_rd(h, o, hs, safe) || py_at(h, 8) != py.str_type)
		return -1;
	uint32_t state;
	memcpy(&state, h + L->str_state, 4);
	int64_t len = (int64_t)py_at(h, L->str_length);
	uintptr_t data = 0;
	if ((state & 0x60) == 0x60) { /* compact and ASCII: the bytes follow the header */
		data = o + (uintptr_t)L->str_ascii_size;
	} else if (state & 0x20) { /* compact: 1, 2 or 4 bytes a code point, as UTF-8 */
		return py_str_ucs(o + (uintptr_t)L->str_compact_size, len, (state >> 2) & 7, out,
				  cap, safe);
	}
	if (!data || len < 0) { /* a str, but no UTF-8 of it to read: shown as ? */
		snprintf(out, cap, "?");
		return 1;
	}
	size_t n = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
	if (py_rd(out, data, n, safe))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (out[i] == PY_FRAME_SEP || out[i] == PY_FIELD_SEP || out[i] == '\n')
			out[i] = '?';
	out[n] = 0;
	return (int)n;
}

/* Bytes of a line table read in windows (safe reads of a table that
 * crosses into an unmapped page fail only where it does). */
struct py_bytes {
	uintptr_t at, end;
	int safe;
	unsigned char buf[256];
	size_t pos, have;
};

static int pb_next(struct py_bytes *b)
{
	if (b->pos == b->have) {
		if (b->at >= b->end)
			return -1;
		size_t n = b->end - b->at < sizeof(b->buf) ? b->end - b->at : sizeof(b->buf);
		if (py_rd(b->buf, b->at, n, b->safe))
			return -1;
		b->at += n;
		b->have = n;
		b->pos = 0;
	}
	return b->buf[b->pos++];
}

/* 3.11+ location table: 6-bit groups, bit 6 says another follows. */
static int64_t pb_varint(struct py_bytes *b)
{
	int c = pb_next(b);
	if (c < 0)
		return 0;
	uint64_t v = (unsigned)c & 63;
	for (int shift = 6; (c & 64) && shift < 60; shift += 6) {
		if ((c = pb_next(b)) < 0)
			return 0;
		v |= (uint64_t)(c & 63) << shift;
	}
	return (int64_t)v;
}

static int64_t pb_svarint(struct py_bytes *b)
{
	int64_t u = pb_varint(b);
	return u & 1 ? -(u >> 1) : u >> 1;
}

/*
 * The line of code unit idx. 3.11+ (Objects/locations.md): entries whose
 * first byte has bit 7 set, a 4-bit code in bits 3-6 and the entry's code
 * units less one in bits 0-2; code 15 has no line, 14 (long form) and 13
 * (no columns) carry a signed line delta, 10-12 a delta of code - 10, 0-9
 * none. 3.10 (Objects/lnotab_notes.txt): byte pairs (bytecode bytes,
 * signed line delta; -128: no line). 0 when unknown.
 */
static int py_line(struct py_bytes *b, int first, int64_t idx)
{
	int64_t line = first, addr = 0;
	if (!py.L.loc_table) {
		int64_t want = idx * 2, end = 0;
		for (;;) {
			int len = pb_next(b), d = pb_next(b);
			if (len < 0 || d < 0)
				return 0;
			int noline = (signed char)d == -128;
			if (!noline)
				line += (signed char)d;
			end += len;
			if (want < end)
				return noline || line < 0 ? 0 : (int)line;
		}
	}
	int c = pb_next(b);
	while (c >= 0) {
		if (!(c & 0x80))
			return 0;
		int code = (c >> 3) & 15, len = (c & 7) + 1, noline = code == 15;
		if (code == 14 || code == 13)
			line += pb_svarint(b);
		else if (code >= 10 && code <= 12)
			line += code - 10;
		if (idx < addr + len)
			return noline || line < 0 ? 0 : (int)line;
		addr += len;
		while ((c = pb_next(b)) >= 0 && !(c & 0x80))
			; /* the rest of this entry */
	}
	return 0;
}

/* "function\x1ffile\x1fline" of the code object at code, at code unit idx
 * (3.10: byte pair idx*2), appended to out at *len. 0 or -1. */
static int py_emit(uintptr_t code, int64_t idx, int has_idx, char *out, size_t cap, size_t *len,
		   int safe)
{
	const struct py_layout *L = &py.L;
	unsigned char h[160];
	size_t hs = (size_t)L->co_linetable + 8;
	if (py_rd(h, code, hs, safe) || py_at(h, 8) != py.code_type)
		return -1;
	int first;
	memcpy(&first, h + L->co_firstlineno, 4);
	if (!py.L.lasti_int && has_idx) {
		int64_t units = (int64_t)py_at(h, 16); /* ob_size: the code units */
		if (idx < 0 || idx >= units)
			return 1; /* not started (incomplete), or not this code: skipped */
	}
	char name[PY_NAME], file[PY_NAME];
	if (py_str(py_at(h, L->co_name), name, sizeof(name), safe) < 0 ||
	    py_str(py_at(h, L->co_filename), file, sizeof(file), safe) < 0)
		return -1;
	uintptr_t lt = py_at(h, L->co_linetable);
	int line = 0;
	unsigned char bh[24];
	if (idx < 0)
		line = first;
	else if (py_rd(bh, lt, sizeof(bh), safe) == 0 && py_at(bh, 8) == py.bytes_type) {
		struct py_bytes b = {.at = lt + 32, .end = lt + 32 + py_at(bh, 16), .safe = safe};
		line = py_line(&b, first, idx);
	}
	int n = snprintf(out + *len, cap - *len, "%s%c%s%c%d%c", name, PY_FIELD_SEP, file,
			 PY_FIELD_SEP, line, PY_FRAME_SEP);
	if (n < 0 || (size_t)n >= cap - *len)
		return -1;
	*len += (size_t)n;
	return 0;
}

/* The innermost frame of thread state ts. */
static uintptr_t py_top(uintptr_t ts, int safe)
{
	uintptr_t f = 0;
	if (py_ptr(&f, ts + (uintptr_t)py.L.ts_frame, safe) || !f)
		return 0;
	if (py.L.ts_cframe && py_ptr(&f, f + (uintptr_t)py.L.cf_frame, safe))
		return 0;
	return f;
}

/* One frame at f: its code object, code unit and the next frame out;
 * 1 when it is a frame to show, 0 to skip, -1 when unreadable. */
static int py_frame(uintptr_t f, uintptr_t *code, int64_t *idx, uintptr_t *back, int safe)
{
	const struct py_layout *L = &py.L;
	unsigned char h[104];
	size_t hs = (size_t)(L->lasti_int ? L->fr_instr + 4 : L->fr_owner + 1);
	if (py_rd(h, f, hs, safe))
		return -1;
	if (L->lasti_int && py_at(h, 8) != py.frame_type)
		return -1;
	*code = py_at(h, L->fr_code);
	*back = py_at(h, L->fr_back);
	if (L->lasti_int) {
		int lasti;
		memcpy(&lasti, h + L->fr_instr, 4);
		*idx = lasti;
		return 1;
	}
	*idx = ((int64_t)py_at(h, L->fr_instr) - (int64_t)(*code + (uintptr_t)L->co_code)) / 2;
	if (L->fr_owner >= 0 && h[L->fr_owner] == PY_OWNED_BY_CSTACK)
		return 0;
	return py_typed(*code, py.code_type, safe);
}

/* Up to max frames from f outwards into out; the count, or -1 when an
 * object on the way was not what the layout says it is. */
static int py_walk(uintptr_t f, unsigned max, char *out, size_t cap, size_t *len, int safe)
{
	unsigned n = 0;
	for (unsigned steps = 0; f && n < max && steps < PY_STEPS; steps++) {
		uintptr_t code, back;
		int64_t idx;
		int show = py_frame(f, &code, &idx, &back, safe);
		if (show < 0)
			return n ? (int)n : -1;
		if (show) {
			int rc = py_emit(code, idx, 1, out, cap, len, safe);
			if (rc < 0)
				return n ? (int)n : -1;
			n += rc == 0;
		}
		f = back;
	}
	return (int)n;
}

static uint64_t py_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* The key of the stack from f outwards, read directly (the own thread's
 * frames, once checked); 0 when there is none. */
static uint64_t py_key(uintptr_t f)
{
	const struct py_layout *L = &py.L;
	uint64_t h = 0x243f6a8885a308d3ull;
	unsigned n = 0;
	for (unsigned steps = 0; f && n < PY_DEPTH && steps < PY_STEPS; steps++) {
		uintptr_t code, back;
		int64_t idx;
		int show = py_frame(f, &code, &idx, &back, 0);
		if (show < 0)
			return 0;
		if (show) {
			uintptr_t name, file;
			if (py_ptr(&name, code + (uintptr_t)L->co_name, 0) ||
			    py_ptr(&file, code + (uintptr_t)L->co_filename, 0))
				return 0;
			h = py_mix(py_mix(py_mix(py_mix(h, code), (uint64_t)idx), name), file);
			n++;
		}
		f = back;
	}
	return n ? h | 1 : 0;
}

/* The calling thread's state when it is one of this thread's, else 0. */
static uintptr_t py_self(void)
{
	uintptr_t ts = (uintptr_t)py.this_ts();
	if (!ts || ts == py_ts_bad)
		return 0;
	if (ts == py_ts)
		return ts;
	uintptr_t id = 0;
	if (py_ptr(&id, ts + (uintptr_t)py.L.ts_thread_id, 1) || id != (uintptr_t)pthread_self()) {
		py_ts_bad = ts;
		return 0;
	}
	uintptr_t gil = 0, interp = 0;
	if (py.L.gil_in_runtime >= 0)
		gil = py.runtime + (uintptr_t)py.L.gil_in_runtime;
	else if (py_ptr(&interp, ts + (uintptr_t)py.L.ts_interp, 1) || !interp ||
		 py_ptr(&gil, interp + (uintptr_t)py.L.interp_gil, 1))
		gil = 0;
	py_gil = gil;
	py_ts = ts;
	py_name_due = 1;
	return ts;
}

/* The GIL's holder when this thread is about to wait for it, holding the
 * GIL's mutex: while the GIL is locked its holder cannot drop it (that
 * takes the mutex), so its thread state is alive and read directly; its
 * innermost frame changes as it runs and is read safely. Racy by nature:
 * the function it runs at this moment. */
static void py_holder(struct lp_py_wait *w, uintptr_t self)
{
	uintptr_t gil = py_gil;
	if (!__atomic_load_n((int *)(gil + 16), __ATOMIC_RELAXED))
		return;
	uintptr_t holder = __atomic_load_n((uintptr_t *)(gil + 8), __ATOMIC_RELAXED);
	if (!holder || holder == self)
		return;
	uintptr_t id = 0;
	if (py.L.ts_native_tid >= 0) {
		if (py_ptr(&id, holder + (uintptr_t)py.L.ts_native_tid, 0) == 0)
			w->holder_tid = (uint32_t)id;
	} else if (py_ptr(&id, holder + (uintptr_t)py.L.ts_thread_id, 0) == 0) {
		w->holder_tid = lp_pre_tid_get((pthread_t)id);
	}
	uintptr_t f = py_top(holder, 0), code, back;
	int64_t idx;
	for (int steps = 0; f && steps < 4; steps++, f = back) {
		int show = py_frame(f, &code, &idx, &back, 1);
		if (show < 0)
			return;
		if (show) {
			w->h_code = code;
			w->h_idx = idx;
			return;
		}
	}
}

/* ---- threading's name for the thread ----------------------------------
 * A threading.Thread runs its target under Thread._bootstrap_inner(self):
 * self is that frame's first local, its name the _name attribute. Read
 * once per thread state, all through process_vm_readv: instance
 * attributes are kept differently in each version (docs/python.md). */

/* Index of the str key `want` among the entries of the keys object at
 * keys, and the entry's own value (combined tables); -1 when absent. */
static int py_keys_find(uintptr_t keys, const char *want, uintptr_t *value)
{
	unsigned char h[40];
	uintptr_t entries;
	int64_t n;
	size_t esz;
	if (py.L.attrs == 10) { /* 3.10 Objects/dict-common.h */
		if (py_rd(h, keys, 40, 1))
			return -1;
		int64_t size = (int64_t)py_at(h, 8);
		n = (int64_t)py_at(h, 32);
		size_t ix = size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffLL ? 4 : 8;
		entries = keys + 40 + (uintptr_t)size * ix;
		esz = 24; /* hash, key, value */
	} else {	  /* 3.11+ Include/internal/pycore_dict.h */
		if (py_rd(h, keys, 32, 1) || h[9] > 40)
			return -1;
		n = (int64_t)py_at(h, 24);
		entries = keys + 32 + ((uintptr_t)1 << h[9]);
		esz = h[10] == 0 ? 24 : 16; /* general: hash, key, value; else key, value */
	}
	for (int64_t i = 0; i < n && i < 64; i++) {
		uintptr_t e[3];
		char key[16];
		if (py_rd(e, entries + (uintptr_t)i * esz, esz, 1))
			return -1;
		uintptr_t k = esz == 24 ? e[1] : e[0];
		if (k && py_str(k, key, sizeof(key), 1) > 0 && !strcmp(key, want)) {
			*value = esz == 24 ? e[2] : e[1];
			return (int)i;
		}
	}
	return -1;
}

/* Attribute want of the dict object at dict (values at values_off in its
 * split values). */
static uintptr_t py_dict_get(uintptr_t dict, const char *want, uintptr_t values_off)
{
	uintptr_t keys, values, v = 0;
	if (!dict || py_ptr(&keys, dict + 32, 1) || py_ptr(&values, dict + 40, 1))
		return 0;
	int i = py_keys_find(keys, want, &v);
	if (i < 0)
		return 0;
	if (values && py_ptr(&v, values + values_off + (uintptr_t)i * 8, 1))
		return 0;
	return v;
}

/* Attribute want of the instance at obj. */
static uintptr_t py_attr(uintptr_t obj, const char *want)
{
	const struct py_layout *L = &py.L;
	uintptr_t type, flags, dict = 0, values = 0, keys, v = 0;
	if (py_ptr(&type, obj + 8, 1) || py_ptr(&flags, type + (uintptr_t)L->tp_flags, 1))
		return 0;
	if (L->attrs == 10) {
		intptr_t off;
		if (py_ptr((uintptr_t *)&off, type + (uintptr_t)L->tp_dictoffset, 1) || off <= 0 ||
		    py_ptr(&dict, obj + (uintptr_t)off, 1))
			return 0;
		return py_dict_get(dict, want, 0);
	}
	if (!(flags & 16)) /* Py_TPFLAGS_MANAGED_DICT */
		return 0;
	uintptr_t values_off = 0;
	if (L->attrs == 11) { /* values at obj - 4 words, else the dict at - 3 */
		if (py_ptr(&values, obj - 32, 1) || (!values && py_ptr(&dict, obj - 24, 1)))
			return 0;
	} else if (L->attrs == 12) { /* one word at - 3: the values (odd) or the dict */
		uintptr_t dv;
		if (py_ptr(&dv, obj - 24, 1))
			return 0;
		if (dv & 1) /* stored as the values' address less one */
			values = dv + 1;
		else
			dict = dv;
	} else { /* 13: inline values after the object while valid, else the dict */
		uintptr_t basic;
		unsigned char hdr[4];
		values_off = 8;
		if (py_ptr(&basic, type + (uintptr_t)L->tp_basicsize, 1))
			return 0;
		if ((flags & 4) && py_rd(hdr, obj + basic, 4, 1) == 0 && hdr[3])
			values = obj + basic;
		else if (py_ptr(&dict, obj - 24, 1))
			return 0;
	}
	if (!values)
		return py_dict_get(dict, want, values_off);
	if (py_ptr(&keys, type + (uintptr_t)L->ht_cached_keys, 1) || !keys)
		return 0;
	int i = py_keys_find(keys, want, &v);
	if (i < 0 || py_ptr(&v, values + values_off + (uintptr_t)i * 8, 1))
		return 0;
	return v;
}

/* The name of the threading.Thread this thread state runs, into out: its
 * length; 0 when the thread runs no Python yet (ask again), -1 when it is
 * no threading thread or the name cannot be read. */
static int py_thread_name(uintptr_t ts, char *out, size_t cap)
{
	const struct py_layout *L = &py.L;
	uintptr_t f = py_top(ts, 1);
	unsigned seen = 0;
	for (unsigned steps = 0; f && steps < PY_STEPS; steps++) {
		uintptr_t code, back, name, file, self;
		int64_t idx;
		int show = py_frame(f, &code, &idx, &back, 1);
		if (show < 0)
			return -1;
		char fn[32], path[PY_NAME];
		if (show && py_ptr(&name, code + (uintptr_t)L->co_name, 1) == 0 &&
		    py_str(name, fn, sizeof(fn), 1) > 0 && !strcmp(fn, "_bootstrap_inner") &&
		    py_ptr(&file, code + (uintptr_t)L->co_filename, 1) == 0 &&
		    py_str(file, path, sizeof(path), 1) > 12 &&
		    !strcmp(path + strlen(path) - 12, "threading.py")) {
			if (py_ptr(&self, f + (uintptr_t)L->fr_locals, 1) || !self)
				return -1;
			uintptr_t v = py_attr(self, "_name");
			return v ? py_str(v, out, cap, 1) : -1;
		}
		f = back;
		seen++;
	}
	return seen ? -1 : 0;
}

void lp_py_holder(struct lp_py_wait *w, const void *cond)
{
	*w = (struct lp_py_wait){0};
	if (__builtin_expect(!py.runtime, 1) || py.status != LP_PY_READ)
		return;
	int saved = errno;
	uintptr_t ts = py_self();
	if (ts && py_gil && (uintptr_t)cond == py_gil + 32)
		py_holder(w, ts);
	errno = saved;
}

static void py_note(void)
{
	if (__atomic_exchange_n(&py.noted, 1, __ATOMIC_RELAXED))
		return;
	struct lp_rec_py_info *r = lp_rec_begin(LP_REC_PY_INFO, 0, sizeof(*r));
	if (!r)
		return;
	r->version = py.version;
	r->status = py.status;
	lp_rec_commit();
}

void lp_py_frames(struct lp_py_wait *w)
{
	if (__builtin_expect(!py.runtime, 1))
		return;
	int saved = errno;
	if (!py.noted)
		py_note();
	uintptr_t ts = py.status == LP_PY_READ ? py_self() : 0;
	if (ts) {
		char text[PY_TEXT];
		size_t len = 0;
		int safe = !__atomic_load_n(&py.checked, __ATOMIC_RELAXED);
		uintptr_t top = py_top(ts, safe);
		uint64_t key = safe ? 0 : py_key(top);
		uint64_t *slot = &py_cache[key % PY_CACHE],
			 hit = __atomic_load_n(slot, __ATOMIC_RELAXED);
		int n = 0;
		if (key && hit >> 24 == key >> 24) {
			w->frames = (uint32_t)(hit & 0xffffff);
		} else if ((n = py_walk(top, PY_DEPTH, text, sizeof(text), &len, safe)) > 0) {
			if (safe)
				__atomic_store_n(&py.checked, 1, __ATOMIC_RELAXED);
			w->frames = lp_intern_string(text, len - 1);
			if (key && w->frames && w->frames < (1u << 24))
				__atomic_store_n(slot, (key >> 24) << 24 | w->frames,
						 __ATOMIC_RELAXED);
		} else if (n < 0 && safe) {
			py.status = LP_PY_CHECK;
			py.noted = 0;
			py_note();
		}
	}
	if (ts && py_name_due) { /* once per thread state */
		char name[64];
		int n = py_thread_name(ts, name, sizeof(name));
		py_name_due = n == 0;
		if (n > 0)
			lp_pre_thread_name(lp_tid(), name);
	}
	if (w->h_code) { /* the holder's frame, read before the wait */
		char text[2 * PY_NAME + 32];
		size_t len = 0;
		if (py_emit(w->h_code, w->h_idx, 1, text, sizeof(text), &len, 1) == 0)
			w->holder_frame = lp_intern_string(text, len - 1);
		w->h_code = 0;
	}
	errno = saved;
}

void lp_py_write(const struct lp_py_wait *w, uint64_t start)
{
	if (!w->frames && !w->holder_tid && !w->holder_frame)
		return;
	struct lp_rec_py_wait *r = lp_rec_begin(LP_REC_PY_WAIT, 0, sizeof(*r));
	if (!r)
		return;
	r->start = start;
	r->frames = w->frames;
	r->holder_tid = w->holder_tid;
	r->holder_frame = w->holder_frame;
	r->pad = 0;
	lp_rec_commit();
}

/* PY_VERSION_HEX: Py_Version (3.11+), else parsed from Py_GetVersion(). */
static uint32_t py_version(void)
{
	const unsigned long *v = dlsym(RTLD_DEFAULT, "Py_Version");
	if (v)
		return (uint32_t)*v;
	const char *(*get)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
	unsigned major = 0, minor = 0, micro = 0;
	if (!get || sscanf(get(), "%u.%u.%u", &major, &minor, &micro) < 2)
		return 0;
	return major << 24 | minor << 16 | micro << 8;
}

/* 3.13: the layout from _Py_DebugOffsets, when its cookie and version are
 * there; str's UTF-8 cache is not in it (non-ASCII names: no frame). */
static int py_layout_313(void)
{
	struct py_debug_offsets d;
	if (py_rd(&d, py.runtime, sizeof(d), 1) || memcmp(d.cookie, "xdebugpy", 8) ||
	    (d.version >> 16) != (py.version >> 16) || d.free_threaded)
		return -1;
	struct py_layout *L = &py.L;
	*L = (struct py_layout){.ts_interp = (int)d.ts_interp,
				.ts_thread_id = (int)d.ts_thread_id,
				.ts_native_tid = (int)d.ts_native_thread_id,
				.ts_frame = (int)d.ts_current_frame,
				.ts_cframe = 0,
				.fr_back = (int)d.fr_previous,
				.fr_code = (int)d.fr_executable,
				.fr_instr = (int)d.fr_instr_ptr,
				.fr_owner = (int)d.fr_owner,
				.lasti_int = 0,
				.co_filename = (int)d.co_filename,
				.co_name = (int)d.co_name,
				.co_firstlineno = (int)d.co_firstlineno,
				.co_linetable = (int)d.co_linetable,
				.co_code = (int)d.co_code_adaptive,
				.str_state = (int)d.un_state,
				.str_length = (int)d.un_length,
				.str_ascii_size = (int)d.un_ascii_size,
				.str_compact_size = (int)d.un_ascii_size + 16,
				.gil_in_runtime = -1,
				.interp_gil = (int)d.is_ceval_gil,
				.loc_table = 1,
				.fr_locals = (int)d.fr_localsplus,
				.tp_flags = 168,
				.tp_basicsize = 32,
				.tp_dictoffset = 288,
				.ht_cached_keys = 880,
				.attrs = 13};
	/* the fixed-size reads of py_emit, py_walk and py_str */
	if (L->co_linetable + 8 > 160 || L->fr_owner + 1 > 104 || L->str_ascii_size > 80 ||
	    L->co_filename + 8 > L->co_linetable + 8 || L->co_name + 8 > L->co_linetable + 8 ||
	    L->co_firstlineno + 4 > L->co_linetable + 8)
		return -1;
	return 0;
}

void lp_py_probe(void)
{
	uintptr_t rt = (uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime");
	if (!rt)
		return;
	py.pid = getpid();
	pthread_atfork(NULL, NULL, py_forked);
	py.this_ts = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	py.code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	py.str_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	py.bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
	py.frame_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyFrame_Type");
	py.version = py_version();
#ifdef LATPROF_TEST_PY_VERSION
	py.version = LATPROF_TEST_PY_VERSION; /* a test build: a version latprof does not know */
#endif
	py.runtime = rt;
	py.status = LP_PY_UNKNOWN;
	if (!py.this_ts || !py.code_type || !py.str_type || !py.bytes_type)
		return;
	unsigned char probe[8];
	int ok = 1;
	switch (py.version >> 16) {
	case 0x030a:
		py.L = py_310;
		break;
	case 0x030b:
		py.L = py_311;
		break;
	case 0x030c:
		py.L = py_312;
		break;
	case 0x030d:
		ok = py_rd(probe, rt, sizeof(probe), 1) == 0;
		if (ok && py_layout_313())
			return;
		break;
	default:
		return;
	}
	if (!ok || py_rd(probe, rt, sizeof(probe), 1)) {
		py.status = LP_PY_NOREAD;
		return;
	}
	py.status = LP_PY_READ;
}
