/* SPDX-License-Identifier: MIT */
/* Unit tests of the two-thread Kineto reader (import/captures/lp_json_pipe.c): over
 * plain and gzip traces of many batches, with a caller slow enough to fill
 * every batch, lp_jstream_read gives the callbacks the same elements and
 * top-level values in the same order as lp_jstream_read_serial, the same
 * SHA-256 and byte count; fields are found by path in the elements it
 * rebuilds; a callback's error stops it with that error; a parse error
 * comes after the elements before it, as one line. Strings longer than
 * LP_JSTR_KEEP are cut to it in both, at every offset of the input's pieces,
 * and counted the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "lp_check.h"
#include "lp_json_stream.h"

#define NEV 40000

struct seen {
	uint64_t hash; /* of every callback's arguments, in order */
	long elements, events, tops;
	long fail_at;	  /* element whose callback fails, -1 none */
	long slow_every;  /* sleep 1 ms every that many elements, 0 never */
	long bad_lookups; /* fields not found by path, or wrong */
	long names_cut;	  /* events whose name came cut, marked truncated */
	uint64_t cut;	  /* lp_jstream_ops.cut */
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	return mix(h, s, strlen(s) + 1);
}

static int on_element(void *ctx, int which, const struct lp_jobj *o)
{
	struct seen *s = ctx;
	s->hash = mix(s->hash, &which, sizeof(which));
	s->hash = mix(s->hash, &o->n, sizeof(o->n));
	s->hash = mix(s->hash, &o->truncated, sizeof(o->truncated));
	for (int i = 0; i < o->n; i++) {
		s->hash = mix_str(mix_str(s->hash, o->f[i].path), o->f[i].val);
		s->hash = mix(s->hash, &o->f[i].type, sizeof(o->f[i].type));
	}
	if (which == 0) {
		long i = (long)lp_jobj_int(o, "i", -1);
		const struct lp_jfield *name = lp_jobj_get(o, "name");
		size_t nlen = name ? strlen(name->val) : 0;
		if (i != s->events++ || lp_jobj_int(o, "args.grid[1]", -1) != 2 ||
		    lp_jobj_int(o, "ARGS.Shared Memory", -1) != i % 7 || !name ||
		    nlen > LP_JSTR_KEEP || (nlen == LP_JSTR_KEEP) != o->truncated)
			s->bad_lookups++;
		s->names_cut += nlen == LP_JSTR_KEEP && o->truncated;
	}
	if (s->slow_every && s->elements % s->slow_every == 0)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	if (s->elements++ == s->fail_at)
		return -ENOSPC;
	return 0;
}

static int on_top(void *ctx, const char *key, const char *val, enum lp_jtype type)
{
	struct seen *s = ctx;
	s->hash = mix_str(mix_str(s->hash, key), val);
	s->hash = mix(s->hash, &type, sizeof(type));
	s->tops++;
	return 0;
}

static void on_cut(void *ctx, uint64_t strings)
{
	((struct seen *)ctx)->cut = strings;
}

static const struct lp_jstream_ops ops = {.element = on_element, .top = on_top, .cut = on_cut};

/* Every LONG_EVERY-th event of a "long" trace has a name over LP_JSTR_KEEP. */
#define LONG_EVERY 400
#define LONG_PAD(i) (LP_JSTR_KEEP + 1 + (i) % 9973)

/* NEV events of 200 B to 800 B (names of varying length), so that records
 * end at every offset of a batch; top-level values before and after. With
 * long_names, every LONG_EVERY-th name is LONG_PAD bytes. */
static char *trace_text(size_t *len, int long_names)
{
	size_t cap =
		   (size_t)NEV * 1024 + 4096 + (long_names ? (size_t)NEV / LONG_EVERY * 44000 : 0),
	       n = 0;
	char *t = malloc(cap);
	if (!t)
		abort();
	n += (size_t)sprintf(t + n, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, "
				    "\"name\": \"GPU\"}],\n\"traceEvents\": [\n");
	for (int i = 0; i < NEV; i++) {
		int pad = long_names && i % LONG_EVERY == 0 ? LONG_PAD(i) : (i * 7919) % 600;
		n += (size_t)sprintf(t + n, "%s{\"ph\": \"X\", \"i\": %d, \"name\": \"",
				     i ? ",\n" : "", i);
		memset(t + n, 'a' + i % 26, (size_t)pad);
		n += (size_t)pad;
		n += (size_t)sprintf(t + n,
				     "\", \"args\": {\"grid\": [1, 2, 3], \"Shared Memory\": %d, "
				     "\"shape\": [[1, 2], [3]], \"ok\": true, \"none\": null}}",
				     i % 7);
	}
	n += (size_t)sprintf(t + n,
			     "\n],\n\"host_name\": \"node-1\", \"baseTimeNanoseconds\": 17}\n");
	*len = n;
	return t;
}

