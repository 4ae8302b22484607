/* SPDX-License-Identifier: MIT */
/*
 * The one CHECK of the C unit tests (tests/README.md). CHECK prints
 * "ok: ..." or "FAIL (file:line): ..." and counts failures; CHECK_QUIET
 * prints failures only, for checks inside loops of thousands. main()
 * ends with `return lp_check_done();`: 0 when nothing failed, else 1.
 */
#ifndef LP_CHECK_H
#define LP_CHECK_H

#include <stdio.h>

static int lp_check_failures;

#define LP_CHECK_(quiet, c, ...)                                                                   \
	do {                                                                                       \
		int ok_ = !!(c);                                                                   \
		if (ok_ && (quiet))                                                                \
			break;                                                                     \
		if (ok_) {                                                                         \
			printf("ok: ");                                                            \
		} else {                                                                           \
			printf("FAIL (%s:%d): ", __FILE__, __LINE__);                              \
			lp_check_failures++;                                                       \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		putchar('\n');                                                                     \
	} while (0)

#define CHECK(c, ...) LP_CHECK_(0, c, __VA_ARGS__)
#define CHECK_QUIET(c, ...) LP_CHECK_(1, c, __VA_ARGS__)

static inline int lp_check_done(void)
{
	if (lp_check_failures)
		printf("%d check%s failed\n", lp_check_failures, lp_check_failures == 1 ? "" : "s");
	return lp_check_failures ? 1 : 0;
}

#endif
