/* SPDX-License-Identifier: MIT */
/* Wait classes as stored in lock_waits.class and cond_waits.class (the
 * wait_classes table, schemas/core.sql; decided by lp_import_waits.c). */
#ifndef LP_WAITS_H
#define LP_WAITS_H

#include <sqlite3.h>
#include <stddef.h>

/* Sets the class of every row of lock_waits and cond_waits in db (run by
 * the importer once every row is in; lp_import_waits.c says how). 0 or
 * -EIO with err filled. */
int lp_waits_classify(sqlite3 *db, char *err, size_t errlen);

enum lp_wait_class {
	LP_WAIT_CONTENTION = 0, /* queued for a lock another thread held */
	LP_WAIT_GIL = 1,	/* a Python thread waited for the GIL */
	LP_WAIT_IDLE = 2,	/* a worker waited for work, outside requests */
	LP_WAIT_JOIN = 3,	/* waited for another thread to end */
	LP_WAIT_SIGNAL = 4,	/* a condition / one-shot event wait */
	LP_WAIT_SYNC = 5,	/* the host waited for the GPU */
	LP_WAIT_NCLASSES
};

/* "contention", "gil", ...; "?" out of range. */
static inline const char *lp_wait_class_name(int c)
{
	static const char *const names[LP_WAIT_NCLASSES] = {"contention", "gil",    "idle",
							    "join",	  "signal", "sync"};
	return c >= 0 && c < LP_WAIT_NCLASSES ? names[c] : "?";
}

/* blocking_calls.call of a wait for another thread to end: with the waits
 * of class join, the breakdown's join wait (SQL list, for `call IN`). */
#define LP_JOIN_CALLS "('pthread_join', 'pthread_timedjoin_np', 'pthread_clockjoin_np')"

/* The waits lock rankings look at: contention and the GIL (its condition
 * waits counted on its mutex), never joins, idle workers or signals. Columns:
 * lock_id, thread_id, owner_tid, start_ns, dur_ns, stack_id, flags, class. */
#define LP_RANKED_WAITS                                                                            \
	"(SELECT lock_id, thread_id, owner_tid, start_ns, dur_ns, stack_id, flags, class "         \
	"FROM lock_waits WHERE class IN (0, 1) UNION ALL SELECT mutex_lock_id, thread_id, "        \
	"NULL, start_ns, dur_ns, stack_id, flags, class FROM cond_waits WHERE class = 1 "          \
	"AND mutex_lock_id IS NOT NULL)"

#endif
