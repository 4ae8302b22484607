/* SPDX-License-Identifier: MIT */
/*
 * NVTX capture: an NVTX injection library (NVTX_INJECTION64_PATH). The
 * NVTX3 headers compiled into the app dlopen() it on the first NVTX call and
 * call InitializeInjectionNvtx2(), where we fill the CORE and CORE2 callback
 * tables (nvtxDetail/nvtxImpl.h: table[cbid] points at the slot the app's
 * nvtx* call jumps through). Records: format/lp_log_nvtx.h.
 *
 * Hot path (push/pop): one lp_ts() (TSC-derived CLOCK_MONOTONIC ns, see
 * "clock"), a per-thread name cache keyed by the message pointer (the text
 * is re-checked, since a buffer may be reused for another text), one
 * record. No locks, no malloc, errno untouched. LATPROF_NVTX_CLOCK=monotonic
 * forces clock_gettime.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stddef.h>
#include <stdio.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "lp_core.h"
#include "lp_counters.h"
#include "lp_log_nvtx.h"
#include "lp_tsc.h"

/* Under AddressSanitizer the name check reads the app's text byte by byte:
 * a word read past its NUL would be reported (a redzone follows it). */
#if defined(__SANITIZE_ADDRESS__)
#define LP_NC_WORDS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LP_NC_WORDS 0
#endif
#endif
#ifndef LP_NC_WORDS
#define LP_NC_WORDS 1
#endif

#define LP_NC_SLOTS 64
#define LP_NC_MAX 47 /* longest message the cache keeps a copy of */

/* One cache line per entry: pointer, id, then the bytes to verify, their
 * NUL and zeros after it (compared a word at a time). */
struct lp_nc_ent {
	const char *p;
	uint32_t id;
	uint8_t len;
	char s[LP_NC_MAX + 1];
};
_Static_assert(sizeof(struct lp_nc_ent) == 64, "cache entry size");

/* Domains and registered strings are rare: heap objects, listed so a forked
 * child can define them again in its own log (string ids are per log). */
struct lp_nvtx_obj {
	struct lp_nvtx_obj *next;
	uint32_t id; /* domain id, or string id of a registered string */
	uint32_t is_domain;
	uint32_t name; /* domain: string id of its name */
	uint32_t len;
	char s[];
};

/* Per-thread state lives in an mmap'd block reached through one
 * initial-exec TLS pointer: a dlopen()ed library's own TLS goes through
 * __tls_get_addr/TLS descriptors' slow path (12% of a push+pop in perf),
 * while 8 bytes fit the static TLS surplus glibc keeps for dlopen. */
struct lp_nvtx_tls {
	uint64_t tsc_base; /* lp_ts(): TSC and CLOCK_MONOTONIC taken together */
	uint64_t ns_base;
	uint64_t last; /* last stamp handed out: stamps never go back */
	int depth;     /* what nvtxRangePush/Pop return */
	struct lp_nc_ent nc[LP_NC_SLOTS];
};

static __thread struct lp_nvtx_tls *lp_tp __attribute__((tls_model("initial-exec")));
/* Out of memory: a shared block whose cache and clock base are never used
 * (other threads share it), only its depth counter, approximately. */
static struct lp_nvtx_tls lp_tls_fallback;
static pthread_key_t lp_tls_key;

/* Runs on the exiting thread; an NVTX call from a later destructor maps a
 * fresh block instead of touching this one. */
static void lp_tls_free(void *p)
{
	lp_tp = NULL;
	if (p && p != &lp_tls_fallback)
		munmap(p, sizeof(struct lp_nvtx_tls));
}

