/* SPDX-License-Identifier: MIT */
/*
 * NVTX edge cases for tests/nvtx/test_nvtx_cases.py, one per mode:
 *   nest DEPTH REPS    push/pop DEPTH deep ("lvl0".."lvlN"), REPS times
 *   xthread N          N ranges started on one thread, ended on another
 *   unbalanced K       K pops with nothing pushed, then one good pair
 *   open               ranges still open when the process exits
 *   domains            domains, registered strings, categories, marks,
 *                      payload kinds, wide strings, thread names
 *   rate THREADS N     N push/pop pairs per thread as fast as possible
 *   reqs THREADS N     N requests per thread, each with 4 stage ranges and
 *                      no work: a big database for import/report benchmarks
 *   reuse              one buffer rewritten with texts that differ near
 *                      the name cache's word boundaries, a range each
 *   clock N FILE       N ranges "tick", each push and pop between two
 *                      clock_gettime reads written to FILE ("a b c d" ns):
 *                      the program's own clock against the stamps
 * Each mode prints what it did as key=value so the test compares the
 * database with the program's own account.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int nest(int depth, int reps)
{
	char names[64][16];
	if (depth > 64)
		return 2;
	for (int i = 0; i < depth; i++)
		snprintf(names[i], sizeof(names[i]), "lvl%d", i);
	int maxlvl = -1;
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < depth; i++) {
			int lvl = nvtxRangePushA(names[i]);
			if (lvl > maxlvl)
				maxlvl = lvl;
		}
		for (int i = 0; i < depth; i++)
			nvtxRangePop();
	}
	printf("depth=%d reps=%d max_level=%d\n", depth, reps, maxlvl);
	return 0;
}

/* Ids go from the starter to the ender through a pipe. */
static int xpipe[2];

static void *ender(void *arg)
{
	long n = (long)(intptr_t)arg;
	nvtxNameOsThreadA((uint32_t)gettid(), "ender");
	for (long i = 0; i < n; i++) {
		nvtxRangeId_t id;
		if (read(xpipe[0], &id, sizeof(id)) != sizeof(id))
			return NULL;
		nvtxRangeEnd(id);
	}
	return NULL;
}

static int xthread(long n)
{
	pthread_t t;
	if (pipe(xpipe) || pthread_create(&t, NULL, ender, (void *)(intptr_t)n))
		return 1;
	nvtxNameOsThreadA((uint32_t)gettid(), "starter");
	for (long i = 0; i < n; i++) {
		nvtxRangeId_t id = nvtxRangeStartA("handoff");
		usleep(200);
		if (write(xpipe[1], &id, sizeof(id)) != sizeof(id))
			return 1;
	}
	pthread_join(t, NULL);
	printf("xthread=%ld\n", n);
	return 0;
}

static int unbalanced(int k)
{
	int neg = 0;
	for (int i = 0; i < k; i++)
		neg += nvtxRangePop() < 0;
	nvtxRangePushA("balanced");
	usleep(1000);
	nvtxRangePop();
	printf("unbalanced=%d negative_returns=%d\n", k, neg);
	return 0;
}

static int open_at_exit(void)
{
	nvtxRangePushA("open-outer");
	nvtxRangePushA("open-inner");
	nvtxRangePushA("closed-child");
	usleep(1000);
	nvtxRangePop();
	nvtxRangeStartA("open-start");
	usleep(2000);
	printf("open=3 closed=1\n");
	fflush(stdout);
	exit(0); /* with three ranges open */
}

static void mark_payload(nvtxDomainHandle_t d, const char *msg, int type, uint64_t raw)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	a.payloadType = type;
	a.payload.ullValue = raw;
	nvtxDomainMarkEx(d, &a);
}

static int domains(void)
{
	nvtxDomainHandle_t da = nvtxDomainCreateA("dom_a");
	nvtxDomainHandle_t db = nvtxDomainCreateW(L"dom_b\u00e9");
	nvtxStringHandle_t s1 = nvtxDomainRegisterStringA(da, "registered-one");
	nvtxStringHandle_t s2 = nvtxDomainRegisterStringW(db, L"registered-two");
	nvtxDomainNameCategoryA(da, 5, "cat-five");
	nvtxNameCategoryA(9, "cat-nine-default");

	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.category = 5;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff00ff00u;
	a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
	a.payload.iValue = -42;

	/* Interleaved domains: each nests on its own stack. */
	a.message.registered = s1;
	nvtxDomainRangePushEx(da, &a); /* dom_a: registered-one */
	nvtxRangePushA("default-outer");
	a.message.registered = s2;
	a.category = 0;
	a.colorType = NVTX_COLOR_UNKNOWN;
	a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
	a.payload.dValue = 2.5;
	nvtxDomainRangePushEx(db, &a); /* dom_b: registered-two */
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "a-child";
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = 1ull << 40;
	nvtxDomainRangePushEx(da, &a);	/* dom_a: a-child, parent registered-one */
	nvtxRangePushW(L"wide-\u03bb"); /* default: parent default-outer */
	usleep(500);
	nvtxRangePop();
	nvtxDomainRangePop(da);
	nvtxDomainRangePop(db);
	nvtxRangePop();
	nvtxDomainRangePop(da);

	nvtxRangeId_t id = nvtxDomainRangeStartEx(db, &a);
	nvtxDomainRangeEnd(db, id);

	float f = 1.5f;
	uint32_t fbits;
	memcpy(&fbits, &f, sizeof(f));
	mark_payload(da, "m-i32", NVTX_PAYLOAD_TYPE_INT32, (uint32_t)-7);
	mark_payload(da, "m-u32", NVTX_PAYLOAD_TYPE_UNSIGNED_INT32, 4000000000u);
	mark_payload(db, "m-float", NVTX_PAYLOAD_TYPE_FLOAT, fbits);
	mark_payload(NULL, "m-none", 0, 0);
	nvtxMarkA("plain-mark");
	nvtxNameOsThreadA((uint32_t)gettid(), "dom-main");
	nvtxDomainDestroy(da);
	printf("domains=2\n");
	return 0;
}

