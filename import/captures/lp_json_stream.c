/* SPDX-License-Identifier: MIT */
/*
 * Chrome-trace JSON, streamed (lp_json_stream.h). Why yajl: it is a true
 * SAX parser (callbacks per token, input in pieces of any size), so memory
 * stays bounded by the largest single event however large the trace is;
 * json-c, jansson and cJSON build the whole document tree (several times
 * the file size for a multi-GB trace), and simdjson's Debian package is
 * C++ and needs the document in memory too.
 */
#define _GNU_SOURCE
#include "lp_json_stream.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define LP_JMAXDEPTH 64

/* ---- flattened objects ---------------------------------------------------------- */

/* FNV-1a of a lowercased path, one byte at a time as it is written. */
#define LP_JHASH_SEED 2166136261u
static uint32_t jhash_byte(uint32_t h, char c)
{
	return (h ^ (unsigned char)c) * 16777619u;
}

/* tolower() of the C locale (latprof never calls setlocale), without a
 * call to find the locale's table per byte. */
static char jlower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

void lp_jkey_init(struct lp_jkey *k, const char *path)
{
	size_t n = 0;
	k->hash = LP_JHASH_SEED;
	for (; path[n] && n < sizeof(k->path) - 1; n++) {
		k->path[n] = jlower(path[n]);
		k->hash = jhash_byte(k->hash, k->path[n]);
	}
	k->path[n] = 0;
}

/* Paths are stored lowercased with their hash, and indexed by it (jstore):
 * a lookup probes the slots from its hash, not every field. */
const struct lp_jfield *lp_jobj_find(const struct lp_jobj *o, const struct lp_jkey *k)
{
	for (unsigned i = k->hash & (LP_JOBJ_SLOTS - 1); o->slot[i];
	     i = (i + 1) & (LP_JOBJ_SLOTS - 1)) {
		const struct lp_jfield *f = &o->f[o->slot[i] - 1];
		if (f->hash == k->hash && !strcmp(f->path, k->path))
			return f;
	}
	return NULL;
}

const struct lp_jfield *lp_jobj_get(const struct lp_jobj *o, const char *path)
{
	struct lp_jkey k;
	lp_jkey_init(&k, path);
	return lp_jobj_find(o, &k);
}

static int64_t jint_slow(const struct lp_jfield *f, int64_t dflt)
{
	char *end;
	errno = 0;
	long long v = strtoll(f->val, &end, 10);
	if (errno || end == f->val)
		return dflt;
	if (*end == '.' || *end == 'e' || *end == 'E') {
		double d = strtod(f->val, NULL);
		return d > -9.2e18 && d < 9.2e18 ? (int64_t)d : dflt;
	}
	return (int64_t)v;
}

int64_t lp_jfield_int(const struct lp_jfield *f, int64_t dflt)
{
	if (!f || (f->type != LP_JNUM && f->type != LP_JSTR) || !f->val[0])
		return dflt;
	/* The usual value, up to 18 plain digits, read here; anything else
	 * (signs, spaces, fractions, exponents, overflow) by strtoll/strtod. */
	const char *p = f->val + (f->val[0] == '-');
	int64_t v = 0;
	int nd = 0;
	for (; *p >= '0' && *p <= '9' && nd < 18; p++, nd++)
		v = v * 10 + (*p - '0');
	if (nd && !*p)
		return f->val[0] == '-' ? -v : v;
	return jint_slow(f, dflt);
}

int64_t lp_jobj_int(const struct lp_jobj *o, const char *path, int64_t dflt)
{
	return lp_jfield_int(lp_jobj_get(o, path), dflt);
}

int lp_json_us_to_ns(const char *s, int64_t *ns)
{
	const char *p = s;
	int neg = *p == '-';
	p += neg;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	if (strpbrk(p, "eE")) {
		char *end;
		double d = strtod(s, &end) * 1000.0;
		if (*end || !(d > -9.2e18 && d < 9.2e18))
			return -EINVAL;
		*ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
		return 0;
	}
	/* integer microseconds, then up to three decimals of nanoseconds; the
	 * fourth decimal rounds. Doubles would lose ns at epoch-sized values. */
	int64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10 / 1000)
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	v *= 1000;
	if (*p == '.') {
		p++;
		int64_t scale = 100;
		for (; *p >= '0' && *p <= '9' && scale; p++, scale /= 10)
			v += (*p - '0') * scale;
		if (*p >= '5' && *p <= '9')
			v++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return -EINVAL;
	*ns = neg ? -v : v;
	return 0;
}

