/* SPDX-License-Identifier: MIT */
/*
 * infer_server: an inference server in miniature, annotated with NVTX the
 * way real servers are. Worker threads take requests from a shared counter;
 * each request is an outer "request" range (payload = request id) holding
 * the stages decode -> preprocess -> infer -> postprocess. Stage costs are
 * busy-waits on CLOCK_MONOTONIC deadlines, so a stage lasts its programmed
 * time even when the thread is preempted part-way.
 *
 *   infer_server [--requests N] [--threads N] [--decode-us U] [--pre-us U]
 *                [--infer-us U] [--post-us U] [--seed S]
 *                [--locked-frac F --locked-stage NAME --locked-us U]
 *                [--slow-stage NAME --slow-pct P]
 *
 * The locked path: a fraction F of requests (picked by a hash of seed and
 * request id, so the same requests every run) must take the global
 * infer_lock in stage NAME. A background "model swapper" holds that lock
 * for U µs at a time (sleeping, so it costs no CPU) with short gaps, so a
 * locked request waits up to U µs: the tail that --breakdown must explain.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

enum { ST_DECODE, ST_PRE, ST_INFER, ST_POST, ST_N };
static const char *const stage_names[ST_N] = {"decode", "preprocess", "infer", "postprocess"};

static struct {
	long requests;
	int threads;
	long cost_us[ST_N];
	double locked_frac;
	int locked_stage;
	long locked_us;
	int slow_stage;
	double slow_pct;
	uint64_t seed;
} cfg = {
    .requests = 200,
    .threads = 2,
    .cost_us = {2100, 1800, 6400, 700},
    .locked_stage = -1,
    .slow_stage = -1,
    .seed = 1,
};

pthread_mutex_t infer_lock = PTHREAD_MUTEX_INITIALIZER;
static long next_request;
static long locked_requests;
static volatile int stopping;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_us(long us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000u;
	while (now_ns() < end)
		;
}

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* splitmix64: which requests take the locked path depends only on seed+id. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int is_locked(long id)
{
	if (cfg.locked_stage < 0 || cfg.locked_frac <= 0)
		return 0;
	double u = (double)(mix(cfg.seed * 1000003u + (uint64_t)id) >> 11) / 9007199254740992.0;
	return u < cfg.locked_frac;
}

static void stage(int st, int locked)
{
	long us = cfg.cost_us[st];
	if (st == cfg.slow_stage)
		us += (long)((double)us * cfg.slow_pct / 100.0 + 0.5);
	nvtxRangePushA(stage_names[st]);
	if (locked && st == cfg.locked_stage) {
		pthread_mutex_lock(&infer_lock);
		spin_us(us);
		pthread_mutex_unlock(&infer_lock);
	} else {
		spin_us(us);
	}
	nvtxRangePop();
}

static void request(long id)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff3366ccu;
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = (uint64_t)id;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "request";
	int locked = is_locked(id);
	if (locked)
		__atomic_fetch_add(&locked_requests, 1, __ATOMIC_RELAXED);
	nvtxRangePushEx(&a);
	for (int st = 0; st < ST_N; st++)
		stage(st, locked);
	nvtxRangePop();
}

static void *worker(void *arg)
{
	char name[32];
	snprintf(name, sizeof(name), "worker-%ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	nvtxNameOsThreadA((uint32_t)gettid(), name);
	for (;;) {
		long id = __atomic_fetch_add(&next_request, 1, __ATOMIC_RELAXED);
		if (id >= cfg.requests)
			break;
		request(id);
	}
	return NULL;
}

/* Holds infer_lock most of the time, asleep: locked requests wait for it. */
static void *swapper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "model-swapper");
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&infer_lock);
		sleep_us(cfg.locked_us);
		pthread_mutex_unlock(&infer_lock);
		sleep_us(cfg.locked_us / 20 + 200); /* room for a waiter to get in */
	}
	return NULL;
}

