/* SPDX-License-Identifier: MIT */
/*
 * Writes a synthetic but real-format event log for the import benchmark:
 * 4 threads append LOCK_WAIT records through the recording core (the same
 * lp_rec_begin/commit path the interposer uses). Usage:
 * gen_log DIR TOTAL_WAITS; DIR must exist. Prints "lock_waits=N".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lp_core.h"

#define GEN_THREADS 4
#define GEN_LOCKS 16
#define GEN_STACKS 64

static long gen_per_thread;
static uint64_t gen_locks[GEN_LOCKS];

static void *gen_thread(void *arg)
{
	long t = (long)(intptr_t)arg;
	uint32_t stacks[GEN_STACKS];
	for (unsigned s = 0; s < GEN_STACKS; s++) {
		uint64_t pcs[12];
		for (unsigned d = 0; d < 12; d++)
			pcs[d] = 0x401000u + 0x40u * (s * 12 + d);
		stacks[s] = lp_intern_stack(pcs, 12);
	}
	uint64_t ts = lp_now();
	for (long i = 0; i < gen_per_thread; i++) {
		struct lp_rec_lock_wait *r =
		    lp_rec_begin(LP_REC_LOCK_WAIT, LP_LOCK_MUTEX, sizeof(*r));
		if (!r)
			continue;
		r->lock = gen_locks[(i + t) % GEN_LOCKS];
		r->start = ts + (uint64_t)i * 2000u;
		r->end = r->start + 500u + (uint64_t)(i % 97) * 10u;
		r->stack = stacks[(i * 7 + t) % GEN_STACKS];
		r->owner = 0;
		r->flags = 0;
		r->pad = 0;
		r->runq = (uint64_t)(i % 13) * 700u;
		lp_rec_commit();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gen_log DIR TOTAL_WAITS\n");
		return 2;
	}
	setenv("LATPROF_DIR", argv[1], 1);
	int rc = lp_core_init();
	if (rc) {
		fprintf(stderr, "gen_log: lp_core_init: %d\n", rc);
		return 1;
	}
	gen_per_thread = atol(argv[2]) / GEN_THREADS;
	for (unsigned i = 0; i < GEN_LOCKS; i++)
		gen_locks[i] = (uint64_t)(uintptr_t)&gen_locks[i];
	pthread_t th[GEN_THREADS];
	for (long t = 0; t < GEN_THREADS; t++)
		pthread_create(&th[t], NULL, gen_thread, (void *)(intptr_t)t);
	for (int t = 0; t < GEN_THREADS; t++)
		pthread_join(th[t], NULL);
	lp_core_exit(0, LP_EXIT_RETURN);
	printf("lock_waits=%ld\n", gen_per_thread * GEN_THREADS);
	return 0;
}