static __attribute__((noinline)) struct lp_nvtx_tls *lp_tls_new(void)
{
	int saved = errno;
	void *p = mmap(NULL, sizeof(struct lp_nvtx_tls), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct lp_nvtx_tls *t = p == MAP_FAILED ? &lp_tls_fallback : p;
	if (t != &lp_tls_fallback)
		pthread_setspecific(lp_tls_key, t);
	lp_tp = t;
	/* The thread's first NVTX event: open its counter group now, before
	 * the first time stamp, not inside its first range. */
	lp_counters_thread_ranges();
	errno = saved;
	return t;
}

static inline struct lp_nvtx_tls *lp_tls(void)
{
	struct lp_nvtx_tls *t = lp_tp;
	return __builtin_expect(t != NULL, 1) ? t : lp_tls_new();
}
static uint64_t lp_next_range;
static uint32_t lp_next_domain;
static struct lp_nvtx_obj *lp_objs;
static int lp_inited;
static pthread_mutex_t lp_init_lock = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noinline)) uint32_t lp_name_slow(const char *s, struct lp_nc_ent *e)
{
	int saved = errno;
	size_t len = strlen(s);
	uint32_t id = lp_intern_string(s, len);
	if (id && len <= LP_NC_MAX) {
		e->p = s;
		e->id = id;
		e->len = (uint8_t)len;
		memset(e->s, 0, sizeof(e->s));
		memcpy(e->s, s, len);
	}
	errno = saved;
	return id;
}

static inline __attribute__((always_inline)) uint32_t lp_name(const char *s)
{
	if (!s)
		return 0;
	uintptr_t k = (uintptr_t)s;
	struct lp_nvtx_tls *t = lp_tls();
	if (__builtin_expect(t == &lp_tls_fallback, 0))
		return lp_intern_string(s, strlen(s));
	struct lp_nc_ent *e = &t->nc[(k ^ (k >> 6) ^ (k >> 12)) & (LP_NC_SLOTS - 1)];
	if (e->p == s) {
		/* Same pointer: check the text is still the same (inline, no PLT),
		 * a word at a time where the words stay within the text's page (a
		 * read past its NUL there cannot fault; those bytes are masked). */
		size_t n = e->len;
		size_t words = n / 8 + 1;
		if (LP_NC_WORDS && (k & 4095) + words * 8 <= 4096) {
			uint64_t diff = 0, a, b;
			for (size_t w = 0; w + 1 < words; w++) {
				memcpy(&a, s + w * 8, 8);
				memcpy(&b, e->s + w * 8, 8);
				diff |= a ^ b;
			}
			memcpy(&a, s + (words - 1) * 8, 8);
			memcpy(&b, e->s + (words - 1) * 8, 8);
			/* the last word's bytes up to and including the NUL */
			unsigned keep = (unsigned)(n % 8) + 1;
			uint64_t mask = keep == 8 ? ~0ull : (1ull << (keep * 8)) - 1;
			if (!(diff | ((a ^ b) & mask)))
				return e->id;
		} else {
			size_t i = 0;
			while (i < n && s[i] == e->s[i])
				i++;
			if (i == n && s[n] == 0)
				return e->id;
		}
	}
	return lp_name_slow(s, e);
}

/* wchar_t is UTF-32 on Linux; encode it ourselves (wcrtomb depends on the
 * app's locale, which is often "C"). Rare path: the W forms. */
static size_t lp_w_to_utf8(const wchar_t *w, char *buf, size_t cap)
{
	size_t n = 0;
	for (; w && *w && n + 5 < cap; w++) {
		uint32_t c = (uint32_t)*w;
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xc0 | c >> 6);
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[n++] = (char)(0xe0 | c >> 12);
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[n++] = (char)(0xf0 | ((c >> 18) & 0x07));
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	buf[n] = 0;
	return n;
}

static uint32_t lp_name_w(const wchar_t *w)
{
	char buf[1024];
	if (!w)
		return 0;
	return lp_intern_string(buf, lp_w_to_utf8(w, buf, sizeof(buf)));
}

static inline uint32_t lp_dom(nvtxDomainHandle_t d)
{
	return d ? ((const struct lp_nvtx_obj *)(const void *)d)->id : 0;
}

