/* SPDX-License-Identifier: MIT */
/*
 * Progress of long work on a terminal: one line on stderr, rewritten in
 * place, "latprof: WHAT: DONE of TOTAL UNIT (P%), RATE UNIT/s, N s left",
 * shown only once the command has run a second, at most 5 times a second,
 * and erased when the step ends. Nothing at all when stderr is not a
 * terminal or the command was given --quiet (lp_progress_init); never on
 * stdout. A command calls lp_progress_init once; each long step calls
 * begin, adds what it did (lp_db_step_all adds each row it steps), end.
 * LATPROF_PROGRESS_DELAY_MS=N replaces the second (tests use 0).
 */
#ifndef LP_PROGRESS_H
#define LP_PROGRESS_H

#include <stdint.h>

/* Nonzero while a step is shown or may be: the only check on hot paths. */
extern int lp_progress_active;

/* Enables progress for this command when stderr is a terminal and not quiet. */
void lp_progress_init(int quiet);
int lp_progress_enabled(void);

/* A step of total units ("rows", "bytes"); a step in progress ends first. */
void lp_progress_begin(const char *what, uint64_t total, const char *unit);
void lp_progress_slow_add(uint64_t n);
static inline void lp_progress_add(uint64_t n)
{
	if (lp_progress_active)
		lp_progress_slow_add(n);
}
/* Ends the step and erases its line. */
void lp_progress_end(void);

#endif
