/* SPDX-License-Identifier: MIT */
/* A thread's own accounting by the kernel (lp_taskacct.h says what and
 * why). */
#define _GNU_SOURCE
#include "lp_taskacct.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lp_raw.h"

/*
 * No libc string or time function touches a buffer here: in a sanitized
 * app the sanitizer's interceptors check them, and this code runs in key
 * destructors, also of a thread unwound by pthread_cancel, whose stack
 * below still carries the poison of the sanitized frames it unwound (CI's
 * ASan tier: strrchr on this file's stack buffer aborted the app). The
 * loops and raw system calls below are checked by nobody.
 */

/* What we need of sched and stat lies in their first 1 KiB (sched's fields
 * are its lines 4-6); status's switch counts are its last lines, past 1.3
 * KiB on Linux 6.18. */
#define ACCT_BUF 1024
#define ACCT_STATUS_BUF 4096

/* Position of key at a line start of text, or NULL. */
static const char *acct_line(const char *text, const char *key)
{
	for (const char *p = text; *p; p++) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *k = key, *q = p;
		while (*k && *q == *k)
			k++, q++;
		if (!*k)
			return q; /* just past the key */
	}
	return NULL;
}

/* The first cap - 1 bytes of /proc/self/task/<tid>/<leaf> into buf,
 * NUL-terminated: their length, or -1. */