/* ---- clock -------------------------------------------------------------
 * clock_gettime costs about twice RDTSC here, and a push+pop takes two
 * stamps out of a 60 ns budget (DESIGN.md). Where the TSC is invariant and
 * is the kernel's clocksource, stamps are TSC ticks converted to
 * CLOCK_MONOTONIC ns against a per-thread base point (lp_tsc.h) re-taken
 * every LP_TSC_REBASE_NS, so the log holds the one clock of every other
 * source (CUPTI is given lp_now(): a kernel launched right after a push
 * must not be stamped before it).
 *
 * Error of a stamp: its base point's half-width (a base is the narrowest of
 * a few points and no wider than lp_tsc_good, some 70 ns: else the stamp
 * is lp_now()) plus the rate's error over at most LP_TSC_REBASE_NS. The
 * rate is used only once known to 1/LP_TSC_Q (20 ns over a window), which
 * takes a few ms of run: until then stamps are lp_now(). A rate measured
 * over 200 us from two unbracketed reads (as here before) erred by 3e-4
 * and more, some 300 ns by the end of a window, and put a launch stamped
 * 400 ns after its push before the push.
 */
#define LP_TSC_REBASE_NS 1000000ull
#define LP_TSC_CAL_NS 2000000ull /* first rate attempt, then retries */
#define LP_TSC_Q 50000u		 /* rate error <= 2e-5 */
#define LP_TSC_REFINE 16u	 /* re-measure once the run is 16x longer */

static int lp_use_tsc;		 /* lp_tsc_usable() (set once) */
static struct lp_tsc_cal lp_cal; /* pt0 taken at start-up; mult 0 until known to 1/Q */
static uint64_t lp_tsc_good;	 /* a base point this narrow will do */
static uint64_t lp_tsc_window;	 /* ticks in LP_TSC_REBASE_NS */
static uint64_t lp_tsc_cal_at;	 /* lp_now() of the next rate attempt */
static int lp_tsc_cal_busy;	 /* a thread is measuring the first rate */

static void lp_tsc_init(void)
{
#if defined(__x86_64__)
	const char *env = getenv("LATPROF_NVTX_CLOCK");
	if ((env && !strcmp(env, "monotonic")) || !lp_tsc_usable())
		return;
	lp_tsc_pt_best(&lp_cal.pt0, 3, 0);
	lp_tsc_good = 2 * lp_cal.pt0.w;
	lp_tsc_cal_at = lp_cal.pt0.ns + LP_TSC_CAL_NS;
	lp_use_tsc = 1;
#endif
}

/* A re-base snaps to the true clock, which may be a little behind the
 * extrapolated stamps before it: clamp, so a pop is never stamped before
 * its push on the same thread. Strictly after the last stamp (two
 * boundaries are >= 10 ns apart anyway): equal stamps would pair two
 * boundaries with one counter sample, leaving the ranges between them
 * without a delta. */
static inline uint64_t lp_ts_mono(struct lp_nvtx_tls *t, uint64_t ns)
{
	if (ns <= t->last)
		ns = t->last + 1;
	t->last = ns;
	return ns;
}

/* The rate from pt0 to p, if one is due and p is good enough for it; the
 * first one also sets the window and, published last, switches stamps to
 * the TSC. */
static void lp_tsc_rate_offer(const struct lp_tsc_pt *p)
{
	uint64_t m = lp_tsc_cal_offer(&lp_cal, p, LP_TSC_Q, LP_TSC_REFINE);
	if (!m)
		return;
	if (!__atomic_load_n(&lp_cal.mult, __ATOMIC_RELAXED))
		lp_tsc_window = (uint64_t)(((unsigned __int128)LP_TSC_REBASE_NS << 32) / m);
	lp_tsc_cal_publish(&lp_cal, p, m);
}

/* Stamps before the rate is known: the true clock, and now and then (one
 * thread at a time) an attempt at the rate. */
