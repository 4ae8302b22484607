/* SPDX-License-Identifier: MIT */
/*
 * Frames of the runtimes that wait on futex words themselves (Rust's std,
 * parking_lot), as SQL conditions on frames.function `f.function`: which
 * waits are for a lock and which for a condition or a parker
 * (lp_import_waits.c), and which frames are the runtime's lock code that a
 * call site skips (lp_locks.c), as it skips lock wrappers. Names appear
 * demangled (legacy Rust mangling) or raw (v0 mangling, "_R...": its
 * identifiers are length-prefixed, "14lock_contended").
 */
#ifndef LP_WAITS_FUTEX_H
#define LP_WAITS_FUTEX_H

/* A lock's slow path: std's Mutex/RwLock, parking_lot's raw locks. */
#define LP_FUTEX_LOCK_FN                                                                           \
	"(f.function LIKE '%lock\\_contended%' ESCAPE '\\' OR f.function LIKE "                    \
	"'%read\\_contended%' ESCAPE '\\' OR f.function LIKE '%write\\_contended%' ESCAPE '\\' "   \
	"OR f.function LIKE '%lock\\_slow%' ESCAPE '\\' OR f.function LIKE "                       \
	"'%lock\\_exclusive\\_slow%' ESCAPE '\\' OR f.function LIKE '%lock\\_shared\\_slow%' "     \
	"ESCAPE '\\')"

/* A condition variable's or a parker's wait: woken by a signal, not by a
 * release. */
#define LP_FUTEX_SIGNAL_FN                                                                         \
	"(f.function LIKE '%Condvar%' OR f.function LIKE '%Parker%' OR f.function LIKE "           \
	"'%thread\\_parking%' ESCAPE '\\' OR f.function LIKE '%::park%' OR f.function LIKE "       \
	"'%4park%' OR f.function LIKE '%Once%wait%')"

/* The runtime's own frames between a futex wait and the code that asked
 * for the lock: the syscall wrapper, the futex helpers, the lock's slow
 * path; in a JVM, its monitor code and the glue from Java code into it
 * (SharedRuntime, InterpreterRuntime, C1's Runtime1, C2's runtime stubs
 * named by the perf map), so the site is the Java method. */
#define LP_FUTEX_RUNTIME_FN                                                                        \
	"(f.function = 'syscall' OR f.function LIKE '%futex\\_wait%' ESCAPE '\\' OR "              \
	"f.function LIKE 'std::sys::sync::%' OR f.function LIKE '%3std3sys4sync%' OR "             \
	"f.function LIKE 'std::sys::pal::unix::futex::%' OR f.function LIKE "                      \
	"'%3std3sys3pal4unix5futex%' OR f.function LIKE 'os::PlatformEvent::park%' OR "            \
	"f.function LIKE 'ObjectMonitor::%' OR f.function LIKE 'ObjectSynchronizer::%' "           \
	"OR f.function LIKE 'Parker::park%' OR f.function = 'Unsafe_Park' OR f.function LIKE "     \
	"'% jdk.internal.misc.Unsafe.park(%' OR f.function LIKE "                                  \
	"'% java.util.concurrent.locks.%' OR f.function LIKE 'SharedRuntime::%' OR f.function "    \
	"LIKE 'InterpreterRuntime::%' OR "                                                         \
	"f.function LIKE 'Runtime1::%' OR f.function LIKE '\\_%\\_Java' ESCAPE '\\' "              \
	"OR " LP_FUTEX_LOCK_FN ")"

/* A wait for work, by the function that waits (within the innermost six
 * frames): CPython's queue.SimpleQueue.get (a Pool's task handler,
 * concurrent.futures' idle workers), Rust's std::sync::mpsc receive, the
 * JVM's own threads waiting for their next job (VM operations, service,
 * watcher, compiler, GC workers, signal dispatcher), MariaDB's tpool
 * workers waiting for tasks (InnoDB's purge, I/O and background jobs).
 * Class idle wherever it happens, requests or not. */
#define LP_IDLE_FN                                                                                 \
	"(f.function = '_queue_SimpleQueue_get_impl' OR f.function LIKE '%mpmc%recv%' OR "         \
	"f.function LIKE 'VMThread::wait\\_for\\_operation%' ESCAPE '\\' OR f.function LIKE "      \
	"'ServiceThread::service\\_thread\\_entry%' ESCAPE '\\' OR f.function LIKE "               \
	"'WatcherThread::sleep%' OR f.function LIKE 'CompileQueue::get%' OR f.function LIKE "      \
	"'WorkerThreads%' OR f.function LIKE 'WorkerThread::run%' OR f.function LIKE "             \
	"'GangWorker::loop%' OR f.function LIKE 'ConcurrentGCThread::%' OR f.function LIKE "       \
	"'MonitorDeflationThread::%' OR f.function LIKE 'NotificationThread::%' OR "               \
	"f.function LIKE 'os::signal\\_wait%' ESCAPE '\\' OR f.function LIKE "                     \
	"'G1%Thread::run\\_service%' ESCAPE '\\' OR f.function LIKE 'G1%Thread::wait%' OR "        \
	"f.function LIKE 'tpool::thread\\_pool\\_generic::wait\\_for\\_tasks(%' ESCAPE '\\')"

