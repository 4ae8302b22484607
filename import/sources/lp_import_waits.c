/* SPDX-License-Identifier: MIT */
/*
 * Wait classes: after every row is in, each lock and condition wait gets a
 * class (schemas/core.sql wait_classes, docs/schema.md "Wait classes") so
 * that reports rank what threads queued on, not everything that blocked.
 * The order of the statements below is the order of precedence:
 *
 *  1. gil: CPython's GIL is a mutex + condition variable inside the
 *     exported data object _PyRuntime (3.8-3.13: _PyRuntime.ceval.gil, and
 *     since 3.12 the main interpreter's _gil, embedded in _PyRuntime). The
 *     lock's name comes from libpython's or python's dynamic symbols, so
 *     this holds for stripped builds; with symbols, a take_gil/drop_gil top
 *     frame says the same.
 *  1a. idle: a wait inside a function that waits for work (queue.SimpleQueue
 *     .get, Rust's mpsc receive; lp_waits_futex.h), in requests or not.
 *  1b. signal: a futex wait of a condition variable or a parker, or on a
 *     word one thread alone waited on with no lock frame (lp_waits_futex.h).
 *  2. join: a semaphore waited on once, released as another thread of the
 *     process ended (it started before the wait and ended during it or
 *     within 50 ms after): how Python's Thread.join() looks (the thread's
 *     tstate lock, held for its whole life).
 *  3. signal: any other semaphore waited on exactly once: a one-shot event
 *     (Python's Condition.wait and Event.wait allocate a lock per wait);
 *     condition waits are signal by default.
 *  4. idle: a condition wait or semaphore wait outside requests, on a
 *     thread that serves requests or on a non-main thread of a process that
 *     does (a pool thread): a worker waiting for work. Requests are the most
 *     frequent outermost range, the breakdown's default.
 * Everything else stays contention. Then, for each contention wait with a
 * known owner, the owner's innermost NVTX range open when the wait began
 * (lock_waits.owner_range_id): the stage the holder was in, which names
 * the critical section. The SQL runs as the source's after_indexes step,
 * after the core and NVTX indexes exist.
 */
#include "lp_db.h"
#include "lp_import.h"
#include "lp_waits.h"
#include "lp_waits_futex.h"

/*
 * Each step runs only when its guard (a query of one integer) is non-zero,
 * and only when it is could it change a row: every UPDATE below scans all
 * of lock_waits (it has no index on lock_id or stack_id), and a run
 * without a GIL, semaphores or NVTX ranges paid four such scans, a third
 * of the import of 1 M lock waits (tests/bench run_bench.py import). A
 * guard is never needed for the result, only to skip a step that finds
 * nothing; each step drops its own temporary tables. A guard whose second
 * test scans lock_waits puts it behind CASE WHEN: SQLite computes every
 * scalar subquery of "EXISTS (a) AND EXISTS (b)" before the AND, and the
 * holder's-stage guard scanned 1 M waits without an owner (57 ms, 6% of
 * the import's instructions) when there were no ranges at all.
 */
struct classify_step {
	const char *when; /* NULL: always */
	const char *sql;
};

/* Steps 4 and 5 (idle workers): they need requests, and waits to mark,
 * and share temp tables, so they share this guard. A capture imported
 * from Kineto has ranges but no waits: 0.4 s of a 256 MiB trace was spent
 * here for nothing. */
#define LP_WAITS_IDLE_WHEN                                                                         \
	"SELECT EXISTS (SELECT 1 FROM ranges WHERE depth = 0) AND "                                \
	"(EXISTS (SELECT 1 FROM cond_waits) OR EXISTS (SELECT 1 FROM locks WHERE kind IN "         \
	"('sem', 'futex')))"

/* The JVM waits listed in temp.T0 (stack id, module) become lock waits:
 * temp.T names each stack's lock by its Java method (LP_JAVA_SITE_T0),
 * GENERIC where the perf map names none; one locks row per process and
 * name, of KIND; the condition waits they were are removed. */