static void write_file(const char *path, const char *data, size_t len, int gz)
{
	if (gz) {
		gzFile f = gzopen(path, "wb1");
		if (!f || gzwrite(f, data, (unsigned)len) != (int)len || gzclose(f) != Z_OK)
			abort();
		return;
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		abort();
}

struct run {
	int rc;
	struct seen s;
	char sha[65], err[512];
	uint64_t bytes;
};

static struct run read_one(const char *path, int threaded, long fail_at, long slow_every)
{
	struct run r = {
	    .s = {.hash = 14695981039346656037ull, .fail_at = fail_at, .slow_every = slow_every}};
	r.rc = (threaded ? lp_jstream_read : lp_jstream_read_serial)(
	    path, &ops, &r.s, r.sha, &r.bytes, r.err, sizeof(r.err));
	return r;
}

static void same_as_serial(const char *what, const char *path, long fail_at, long slow_every)
{
	struct run a = read_one(path, 0, fail_at, 0), b = read_one(path, 1, fail_at, slow_every);
	CHECK(a.rc == b.rc && !strcmp(a.err, b.err), "%s: the same result (%d '%s') as one thread",
	      what, b.rc, b.err);
	CHECK(a.s.elements == b.s.elements && a.s.tops == b.s.tops && a.s.hash == b.s.hash &&
		  a.s.cut == b.s.cut && a.s.names_cut == b.s.names_cut,
	      "%s: the same %ld elements and %ld top-level values, in order (one thread: %ld, %ld)",
	      what, b.s.elements, b.s.tops, a.s.elements, a.s.tops);
	/* after an error the reader may have read further: no hash then */
	if (a.rc == 0)
		CHECK(!strcmp(a.sha, b.sha) && a.bytes == b.bytes,
		      "%s: the same SHA-256 and %llu bytes", what, (unsigned long long)b.bytes);
	CHECK(b.s.bad_lookups == 0, "%s: every field found by path (%ld not)", what,
	      b.s.bad_lookups);
}

int main(void)
{
	char dir[] = "/tmp/lp-json-pipe-XXXXXX", plain[64], gz[64], cut[64], longp[64], longgz[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(plain, sizeof(plain), "%s/t.json", dir);
	snprintf(gz, sizeof(gz), "%s/t.json.gz", dir);
	snprintf(cut, sizeof(cut), "%s/cut.json", dir);
	size_t len, llen;
	char *text = trace_text(&len, 0), *ltext = trace_text(&llen, 1);
	snprintf(longp, sizeof(longp), "%s/long.json", dir);
	snprintf(longgz, sizeof(longgz), "%s/long.json.gz", dir);
	write_file(longp, ltext, llen, 0);
	write_file(longgz, ltext, llen, 1);
	write_file(plain, text, len, 0);
	write_file(gz, text, len, 1);
	write_file(cut, text, len * 2 / 3, 0); /* ends inside an event */

	struct run r = read_one(plain, 1, -1, 0);
	CHECK(r.rc == 0 && r.s.elements == NEV + 1 && r.s.tops == 3,
	      "%zu MB of JSON: %ld elements (%d events, 1 device), %ld top-level values", len >> 20,
	      r.s.elements, NEV, r.s.tops);
	CHECK(r.bytes == len, "JSON bytes parsed: %llu of %zu", (unsigned long long)r.bytes, len);
	same_as_serial("plain, fast caller", plain, -1, 0);
	same_as_serial("plain, slow caller", plain, -1, 500);
	same_as_serial("gzip, slow caller", gz, -1, 500);

	r = read_one(longp, 1, -1, 0);
	CHECK(r.rc == 0 && r.s.elements == NEV + 1 && r.s.cut == NEV / LONG_EVERY &&
		  r.s.names_cut == NEV / LONG_EVERY && r.s.bad_lookups == 0 && r.bytes == llen,
	      "long names: %llu strings cut to %d bytes (of %d), each event marked truncated "
	      "(%ld), every byte read",
	      (unsigned long long)r.s.cut, LP_JSTR_KEEP, NEV / LONG_EVERY, r.s.names_cut);
	same_as_serial("long names, slow caller", longp, -1, 500);
	same_as_serial("long names, gzip", longgz, -1, 0);

	r = read_one(plain, 1, 12345, 0);
	CHECK(r.rc == -ENOSPC && r.s.elements == 12346 && !r.err[0],
	      "a callback's error stops the read: rc %d after %ld elements, no message", r.rc,
	      r.s.elements);
	same_as_serial("callback error, slow caller", plain, 30000, 500);

	r = read_one(cut, 1, -1, 0);
	CHECK(r.rc == -EINVAL && r.err[0] && !strchr(r.err, '\n'),
	      "invalid JSON: -EINVAL (%d) and one line: %s", r.rc, r.err);
	same_as_serial("invalid JSON, slow caller", cut, -1, 500);

	r = read_one("/nonexistent/t.json", 1, -1, 0);
	CHECK(r.rc == -ENOENT && strstr(r.err, "cannot read"), "a missing file: %d, %s", r.rc,
	      r.err);

	free(text);
	free(ltext);
	unlink(longp);
	unlink(longgz);
	unlink(plain);
	unlink(gz);
	unlink(cut);
	rmdir(dir);
	return lp_check_done();
}