static __attribute__((noinline)) uint64_t lp_ts_uncalibrated(struct lp_nvtx_tls *t)
{
	uint64_t ns = lp_now();
	if (ns >= __atomic_load_n(&lp_tsc_cal_at, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&lp_tsc_cal_busy, 1, __ATOMIC_ACQUIRE)) {
		struct lp_tsc_pt p;
		lp_tsc_pt_best(&p, 3, __atomic_load_n(&lp_tsc_good, __ATOMIC_RELAXED));
		lp_tsc_rate_offer(&p);
		__atomic_store_n(&lp_tsc_cal_at, ns + LP_TSC_CAL_NS, __ATOMIC_RELAXED);
		__atomic_store_n(&lp_tsc_cal_busy, 0, __ATOMIC_RELEASE);
	}
	return lp_ts_mono(t, ns);
}

static __attribute__((noinline)) uint64_t lp_ts_rebase(struct lp_nvtx_tls *t)
{
	uint64_t good = __atomic_load_n(&lp_tsc_good, __ATOMIC_RELAXED);
	struct lp_tsc_pt p;
	lp_tsc_pt_best(&p, 4, good);
	if (p.w > good) /* preempted at every try: the next stamp tries again */
		return lp_ts_mono(t, lp_now());
	t->tsc_base = p.tsc;
	t->ns_base = p.ns;
	if (2 * p.w < good) /* pt0 was taken at a slow moment */
		__atomic_store_n(&lp_tsc_good, 2 * p.w, __ATOMIC_RELAXED);
	lp_tsc_rate_offer(&p); /* when the run has grown LP_TSC_REFINE times */
	return lp_ts_mono(t, p.ns);
}

/* CLOCK_MONOTONIC ns, from the TSC where that is safe. */
static inline __attribute__((always_inline)) uint64_t lp_ts(void)
{
	if (!lp_use_tsc)
		return lp_now();
	struct lp_nvtx_tls *t = lp_tls();
	if (__builtin_expect(t == &lp_tls_fallback, 0))
		return lp_now();
	uint64_t m = __atomic_load_n(&lp_cal.mult, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!m, 0))
		return lp_ts_uncalibrated(t);
	uint64_t d = lp_tsc_read() - t->tsc_base;
	if (__builtin_expect(d >= lp_tsc_window, 0)) /* also: first use, or TSC behind */
		return lp_ts_rebase(t);
	return lp_ts_mono(t, t->ns_base + lp_tsc_ticks_ns(d, m));
}

/* ---- attributes of the *Ex calls ------------------------------------- */

struct lp_attr {
	uint32_t name, category;
	int tail;
	struct lp_rec_nvtx_attr a;
};

/* An attribute struct may be older (smaller) than ours: read only what its
 * size field covers (nvToolsExt.h, NVTX_EVENT_ATTRIB_STRUCT_SIZE). */
#define LP_HAS(at, field)                                                                          \
	((at)->size >= offsetof(nvtxEventAttributes_t, field) + sizeof((at)->field))