/* ---- parser state ------------------------------------------------------------------ */

/* A value's path inside its element ("args.grid[1]", lowercased) is built
 * as the parser descends, not per value: each level inside the element
 * keeps where its component ends in jparse.path and the path's hash up to
 * there, set when the level's key (maps) or index (arrays) changes. A value
 * then costs one copy of the path, and no pass over it. */
#define LP_JPATH_MAX 160

struct jstate {
	uint32_t hash; /* FNV-1a of path[0, off) */
	uint16_t off;
	uint8_t ok; /* 0: too deep or long to keep (tensor shapes, call stacks) */
};

struct jlevel {
	int is_array;
	long index;	  /* arrays: next element's index */
	size_t klen;	  /* strlen(key) */
	char key[64];	  /* depth 1 (top-level keys): the key whose value comes next */
	struct jstate st; /* inside an element: the path up to this level's component */
};

struct jparse {
	const struct lp_jstream_ops *ops;
	void *ctx;
	int depth; /* open containers */
	struct jlevel lv[LP_JMAXDEPTH];
	int elem_depth; /* depth of the element being collected, 0 = none */
	int which;	/* 0 traceEvents, 1 deviceProperties */
	int rc;		/* a callback's error */
	int cut;	/* the next string yajl gives was cut (jfeed) */
	char path[LP_JPATH_MAX];
	struct lp_jobj obj;
};

static struct jlevel *jtop(struct jparse *p)
{
	return p->depth > 0 && p->depth <= LP_JMAXDEPTH ? &p->lv[p->depth - 1] : NULL;
}

/* Levels elem_depth .. elem_depth + 2 name values; deeper ones are dropped. */
static int jin_path(const struct jparse *p, int depth)
{
	return p->elem_depth && depth >= p->elem_depth && depth - p->elem_depth <= 2;
}

/* The state before level depth's component: the parent's, or the empty
 * path for the element itself. */
static struct jstate jparent_state(const struct jparse *p, int depth)
{
	if (depth == p->elem_depth)
		return (struct jstate){LP_JHASH_SEED, 0, 1};
	return p->lv[depth - 2].st;
}

/* Appends "[index]" (arrays) or ".key" (maps; no dot first) to the parent's
 * path: the layout and limits the lookups' keys are written in. */
static void jcomponent(struct jparse *p, int depth, const char *key, size_t klen)
{
	struct jlevel *l = &p->lv[depth - 1];
	struct jstate s = jparent_state(p, depth);
	size_t off = s.off;
	char *buf = p->path;
	if (!s.ok) {
		l->st = s;
		return;
	}
	if (l->is_array) {
		if (l->index >= 3 || off + 4 > LP_JPATH_MAX) { /* grid, block; not shapes */
			l->st.ok = 0;
			return;
		}
		buf[off++] = '[';
		buf[off++] = (char)('0' + l->index);
		buf[off++] = ']';
		s.hash = jhash_byte(jhash_byte(jhash_byte(s.hash, '['), buf[off - 2]), ']');
	} else {
		if (off + klen + 2 > LP_JPATH_MAX) {
			l->st.ok = 0;
			return;
		}
		if (off) {
			buf[off++] = '.';
			s.hash = jhash_byte(s.hash, '.');
		}
		for (size_t i = 0; i < klen; i++) {
			buf[off++] = jlower(key[i]);
			s.hash = jhash_byte(s.hash, buf[off - 1]);
		}
	}
	s.off = (uint16_t)off;
	l->st = s;
}

static const char *jarena(struct lp_jobj *o, const char *s, size_t len)
{
	if (o->used + len + 1 > sizeof(o->arena)) {
		o->truncated = 1;
		return NULL;
	}
	char *d = o->arena + o->used;
	memcpy(d, s, len);
	d[len] = 0;
	o->used += len + 1;
	return d;
}

void lp_jobj_clear(struct lp_jobj *o)
{
	o->n = 0;
	o->used = 0;
	o->truncated = 0;
	memset(o->slot, 0, sizeof(o->slot));
}

/* The field gets the first free slot of the lookup table (lp_jobj_find)
 * from its hash on, so that of two equal paths the first is found first. */
void lp_jobj_add(struct lp_jobj *o, const char *path, const char *val, enum lp_jtype type,
		 uint32_t hash)
{
	assert(o->n < LP_JOBJ_MAXF);
	unsigned i = hash & (LP_JOBJ_SLOTS - 1);
	while (o->slot[i])
		i = (i + 1) & (LP_JOBJ_SLOTS - 1);
	o->slot[i] = (uint8_t)(o->n + 1);
	o->f[o->n++] = (struct lp_jfield){path, val, type, hash};
}

