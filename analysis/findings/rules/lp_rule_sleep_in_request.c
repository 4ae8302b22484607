/* SPDX-License-Identifier: MIT */
/*
 * Rule "sleep-in-request": Requests sleep.
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

static int rule_sleep(struct lp_findings_ctx *c, const struct lp_rule *r)
{
	return lp_findings_block_rule(c, r, LP_BLOCK_ROWS("b.category = 'sleep'"), "sleep calls",
				      "sleeping inside requests", "sleep");
}

const struct lp_rule lp_rule_sleep_in_request = {
    .id = "sleep-in-request",
    .unit = "share",
    .cmp = LP_CMP_GE,
    .threshold = 0.05,
    .needs = LP_NEED_REQUESTS | LP_NEED_BLOCKING,
    .title = "Requests sleep",
    .measures = "time in nanosleep/clock_nanosleep/usleep/sleep inside requests / request time",
    .fix = "Wait for the event itself (a condition variable, a future, poll on the descriptor) "
	   "instead of sleeping and retrying; for SQLite's busy handler, use WAL mode and short "
	   "write transactions so writers do not collide.",
    .eval = rule_sleep,
    .why_requests = "waiting for work and serving it cannot be told apart",
};