static void lp_attr_read(const nvtxEventAttributes_t *at, struct lp_attr *o)
{
	memset(o, 0, sizeof(*o));
	if (!at)
		return;
	o->category = at->category;
	if (at->colorType == NVTX_COLOR_ARGB) {
		o->a.color = at->color;
		o->a.flags |= LP_NVTX_ATTR_COLOR;
	}
	if (at->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 &&
	    at->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT && LP_HAS(at, payload)) {
		o->a.payload_type = (uint16_t)at->payloadType;
		if (at->payloadType <= NVTX_PAYLOAD_TYPE_DOUBLE)
			o->a.payload = at->payload.ullValue;
		else
			o->a.payload = at->payload.uiValue; /* 32-bit kinds: low half */
	}
	o->tail = o->a.flags || o->a.payload_type;
	if (!LP_HAS(at, message))
		return;
	switch (at->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		o->name = lp_name(at->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		o->name = lp_name_w(at->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		if (at->message.registered)
			o->name =
			    ((const struct lp_nvtx_obj *)(const void *)at->message.registered)->id;
		break;
	}
}

/* PUSH/MARK share a layout; START adds the id. */
static void lp_event(uint16_t type, uint32_t dom, uint64_t ts, const struct lp_attr *a)
{
	size_t n = sizeof(struct lp_rec_nvtx_push) + (a->tail ? sizeof(a->a) : 0);
	struct lp_rec_nvtx_push *r = lp_rec_begin(type, dom, n);
	if (!r)
		return;
	r->ts = ts;
	r->name = a->name;
	r->category = a->category;
	if (a->tail)
		memcpy(r + 1, &a->a, sizeof(a->a));
	lp_rec_commit();
}

/* ---- push/pop --------------------------------------------------------- */

/* nvtxRangePushA/W: default domain, no attributes, so the compact record. */
static inline __attribute__((always_inline)) int lp_push_rec(uint32_t name)
{
	/* Stamp after interning so a first-seen name does not lengthen the range. */
	uint64_t ts = lp_ts();
	lp_rec_put8(LP_REC_NVTX_PUSH_NAME, name, ts); /* struct lp_rec_nvtx_pop's layout */
	lp_counters_mark(ts);
	return lp_tls()->depth++;
}

/* The hot pair leaves errno alone without saving it: lp_core.h and
 * lp_counters.h promise not to change it, the clock is the vDSO's, and the
 * slow paths (first name, first event of a thread) save it themselves. */
static int lp_push_a(const char *msg)
{
	return lp_push_rec(lp_name(msg));
}

static int lp_push_w(const wchar_t *msg)
{
	int saved = errno;
	int d = lp_push_rec(lp_name_w(msg));
	errno = saved;
	return d;
}

static int lp_push_ex_dom(uint32_t dom, const nvtxEventAttributes_t *at)
{
	int saved = errno;
	struct lp_attr a;
	lp_attr_read(at, &a);
	uint64_t ts = lp_ts();
	lp_event(LP_REC_NVTX_PUSH, dom, ts, &a);
	lp_counters_boundary(ts);
	errno = saved;
	return lp_tls()->depth++;
}

static int lp_push_ex(const nvtxEventAttributes_t *at)
{
	return lp_push_ex_dom(0, at);
}

static int lp_dpush_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *at)
{
	return lp_push_ex_dom(lp_dom(d), at);
}

static inline __attribute__((always_inline)) int lp_pop_dom(uint32_t dom)
{
	uint64_t ts = lp_ts();
	lp_rec_put8(LP_REC_NVTX_POP, dom, ts);
	lp_counters_mark(ts);
	/* nvtxRangePop returns the level of the range it ended, negative on error. */
	struct lp_nvtx_tls *t = lp_tls();
	return t->depth > 0 ? --t->depth : -1;
}

static int lp_pop(void)
{
	return lp_pop_dom(0);
}

static int lp_dpop(nvtxDomainHandle_t d)
{
	return lp_pop_dom(lp_dom(d));
}

/* ---- start/end -------------------------------------------------------- */

static nvtxRangeId_t lp_start_dom(uint32_t dom, const struct lp_attr *a)
{
	int saved = errno;
	uint64_t id = __atomic_add_fetch(&lp_next_range, 1, __ATOMIC_RELAXED);
	uint64_t ts = lp_ts();
	size_t n = sizeof(struct lp_rec_nvtx_start) + (a->tail ? sizeof(a->a) : 0);
	struct lp_rec_nvtx_start *r = lp_rec_begin(LP_REC_NVTX_START, dom, n);
	if (r) {
		r->ts = ts;
		r->id = id;
		r->name = a->name;
		r->category = a->category;
		if (a->tail)
			memcpy(r + 1, &a->a, sizeof(a->a));
		lp_rec_commit();
	}
	lp_counters_boundary(ts);
	errno = saved;
	return id;
}

static nvtxRangeId_t lp_start_a(const char *msg)
{
	struct lp_attr a = {.name = lp_name(msg)};
	return lp_start_dom(0, &a);
}

static nvtxRangeId_t lp_start_w(const wchar_t *msg)
{
	struct lp_attr a = {.name = lp_name_w(msg)};
	return lp_start_dom(0, &a);
}

static nvtxRangeId_t lp_start_ex(const nvtxEventAttributes_t *at)
{
	struct lp_attr a;
	lp_attr_read(at, &a);
	return lp_start_dom(0, &a);
}

static nvtxRangeId_t lp_dstart_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *at)
{
	struct lp_attr a;
	lp_attr_read(at, &a);
	return lp_start_dom(lp_dom(d), &a);
}

