/* SPDX-License-Identifier: MIT */
/*
 * ctr_tiny: stages full of tiny NVTX ranges, for tests/counters/test_tiny.py.
 * Each of `threads` threads runs `stages` times:
 *   "stage"  `tiny` push/pop pairs of "tiny", one fresh page touched every
 *            tiny/pages pairs        -> `pages` minor faults per stage
 *   "nap"    usleep(2000)             -> about 1 context switch
 * usage: ctr_tiny [stages] [tiny per stage] [pages per stage] [threads]
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int stages = 4;
static long tiny = 100000, pages = 200;
static long page_size;

static int stage(void)
{
	size_t len = (size_t)pages * (size_t)page_size;
	volatile char *p =
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* One transparent huge page would replace 512 faults. */
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	long every = tiny / pages, touched = 0;
	nvtxRangePushA("stage");
	for (long i = 0; i < tiny; i++) {
		nvtxRangePushA("tiny");
		nvtxRangePop();
		if (i % every == every - 1 && touched < pages)
			p[(size_t)(touched++) * (size_t)page_size] = 1;
	}
	nvtxRangePop();
	munmap((void *)p, len);
	return 0;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int s = 0; s < stages; s++) {
		if (stage())
			return (void *)1;
		nvtxRangePushA("nap");
		usleep(2000);
		nvtxRangePop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	stages = argc > 1 ? atoi(argv[1]) : 4;
	tiny = argc > 2 ? atol(argv[2]) : 100000;
	pages = argc > 3 ? atol(argv[3]) : 200;
	int threads = argc > 4 ? atoi(argv[4]) : 1;
	page_size = sysconf(_SC_PAGESIZE);
	if (stages <= 0 || pages <= 0 || tiny < pages || threads <= 0 || threads > 16) {
		fprintf(stderr, "usage: ctr_tiny [stages] [tiny] [pages <= tiny] [threads]\n");
		return 2;
	}
	pthread_t t[16];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	void *bad = NULL;
	for (int i = 0; i < threads; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad = r ? r : bad;
	}
	return bad ? 1 : 0;
}