static void jstore(struct jparse *p, enum lp_jtype type, const char *v, size_t len)
{
	struct lp_jobj *o = &p->obj;
	if (!jin_path(p, p->depth))
		return;
	struct jstate s = p->lv[p->depth - 1].st;
	if (!s.ok)
		return;
	if (o->n == LP_JOBJ_MAXF) {
		o->truncated = 1;
		return;
	}
	const char *ps = jarena(o, p->path, s.off);
	const char *vs = ps ? jarena(o, v, len) : NULL;
	if (vs)
		lp_jobj_add(o, ps, vs, type, s.hash);
}

/* After a value: arrays count it, and an array in an element names its
 * next value. */
static void jnext(struct jparse *p)
{
	struct jlevel *l = jtop(p);
	if (l && l->is_array) {
		l->index++;
		if (jin_path(p, p->depth))
			jcomponent(p, p->depth, NULL, 0);
	}
}

/* A string that jfeed cut: its element holds less than the input. */
static void jcut_seen(struct jparse *p)
{
	if (p->cut && p->elem_depth)
		p->obj.truncated = 1;
	p->cut = 0;
}

static int jscalar(struct jparse *p, enum lp_jtype type, const char *v, size_t len)
{
	if (type == LP_JSTR)
		jcut_seen(p);
	if (p->elem_depth && p->depth >= p->elem_depth) {
		jstore(p, type, v, len);
	} else if (p->depth == 1 && !p->lv[0].is_array && p->ops->top) {
		char buf[256];
		size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
		memcpy(buf, v, n);
		buf[n] = 0;
		p->rc = p->ops->top(p->ctx, p->lv[0].key, buf, type);
	}
	jnext(p);
	return p->rc == 0;
}

static int jnull(void *ctx)
{
	return jscalar(ctx, LP_JNULL, "", 0);
}

static int jbool(void *ctx, int v)
{
	return jscalar(ctx, LP_JBOOL, v ? "true" : "false", v ? 4 : 5);
}

static int jnumber(void *ctx, const char *s, size_t len)
{
	return jscalar(ctx, LP_JNUM, s, len);
}

static int jstring(void *ctx, const unsigned char *s, size_t len)
{
	return jscalar(ctx, LP_JSTR, (const char *)s, len);
}

static int jkey(void *ctx, const unsigned char *k, size_t len)
{
	struct jparse *p = ctx;
	struct jlevel *l = jtop(p);
	jcut_seen(p);
	if (!l)
		return 1;
	/* keys are kept to 63 bytes, in paths as at the top */
	size_t n = len < sizeof(l->key) - 1 ? len : sizeof(l->key) - 1;
	if (jin_path(p, p->depth)) {
		jcomponent(p, p->depth, (const char *)k, n);
	} else if (p->depth == 1) {
		memcpy(l->key, k, n);
		l->key[n] = 0;
		l->klen = n;
	}
	return 1;
}

/* Is the container opening now an element to collect? */
static void jmaybe_element(struct jparse *p)
{
	if (p->elem_depth || p->depth < 2)
		return;
	struct jlevel *parent = &p->lv[p->depth - 2];
	if (!parent->is_array)
		return;
	if (p->depth == 2 && p->lv[0].is_array) { /* JSON Array Format: [ {...}, ... ] */
		p->which = 0;
	} else if (p->depth == 3 && !p->lv[0].is_array) {
		const char *k = p->lv[0].key;
		if (!strcmp(k, "traceEvents"))
			p->which = 0;
		else if (!strcmp(k, "deviceProperties"))
			p->which = 1;
		else
			return;
	} else {
		return;
	}
	p->elem_depth = p->depth;
	lp_jobj_clear(&p->obj);
}

static int jopen(struct jparse *p, int is_array)
{
	p->depth++;
	if (p->depth <= LP_JMAXDEPTH) {
		p->lv[p->depth - 1] = (struct jlevel){.is_array = is_array};
		if (!is_array)
			jmaybe_element(p);
		else if (jin_path(p, p->depth))
			jcomponent(p, p->depth, NULL, 0);
	}
	return 1;
}

