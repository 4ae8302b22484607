/* SPDX-License-Identifier: MIT */
/* lp_suggest: the closest name within 2 edits, a swap of neighbours being
 * one edit; nothing for a word too far from every name, or too long. */
#include <string.h>

#include "lp_check.h"
#include "lp_suggest.h"

static const char *const cmds[] = {"run", "report", "plot", "diff", "check", "export", "import"};
static const char *const rules[] = {"lock-contention", "gil-contention", "cpu-saturated",
				    "cpu-starved", "tail-outlier"};

static void want(const char *word, const char *const *names, size_t n, const char *expect)
{
	const char *got = lp_suggest(word, names, n);
	int ok = expect ? got && !strcmp(got, expect) : got == NULL;
	CHECK(ok, "'%s' -> %s (want %s)", word, got ? got : "none", expect ? expect : "none");
}

int main(void)
{
	size_t nc = sizeof(cmds) / sizeof(cmds[0]), nr = sizeof(rules) / sizeof(rules[0]);
	want("reprot", cmds, nc, "report");  /* one swap */
	want("reporrt", cmds, nc, "report"); /* one insertion */
	want("chek", cmds, nc, "check");     /* one deletion */
	want("exprot", cmds, nc, "export");  /* swap, not import (3 edits) */
	want("plt", cmds, nc, "plot");
	want("report", cmds, nc, "report"); /* exact */
	want("summarize", cmds, nc, NULL);  /* far from all */
	want("lock-contetion", rules, nr, "lock-contention");
	want("cpu-starve", rules, nr, "cpu-starved");
	want("cpu-saturatd", rules, nr, "cpu-saturated");
	want("tail", rules, nr, NULL);
	/* a long word many edits from every name */
	want("lock-contention-lock-contention-lock-con", rules, nr, NULL);
	want("", cmds, nc, NULL); /* 3+ edits from every name */
	return lp_check_done();
}
