/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the Kineto trace import (lp_json_stream.c over yajl and
 * zlib, lp_import_kineto.c, lp_import_foreign.c). The input is written as a
 * trace file and imported as `latprof import` would: JSON, or gzip when it
 * starts with gzip's magic (truncated and corrupt streams included).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_import_kineto.h"

static char dir[64], trace[128], outpath[128];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/lpfuzz-kineto-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(trace, sizeof(trace), "%s/t.pt.trace.json", dir);
	snprintf(outpath, sizeof(outpath), "%s/out.db", dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	int fd = open(trace, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	struct lp_import_opts o = {.force = 1};
	int rc = lp_import_kineto(trace, outpath, &o, err, sizeof(err));
	/* The contract: an error is one sentence, and no output then. */
	if (rc && (!err[0] || strchr(err, '\n') || access(outpath, F_OK) == 0))
		abort();
	unlink(outpath);
	return 0;
}