static int jclose(struct jparse *p)
{
	if (p->elem_depth && p->depth == p->elem_depth) {
		p->elem_depth = 0;
		if (p->ops->element)
			p->rc = p->ops->element(p->ctx, p->which, &p->obj);
	}
	p->depth--;
	jnext(p);
	return p->rc == 0;
}

static int jstart_map(void *ctx)
{
	return jopen(ctx, 0);
}

static int jend_map(void *ctx)
{
	return jclose(ctx);
}

static int jstart_array(void *ctx)
{
	return jopen(ctx, 1);
}

static int jend_array(void *ctx)
{
	return jclose(ctx);
}

static const yajl_callbacks lp_jcallbacks = {
    .yajl_null = jnull,
    .yajl_boolean = jbool,
    .yajl_number = jnumber,
    .yajl_string = jstring,
    .yajl_start_map = jstart_map,
    .yajl_map_key = jkey,
    .yajl_end_map = jend_map,
    .yajl_start_array = jstart_array,
    .yajl_end_array = jend_array,
};

/* ---- feeding ---------------------------------------------------------------------- */

/* Where the input is, token-wise, between two pieces: yajl keeps a token
 * that spans pieces in a buffer and lexes it again from its first byte with
 * each new piece, so a string of n bytes would cost n * n / piece. jfeed
 * gives yajl at most LP_JSTR_KEEP bytes of any string and scans the rest
 * here, once; numbers, the other unbounded token, are bounded by
 * LP_JNUM_MAX. */
struct jlex {
	uint8_t in_str;	 /* inside a string */
	uint8_t esc;	 /* inside an escape: jesc_byte */
	uint8_t cutting; /* the rest of this string is being dropped */
	size_t len;	 /* raw bytes of this string so far (given to yajl) */
	size_t numlen;	 /* number characters in a row outside strings */
};

struct jreader {
	struct jparse *p;
	yajl_handle h;
	uint64_t fed;  /* JSON bytes read before the piece yajl has now */
	uint64_t cut;  /* strings cut to LP_JSTR_KEEP bytes */
	size_t num_at; /* jskip_out's refusal: where the number starts in the piece */
	struct jlex lex;
	char *err;
	size_t errlen;
};

static int jfail(struct jreader *r, const unsigned char *buf, size_t len)
{
	if (r->p->rc)
		return r->p->rc;
	unsigned char *msg = yajl_get_error(r->h, 0, buf, len);
	size_t at = buf ? yajl_get_bytes_consumed(r->h) : 0;
	snprintf(r->err, r->errlen, "invalid JSON near byte %llu: %s",
		 (unsigned long long)(r->fed + at), msg ? (const char *)msg : "parse error");
	/* yajl's message ends with a newline: one line. */
	char *nl = strchr(r->err, '\n');
	if (nl)
		*nl = 0;
	if (msg)
		yajl_free_error(r->h, msg);
	return -EINVAL;
}

static int jbad(struct jreader *r, uint64_t at, const char *what)
{
	snprintf(r->err, r->errlen, "invalid JSON near byte %llu: %s", (unsigned long long)at,
		 what);
	return -EINVAL;
}

/* buf[from, to) to yajl; base: input offset of buf. */
static int jparse_piece(struct jreader *r, const unsigned char *buf, size_t from, size_t to,
			uint64_t base)
{
	if (from == to)
		return 0;
	r->fed = base + from;
	if (yajl_parse(r->h, buf + from, to - from) != yajl_status_ok)
		return jfail(r, buf + from, to - from);
	return 0;
}

/* One byte of an escape (x->esc > 0): the letter after the backslash
 * (esc 1), or a hex digit of \uXXXX (esc 5 to 2: digits left + 1). Returns
 * 0, or -1 where JSON has no such escape. */
static int jesc_byte(struct jlex *x, unsigned char c)
{
	if (x->esc == 1) {
		x->esc = c == 'u' ? 5 : 0;
		return c && strchr("u\"\\/bfnrt", c) ? 0 : -1;
	}
	x->esc = x->esc == 2 ? 0 : (uint8_t)(x->esc - 1);
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') ? 0 : -1;
}

/* The rest of a cut string, from buf[i]: dropped, but checked as yajl
 * would have (no control bytes, valid escapes). The closing quote's
 * offset, len when the string goes on; -1 with the error set. */
