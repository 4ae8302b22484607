/* SPDX-License-Identifier: MIT */
/*
 * lp_jstream_read on two threads (lp_json_stream.h). Reading, inflating,
 * hashing and tokenizing a trace take about as long as mapping its events
 * to rows: a reader thread runs lp_jstream_read_serial with callbacks that
 * pack each flattened element into a batch, and the caller's thread unpacks
 * the batches and runs the caller's callbacks, so both cores work. The
 * reader limits (yajl alone tokenizes ~230 MiB/s): it passes the file's
 * bytes on for the caller's thread to hash. Memory
 * stays bounded: LP_JPIPE_BATCHES batches of LP_JPIPE_BATCH bytes, each
 * handed over whole (one lock per thousands of events, not per event).
 *
 * The results are those of one thread: every element and top-level value
 * reaches the callbacks in the order of the file; a callback's error stops
 * the reader and is returned as is; a read or parse error is returned after
 * the elements before it, as lp_jstream_read_serial does.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_json_stream.h"

#define LP_JPIPE_BATCH (1u << 20)
#define LP_JPIPE_BATCHES 4

/* A packed element: the header, n fields, then the arena's used bytes. */
enum { JREC_ELEMENT, JREC_TOP, JREC_RAW };

struct jrec {
	uint32_t size; /* of the whole record, a multiple of 8 */
	uint8_t kind;  /* JREC_TOP: field 0 is key = path, value; JREC_RAW: used bytes */
	uint8_t which; /* element: 0 traceEvents, 1 deviceProperties */
	uint16_t n;
	uint32_t truncated;
	uint32_t used;
};

struct jrfield {
	uint32_t path, val; /* offsets in the record's arena */
	uint32_t type, hash;
};

/* A record's worst case (every field, a full arena) fits a batch. */
_Static_assert(sizeof(struct jrec) + LP_JOBJ_MAXF * sizeof(struct jrfield) + LP_JOBJ_ARENA + 8 <=
		   LP_JPIPE_BATCH,
	       "a batch holds the largest element");

struct jbatch {
	size_t used;
	char *buf;
};

struct jpipe {
	const char *path;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	/* batches [tail, head) wait for the caller; head % N is being filled */
	unsigned head, tail;
	int done; /* the reader returned: rc, err, sha, bytes are final */
	int stop; /* the caller failed: the reader is to stop */
	struct jbatch b[LP_JPIPE_BATCHES];
	int rc;
	char err[512];
	uint64_t bytes;
	uint64_t cut; /* strings the reader cut (lp_jstream_ops.cut) */
};

/* ---- reader thread ---------------------------------------------------------------- */

/* Hands the batch being filled to the caller and, unless final, waits for
 * a free one to fill. -ECANCELED when the caller has stopped. */
static int jpipe_publish(struct jpipe *q, int final)
{
	pthread_mutex_lock(&q->mu);
	q->head++;
	q->done = final;
	pthread_cond_signal(&q->filled);
	while (!final && !q->stop && q->head - q->tail == LP_JPIPE_BATCHES)
		pthread_cond_wait(&q->freed, &q->mu);
	int stop = q->stop;
	pthread_mutex_unlock(&q->mu);
	/* The next batch is free only now, and only for a reader that goes on:
	 * after the last one, head % N may be a batch the caller has yet to
	 * run. */
	if (final || stop)
		return -ECANCELED;
	q->b[q->head % LP_JPIPE_BATCHES].used = 0;
	return 0;
}

/* One record: n fields whose path and val point into arena[0, used). */
static int jpipe_put(struct jpipe *q, const struct jrec *h, const struct lp_jfield *fields,
		     const char *arena)
{
	struct jbatch *b = &q->b[q->head % LP_JPIPE_BATCHES];
	size_t size =
	    (sizeof(*h) + (size_t)h->n * sizeof(struct jrfield) + h->used + 7) & ~(size_t)7;
	if (b->used + size > LP_JPIPE_BATCH) {
		int rc = jpipe_publish(q, 0);
		if (rc)
			return rc;
		b = &q->b[q->head % LP_JPIPE_BATCHES];
	}
	char *d = b->buf + b->used;
	struct jrfield *f = (struct jrfield *)(d + sizeof(*h));
	memcpy(d, h, sizeof(*h));
	((struct jrec *)d)->size = (uint32_t)size;
	for (int i = 0; i < h->n; i++) {
		/* the parser keeps every path and value in the arena */
		assert(fields[i].path >= arena && fields[i].val < arena + h->used);
		f[i] = (struct jrfield){(uint32_t)(fields[i].path - arena),
					(uint32_t)(fields[i].val - arena), (uint32_t)fields[i].type,
					fields[i].hash};
	}
	memcpy(f + h->n, arena, h->used);
	b->used += size;
	return 0;
}

static int jpipe_element(void *ctx, int which, const struct lp_jobj *o)
{
	struct jrec h = {
	    0, 0, (uint8_t)which, (uint16_t)o->n, (uint32_t)o->truncated, (uint32_t)o->used};
	return jpipe_put(ctx, &h, o->f, o->arena);
}

/* A top-level value as a one-field record whose path is its key. */
static int jpipe_top(void *ctx, const char *key, const char *val, enum lp_jtype type)
{
	char arena[512];
	size_t kl = strlen(key) + 1, vl = strlen(val) + 1;
	if (kl + vl > sizeof(arena))
		return -EINVAL; /* the parser keeps keys to 63 bytes, values to 255 */
	memcpy(arena, key, kl);
	memcpy(arena + kl, val, vl);
	struct lp_jfield f = {arena, arena + kl, type, 0};
	struct jrec h = {0, JREC_TOP, 0, 1, 0, (uint32_t)(kl + vl)};
	return jpipe_put(ctx, &h, &f, arena);
}