static void lp_end_dom(uint32_t dom, nvtxRangeId_t id)
{
	uint64_t ts = lp_ts();
	int saved = errno;
	struct lp_rec_nvtx_end *r = lp_rec_begin(LP_REC_NVTX_END, dom, sizeof(*r));
	if (r) {
		r->ts = ts;
		r->id = id;
		lp_rec_commit();
	}
	lp_counters_boundary(ts);
	errno = saved;
}

static void lp_end(nvtxRangeId_t id)
{
	lp_end_dom(0, id);
}

static void lp_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	lp_end_dom(lp_dom(d), id);
}

/* ---- marks ------------------------------------------------------------ */

static void lp_mark_dom(uint32_t dom, const struct lp_attr *a)
{
	int saved = errno;
	lp_event(LP_REC_NVTX_MARK, dom, lp_ts(), a);
	errno = saved;
}

static void lp_mark_a(const char *msg)
{
	struct lp_attr a = {.name = lp_name(msg)};
	lp_mark_dom(0, &a);
}

static void lp_mark_w(const wchar_t *msg)
{
	struct lp_attr a = {.name = lp_name_w(msg)};
	lp_mark_dom(0, &a);
}

static void lp_mark_ex(const nvtxEventAttributes_t *at)
{
	struct lp_attr a;
	lp_attr_read(at, &a);
	lp_mark_dom(0, &a);
}

static void lp_dmark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *at)
{
	struct lp_attr a;
	lp_attr_read(at, &a);
	lp_mark_dom(lp_dom(d), &a);
}

/* ---- names: threads, categories --------------------------------------- */

static void lp_thread_name(uint32_t tid, uint32_t name)
{
	int saved = errno;
	struct lp_rec_thread_name *r = lp_rec_begin(LP_REC_THREAD_NAME, 0, sizeof(*r));
	if (r) {
		r->ts = lp_ts();
		r->tid = tid;
		r->name = name;
		lp_rec_commit();
	}
	errno = saved;
}

static void lp_name_thread_a(uint32_t tid, const char *name)
{
	lp_thread_name(tid, lp_intern_string(name, name ? strlen(name) : 0));
}

static void lp_name_thread_w(uint32_t tid, const wchar_t *name)
{
	lp_thread_name(tid, lp_name_w(name));
}

static void lp_category(uint32_t dom, uint32_t category, uint32_t name)
{
	int saved = errno;
	struct lp_rec_nvtx_category *r = lp_rec_begin(LP_REC_NVTX_CATEGORY, dom, sizeof(*r));
	if (r) {
		r->category = category;
		r->name = name;
		lp_rec_commit();
	}
	errno = saved;
}

static void lp_cat_a(uint32_t c, const char *name)
{
	lp_category(0, c, name ? lp_intern_string(name, strlen(name)) : 0);
}

static void lp_cat_w(uint32_t c, const wchar_t *name)
{
	lp_category(0, c, lp_name_w(name));
}

static void lp_dcat_a(nvtxDomainHandle_t d, uint32_t c, const char *name)
{
	lp_category(lp_dom(d), c, name ? lp_intern_string(name, strlen(name)) : 0);
}

