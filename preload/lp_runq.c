/* SPDX-License-Identifier: MIT */
/*
 * Run-queue time inside recorded waits (lp_runq.h).
 *
 * The kernel adds to a thread's schedstat run_delay each time the thread
 * gets a CPU after waiting on a run queue: after a wake-up, and after a
 * preemption. Read before and after a call, it would give the call's own
 * run-queue time exactly, but the read before would be on the path of
 * every call, most of which never block. So each recorded wait reads it
 * once, after the call, with the thread's CPU time beside it, and splits
 * what accrued since the thread's previous recorded wait ended:
 *
 *   gap  = start - the previous read (on a CPU, preempted, or in waits
 *          too short to record)
 *   off  = gap - CPU time since then, when positive: the gap's time off
 *          the CPU, at most all of it on a run queue
 *   runq = run_delay since then - off, in 0..end - start
 *
 * The breakdown counts the gap's time off the CPU apart (a stage's from
 * its task-clock, a whole thread's from its run_delay at its end), so the
 * wait is given only what the gap cannot hold, and a wait's share errs
 * low by at most the CPU time the call itself used in the kernel (a few
 * us), never high by a preemption before it.
 *
 * One descriptor per thread that records a wait (pread at offset 0, about
 * 0.3 us against 1.7 us to open, read and close each time), closed by a
 * key destructor at thread exit and in a forked child (where it names the
 * parent's thread). The app may close or reuse the number (a daemon
 * closing every descriptor): a read that does not parse as schedstat, or
 * goes backwards, ends the thread's use of it without closing it (it may
 * be the app's now). It lives at LP_RUNQ_FD_MIN or above; where
 * RLIMIT_NOFILE leaves no room there, each read opens and closes it, so
 * the app keeps every descriptor its limit allows.
 */
#define _GNU_SOURCE
#include "lp_runq.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "lp_core.h"
#include "lp_raw.h"

enum { RUNQ_NEW = 0, RUNQ_OPEN = 1, RUNQ_OFF = 2, RUNQ_TRANSIENT = 3 };

/* Our descriptor is kept at or above this number, out of the range apps
 * count on (as the log's and the process table's are). */
#define LP_RUNQ_FD_MIN 512

struct lp_runq_thread {
	int state; /* RUNQ_* */
	int fd;
	uint64_t at;	     /* when schedstat was read last; 0: never */
	uint64_t delay, cpu; /* schedstat then */
	int64_t carry;	     /* share computed but not given: past a wait's end */
};

static __thread struct lp_runq_thread lp_rq __attribute__((tls_model("initial-exec")));
static pthread_key_t lp_runq_key;
static int lp_runq_key_ok;

static void lp_runq_close(struct lp_runq_thread *t)
{
	if (t->state == RUNQ_OPEN)
		LP_RAW(SYS_close, t->fd, 0, 0, 0, 0, 0);
}

/* Also when a destructor that runs after this one records a wait: no
 * descriptor is opened again for a thread on its way out. */
static void lp_runq_thread_end(void *arg)
{
	(void)arg;
	int saved = errno;
	lp_runq_close(&lp_rq);
	lp_rq.state = RUNQ_OFF;
	errno = saved;
}

static void lp_runq_forked(void)
{
	int saved = errno;
	lp_runq_close(&lp_rq);
	lp_rq.state = RUNQ_NEW;
	lp_rq.at = 0;
	lp_rq.carry = 0;
	errno = saved;
}

__attribute__((constructor)) static void lp_runq_init(void)
{
	lp_runq_key_ok = pthread_key_create(&lp_runq_key, lp_runq_thread_end) == 0;
	pthread_atfork(NULL, NULL, lp_runq_forked);
}

/* The next number of s at *p, skipping one space; 0 when none. */
static int lp_runq_num(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (s < end && *s == ' ')
		s++;
	const char *d = s;
	*v = 0;
	while (s < end && *s >= '0' && *s <= '9')
		*v = *v * 10 + (uint64_t)(*s++ - '0');
	*p = s;
	return s > d;
}