/* A JVM thread entering a Java object's monitor (synchronized): its park
 * inside ObjectMonitor::enter, not a condition wait. */
#define LP_JVM_MONITOR_FN                                                                          \
	"(f.function LIKE 'ObjectMonitor::EnterI(%' OR f.function LIKE 'ObjectMonitor::enter(%')"

/* A JVM thread parked by java.util.concurrent (LockSupport.park ends in
 * HotSpot's Unsafe_Park). The innermost Java frame that says why decides:
 * a lock's acquire (ReentrantLock, ReentrantReadWriteLock, AQS acquire,
 * StampedLock) is contention on that lock; a condition's await, a queue's
 * take or a pool's wait for tasks is not. Java frames are named from the
 * JVM's perf map (compiled code only: an interpreted frame is
 * "Interpreter", which says neither). */
#define LP_JVM_PARK_FN "(f.function = 'Unsafe_Park')"
#define LP_JUC_LOCK_FN                                                                             \
	"(f.function LIKE '% java.util.concurrent.locks.ReentrantLock%' OR f.function LIKE "       \
	"'% java.util.concurrent.locks.ReentrantReadWriteLock%' OR f.function LIKE "               \
	"'% java.util.concurrent.locks.AbstractQueued%Synchronizer.acquire%' OR f.function LIKE "  \
	"'% java.util.concurrent.locks.StampedLock.acquire%')"
#define LP_JUC_WAIT_FN                                                                             \
	"(f.function LIKE '%$ConditionObject.await%' OR f.function LIKE "                          \
	"'% java.util.concurrent.%Queue%.take(%' OR f.function LIKE "                              \
	"'% java.util.concurrent.%Queue%.poll(%' OR f.function LIKE "                              \
	"'% java.util.concurrent.ThreadPoolExecutor.getTask(%' OR f.function LIKE "                \
	"'% java.util.concurrent.ForkJoinPool.awaitWork(%' OR f.function LIKE "                    \
	"'% java.util.concurrent.SynchronousQueue%')"
/* Of those, the waits for work: class idle. */
#define LP_JUC_IDLE_FN                                                                             \
	"(f.function LIKE '% java.util.concurrent.%Queue%.take(%' OR f.function LIKE "             \
	"'% java.util.concurrent.%Queue%.poll(%' OR f.function LIKE "                              \
	"'% java.util.concurrent.ThreadPoolExecutor.getTask(%' OR f.function LIKE "                \
	"'% java.util.concurrent.ForkJoinPool.awaitWork(%')"

/* The Java method a JVM lock wait comes from, for the lock's name: the
 * innermost frame named from the JVM's perf map ("void App.serve(long)")
 * outside the runtime's own code (LP_FUTEX_RUNTIME_FN), as g.function of
 * frames g joined to stack_frames x; empty when that code ran interpreted
 * (an interpreted frame is not named). A method the JIT inlined into its
 * caller is the caller's frame: the perf map names compiled code only. */
#define LP_JAVA_SITE_OF(stack)                                                                     \
	"coalesce((SELECT CASE WHEN instr(g.function, ' ') BETWEEN 1 AND instr(g.function, '(') "  \
	"THEN substr(g.function, instr(g.function, ' ') + 1, instr(g.function, '(') - "            \
	"instr(g.function, ' ') - 1) ELSE substr(g.function, 1, instr(g.function, '(') - 1) END "  \
	"FROM stack_frames x JOIN frames g ON g.id = x.frame_id WHERE x.stack_id = " stack         \
	" AND g.module LIKE '%/perf-%.map' AND g.function LIKE '%_.%(%' AND NOT (" LP_JAVA_GLUE_FN \
	") ORDER BY x.depth LIMIT 1), '')"
#define LP_JAVA_GLUE_FN                                                                            \
	"g.function LIKE '% java.util.concurrent.locks.%' OR g.function LIKE "                     \
	"'% jdk.internal.misc.Unsafe.%' OR g.function LIKE '\\_%\\_Java' ESCAPE '\\'"

#endif
