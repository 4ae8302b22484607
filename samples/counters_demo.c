/* SPDX-License-Identifier: MIT */
/*
 * counters_demo: NVTX-annotated stages with known CPU-counter signatures (each
 * request: busy, sleep, touch),
 * recorded by tests/counters to check what the counters say:
 *   sleep  usleep() once per call      -> about 1 context switch per call
 *   touch  fresh anonymous pages       -> one minor fault per page touched
 *   busy   spin, pinned to its CPU     -> no migrations, on-CPU ~ wall
 * usage: counters_demo [requests] [pages per touch] [busy us] [sleep us] [threads]
 * With threads > 1 every thread runs `requests` requests (its own counters).
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long page_size;
static int requests = 50;
static size_t pages = 256;
static unsigned busy_us = 1000, sleep_us = 2000;
static cpu_set_t all_cpus;

static void stage_sleep(unsigned us)
{
	nvtxRangePushA("sleep");
	usleep(us);
	nvtxRangePop();
}

/* MADV_NOHUGEPAGE: one transparent huge page would replace 512 faults. */
static int stage_touch(size_t n)
{
	size_t len = n * (size_t)page_size;
	nvtxRangePushA("touch");
	volatile char *p =
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		nvtxRangePop();
		return -1;
	}
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		p[i * (size_t)page_size] = 1;
	munmap((void *)p, len);
	nvtxRangePop();
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Pinned to the CPU it is on (so pinning itself migrates nothing) before
 * the range opens, unpinned after it closes. */
static void stage_busy(unsigned us, const cpu_set_t *all)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	int cpu = sched_getcpu();
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
	nvtxRangePushA("busy");
	uint64_t end = now_ns() + us * 1000ull;
	static volatile uint64_t spins; /* a side effect, so the loop stays */
	while (now_ns() < end)
		spins = spins + 1;
	nvtxRangePop();
	sched_setaffinity(0, sizeof(*all), all);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < requests; i++) {
		nvtxRangePushA("request");
		/* busy first: a thread's first stage runs before it was ever
		 * descheduled, where a counter that joined its group late
		 * would not count yet (lp_cnt_group_enable) */
		stage_busy(busy_us, &all_cpus);
		stage_sleep(sleep_us);
		if (stage_touch(pages)) {
			perror("counters_demo: mmap");
			nvtxRangePop();
			return (void *)1;
		}
		nvtxRangePop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	requests = argc > 1 ? atoi(argv[1]) : 50;
	pages = argc > 2 ? strtoul(argv[2], NULL, 0) : 256;
	busy_us = argc > 3 ? (unsigned)atoi(argv[3]) : 1000;
	sleep_us = argc > 4 ? (unsigned)atoi(argv[4]) : 2000;
	int threads = argc > 5 ? atoi(argv[5]) : 1;
	page_size = sysconf(_SC_PAGESIZE);
	if (requests <= 0 || threads <= 0 || threads > 64 ||
	    sched_getaffinity(0, sizeof(all_cpus), &all_cpus) != 0) {
		fprintf(stderr, "usage: counters_demo [requests] [pages] [busy us] [sleep us] "
				"[threads]\n");
		return 2;
	}
	void *bad = NULL;
	if (threads == 1) {
		bad = worker(NULL);
	} else {
		pthread_t t[64];
		for (int i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, worker, NULL) != 0)
				return 1;
		for (int i = 0; i < threads; i++) {
			void *r;
			pthread_join(t[i], &r);
			bad = r ? r : bad;
		}
	}
	printf("counters_demo: %d requests x %d thread(s), %zu pages per touch\n", requests,
	       threads, pages);
	return bad ? 1 : 0;
}