static void lp_dcat_w(nvtxDomainHandle_t d, uint32_t c, const wchar_t *name)
{
	lp_category(lp_dom(d), c, lp_name_w(name));
}

/* ---- domains and registered strings ------------------------------------ */

static void lp_domain_rec(const struct lp_nvtx_obj *o)
{
	struct lp_rec_nvtx_domain *r = lp_rec_begin(LP_REC_NVTX_DOMAIN, o->id, sizeof(*r));
	if (r) {
		r->ts = lp_ts();
		r->name = o->name;
		r->pad = 0;
		lp_rec_commit();
	}
}

static struct lp_nvtx_obj *lp_obj_new(const char *s, size_t len, int is_domain)
{
	struct lp_nvtx_obj *o = malloc(sizeof(*o) + len + 1);
	if (!o)
		return NULL;
	memcpy(o->s, s, len);
	o->s[len] = 0;
	o->len = (uint32_t)len;
	o->is_domain = is_domain;
	uint32_t sid = lp_intern_string(s, len);
	if (is_domain) {
		o->id = __atomic_add_fetch(&lp_next_domain, 1, __ATOMIC_RELAXED);
		o->name = sid;
		lp_domain_rec(o);
	} else {
		o->id = sid;
		o->name = sid;
	}
	o->next = __atomic_load_n(&lp_objs, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&lp_objs, &o->next, o, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	return o;
}

static nvtxDomainHandle_t lp_domain_a(const char *name)
{
	int saved = errno;
	struct lp_nvtx_obj *o = lp_obj_new(name ? name : "", name ? strlen(name) : 0, 1);
	errno = saved;
	return (nvtxDomainHandle_t)(void *)o;
}

static nvtxDomainHandle_t lp_domain_w(const wchar_t *name)
{
	char buf[1024];
	return lp_domain_a(name ? (lp_w_to_utf8(name, buf, sizeof(buf)), buf) : NULL);
}

/* Handles stay valid after destroy: NVTX calls with a destroyed domain are
 * undefined, and keeping the object is cheaper than checking. */
static void lp_domain_destroy(nvtxDomainHandle_t d)
{
	(void)d;
}

static nvtxStringHandle_t lp_register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d; /* string ids are per process, not per domain */
	int saved = errno;
	struct lp_nvtx_obj *o = lp_obj_new(s ? s : "", s ? strlen(s) : 0, 0);
	errno = saved;
	return (nvtxStringHandle_t)(void *)o;
}

static nvtxStringHandle_t lp_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	char buf[1024];
	return lp_register_a(d, s ? (lp_w_to_utf8(s, buf, sizeof(buf)), buf) : NULL);
}

/* The child's log starts empty and its string ids start over: forget the
 * forking thread's cache, define every domain and registered string again.
 * Runs after the core's own handler (registered later), so the log exists. */
static void lp_nvtx_atfork_child(void)
{
	/* forked while another thread measured the rate: it will not finish here */
	__atomic_store_n(&lp_tsc_cal_busy, 0, __ATOMIC_RELAXED);
	if (lp_tp)
		memset(lp_tp->nc, 0, sizeof(lp_tp->nc));
	for (struct lp_nvtx_obj *o = lp_objs; o; o = o->next) {
		uint32_t sid = lp_intern_string(o->s, o->len);
		o->name = sid;
		if (o->is_domain)
			lp_domain_rec(o);
		else
			o->id = sid;
	}
}

/* ---- injection entry point -------------------------------------------- */

struct lp_slot {
	unsigned cbid;
	NvtxFunctionPointer fn;
};