static long acct_slurp(uint32_t tid, const char *leaf, char *buf, long cap)
{
	static const char base[] = "/proc/self/task/";
	char path[64], digits[12];
	size_t at = 0, nd = 0;
	for (const char *s = base; *s; s++)
		path[at++] = *s;
	do
		digits[nd++] = (char)('0' + tid % 10);
	while ((tid /= 10) && nd < sizeof(digits));
	while (nd)
		path[at++] = digits[--nd];
	path[at++] = '/';
	for (const char *s = leaf; *s && at < sizeof(path) - 1; s++)
		path[at++] = *s;
	path[at] = 0;
	long fd = LP_RAW(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return -1;
	long len = 0;
	while (len < cap - 1) {
		long n = LP_RAW(SYS_read, fd, buf + len, cap - 1 - len, 0, 0, 0);
		if (n <= 0)
			break;
		len += n;
	}
	LP_RAW(SYS_close, fd, 0, 0, 0, 0, 0);
	buf[len] = 0;
	return len;
}

/* The unsigned number after p's spaces, tabs and one colon; *end past it
 * (NULL: none). */
static uint64_t acct_num(const char *p, const char **end)
{
	while (*p == ' ' || *p == '\t' || *p == ':')
		p++;
	uint64_t v = 0;
	const char *s = p;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	*end = p == s ? NULL : p;
	return v;
}

/* "key   :   value" of /proc/PID/sched; ms: the value is "%Ld.%06ld",
 * milliseconds then the nanoseconds under one. 0 when absent. */
static int acct_sched_key(const char *text, const char *key, uint64_t *v, int ms)
{
	const char *p = acct_line(text, key), *end;
	if (!p || (*p != ' ' && *p != ':'))
		return 0;
	uint64_t whole = acct_num(p, &end);
	if (!end)
		return 0;
	uint64_t frac = 0;
	if (ms) {
		int digits = 0;
		if (*end == '.')
			for (const char *f = end + 1; *f >= '0' && *f <= '9' && digits < 6; f++)
				frac = frac * 10 + (uint64_t)(*f - '0'), digits++;
		for (; digits < 6; digits++)
			frac *= 10;
		whole *= 1000000u;
	}
	*v = whole + frac;
	return 1;
}

static void acct_set(struct lp_task_acct *a, enum lp_acct_field f, uint64_t v)
{
	a->v[f] = v;
	a->have |= 1u << f;
}

/* CPU time, switches and migrations from sched (CONFIG_SCHED_DEBUG). */
static void acct_from_sched(uint32_t tid, struct lp_task_acct *a)
{
	char buf[ACCT_BUF];
	if (acct_slurp(tid, "sched", buf, sizeof(buf)) <= 0)
		return;
	uint64_t v;
	if (acct_sched_key(buf, "se.sum_exec_runtime", &v, 1))
		acct_set(a, LP_ACCT_CPU_NS, v);
	if (acct_sched_key(buf, "nr_switches", &v, 0))
		acct_set(a, LP_ACCT_SWITCHES, v);
	if (acct_sched_key(buf, "se.nr_migrations", &v, 0))
		acct_set(a, LP_ACCT_MIGRATIONS, v);
}

/* Faults from stat: fields 10 (minflt) and 12 (majflt), counted from the
 * state after the command's last closing parenthesis (field 3). */
static void acct_from_stat(uint32_t tid, struct lp_task_acct *a)
{
	char buf[ACCT_BUF];
	if (acct_slurp(tid, "stat", buf, sizeof(buf)) <= 0)
		return;
	const char *p = NULL;
	for (const char *q = buf; *q; q++)
		if (*q == ')')
			p = q + 1;
	if (!p)
		return;
	for (int field = 3; field <= 12 && *p; field++) {
		while (*p == ' ')
			p++;
		const char *end;
		uint64_t v = acct_num(p, &end);
		if (field == 10 && end)
			acct_set(a, LP_ACCT_MINFLT, v);
		if (field == 12 && end)
			acct_set(a, LP_ACCT_MAJFLT, v);
		while (*p && *p != ' ')
			p++;
	}
}

/* Without sched: CPU time from schedstat (its first field, ns), switches
 * from status. */
static void acct_fallback(uint32_t tid, struct lp_task_acct *a)
{
	char buf[ACCT_STATUS_BUF];
	const char *end, *end2;
	if (!(a->have & (1u << LP_ACCT_CPU_NS)) &&
	    acct_slurp(tid, "schedstat", buf, sizeof(buf)) > 0) {
		uint64_t v = acct_num(buf, &end);
		if (end)
			acct_set(a, LP_ACCT_CPU_NS, v);
	}
	if ((a->have & (1u << LP_ACCT_SWITCHES)) ||
	    acct_slurp(tid, "status", buf, sizeof(buf)) <= 0)
		return;
	const char *vol = acct_line(buf, "voluntary_ctxt_switches:");
	const char *inv = acct_line(buf, "nonvoluntary_ctxt_switches:");
	if (vol && inv) {
		uint64_t v = acct_num(vol, &end), w = acct_num(inv, &end2);
		if (end && end2)
			acct_set(a, LP_ACCT_SWITCHES, v + w);
	}
}

/* The calling thread's own figures, for what /proc did not give. */
static void acct_self(struct lp_task_acct *a)
{
	struct rusage ru;
	if (LP_RAW(SYS_getrusage, RUSAGE_THREAD, &ru, 0, 0, 0, 0) == 0) {
		if (!(a->have & (1u << LP_ACCT_SWITCHES)))
			acct_set(a, LP_ACCT_SWITCHES, (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw));
		if (!(a->have & (1u << LP_ACCT_MINFLT)))
			acct_set(a, LP_ACCT_MINFLT, (uint64_t)ru.ru_minflt);
		if (!(a->have & (1u << LP_ACCT_MAJFLT)))
			acct_set(a, LP_ACCT_MAJFLT, (uint64_t)ru.ru_majflt);
	}
	struct timespec ts;
	if (!(a->have & (1u << LP_ACCT_CPU_NS)) &&
	    LP_RAW(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts, 0, 0, 0, 0) == 0)
		acct_set(a, LP_ACCT_CPU_NS,
			 (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

int lp_task_run_delay(uint32_t tid, uint64_t *ns)
{
	int saved = errno;
	char buf[ACCT_BUF];
	const char *end = NULL;
	if (acct_slurp(tid, "schedstat", buf, sizeof(buf)) > 0) {
		acct_num(buf, &end); /* time on a CPU */
		if (end)
			*ns = acct_num(end, &end);
	}
	errno = saved;
	return end ? 0 : -1;
}

void lp_task_acct_read(uint32_t tid, int self, struct lp_task_acct *a)
{
	int saved = errno;
	a->have = 0;
	for (int f = 0; f < LP_ACCT_N; f++)
		a->v[f] = 0;
	/* The calling thread: getrusage and its CPU clock give all but the
	 * migrations, which only /proc's sched has (an open, a read of ~2 KiB of
	 * formatted text and a close: most of a short thread's exit in a
	 * thread storm). A thread that was never switched out has not moved
	 * since it first ran: 0, without /proc. */
	if (self) {
		acct_self(a);
		if (a->have & (1u << LP_ACCT_SWITCHES) && !a->v[LP_ACCT_SWITCHES] &&
		    a->have & (1u << LP_ACCT_CPU_NS)) {
			acct_set(a, LP_ACCT_MIGRATIONS, 0);
			errno = saved;
			return;
		}
		a->have = 0;
	}
	acct_from_sched(tid, a);
	if (!self) /* the calling thread's faults come from getrusage */
		acct_from_stat(tid, a);
	acct_fallback(tid, a);
	if (self)
		acct_self(a);
	errno = saved;
}
