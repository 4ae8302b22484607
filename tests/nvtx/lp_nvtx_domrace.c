/* SPDX-License-Identifier: MIT */
/*
 * One named NVTX domain created by several threads at once, each using the
 * handle at once, for tests/nvtx/test_nvtx_domrace.py. NVTX gives every
 * nvtxDomainCreateA call its own handle, so a lazily created shared domain
 * (the Python nvtx module's lru_cache'd get_domain, an unlocked
 * "if (!dom) dom = nvtxDomainCreateA(...)") ends up with several handles
 * for one name, and threads using a handle another thread created.
 *
 *   ordered THREADS K  threads write their first record in turn; the last
 *                      one and the first one each create domain "app"; the
 *                      ones between use the last one's handle: a range whose
 *                      domain is defined in a later-written stretch
 *   race THREADS ROUNDS K
 *                      each round, all threads released at once take the
 *                      round's handle, creating it when none is there yet
 *                      (unlocked, as an app's lazy init does)
 *
 * Every thread, with the handle it got, registers "request" and pushes K
 * ranges "request" (registered string), each with a child "stage", and
 * marks "tick" once. It prints what it did as key=value: the test wants
 * every one of them in the one domain row "app".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#define MAX_THREADS 64
#define MAX_ROUNDS 256

static int n_threads, n_rounds, k_ranges;
static int creates; /* nvtxDomainCreateA calls */
static int turn;    /* ordered: threads that have written their first records */
static int go;	    /* race: the round released */
static int arrived; /* race: threads at the round's start */
static nvtxDomainHandle_t first_dom, last_dom;
static nvtxDomainHandle_t round_dom[MAX_ROUNDS];

static void spin_ns(uint64_t ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)b.tv_nsec -
		   (uint64_t)a.tv_nsec <
	       ns);
}

static nvtxDomainHandle_t create(void)
{
	__atomic_add_fetch(&creates, 1, __ATOMIC_RELAXED);
	return nvtxDomainCreateA("app");
}

static void attr(nvtxEventAttributes_t *a)
{
	memset(a, 0, sizeof(*a));
	a->version = NVTX_VERSION;
	a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
}

/* K requests with a stage each, and a mark, in domain d. */
static void work(nvtxDomainHandle_t d)
{
	nvtxStringHandle_t req = nvtxDomainRegisterStringA(d, "request");
	nvtxEventAttributes_t r, s, m;
	attr(&r);
	r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	r.message.registered = req;
	attr(&s);
	s.messageType = NVTX_MESSAGE_TYPE_ASCII;
	s.message.ascii = "stage";
	attr(&m);
	m.messageType = NVTX_MESSAGE_TYPE_ASCII;
	m.message.ascii = "tick";
	for (int i = 0; i < k_ranges; i++) {
		nvtxDomainRangePushEx(d, &r);
		nvtxDomainRangePushEx(d, &s);
		nvtxDomainRangePop(d);
		nvtxDomainRangePop(d);
	}
	nvtxDomainMarkEx(d, &m);
}

static nvtxDomainHandle_t wait_for(nvtxDomainHandle_t *p)
{
	nvtxDomainHandle_t d;
	while (!(d = __atomic_load_n(p, __ATOMIC_ACQUIRE)))
		sched_yield();
	return d;
}

/* Thread i starts once thread i - 1 has named itself (run()), so its first
 * records (the interposer's thread start, this name) come after that
 * thread's: the stretches of the log begin in thread order. */
static void *ordered_worker(void *p)
{
	int i = (int)(intptr_t)p;
	char name[16];
	snprintf(name, sizeof(name), "w%d", i);
	nvtxNameOsThreadA((uint32_t)gettid(), name);
	__atomic_store_n(&turn, i + 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != n_threads)
		sched_yield();
	nvtxDomainHandle_t d;
	if (i == n_threads - 1) {
		d = create();
		__atomic_store_n(&last_dom, d, __ATOMIC_RELEASE);
	} else if (i == 0) {
		wait_for(&last_dom); /* so the first thread's handle is another one */
		d = create();
		__atomic_store_n(&first_dom, d, __ATOMIC_RELEASE);
	} else {
		d = wait_for(&last_dom);
	}
	work(d);
	return NULL;
}

/* An unlocked lazy init, as slow as a constructor in an interpreted
 * language: threads that find no handle each create one, the last store
 * wins, and threads coming later use that one. */
static nvtxDomainHandle_t lazy_domain(nvtxDomainHandle_t *slot)
{
	nvtxDomainHandle_t d = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (d)
		return d;
	d = create();
	spin_ns(20000);
	__atomic_store_n(slot, d, __ATOMIC_RELEASE);
	return d;
}

static void *race_worker(void *p)
{
	(void)p;
	for (int r = 0; r < n_rounds; r++) {
		/* all threads in, then released together */
		if (__atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL) == (r + 1) * n_threads)
			__atomic_store_n(&go, r + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&go, __ATOMIC_ACQUIRE) <= r)
			sched_yield();
		work(lazy_domain(&round_dom[r]));
	}
	return NULL;
}

static int run(void *(*fn)(void *))
{
	pthread_t t[MAX_THREADS];
	for (int i = 0; i < n_threads; i++) {
		if (pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i))
			return 2;
		while (fn == ordered_worker && __atomic_load_n(&turn, __ATOMIC_ACQUIRE) <= i)
			sched_yield();
	}
	for (int i = 0; i < n_threads; i++)
		pthread_join(t[i], NULL);
	long per = (long)n_threads * n_rounds;
	printf("threads=%d rounds=%d creates=%d requests=%ld stages=%ld marks=%ld\n", n_threads,
	       n_rounds, creates, per * k_ranges, per * k_ranges, per);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "ordered") && argc == 4) {
		n_threads = atoi(argv[2]);
		n_rounds = 1;
		k_ranges = atoi(argv[3]);
		if (n_threads >= 3 && n_threads <= MAX_THREADS && k_ranges > 0)
			return run(ordered_worker);
	}
	if (!strcmp(m, "race") && argc == 5) {
		n_threads = atoi(argv[2]);
		n_rounds = atoi(argv[3]);
		k_ranges = atoi(argv[4]);
		if (n_threads >= 2 && n_threads <= MAX_THREADS && n_rounds > 0 &&
		    n_rounds <= MAX_ROUNDS && k_ranges > 0)
			return run(race_worker);
	}
	fprintf(stderr, "usage: lp_nvtx_domrace ordered THREADS K | race THREADS ROUNDS K\n");
	return 2;
}