#define LP_JAVA_SITE_T0 LP_JAVA_SITE_OF("t0.id")
#define LP_JVM_LOCKS(T, KIND, GENERIC, PREFIX)                                                     \
	"CREATE TEMP TABLE " T " AS SELECT id, module, CASE WHEN site = '' THEN " GENERIC          \
	" ELSE " PREFIX " || site END AS name FROM (SELECT t0.id, t0.module, " LP_JAVA_SITE_T0     \
	" AS site FROM temp." T "0 t0);"                                                           \
	"INSERT INTO locks(process_id, address, kind, name, module) SELECT t.process_id, 0, "      \
	"'" KIND "', m.name, min(m.module) FROM cond_waits c JOIN temp." T                         \
	" m ON m.id = c.stack_id "                                                                 \
	"JOIN threads t ON t.id = c.thread_id GROUP BY t.process_id, m.name;"                      \
	"INSERT INTO lock_waits(id, lock_id, thread_id, start_ns, dur_ns, stack_id, flags, "       \
	"class, "                                                                                  \
	"runq_ns) SELECT (SELECT coalesce(max(id), 0) FROM lock_waits) + row_number() OVER "       \
	"(ORDER BY c.start_ns, c.id), l.id, c.thread_id, c.start_ns, c.dur_ns, c.stack_id, "       \
	"c.flags, 0, c.runq_ns FROM cond_waits c JOIN threads t ON t.id = c.thread_id JOIN "       \
	"temp." T                                                                                  \
	" m ON m.id = c.stack_id JOIN locks l ON l.process_id = t.process_id AND l.kind = '" KIND  \
	"' AND l.address = 0 AND l.name = m.name;"                                                 \
	"DELETE FROM cond_waits WHERE stack_id IN (SELECT id FROM temp." T ");"
#define LP_JVM_MONITOR_LOCKS                                                                       \
	LP_JVM_LOCKS("lp_mon", "monitor", "'Java object monitors (synchronized)'",                 \
		     "'Java monitors entered in '")
#define LP_JVM_JUC_LOCKS                                                                           \
	LP_JVM_LOCKS("lp_juc", "juc", "'java.util.concurrent locks (ReentrantLock...)'",           \
		     "'java.util.concurrent locks taken in '")