static long lp_runq_open(void)
{
	return LP_RAW(SYS_openat, AT_FDCWD, "/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC, 0,
		      0, 0);
}

/* CPU ns and run-queue ns of the calling thread: 1, or 0 (then its
 * descriptor is no longer used). */
static int lp_runq_read(struct lp_runq_thread *t, uint64_t *cpu, uint64_t *delay)
{
	if (t->state == RUNQ_NEW || t->state == RUNQ_TRANSIENT) {
		long fd = lp_runq_open();
		if (fd < 0) {
			t->state = RUNQ_OFF;
			return 0;
		}
		long hi = t->state == RUNQ_TRANSIENT
			      ? -1
			      : LP_RAW(SYS_fcntl, fd, F_DUPFD_CLOEXEC, LP_RUNQ_FD_MIN, 0, 0, 0);
		if (hi >= 0) {
			LP_RAW(SYS_close, fd, 0, 0, 0, 0, 0);
			t->fd = (int)hi;
			t->state = RUNQ_OPEN;
			if (lp_runq_key_ok)
				pthread_setspecific(lp_runq_key, (void *)1);
		} else {
			t->fd = (int)fd;
			t->state = RUNQ_TRANSIENT;
		}
	}
	if (t->state != RUNQ_OPEN && t->state != RUNQ_TRANSIENT)
		return 0;
	char buf[96];
	long n = LP_RAW(SYS_pread64, t->fd, buf, sizeof(buf), 0, 0, 0);
	if (t->state == RUNQ_TRANSIENT)
		LP_RAW(SYS_close, t->fd, 0, 0, 0, 0, 0);
	const char *p = buf, *end = buf + (n > 0 ? n : 0);
	uint64_t pcount;
	/* "cpu_ns run_delay_ns timeslices\n" */
	if (n <= 0 || !lp_runq_num(&p, end, cpu) || !lp_runq_num(&p, end, delay) ||
	    !lp_runq_num(&p, end, &pcount) || p >= end || *p != '\n' ||
	    (t->at && (*cpu < t->cpu || *delay < t->delay))) {
		t->state = RUNQ_OFF; /* not ours any more: left open */
		return 0;
	}
	return 1;
}

/* The thread's CPU time in schedstat is brought up to date only at a tick
 * or a switch, so a share computed from two reads errs by up to a tick
 * either way; clamped to the wait, those errors would not cancel (the sum
 * came out 15% under run_delay on a backend of many short waits). What a
 * wait could not hold past its end is carried to the next one, bounded to
 * a few ticks so that one bad read cannot move time far. A share below
 * zero is not carried: the gap then held short sleeps too, time off the
 * CPU that was never on a run queue. */
static int64_t lp_runq_bound(int64_t carry)
{
	const int64_t most = 20 * 1000 * 1000;
	return carry > most ? most : carry < 0 ? 0 : carry;
}

uint64_t lp_runq_take(uint64_t start, uint64_t end)
{
	struct lp_runq_thread *t = &lp_rq;
	int saved = errno;
	uint64_t cpu, delay, runq = LP_RUNQ_UNKNOWN;
	if (!lp_runq_read(t, &cpu, &delay)) {
		errno = saved;
		return LP_RUNQ_UNKNOWN;
	}
	if (t->at && end >= start) {
		uint64_t gap = start > t->at ? start - t->at : 0;
		uint64_t ran = cpu - t->cpu, waited = delay - t->delay;
		uint64_t off = gap > ran ? gap - ran : 0;
		int64_t share = (int64_t)waited - (int64_t)off + t->carry;
		int64_t cap = (int64_t)(end - start);
		int64_t given = share < 0 ? 0 : share > cap ? cap : share;
		runq = (uint64_t)given;
		t->carry = lp_runq_bound(share - given);
	}
	t->at = lp_now();
	t->cpu = cpu;
	t->delay = delay;
	errno = saved;
	return runq;
}
