/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the `latprof check --expect` expression parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lp_expect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0; /* the CLI hands the parser a C string */
	struct lp_expect e;
	size_t pos = 0;
	memset(&e, 0, sizeof(e));
	if (lp_expect_parse(text, &e, &pos, err, sizeof(err)) == 0)
		lp_expect_free(&e);
	free(text);
	return 0;
}
