/* SPDX-License-Identifier: MIT */
/*
 * Writes one real-format event log holding a lock wait per duration given,
 * through the recording core (lp_rec_begin/commit, as the interposer does):
 * gen_waits DIR DUR_NS...; DIR must exist. Wait k is on its own mutex (the
 * address of locks[k]), starts 10 us after wait k-1 and lasts the k-th
 * duration exactly. Prints "lock_waits=N start=T0 lock=ADDR,..." so the
 * test knows every value written. An argument bCALL:KIND is a blocking call
 * instead (enum lp_block_call, on a descriptor of enum lp_fd_kind KIND, fd
 * 3 + k; none for KIND 0) lasting 1 ms, counted in "blocks=N".
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lp_core.h"

#define GEN_MAX 64

static uint64_t locks[GEN_MAX];

int main(int argc, char **argv)
{
	if (argc < 3 || argc - 2 > GEN_MAX) {
		fprintf(stderr, "usage: gen_waits DIR DUR_NS... (at most %d)\n", GEN_MAX);
		return 2;
	}
	setenv("LATPROF_DIR", argv[1], 1);
	int rc = lp_core_init();
	if (rc) {
		fprintf(stderr, "gen_waits: lp_core_init: %d\n", rc);
		return 1;
	}
	uint64_t pcs[2] = {0x401000u, 0x402000u};
	uint32_t stack = lp_intern_stack(pcs, 2);
	uint64_t t0 = lp_now();
	int n = argc - 2, written = 0, blocks = 0;
	for (int k = 0; k < n; k++) {
		unsigned call, kind;
		if (sscanf(argv[k + 2], "b%u:%u", &call, &kind) == 2) {
			struct lp_rec_block *b = lp_rec_begin(LP_REC_BLOCK, call, sizeof(*b));
			if (!b)
				continue;
			b->start = t0 + (uint64_t)k * 10000u;
			b->end = b->start + 1000000u;
			b->result = 0;
			b->fd = kind ? 3 + k : -1;
			b->stack = stack;
			b->fd_kind = kind;
			b->flags = 0;
			lp_rec_commit();
			blocks++;
			continue;
		}
		struct lp_rec_lock_wait *r =
		    lp_rec_begin(LP_REC_LOCK_WAIT, LP_LOCK_MUTEX, sizeof(*r));
		if (!r)
			continue;
		r->lock = (uint64_t)(uintptr_t)&locks[k];
		r->start = t0 + (uint64_t)k * 10000u;
		r->end = r->start + strtoull(argv[k + 2], NULL, 10);
		r->stack = stack;
		r->owner = 0;
		r->flags = 0;
		r->pad = 0;
		lp_rec_commit();
		written++;
	}
	lp_core_exit(0, LP_EXIT_RETURN);
	printf("blocks=%d lock_waits=%d start=%llu lock=", blocks, written, (unsigned long long)t0);
	for (int k = 0, first = 1; k < n; k++)
		if (argv[k + 2][0] != 'b')
			printf("%s%llu", first ? "" : ",",
			       (unsigned long long)(uintptr_t)&locks[k]),
			    first = 0;
	printf("\n");
	return 0;
}
