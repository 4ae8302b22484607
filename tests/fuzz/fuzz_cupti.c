/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the CUPTI activity-buffer translator. The input is one
 * completed activity buffer (8-byte aligned copy); records go to a real
 * recording-core log in a temp directory.
 *
 * Kernel and device records carry a `const char *name` that CUPTI
 * guarantees valid and the translator follows. Random bytes there would
 * crash by contract, so before translating, every such pointer is rewritten
 * to a harness-owned string holding the pointer's 8 bytes (NUL-terminated;
 * all zero stays NULL, which CUPTI may also give): the fuzzer still chooses
 * the name bytes. Seeds: the .bin files in cupti/, real buffers written by
 * fuzz_cupti_seed.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "lp_core.h"
#include "lp_cupti.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static char dir[64] = "/tmp/lpfuzz-cupti-XXXXXX";
	if (!mkdtemp(dir))
		abort();
	setenv("LATPROF_DIR", dir, 1);
	setenv("LATPROF_LOG_MB", "4", 1); /* fills, then counts drops */
	lp_core_init();
	return 0;
}

/* Offset of the name pointer in the records the translator reads it from
 * (the same struct versions as lp_cupti_translate.c), else -1. */
static long fz_name_offset(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return offsetof(CUpti_ActivityKernel10, name);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return offsetof(CUpti_ActivityDevice5, name);
	default:
		return -1;
	}
}

/* Rewrites the name pointers of buf's records into pool (16 bytes a record;
 * a record is at least 8 bytes, so size / 8 + 1 slots always suffice). */
static void fz_sanitize(uint8_t *buf, size_t size, char *pool)
{
	CUpti_Activity *a = NULL;
	size_t slot = 0;
	while (cuptiActivityGetNextRecord(buf, size, &a) == CUPTI_SUCCESS) {
		long off = fz_name_offset(a->kind);
		if (off < 0)
			continue;
		char *field = (char *)a + off, *s = pool + 16 * slot++;
		const char *p = NULL;
		memcpy(s, field, sizeof(p));
		s[sizeof(p)] = 0;
		if (memcmp(s, "\0\0\0\0\0\0\0\0", sizeof(p)))
			p = s;
		memcpy(field, &p, sizeof(p));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cap = (size + 7) & ~(size_t)7;
	uint8_t *buf = aligned_alloc(8, cap ? cap : 8);
	char *pool = calloc(size / 8 + 1, 16);
	if (!buf || !pool)
		return free(buf), free(pool), 0;
	memcpy(buf, data, size);
	fz_sanitize(buf, size, pool);
	struct lp_cupti_counts c = {0};
	lp_cupti_translate(buf, size, &c);
	free(pool);
	free(buf);
	return 0;
}