static int stage_by_name(const char *s)
{
	for (int i = 0; i < ST_N; i++)
		if (!strcmp(s, stage_names[i]))
			return i;
	fprintf(stderr,
		"infer_server: unknown stage '%s' (decode, preprocess, infer, "
		"postprocess)\n",
		s);
	exit(2);
}

static long num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "infer_server: %s takes a number in [%ld, %ld], not '%s'\n", opt,
			lo, hi, s);
		exit(2);
	}
	return v;
}

static double fnum(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);
	if (*end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "infer_server: %s takes a number in [%g, %g], not '%s'\n", opt, lo,
			hi, s);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"requests", 1, 0, 'n'},
	    {"threads", 1, 0, 't'},
	    {"decode-us", 1, 0, 'd'},
	    {"pre-us", 1, 0, 'p'},
	    {"infer-us", 1, 0, 'i'},
	    {"post-us", 1, 0, 'o'},
	    {"locked-frac", 1, 0, 'f'},
	    {"locked-stage", 1, 0, 'l'},
	    {"locked-us", 1, 0, 'u'},
	    {"slow-stage", 1, 0, 's'},
	    {"slow-pct", 1, 0, 'P'},
	    {"seed", 1, 0, 'S'},
	    {0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			cfg.requests = num("--requests", optarg, 0, 100000000);
			break;
		case 't':
			cfg.threads = (int)num("--threads", optarg, 1, 256);
			break;
		case 'd':
			cfg.cost_us[ST_DECODE] = num("--decode-us", optarg, 0, 10000000);
			break;
		case 'p':
			cfg.cost_us[ST_PRE] = num("--pre-us", optarg, 0, 10000000);
			break;
		case 'i':
			cfg.cost_us[ST_INFER] = num("--infer-us", optarg, 0, 10000000);
			break;
		case 'o':
			cfg.cost_us[ST_POST] = num("--post-us", optarg, 0, 10000000);
			break;
		case 'f':
			cfg.locked_frac = fnum("--locked-frac", optarg, 0, 1);
			break;
		case 'l':
			cfg.locked_stage = stage_by_name(optarg);
			break;
		case 'u':
			cfg.locked_us = num("--locked-us", optarg, 0, 10000000);
			break;
		case 's':
			cfg.slow_stage = stage_by_name(optarg);
			break;
		case 'P':
			cfg.slow_pct = fnum("--slow-pct", optarg, -100, 10000);
			break;
		case 'S':
			cfg.seed = (uint64_t)num("--seed", optarg, 0, 1L << 62);
			break;
		default:
			fprintf(stderr, "usage: infer_server [--requests N] [--threads N] "
					"[--decode-us U] [--pre-us U] [--infer-us U] [--post-us U] "
					"[--locked-frac F --locked-stage NAME --locked-us U] "
					"[--slow-stage NAME --slow-pct P] [--seed S]\n");
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "infer_server: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (cfg.locked_frac > 0 && (cfg.locked_stage < 0 || cfg.locked_us <= 0)) {
		fprintf(stderr,
			"infer_server: --locked-frac needs --locked-stage and --locked-us\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	nvtxNameOsThreadA((uint32_t)gettid(), "main");
	pthread_t sw, *th = calloc((size_t)cfg.threads, sizeof(*th));
	int have_swapper = cfg.locked_stage >= 0 && cfg.locked_frac > 0;
	if (!th)
		return 1;
	if (have_swapper && pthread_create(&sw, NULL, swapper, NULL))
		return 1;
	uint64_t t0 = now_ns();
	for (int i = 0; i < cfg.threads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
			return 1;
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(th[i], NULL);
	double secs = (double)(now_ns() - t0) / 1e9;
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	if (have_swapper)
		pthread_join(sw, NULL);
	printf("infer_server: %ld requests (%ld locked) on %d threads in %.3f s\n", cfg.requests,
	       locked_requests, cfg.threads, secs);
	free(th);
	return 0;
}