static long jskip_cut(struct jreader *r, const unsigned char *buf, size_t i, size_t len,
		      uint64_t base)
{
	struct jlex *x = &r->lex;
	for (; i < len; i++) {
		unsigned char c = buf[i];
		if (x->esc) {
			if (jesc_byte(x, c))
				return jbad(r, base + i, "invalid escape inside a string"), -1;
		} else if (c == '\\') {
			x->esc = 1;
		} else if (c == '"') {
			return (long)i;
		} else if (c < 0x20) {
			return jbad(r, base + i, "invalid character inside a string"), -1;
		}
	}
	return (long)len;
}

/* Outside strings: to the next quote, counting number characters. */
static long jskip_out(struct jreader *r, const unsigned char *buf, size_t i, size_t len,
		      uint64_t base)
{
	struct jlex *x = &r->lex;
	for (; i < len; i++) {
		unsigned char c = buf[i];
		if (c == '"')
			return (long)i;
		if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
		    c == 'E') {
			if (++x->numlen > LP_JNUM_MAX) {
				r->num_at = i + 1 >= x->numlen ? i + 1 - x->numlen : 0;
				return jbad(r, base + i, "a number of more than 4096 characters"),
				       -1;
			}
		} else {
			x->numlen = 0;
		}
	}
	return (long)len;
}

/* Inside a kept string, from buf[i]: to its closing quote (returned), or
 * to where it is to be cut (x->cutting set), or to len. */
static size_t jscan_kept(struct jlex *x, const unsigned char *buf, size_t i, size_t len)
{
	while (i < len) {
		if (x->esc) {
			/* yajl checks the escapes of kept text */
			(void)jesc_byte(x, buf[i]);
			x->len++;
			i++;
			continue;
		}
		size_t room = x->len < LP_JSTR_KEEP ? LP_JSTR_KEEP - x->len : 0;
		size_t lim = len - i > room ? i + room : len, j = i;
		while (j < lim && buf[j] != '"' && buf[j] != '\\')
			j++;
		x->len += j - i;
		i = j;
		if (i == len || buf[i] == '"')
			return i;
		if (buf[i] == '\\') {
			x->esc = 1;
			x->len++;
			i++;
			continue;
		}
		/* at the cap: cut before a character, not inside one (at most 3
		 * bytes more of a UTF-8 sequence) */
		if ((buf[i] & 0xc0) != 0x80 || x->len >= LP_JSTR_KEEP + 3) {
			x->cutting = 1;
			return i;
		}
		x->len++;
		i++;
	}
	return i;
}

/* One piece of input: to yajl, less what strings hold beyond LP_JSTR_KEEP. */
static int jfeed(struct jreader *r, const unsigned char *buf, size_t len)
{
	struct jlex *x = &r->lex;
	uint64_t base = r->fed;
	size_t i = 0, from = 0;
	int rc = 0;
	while (rc == 0 && i < len) {
		long at;
		if (!x->in_str) {
			if ((at = jskip_out(r, buf, i, len, base)) < 0) {
				/* the elements before the number first, as yajl
				 * would have given them */
				rc = jparse_piece(r, buf, from, r->num_at > from ? r->num_at : from,
						  base);
				return rc ? rc : -EINVAL;
			}
			i = (size_t)at;
			if (i < len) {
				*x = (struct jlex){.in_str = 1};
				i++;
			}
		} else if (x->cutting) {
			if ((at = jskip_cut(r, buf, i, len, base)) < 0)
				return -EINVAL;
			from = i = (size_t)at;
			if (i < len) { /* the closing quote, to yajl with what follows */
				*x = (struct jlex){0};
				r->p->cut = 1;
				i++;
			}
		} else {
			i = jscan_kept(x, buf, i, len);
			if (x->cutting) {
				rc = jparse_piece(r, buf, from, i, base);
				from = i;
				r->cut++;
			} else if (i < len) {
				x->in_str = 0;
				x->numlen = 0;
				i++;
			}
		}
	}
	if (rc == 0 && !x->cutting)
		rc = jparse_piece(r, buf, from, len, base);
	r->fed = base + len;
	return rc;
}

static int jend(struct jreader *r)
{
	if (yajl_complete_parse(r->h) != yajl_status_ok)
		return jfail(r, NULL, 0);
	if (r->fed == 0) {
		snprintf(r->err, r->errlen, "empty input: no JSON");
		return -EINVAL;
	}
	return 0;
}

static int jbegin(struct jreader *r, const struct lp_jstream_ops *ops, void *ctx, char *err,
		  size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->p = calloc(1, sizeof(*r->p));
	if (!r->p)
		return -ENOMEM;
	r->p->ops = ops;
	r->p->ctx = ctx;
	r->err = err;
	r->errlen = errlen;
	r->h = yajl_alloc(&lp_jcallbacks, NULL, r->p);
	if (!r->h) {
		free(r->p);
		return -ENOMEM;
	}
	/* Names may hold any bytes a program gave; the writers escape them. */
	yajl_config(r->h, yajl_dont_validate_strings, 1);
	return 0;
}

