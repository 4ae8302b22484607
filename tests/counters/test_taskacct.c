/* SPDX-License-Identifier: MIT */
/*
 * collector/lp_taskacct.c against the kernel's answers through other doors:
 * each of its three readings (sched, stat, and the schedstat/status
 * fallback a kernel without CONFIG_SCHED_DEBUG leaves) for this thread
 * against getrusage(RUSAGE_THREAD) and CLOCK_THREAD_CPUTIME_ID read around
 * it, and the whole read of another thread against what that thread
 * measured itself before it blocked. Included whole, so its static readers
 * are tested one by one.
 */
#define _GNU_SOURCE
#include "../../collector/lp_taskacct.c"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "lp_check.h"

static uint64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ~20 ms of CPU, 200 fresh pages and 10 naps on the calling thread. */
static void work(void)
{
	uint64_t until = clock_ns() + 20000000u;
	while (clock_ns() < until)
		;
	char *p =
	    mmap(NULL, 200 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		madvise(p, 200 * 4096, MADV_NOHUGEPAGE);
		for (int i = 0; i < 200; i++)
			p[i * 4096] = 1;
	}
	for (int i = 0; i < 10; i++)
		usleep(500);
}

struct own {
	uint64_t cpu_ns;
	long switches, minflt;
};

static void own_figures(struct own *o)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	o->cpu_ns = clock_ns();
	o->switches = ru.ru_nvcsw + ru.ru_nivcsw;
	o->minflt = ru.ru_minflt;
}

static int have(const struct lp_task_acct *a, enum lp_acct_field f)
{
	return !!(a->have & (1u << f));
}

/* Readings of this thread bracketed by its own figures. */
static void self_readers(void)
{
	uint32_t tid = (uint32_t)gettid();
	struct own before, after;
	struct lp_task_acct s = {0}, st = {0}, fb = {0};
	work();
	own_figures(&before);
	acct_from_sched(tid, &s);
	acct_from_stat(tid, &st);
	acct_fallback(tid, &fb);
	own_figures(&after);
	if (!have(&s, LP_ACCT_CPU_NS)) {
		printf("skip: no /proc/PID/sched here (kernel without CONFIG_SCHED_DEBUG)\n");
	} else {
		CHECK(before.cpu_ns <= s.v[LP_ACCT_CPU_NS] && s.v[LP_ACCT_CPU_NS] <= after.cpu_ns,
		      "sched: CPU %llu ns within the thread clock's %llu..%llu",
		      (unsigned long long)s.v[LP_ACCT_CPU_NS], (unsigned long long)before.cpu_ns,
		      (unsigned long long)after.cpu_ns);
		CHECK(have(&s, LP_ACCT_SWITCHES) &&
			  (long)s.v[LP_ACCT_SWITCHES] >= before.switches &&
			  (long)s.v[LP_ACCT_SWITCHES] <= after.switches,
		      "sched: %llu switches within getrusage's %ld..%ld",
		      (unsigned long long)s.v[LP_ACCT_SWITCHES], before.switches, after.switches);
		CHECK(have(&s, LP_ACCT_MIGRATIONS), "sched: migrations read (%llu)",
		      (unsigned long long)s.v[LP_ACCT_MIGRATIONS]);
	}
	CHECK(have(&st, LP_ACCT_MINFLT) && have(&st, LP_ACCT_MAJFLT) &&
		  (long)st.v[LP_ACCT_MINFLT] >= before.minflt &&
		  (long)st.v[LP_ACCT_MINFLT] <= after.minflt + 5,
	      "stat: %llu minor faults within getrusage's %ld..%ld",
	      (unsigned long long)st.v[LP_ACCT_MINFLT], before.minflt, after.minflt);
	CHECK(have(&fb, LP_ACCT_CPU_NS) && before.cpu_ns <= fb.v[LP_ACCT_CPU_NS] &&
		  fb.v[LP_ACCT_CPU_NS] <= after.cpu_ns,
	      "fallback (schedstat): CPU %llu ns within the thread clock's %llu..%llu",
	      (unsigned long long)fb.v[LP_ACCT_CPU_NS], (unsigned long long)before.cpu_ns,
	      (unsigned long long)after.cpu_ns);
	CHECK(have(&fb, LP_ACCT_SWITCHES) && (long)fb.v[LP_ACCT_SWITCHES] >= before.switches &&
		  (long)fb.v[LP_ACCT_SWITCHES] <= after.switches,
	      "fallback (status, whose switch counts lie past its first KiB): %llu switches "
	      "within getrusage's %ld..%ld",
	      (unsigned long long)fb.v[LP_ACCT_SWITCHES], before.switches, after.switches);
}

static struct own other_own;
static int other_tid, ready[2], hold[2];

static void *other(void *arg)
{
	(void)arg;
	work();
	own_figures(&other_own);
	other_tid = gettid();
	char c = 1;
	if (write(ready[1], &c, 1) != 1)
		return NULL;
	while (read(hold[0], &c, 1) < 0)
		; /* blocked: its figures stay put but for the switch into the wait */
	return NULL;
}

int main(void)
{
	self_readers();
	pthread_t t;
	char c = 0;
	if (pipe(ready) || pipe(hold) || pthread_create(&t, NULL, other, NULL) ||
	    read(ready[0], &c, 1) != 1)
		return 2;
	usleep(20000);
	struct lp_task_acct a;
	lp_task_acct_read((uint32_t)other_tid, 0, &a);
	CHECK(have(&a, LP_ACCT_CPU_NS) && a.v[LP_ACCT_CPU_NS] >= other_own.cpu_ns &&
		  a.v[LP_ACCT_CPU_NS] <= other_own.cpu_ns + 2000000,
	      "another thread: CPU %llu ns, its own clock %llu ns",
	      (unsigned long long)a.v[LP_ACCT_CPU_NS], (unsigned long long)other_own.cpu_ns);
	CHECK(have(&a, LP_ACCT_SWITCHES) && (long)a.v[LP_ACCT_SWITCHES] >= other_own.switches &&
		  (long)a.v[LP_ACCT_SWITCHES] <= other_own.switches + 3,
	      "another thread: %llu switches, its own getrusage %ld (10 naps)",
	      (unsigned long long)a.v[LP_ACCT_SWITCHES], other_own.switches);
	CHECK(have(&a, LP_ACCT_MINFLT) && (long)a.v[LP_ACCT_MINFLT] >= other_own.minflt &&
		  (long)a.v[LP_ACCT_MINFLT] <= other_own.minflt + 5 && other_own.minflt >= 200,
	      "another thread: %llu minor faults, its own getrusage %ld (200 pages)",
	      (unsigned long long)a.v[LP_ACCT_MINFLT], other_own.minflt);
	if (write(hold[1], &c, 1) != 1 || pthread_join(t, NULL))
		return 2;
	return lp_check_done();
}
