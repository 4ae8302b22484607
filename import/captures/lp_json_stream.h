/* SPDX-License-Identifier: MIT */
/*
 * Streaming reader of Chrome-trace JSON (plain or gzip) in bounded memory:
 * yajl's SAX parser over zlib's inflate, fed 64 KiB at a time. The reader
 * never holds the document, only the element it is in: each object of the
 * top-level "traceEvents" and "deviceProperties" arrays is flattened to at
 * most LP_JOBJ_MAXF (path, value) fields ("name", "args.correlation",
 * "args.grid[1]") and handed to a callback; top-level scalars go to another.
 * The input's SHA-256 is computed on the way.
 */
#ifndef LP_JSON_STREAM_H
#define LP_JSON_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "lp_db.h" /* LP_JSTR_KEEP */

#define LP_JOBJ_MAXF 96
/* One string's kept length, LP_JSTR_KEEP (db/lp_db.h: the summary reports
 * it): the rest of a longer string is scanned, not kept; such an element is
 * marked truncated and the read counts the strings it cut
 * (lp_jstream_ops.cut). */
/* A number token longer than this is refused as input no profiler writes. */
#define LP_JNUM_MAX 4096
#define LP_JOBJ_ARENA 65536
#define LP_JOBJ_SLOTS 128 /* a power of two above LP_JOBJ_MAXF */

enum lp_jtype { LP_JNULL, LP_JBOOL, LP_JNUM, LP_JSTR };

struct lp_jfield {
	const char *path; /* in the arena */
	const char *val;  /* number text, string, "true"/"false", "" for null */
	enum lp_jtype type;
	uint32_t hash; /* of path (lp_jkey_init): lookups compare it before the text */
};

struct lp_jobj {
	struct lp_jfield f[LP_JOBJ_MAXF];
	int n;
	int truncated; /* fields or text dropped: the arena or table was full */
	size_t used;
	uint8_t slot[LP_JOBJ_SLOTS]; /* hash-indexed: field index + 1, 0 = free */
	char arena[LP_JOBJ_ARENA];
};

/* Empties o; adds a field (path lowercased, hash = its lp_jkey hash) whose
 * strings stay where they are: the parser's arena, or a reader's buffer. */
void lp_jobj_clear(struct lp_jobj *o);
void lp_jobj_add(struct lp_jobj *o, const char *path, const char *val, enum lp_jtype type,
		 uint32_t hash);

/* Field by path, compared without case (Kineto spelled "External id" and
 * "external id"; paths are kept lowercased); NULL when absent. */
const struct lp_jfield *lp_jobj_get(const struct lp_jobj *o, const char *path);
/* A path prepared once (lowercased, hashed) for the lookups of every
 * event: lp_jobj_get does the same work per call. */
struct lp_jkey {
	uint32_t hash;
	char path[160];
};
void lp_jkey_init(struct lp_jkey *k, const char *path);
const struct lp_jfield *lp_jobj_find(const struct lp_jobj *o, const struct lp_jkey *k);
/* Integer value of a numeric (or numeric string) field; dflt otherwise. */
int64_t lp_jobj_int(const struct lp_jobj *o, const char *path, int64_t dflt);
/* The same of a field already found (NULL: dflt). */
int64_t lp_jfield_int(const struct lp_jfield *f, int64_t dflt);
/* Decimal text of microseconds ("1712195495519689.25", "3e-3") -> integer
 * nanoseconds, exact for plain decimals. 0 on success, -EINVAL. */
int lp_json_us_to_ns(const char *s, int64_t *ns);

struct lp_jstream_ops {
	/* which: 0 = traceEvents element, 1 = deviceProperties element */
	int (*element)(void *ctx, int which, const struct lp_jobj *o);
	int (*top)(void *ctx, const char *key, const char *val, enum lp_jtype type);
	/* Optional: each piece of the file as read, before the elements in it;
	 * where set, the reader leaves the SHA-256 to it (sha256_hex is not
	 * written). */
	int (*raw)(void *ctx, const uint8_t *buf, size_t len);
	/* Optional: after a read without error that cut strings to
	 * LP_JSTR_KEEP bytes, how many (called once, from the caller's
	 * thread). */
	void (*cut)(void *ctx, uint64_t strings);
};

/*
 * Reads path to the end. 0; -EINVAL for a truncated gzip stream or invalid
 * JSON (err gets one sentence with the byte offset); a callback's negative
 * return stops the read and is returned as is; -errno for I/O. sha256_hex
 * (65 bytes) receives the hash of the file as read. in_bytes: JSON bytes
 * parsed (after inflating).
 *
 * Two threads (lp_json_pipe.c): one reads, inflates, hashes and parses,
 * the calling one runs the callbacks, in the order and with the results
 * of one thread; the callbacks are never called from the other thread.
 * Where no thread can be made, it reads as lp_jstream_read_serial does.
 */
int lp_jstream_read(const char *path, const struct lp_jstream_ops *ops, void *ctx, char *sha256_hex,
		    uint64_t *in_bytes, char *err, size_t errlen);

/* The same in the calling thread alone. */
int lp_jstream_read_serial(const char *path, const struct lp_jstream_ops *ops, void *ctx,
			   char *sha256_hex, uint64_t *in_bytes, char *err, size_t errlen);

/* The same over a buffer already in memory (fuzzing, tests); no hash. */
int lp_jstream_read_mem(const uint8_t *data, size_t len, const struct lp_jstream_ops *ops,
			void *ctx, char *err, size_t errlen);

#endif
