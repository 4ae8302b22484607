/* SPDX-License-Identifier: MIT */
/*
 * For test programs that wake a thread about to block (a lock's holder, a
 * late writer, a poster): wait until that thread sleeps, then start the
 * delay. After a fixed delay alone, a thread that a loaded machine kept off
 * the CPU would find the lock free or its data there, and never block:
 * nothing to record. Header-only: the programs link nothing of latprof's.
 */
#ifndef LP_ASLEEP_H
#define LP_ASLEEP_H

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static inline pid_t lp_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Thread tid of process pid sleeps ('S' in /proc/PID/task/TID/stat); also
 * true when that file is gone or unreadable (nothing to wait for). */
static inline int lp_thread_asleep(pid_t pid, pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return !p || (p[1] == ' ' && p[2] == 'S');
}

/* Until *flag is set (when flag is given: the thread is about to block and
 * does nothing else that sleeps) and the thread sleeps; 10 s at most, never
 * hanging a test. */
static inline void lp_wait_asleep(pid_t pid, pid_t tid, const int *flag)
{
	struct timespec nap = {0, 100000};
	for (int i = 0; i < 100000; i++) {
		if ((!flag || __atomic_load_n(flag, __ATOMIC_ACQUIRE)) &&
		    lp_thread_asleep(pid, tid))
			return;
		nanosleep(&nap, NULL);
	}
}

#endif
