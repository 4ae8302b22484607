/* SPDX-License-Identifier: MIT */
/*
 * The capture formats `latprof import` reads besides latprof's own log
 * directories: one lp_capture_format per format, defined beside its
 * importer, one line each in lp_captures.c. A format is recognized by its
 * content, never by its file name.
 */
#ifndef LP_CAPTURES_H
#define LP_CAPTURES_H

#include <stddef.h>

#include "lp_import.h"

/* The most bytes of the file's start a probe is given. */
#define LP_CAPTURE_HEAD 16

struct lp_capture_format {
	const char *name; /* short name: "nsys", "kineto" */
	const char *what; /* for "latprof: imported WHAT PATH" */
	const char *noun; /* for "PATH is neither ..., NOUN nor NOUN" */
	/* 1 when head, the file's first n bytes (n <= LP_CAPTURE_HEAD), start
	 * a capture of this format. */
	int (*probe)(const unsigned char *head, size_t n);
	/* The capture at path -> the database out: 0, or -EINVAL (damaged,
	 * foreign, a needed column missing) / -errno with one sentence in err;
	 * out is written only on success. */
	int (*import)(const char *path, const char *out, const struct lp_import_opts *opts,
		      char *err, size_t errlen);
};

/* NULL-terminated, in the order formats are probed. */
extern const struct lp_capture_format *const lp_capture_formats[];

#endif