struct rate_arg {
	long n;
	uint64_t ns;
};

static void *rate_worker(void *p)
{
	struct rate_arg *a = p;
	static const char *const names[4] = {"rate-a", "rate-b", "rate-c", "rate-d"};
	uint64_t t0 = now_ns();
	for (long i = 0; i < a->n; i++) {
		nvtxRangePushA(names[i & 3]);
		nvtxRangePop();
	}
	a->ns = now_ns() - t0;
	return NULL;
}

static void *reqs_worker(void *p)
{
	static const char *const st[4] = {"decode", "preprocess", "infer", "postprocess"};
	struct rate_arg *a = p;
	for (long i = 0; i < a->n; i++) {
		nvtxRangePushA("request");
		for (int k = 0; k < 4; k++) {
			nvtxRangePushA(st[k]);
			nvtxRangePop();
		}
		nvtxRangePop();
	}
	return NULL;
}

static int rate(int threads, long n, int reqs)
{
	pthread_t t[64];
	struct rate_arg a[64];
	if (threads < 1 || threads > 64)
		return 2;
	uint64_t t0 = now_ns();
	for (int i = 0; i < threads; i++) {
		a[i].n = n;
		pthread_create(&t[i], NULL, reqs ? reqs_worker : rate_worker, &a[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	double secs = (double)(now_ns() - t0) / 1e9;
	long ranges = n * threads * (reqs ? 5 : 1);
	printf("ranges=%ld seconds=%.3f per_second=%.0f\n", ranges, secs, (double)ranges / secs);
	return 0;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

/* Work of 0-18 us between push and pop, a 50 us sleep every 10th range (a
 * thread that sleeps comes back to a stale clock base), for ~0.4 s: long
 * enough that most stamps come from the TSC, not lp_now(). */
/* One buffer, rewritten between ranges: texts whose lengths straddle the
 * name cache's 8-byte words, and texts that differ only in their last
 * byte, their length or past a word's end (the cache keys on the pointer
 * and must see each change). The ranges nest, in this order. */
static const char *const reuse_texts[] = {"abcdefg",
					  "abcdefgh",
					  "abcdefgh",
					  "abcdefghi",
					  "abcdefgX",
					  "abcdefg",
					  "a",
					  "ab",
					  "",
					  "abcdefghijklmnop",
					  "abcdefghijklmnoq",
					  "abcdefghijklmno",
					  "abcdefghijklmnop",
					  "b",
					  "abcdefgh"};

static int reuse(void)
{
	char buf[64];
	size_t n = sizeof(reuse_texts) / sizeof(reuse_texts[0]);
	for (int rep = 0; rep < 3; rep++) {
		for (size_t i = 0; i < n; i++) {
			memset(buf, 'Z', sizeof(buf)); /* junk past each text's NUL */
			strcpy(buf, reuse_texts[i]);
			nvtxRangePushA(buf);
		}
		for (size_t i = 0; i < n; i++)
			nvtxRangePop();
	}
	printf("reuse=%zu\n", 3 * n);
	return 0;
}

static int clock_check(long n, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return 2;
	for (long i = 0; i < n; i++) {
		uint64_t a = now_ns();
		nvtxRangePushA("tick");
		uint64_t b = now_ns();
		spin_ns((uint64_t)(i % 7) * 3000);
		uint64_t c = now_ns();
		nvtxRangePop();
		uint64_t d = now_ns();
		fprintf(f, "%llu %llu %llu %llu\n", (unsigned long long)a, (unsigned long long)b,
			(unsigned long long)c, (unsigned long long)d);
		if (i % 10 == 9)
			usleep(50);
	}
	printf("ranges=%ld\n", n);
	return fclose(f) ? 2 : 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "nest") && argc == 4)
		return nest(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(m, "xthread") && argc == 3)
		return xthread(atol(argv[2]));
	if (!strcmp(m, "unbalanced") && argc == 3)
		return unbalanced(atoi(argv[2]));
	if (!strcmp(m, "open"))
		return open_at_exit();
	if (!strcmp(m, "domains"))
		return domains();
	if (!strcmp(m, "rate") && argc == 4)
		return rate(atoi(argv[2]), atol(argv[3]), 0);
	if (!strcmp(m, "reqs") && argc == 4)
		return rate(atoi(argv[2]), atol(argv[3]), 1);
	if (!strcmp(m, "reuse"))
		return reuse();
	if (!strcmp(m, "clock") && argc == 4)
		return clock_check(atol(argv[2]), argv[3]);
	fprintf(stderr, "usage: lp_nvtx_cases nest D R | xthread N | unbalanced K | open | "
			"domains | rate THREADS N | reqs THREADS N | clock N FILE\n");
	return 2;
}