#define LP_FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static const struct lp_slot lp_core_slots[] = {
    {NVTX_CBID_CORE_MarkEx, LP_FN(lp_mark_ex)},
    {NVTX_CBID_CORE_MarkA, LP_FN(lp_mark_a)},
    {NVTX_CBID_CORE_MarkW, LP_FN(lp_mark_w)},
    {NVTX_CBID_CORE_RangeStartEx, LP_FN(lp_start_ex)},
    {NVTX_CBID_CORE_RangeStartA, LP_FN(lp_start_a)},
    {NVTX_CBID_CORE_RangeStartW, LP_FN(lp_start_w)},
    {NVTX_CBID_CORE_RangeEnd, LP_FN(lp_end)},
    {NVTX_CBID_CORE_RangePushEx, LP_FN(lp_push_ex)},
    {NVTX_CBID_CORE_RangePushA, LP_FN(lp_push_a)},
    {NVTX_CBID_CORE_RangePushW, LP_FN(lp_push_w)},
    {NVTX_CBID_CORE_RangePop, LP_FN(lp_pop)},
    {NVTX_CBID_CORE_NameCategoryA, LP_FN(lp_cat_a)},
    {NVTX_CBID_CORE_NameCategoryW, LP_FN(lp_cat_w)},
    {NVTX_CBID_CORE_NameOsThreadA, LP_FN(lp_name_thread_a)},
    {NVTX_CBID_CORE_NameOsThreadW, LP_FN(lp_name_thread_w)},
};

static const struct lp_slot lp_core2_slots[] = {
    {NVTX_CBID_CORE2_DomainMarkEx, LP_FN(lp_dmark_ex)},
    {NVTX_CBID_CORE2_DomainRangeStartEx, LP_FN(lp_dstart_ex)},
    {NVTX_CBID_CORE2_DomainRangeEnd, LP_FN(lp_dend)},
    {NVTX_CBID_CORE2_DomainRangePushEx, LP_FN(lp_dpush_ex)},
    {NVTX_CBID_CORE2_DomainRangePop, LP_FN(lp_dpop)},
    {NVTX_CBID_CORE2_DomainNameCategoryA, LP_FN(lp_dcat_a)},
    {NVTX_CBID_CORE2_DomainNameCategoryW, LP_FN(lp_dcat_w)},
    {NVTX_CBID_CORE2_DomainRegisterStringA, LP_FN(lp_register_a)},
    {NVTX_CBID_CORE2_DomainRegisterStringW, LP_FN(lp_register_w)},
    {NVTX_CBID_CORE2_DomainCreateA, LP_FN(lp_domain_a)},
    {NVTX_CBID_CORE2_DomainCreateW, LP_FN(lp_domain_w)},
    {NVTX_CBID_CORE2_DomainDestroy, LP_FN(lp_domain_destroy)},
};

static int lp_fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule mod,
		   const struct lp_slot *slots, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(mod, &table, &size) || !table)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (slots[i].cbid < size && table[slots[i].cbid])
			*table[slots[i].cbid] = slots[i].fn;
	return 0;
}

/*
 * Called once per NVTX instance in the process (the app's headers, the
 * Python nvtx module's copy...), each with its own tables. Returning 0
 * makes that instance a no-op: what we want when latprof is not recording.
 */
LP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	int saved = errno;
	int ok = 0;
	if (!get || lp_core_init() != 0)
		goto out;
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		goto out;
	if (lp_fill(cb, NVTX_CB_MODULE_CORE, lp_core_slots,
		    sizeof(lp_core_slots) / sizeof(lp_core_slots[0])) ||
	    lp_fill(cb, NVTX_CB_MODULE_CORE2, lp_core2_slots,
		    sizeof(lp_core2_slots) / sizeof(lp_core2_slots[0])))
		goto out;
	const NvtxExportTableVersionInfo *vi = get(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	pthread_mutex_lock(&lp_init_lock);
	if (!lp_inited) {
		if (pthread_key_create(&lp_tls_key, lp_tls_free)) {
			pthread_mutex_unlock(&lp_init_lock);
			goto out;
		}
		lp_tsc_init();
		pthread_atfork(NULL, NULL, lp_nvtx_atfork_child);
		lp_inited = 1;
	}
	pthread_mutex_unlock(&lp_init_lock);
	ok = 1;
out:
	errno = saved;
	return ok;
}
