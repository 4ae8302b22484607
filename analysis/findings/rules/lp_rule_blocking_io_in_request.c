/* SPDX-License-Identifier: MIT */
/*
 * Rule "blocking-io-in-request": Requests block on file or socket I/O.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_findings_rule.h"
#include "lp_util.h"
#include "lp_waits.h"

static int rule_block_io(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	return lp_findings_block_rule(c, r, LP_BLOCK_ROWS("b.category IN ('file_io', 'socket_io')"),
				      "blocking file or socket I/O calls",
				      "file and socket I/O inside requests", NULL);
}

const struct lp_rule lp_rule_blocking_io_in_request = {
    .id = "blocking-io-in-request",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.05,
    .needs = LP_NEED_REQUESTS | LP_NEED_BLOCKING,
    .title = "Requests block on file or socket I/O",
    .measures =
	"time in blocking file and socket calls (read, write, recv, send, fsync, ... of at least "
	"the recording threshold) inside requests / request time",
    .fix = "Take the I/O off the request path: log through a queue a background thread drains, "
	   "load models and configuration once at start-up, cache name lookups, and batch or "
	   "pipeline calls to other services instead of waiting on each.",
    .eval = rule_block_io,
    .why_requests = "waiting for work and serving it cannot be told apart",
};