static const struct classify_step lp_waits_steps[] = {
    /* 0. a JVM monitor entry parks on the thread's own condition variable:
     * it is a wait for a Java object's monitor. The object is not recorded:
     * one lock per process and Java method that entered it
     * (LP_JAVA_SITE_OF), one for the monitors entered from interpreted code */
    {"SELECT EXISTS (SELECT 1 FROM frames f WHERE " LP_JVM_MONITOR_FN ")",
     "CREATE TEMP TABLE lp_mon0 AS SELECT sf.stack_id AS id, min(f.module) AS module "
     "FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id WHERE sf.depth < 4 "
     "AND " LP_JVM_MONITOR_FN " AND NOT EXISTS (SELECT 1 FROM stack_frames x JOIN frames g ON "
     "g.id = x.frame_id WHERE x.stack_id = sf.stack_id AND x.depth < 6 AND "
     "g.function LIKE 'ObjectMonitor::wait(%') GROUP BY sf.stack_id;" LP_JVM_MONITOR_LOCKS
     "DROP TABLE temp.lp_mon; DROP TABLE temp.lp_mon0;"},
    /* 0a. a java.util.concurrent lock's park (lp_waits_futex.h): a lock
     * wait, one lock per process and Java method as monitors are; a park
     * for work in a queue or pool is idle */
    {"SELECT EXISTS (SELECT 1 FROM frames f WHERE " LP_JVM_PARK_FN ")",
     "CREATE TEMP TABLE lp_park AS SELECT sf.stack_id AS id, min(CASE WHEN " LP_JUC_LOCK_FN
     " THEN sf.depth END) AS dl, min(CASE WHEN " LP_JUC_WAIT_FN " THEN sf.depth END) AS dw, "
     "max(CASE WHEN " LP_JUC_IDLE_FN " THEN 1 ELSE 0 END) AS idle FROM stack_frames sf "
     "JOIN frames f ON f.id = sf.frame_id WHERE sf.stack_id IN (SELECT p.stack_id FROM "
     "stack_frames p JOIN frames f ON f.id = p.frame_id WHERE p.depth < 3 AND " LP_JVM_PARK_FN
     ") GROUP BY sf.stack_id;"
     "CREATE TEMP TABLE lp_juc0 AS SELECT p.id, min(f.module) AS module FROM temp.lp_park p "
     "JOIN stack_frames sf ON sf.stack_id = p.id JOIN frames f ON f.id = sf.frame_id WHERE "
     "p.dl IS NOT NULL AND (p.dw IS NULL OR p.dl < p.dw) AND " LP_JVM_PARK_FN
     " GROUP BY p.id;" LP_JVM_JUC_LOCKS
     "UPDATE cond_waits SET class = 2 WHERE stack_id IN (SELECT id FROM temp.lp_park WHERE "
     "idle AND (dl IS NULL OR dw < dl));"
     "DROP TABLE temp.lp_park; DROP TABLE temp.lp_juc; DROP TABLE temp.lp_juc0;"},
    /* 1. gil */
    {"SELECT EXISTS (SELECT 1 FROM locks WHERE name = '_PyRuntime' OR name LIKE "
     "'\\_PyRuntime+%' ESCAPE '\\') OR EXISTS (SELECT 1 FROM frames WHERE function IN "
     "('take_gil', 'drop_gil'))",
     "CREATE TEMP TABLE lp_gil_lock AS SELECT DISTINCT c.mutex_lock_id AS id FROM cond_waits c "
     "JOIN locks l ON l.id = c.mutex_lock_id "
     "WHERE l.name = '_PyRuntime' OR l.name LIKE '\\_PyRuntime+%' ESCAPE '\\';"
     "CREATE TEMP TABLE lp_gil_stack AS SELECT s.id FROM stacks s JOIN frames f "
     "ON f.id = s.top_frame WHERE f.function IN ('take_gil', 'drop_gil');"
     "UPDATE cond_waits SET class = 1 WHERE mutex_lock_id IN (SELECT id FROM temp.lp_gil_lock) "
     "OR stack_id IN (SELECT id FROM temp.lp_gil_stack);"
     "UPDATE lock_waits SET class = 1 WHERE lock_id IN (SELECT id FROM temp.lp_gil_lock) "
     "OR stack_id IN (SELECT id FROM temp.lp_gil_stack);"
     "DROP TABLE temp.lp_gil_lock; DROP TABLE temp.lp_gil_stack;"},
    /* 1a. idle by the function that waits for work (lp_waits_futex.h) */
    {"SELECT EXISTS (SELECT 1 FROM frames f WHERE " LP_IDLE_FN ")",
     "CREATE TEMP TABLE lp_idle_stack AS SELECT DISTINCT sf.stack_id AS id FROM stack_frames sf "
     "JOIN frames f ON f.id = sf.frame_id WHERE sf.depth < 6 AND " LP_IDLE_FN ";"
     "UPDATE lock_waits SET class = 2 WHERE class != 1 AND stack_id IN "
     "(SELECT id FROM temp.lp_idle_stack);"
     "UPDATE cond_waits SET class = 2 WHERE class != 1 AND stack_id IN "
     "(SELECT id FROM temp.lp_idle_stack);"
     "DROP TABLE temp.lp_idle_stack;"},
    /* 1b. futex words (lp_waits_futex.h): condition and parker waits are
     * signal, as pthread condition waits are; so is a word only one thread
     * ever waited on that no lock frame names (a one-shot event, a join) */
    {"SELECT EXISTS (SELECT 1 FROM locks WHERE kind = 'futex')",
     "CREATE TEMP TABLE lp_foreign AS SELECT w.stack_id AS id, max(CASE WHEN " LP_FUTEX_LOCK_FN
     " THEN 2 WHEN " LP_FUTEX_SIGNAL_FN " THEN 1 ELSE 0 END) AS how FROM (SELECT DISTINCT "
     "stack_id FROM lock_waits WHERE lock_id IN (SELECT id FROM locks WHERE kind = 'futex')) w "
     "JOIN stack_frames sf ON sf.stack_id = w.stack_id AND sf.depth < 6 "
     "JOIN frames f ON f.id = sf.frame_id GROUP BY w.stack_id;"
     "CREATE TEMP TABLE lp_foreign_one AS SELECT lock_id AS id FROM lock_waits WHERE lock_id IN "
     "(SELECT id FROM locks WHERE kind = 'futex') GROUP BY lock_id "
     "HAVING count(DISTINCT thread_id) = 1;"
     "UPDATE lock_waits SET class = 4 WHERE class = 0 AND lock_id IN (SELECT id FROM locks "
     "WHERE kind = 'futex') AND (stack_id IN (SELECT id FROM temp.lp_foreign WHERE how = 1) OR "
     "(lock_id IN (SELECT id FROM temp.lp_foreign_one) AND coalesce(stack_id NOT IN "
     "(SELECT id FROM temp.lp_foreign WHERE how = 2), 1)));"
     "DROP TABLE temp.lp_foreign; DROP TABLE temp.lp_foreign_one;"},
    /* 2. join, 3. signal: semaphores waited on once */
    {"SELECT EXISTS (SELECT 1 FROM locks WHERE kind = 'sem')",
     /* a wait is found by its key (start_ns, id): lock_waits is clustered */
     "CREATE TEMP TABLE lp_once AS SELECT min(w.start_ns) AS s, min(w.id) AS id "
     "FROM lock_waits w JOIN locks l ON l.id = w.lock_id AND l.kind = 'sem' WHERE w.class = 0 "
     "GROUP BY w.lock_id HAVING count(*) = 1;"
     "UPDATE lock_waits SET class = 4 WHERE (start_ns, id) IN (SELECT s, id FROM temp.lp_once);"
     "UPDATE lock_waits SET class = 3 WHERE (start_ns, id) IN (SELECT w.start_ns, w.id "
     "FROM temp.lp_once o JOIN lock_waits w ON w.start_ns = o.s AND w.id = o.id "
     "JOIN threads me ON me.id = w.thread_id "
     "WHERE EXISTS (SELECT 1 FROM threads t WHERE t.process_id = me.process_id "
     "AND t.id != me.id AND t.start_ns <= w.start_ns AND t.end_ns >= w.start_ns "
     "AND t.end_ns <= w.start_ns + w.dur_ns + 50000000));"
     "DROP TABLE temp.lp_once;"},
    /* 4. idle: requests are outermost ranges, so none without them */
    {LP_WAITS_IDLE_WHEN,
     "CREATE TEMP TABLE lp_req (thread_id INTEGER, start_ns INTEGER, end_ns INTEGER);"
     "INSERT INTO temp.lp_req SELECT start_thread_id, start_ns, end_ns FROM ranges "
     "WHERE depth = 0 AND name_id = (SELECT name_id FROM ranges WHERE depth = 0 "
     "GROUP BY name_id ORDER BY count(*) DESC, name_id LIMIT 1);"
     "CREATE INDEX temp.lp_req_at ON lp_req(thread_id, start_ns);"
     "CREATE TEMP TABLE lp_worker AS SELECT t.id FROM threads t JOIN processes p "
     "ON p.id = t.process_id WHERE t.process_id IN (SELECT DISTINCT x.process_id FROM "
     "temp.lp_req r JOIN threads x ON x.id = r.thread_id) "
     "AND (t.tid != p.pid OR t.id IN (SELECT thread_id FROM temp.lp_req));"
     "UPDATE cond_waits SET class = 2 WHERE class = 4 AND thread_id IN "
     "(SELECT id FROM temp.lp_worker) AND NOT COALESCE((SELECT r.end_ns > cond_waits.start_ns "
     "FROM temp.lp_req r WHERE r.thread_id = cond_waits.thread_id AND r.start_ns < "
     "cond_waits.start_ns + cond_waits.dur_ns ORDER BY r.start_ns DESC LIMIT 1), 0);"},
    {"SELECT EXISTS (SELECT 1 FROM ranges WHERE depth = 0) AND "
     "EXISTS (SELECT 1 FROM locks WHERE kind IN ('sem', 'futex'))",
     "UPDATE lock_waits SET class = 2 WHERE class IN (0, 4) AND thread_id IN "
     "(SELECT id FROM temp.lp_worker) AND lock_id IN (SELECT id FROM locks WHERE kind = 'sem') "
     "AND NOT COALESCE((SELECT r.end_ns > lock_waits.start_ns FROM temp.lp_req r WHERE "
     "r.thread_id = lock_waits.thread_id AND r.start_ns < lock_waits.start_ns + "
     "lock_waits.dur_ns ORDER BY r.start_ns DESC LIMIT 1), 0);"
     "UPDATE lock_waits SET class = 2 WHERE class = 4 AND thread_id IN "
     "(SELECT id FROM temp.lp_worker) AND lock_id IN (SELECT id FROM locks WHERE kind = 'futex') "
     "AND NOT COALESCE((SELECT r.end_ns > lock_waits.start_ns FROM temp.lp_req r WHERE "
     "r.thread_id = lock_waits.thread_id AND r.start_ns < lock_waits.start_ns + "
     "lock_waits.dur_ns ORDER BY r.start_ns DESC LIMIT 1), 0);"},
    {LP_WAITS_IDLE_WHEN, "DROP TABLE temp.lp_req; DROP TABLE temp.lp_worker;"},
    /* the holder's stage: the owner's innermost range open when the wait
     * began; nothing to find without ranges */
    {"SELECT CASE WHEN EXISTS (SELECT 1 FROM ranges) THEN "
     "EXISTS (SELECT 1 FROM lock_waits WHERE owner_tid IS NOT NULL AND class = 0) END",
     "CREATE TEMP TABLE lp_rng (id INTEGER, th INTEGER, s INTEGER, e INTEGER);"
     "INSERT INTO temp.lp_rng SELECT id, start_thread_id, start_ns, end_ns FROM ranges;"
     "CREATE INDEX temp.lp_rng_at ON lp_rng(th, s);"
     /* bounds the backward scan for an owner outside every range */
     "CREATE TEMP TABLE lp_rmax AS SELECT coalesce(max(e - s), 0) AS d FROM temp.lp_rng;"
     "UPDATE lock_waits SET owner_range_id = (SELECT r.id FROM temp.lp_rng r WHERE r.th = "
     "(SELECT t.id FROM threads t JOIN locks l ON l.process_id = t.process_id WHERE "
     "l.id = lock_waits.lock_id AND t.tid = lock_waits.owner_tid AND coalesce(t.start_ns, 0) "
     "<= lock_waits.start_ns ORDER BY t.start_ns DESC LIMIT 1) AND r.s <= lock_waits.start_ns "
     "AND r.s >= lock_waits.start_ns - (SELECT d FROM temp.lp_rmax) "
     "AND r.e > lock_waits.start_ns ORDER BY r.s DESC LIMIT 1) "
     "WHERE owner_tid IS NOT NULL AND class = 0;"
     "DROP TABLE temp.lp_rng; DROP TABLE temp.lp_rmax;"},
    /* a hold's stage: the holder's own innermost range open at the
     * acquisition */
    {"SELECT CASE WHEN EXISTS (SELECT 1 FROM ranges) THEN EXISTS (SELECT 1 FROM lock_holds) END",
     "UPDATE lock_holds SET range_id = (SELECT r.id FROM ranges r WHERE r.start_thread_id = "
     "lock_holds.thread_id AND r.start_ns <= lock_holds.start_ns AND r.end_ns > "
     "lock_holds.start_ns ORDER BY r.start_ns DESC LIMIT 1);"},
};

int lp_waits_classify(sqlite3 *db, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(lp_waits_steps) / sizeof(lp_waits_steps[0]); i++) {
		const struct classify_step *s = &lp_waits_steps[i];
		int64_t run = 1;
		int rc = s->when ? lp_db_get_int(db, s->when, NULL, 0, 0, &run, err, errlen) : 0;
		if (rc == 0 && run)
			rc = lp_db_exec(db, s->sql, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static int waits_after_indexes(struct lp_import *imp)
{
	return lp_waits_classify(imp->db, imp->err, imp->errlen);
}

const struct lp_import_source lp_src_waits = {
    .name = "waits",
    .after_indexes = waits_after_indexes,
};
