/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the CUPTI activity-buffer translator. The input is one
 * completed activity buffer (8-byte aligned copy); records go to a real
 * recording-core log in a temp directory.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = aligned_alloc(8, (size + 7) & ~(size_t)7 ? (size + 7) & ~(size_t)7 : 8);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct lp_cupti_counts c = {0};
	lp_cupti_translate(buf, size, &c);
	free(buf);
	return 0;
}