/* The file's bytes, for the caller's thread to hash: it waits for the
 * reader anyway, and the reader's thread is the one that limits. */
static int jpipe_raw(void *ctx, const uint8_t *buf, size_t len)
{
	struct jrec h = {0, JREC_RAW, 0, 0, 0, (uint32_t)len};
	return jpipe_put(ctx, &h, NULL, (const char *)buf);
}

/* Called at the reader's end: kept for the caller's thread. */
static void jpipe_cut(void *ctx, uint64_t strings)
{
	((struct jpipe *)ctx)->cut = strings;
}

static void *jpipe_reader(void *arg)
{
	static const struct lp_jstream_ops ops = {jpipe_element, jpipe_top, jpipe_raw, jpipe_cut};
	struct jpipe *q = arg;
	int rc = lp_jstream_read_serial(q->path, &ops, q, NULL, &q->bytes, q->err, sizeof(q->err));
	q->rc = rc; /* read by the caller once it sees done, under the lock */
	jpipe_publish(q, 1);
	return NULL;
}

/* ---- caller's thread ---------------------------------------------------------------- */

/* The batch's records, unpacked into o (its fields point into the batch),
 * to the caller's callbacks. */
static int jpipe_deliver(const struct jbatch *b, const struct lp_jstream_ops *ops, void *ctx,
			 struct lp_jobj *o, struct sha256_ctx *sha)
{
	int rc = 0;
	for (size_t at = 0; rc == 0 && at < b->used;) {
		const struct jrec *h = (const struct jrec *)(b->buf + at);
		const struct jrfield *f = (const struct jrfield *)(h + 1);
		const char *arena = (const char *)(f + h->n);
		at += h->size;
		if (h->kind == JREC_RAW) {
			sha256_update(sha, h->used, (const uint8_t *)arena);
			continue;
		}
		if (h->kind == JREC_TOP) {
			if (ops->top)
				rc = ops->top(ctx, arena + f[0].path, arena + f[0].val,
					      (enum lp_jtype)f[0].type);
			continue;
		}
		lp_jobj_clear(o);
		o->truncated = (int)h->truncated;
		o->used = h->used;
		for (int i = 0; i < h->n; i++)
			lp_jobj_add(o, arena + f[i].path, arena + f[i].val,
				    (enum lp_jtype)f[i].type, f[i].hash);
		if (ops->element)
			rc = ops->element(ctx, h->which, o);
	}
	return rc;
}

/* Runs the batches as they come; the first callback error stops the
 * reader. */
static int jpipe_consume(struct jpipe *q, const struct lp_jstream_ops *ops, void *ctx,
			 struct lp_jobj *o, struct sha256_ctx *sha)
{
	int rc = 0;
	for (;;) {
		pthread_mutex_lock(&q->mu);
		while (q->head == q->tail && !q->done)
			pthread_cond_wait(&q->filled, &q->mu);
		if (q->head == q->tail) {
			pthread_mutex_unlock(&q->mu);
			return 0;
		}
		struct jbatch *b = &q->b[q->tail % LP_JPIPE_BATCHES];
		pthread_mutex_unlock(&q->mu);
		rc = jpipe_deliver(b, ops, ctx, o, sha);
		pthread_mutex_lock(&q->mu);
		q->tail++;
		q->stop = rc != 0;
		pthread_cond_signal(&q->freed);
		pthread_mutex_unlock(&q->mu);
		if (rc)
			return rc;
	}
}

static void jpipe_free(struct jpipe *q)
{
	for (int i = 0; i < LP_JPIPE_BATCHES; i++)
		free(q->b[i].buf);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->filled);
	pthread_cond_destroy(&q->freed);
	free(q);
}

int lp_jstream_read(const char *path, const struct lp_jstream_ops *ops, void *ctx, char *sha256_hex,
		    uint64_t *in_bytes, char *err, size_t errlen)
{
	struct jpipe *q = calloc(1, sizeof(*q));
	struct lp_jobj *o = malloc(sizeof(*o));
	pthread_t th;
	int ok = q && o;
	if (q) {
		q->path = path;
		pthread_mutex_init(&q->mu, NULL);
		pthread_cond_init(&q->filled, NULL);
		pthread_cond_init(&q->freed, NULL);
	}
	for (int i = 0; ok && i < LP_JPIPE_BATCHES; i++)
		ok = (q->b[i].buf = malloc(LP_JPIPE_BATCH)) != NULL;
	if (!ok || pthread_create(&th, NULL, jpipe_reader, q)) {
		if (q)
			jpipe_free(q);
		free(o);
		return lp_jstream_read_serial(path, ops, ctx, sha256_hex, in_bytes, err, errlen);
	}
	struct sha256_ctx sha;
	sha256_init(&sha);
	int rc = jpipe_consume(q, ops, ctx, o, &sha);
	pthread_join(th, NULL);
	err[0] = 0;
	if (rc == 0 && (rc = q->rc))
		snprintf(err, errlen, "%s", q->err);
	if (rc == 0 && q->cut && ops->cut)
		ops->cut(ctx, q->cut);
	if (sha256_hex) {
		uint8_t d[SHA256_DIGEST_SIZE];
		sha256_digest(&sha, sizeof(d), d);
		for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
			snprintf(sha256_hex + 2 * i, 3, "%02x", d[i]);
	}
	if (in_bytes)
		*in_bytes = q->bytes;
	jpipe_free(q);
	free(o);
	return rc;
}
