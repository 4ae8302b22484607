/* SPDX-License-Identifier: MIT */
/*
 * Writes fuzz_cupti seeds: the real activity buffers that tests/cuda's unit
 * test builds (its fill(), one record of every kind the translator reads
 * plus one it skips), so the fuzzer starts from CUPTI's own layout.
 * Each name pointer is replaced by the name's first 8 bytes, which
 * fuzz_cupti turns back into a string. Usage: fuzz_cupti_seed OUT_DIR
 */
#define main cupti_unit_main
#include "../cuda/test_cupti.c"
#undef main

#include <stddef.h>

/* Name pointers -> the names' first 8 bytes, in place. */
static void fz_seed_names(struct buf *b)
{
	CUpti_Activity *a = NULL;
	while (cuptiActivityGetNextRecord(b->b, b->len, &a) == CUPTI_SUCCESS) {
		size_t off;
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			off = offsetof(CUpti_ActivityKernel10, name);
		else if (a->kind == CUPTI_ACTIVITY_KIND_DEVICE)
			off = offsetof(CUpti_ActivityDevice5, name);
		else
			continue;
		const char *name;
		char *field = (char *)a + off;
		memcpy(&name, field, sizeof(name));
		memset(field, 0, sizeof(name));
		if (name)
			memcpy(field, name, strnlen(name, sizeof(name)));
	}
}

static int fz_write(const char *dir, const char *file, struct buf *b)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fz_seed_names(b);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b->b, 1, b->len, f) != b->len || fclose(f))
		return perror(path), 1;
	printf("%s: %zu bytes\n", path, b->len);
	return 0;
}

int main(int argc, char **argv)
{
	static struct buf b1, b2;
	if (argc != 2)
		return fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]), 2;
	fill(&b1);
	/* the unit test's second flush: one more launch */
	api(&b2, 0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, 20000, 20100);
	kernel(&b2, "_Z5scalePfif", 11, 20500, 21500);
	return fz_write(argv[1], "real-all-kinds.bin", &b1) |
	       fz_write(argv[1], "real-launch.bin", &b2);
}
