/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the event-log reader and importer (lp_logread.c,
 * lp_import*.c). The input becomes one .lplog file in a temp directory,
 * then lp_import_dir() runs on it, as `latprof import` would.
 *
 * Input that starts with the log magic is written as is (header checks),
 * then shaped by the header's last reserved byte (0 from any writer) as a
 * full disk or a damaged copy leaves a log: sparse, holed or extended
 * (shape_file). Its length is the fuzzer's, so cut files come for free.
 * Anything else is record bytes: the target wraps it in a valid header and
 * 4 KiB chunks (each chunk header's `committed` is the input's own bytes),
 * so the fuzzer spends its time in the record parsers.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_import.h"
#include "lp_log_format.h"

#define CHUNK 4096u

static char dir[64], logpath[128], outpath[128];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/lpfuzz-import-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(logpath, sizeof(logpath), "%s/p1-0.lplog", dir);
	snprintf(outpath, sizeof(outpath), "%s/out.db", dir);
	return 0;
}

static void write_all(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		abort();
}

static void write_wrapped(int fd, const uint8_t *data, size_t size)
{
	/* The first 8 bytes choose committed of chunk 0 (the rest: full). */
	size_t cap = CHUNK - sizeof(struct lp_chunk_header);
	uint32_t n = (uint32_t)((size + cap - 1) / cap);
	if (!n)
		n = 1;
	struct lp_log_header h = {0};
	memcpy(h.magic, LP_LOG_MAGIC, 8);
	h.version = LP_LOG_VERSION;
	h.bom = LP_LOG_BOM;
	h.header_size = LP_LOG_HEADER_SIZE;
	h.chunk_size = CHUNK;
	h.max_chunks = n;
	h.n_chunks = n;
	h.clock_kind = LP_CLOCK_MONOTONIC_NS;
	h.pid = 1;
	h.start_ns = 1000;
	write_all(fd, &h, sizeof(h));
	for (uint32_t c = 0; c < n; c++) {
		uint8_t chunk[CHUNK] = {0};
		size_t off = (size_t)c * cap, len = size - off < cap ? size - off : cap;
		struct lp_chunk_header ch = {.magic = LP_CHUNK_MAGIC, .index = c, .committed = len};
		memcpy(chunk, &ch, sizeof(ch));
		memcpy(chunk + sizeof(ch), data + off, len);
		write_all(fd, chunk, CHUNK);
	}
}

/* Low 4 bits: that many 64 KiB of hole appended (past the records, as in
 * a log made at full size). High 4 bits k > 0: a hole punched over the
 * k-th 4 KiB block after the header (records the disk never got). */
static void shape_file(int fd, const uint8_t *data, size_t size)
{
	if (size < LP_LOG_HEADER_SIZE)
		return;
	uint8_t b = data[LP_LOG_HEADER_SIZE - 1];
	if (b & 15)
		if (ftruncate(fd, (off_t)size + (off_t)(b & 15) * 65536) != 0)
			abort();
	if (b >> 4) /* ignore EOPNOTSUPP: then the file just stays whole */
		(void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)LP_LOG_HEADER_SIZE * (b >> 4), LP_LOG_HEADER_SIZE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	unlink(outpath);
	int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (size >= 8 && !memcmp(data, LP_LOG_MAGIC, 8)) {
		write_all(fd, data, size);
		shape_file(fd, data, size);
	} else
		write_wrapped(fd, data, size);
	close(fd);
	struct lp_import_opts o = {.force = 1};
	struct lp_import_stats st;
	lp_import_dir(dir, outpath, &o, &st, err, sizeof(err));
	return 0;
}