static void jfree(struct jreader *r)
{
	if (r->h)
		yajl_free(r->h);
	free(r->p);
}

int lp_jstream_read_mem(const uint8_t *data, size_t len, const struct lp_jstream_ops *ops,
			void *ctx, char *err, size_t errlen)
{
	struct jreader r;
	int rc = jbegin(&r, ops, ctx, err, errlen);
	if (rc)
		return rc;
	rc = jfeed(&r, data, len);
	rc = rc ? rc : jend(&r);
	if (rc == 0 && r.cut && ops->cut)
		ops->cut(ctx, r.cut);
	jfree(&r);
	return rc;
}

/* Inflate what arrived, feeding yajl; *member_end when a gzip member ended
 * with this input (more members may follow: concatenated gzip). */
static int jinflate(struct jreader *r, z_stream *z, unsigned char *out, size_t outlen,
		    int *member_end)
{
	for (;;) {
		z->next_out = out;
		z->avail_out = (uInt)outlen;
		int zr = inflate(z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			snprintf(r->err, r->errlen,
				 "damaged gzip data near compressed byte %lu: %s", z->total_in,
				 z->msg ? z->msg : "inflate failed");
			return -EINVAL;
		}
		int rc = jfeed(r, out, outlen - z->avail_out);
		if (rc)
			return rc;
		*member_end = zr == Z_STREAM_END;
		if (zr == Z_STREAM_END && z->avail_in) {
			if (inflateReset(z) != Z_OK)
				return -EINVAL;
			continue;
		}
		/* output full: more may be pending even with no input left */
		if (zr == Z_STREAM_END || zr == Z_BUF_ERROR || (z->avail_out && !z->avail_in))
			return 0;
	}
}

int lp_jstream_read_serial(const char *path, const struct lp_jstream_ops *ops, void *ctx,
			   char *sha256_hex, uint64_t *in_bytes, char *err, size_t errlen)
{
	enum { LP_CHUNK = 1 << 16 };
	struct jreader r;
	struct sha256_ctx sha;
	z_stream z = {0};
	unsigned char *in = malloc(LP_CHUNK), *out = malloc(4 * LP_CHUNK);
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0, gz = -1, member_end = 0, zinit = 0;
	ssize_t n = 0;
	err[0] = 0;
	if (fd < 0 || !in || !out) {
		rc = fd < 0 ? -errno : -ENOMEM;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		goto out;
	}
	if ((rc = jbegin(&r, ops, ctx, err, errlen)))
		goto out;
	sha256_init(&sha);
	while (rc == 0 && (n = read(fd, in, LP_CHUNK)) > 0) {
		if (ops->raw && (rc = ops->raw(ctx, in, (size_t)n)))
			break;
		if (!ops->raw)
			sha256_update(&sha, (size_t)n, in);
		if (gz < 0) {
			gz = n >= 2 && in[0] == 0x1f && in[1] == 0x8b;
			if (gz && inflateInit2(&z, 15 + 16) != Z_OK) {
				rc = -ENOMEM;
				break;
			}
			zinit = gz;
		}
		if (!gz) {
			rc = jfeed(&r, in, (size_t)n);
			continue;
		}
		z.next_in = in;
		z.avail_in = (uInt)n;
		rc = jinflate(&r, &z, out, 4 * LP_CHUNK, &member_end);
	}
	if (rc == 0 && n < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
	}
	if (rc == 0 && gz == 1 && !member_end) {
		snprintf(err, errlen, "truncated gzip stream (%lu compressed bytes read)",
			 z.total_in);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = jend(&r);
	if (rc == 0 && r.cut && ops->cut)
		ops->cut(ctx, r.cut);
	if (in_bytes)
		*in_bytes = r.fed;
	if (sha256_hex && !ops->raw) {
		uint8_t d[SHA256_DIGEST_SIZE];
		sha256_digest(&sha, sizeof(d), d);
		for (int i = 0; i < 32; i++)
			snprintf(sha256_hex + 2 * i, 3, "%02x", d[i]);
	}
	jfree(&r);
out:
	if (zinit)
		inflateEnd(&z);
	if (fd >= 0)
		close(fd);
	free(in);
	free(out);
	return rc;
}
