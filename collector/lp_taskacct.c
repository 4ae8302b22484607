/* SPDX-License-Identifier: MIT */
/* A thread's own accounting by the kernel (lp_taskacct.h says what and
 * why). */
#define _GNU_SOURCE
#include "lp_taskacct.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lp_raw.h"

/* /proc/self/task/<tid>/<leaf> into buf, NUL-terminated: its length, or -1.
 * The path is built by hand: no printf where exit() may be a handler's. */
static long acct_slurp(uint32_t tid, const char *leaf, char *buf, size_t cap)
{
	char path[64] = "/proc/self/task/", digits[12];
	size_t at = strlen(path), nd = 0;
	do
		digits[nd++] = (char)('0' + tid % 10);
	while ((tid /= 10) && nd < sizeof(digits));
	while (nd)
		path[at++] = digits[--nd];
	path[at++] = '/';
	size_t leaf_len = strlen(leaf);
	if (at + leaf_len >= sizeof(path))
		return -1;
	memcpy(path + at, leaf, leaf_len + 1);
	long fd = LP_RAW(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return -1;
	size_t len = 0;
	for (;;) {
		long n = LP_RAW(SYS_read, fd, buf + len, cap - 1 - len, 0, 0, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap - 1)
			break;
	}
	LP_RAW(SYS_close, fd, 0, 0, 0, 0, 0);
	buf[len] = 0;
	return (long)len;
}

/* The unsigned number after p's spaces; *end past it (NULL: none). */
static uint64_t acct_num(const char *p, const char **end)
{
	while (*p == ' ' || *p == '\t')
		p++;
	uint64_t v = 0;
	const char *s = p;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	*end = p == s ? NULL : p;
	return v;
}

/* The value of line "key ... : value" of /proc/PID/sched; 0 when absent. */
static int acct_sched_key(const char *text, const char *key, uint64_t *v, int ms)
{
	size_t klen = strlen(key);
	for (const char *p = text; (p = strstr(p, key)); p += klen) {
		if ((p != text && p[-1] != '\n') || (p[klen] != ' ' && p[klen] != ':'))
			continue;
		const char *colon = strchr(p, ':'), *end;
		if (!colon)
			return 0;
		uint64_t whole = acct_num(colon + 1, &end);
		if (!end)
			return 0;
		if (!ms) {
			*v = whole;
			return 1;
		}
		/* "%Ld.%06ld": milliseconds, then the nanoseconds under one */
		uint64_t frac = 0;
		if (*end == '.') {
			const char *f = end + 1;
			int digits = 0;
			while (*f >= '0' && *f <= '9' && digits < 6)
				frac = frac * 10 + (uint64_t)(*f++ - '0'), digits++;
			while (digits++ < 6)
				frac *= 10;
		}
		*v = whole * 1000000u + frac;
		return 1;
	}
	return 0;
}

static void acct_set(struct lp_task_acct *a, enum lp_acct_field f, uint64_t v)
{
	a->v[f] = v;
	a->have |= 1u << f;
}

/* CPU time, switches and migrations from sched (CONFIG_SCHED_DEBUG). */
static void acct_from_sched(uint32_t tid, struct lp_task_acct *a)
{
	char buf[4096];
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
 * state after the command's closing parenthesis (field 3). */
static void acct_from_stat(uint32_t tid, struct lp_task_acct *a)
{
	char buf[1024];
	if (acct_slurp(tid, "stat", buf, sizeof(buf)) <= 0)
		return;
	const char *p = strrchr(buf, ')');
	if (!p)
		return;
	p++;
	for (int field = 3; field <= 12; field++) {
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
	char buf[2048];
	const char *end;
	if (!(a->have & (1u << LP_ACCT_CPU_NS)) && acct_slurp(tid, "schedstat", buf, 64) > 0) {
		uint64_t v = acct_num(buf, &end);
		if (end)
			acct_set(a, LP_ACCT_CPU_NS, v);
	}
	if (!(a->have & (1u << LP_ACCT_SWITCHES)) &&
	    acct_slurp(tid, "status", buf, sizeof(buf)) > 0) {
		const char *vol = strstr(buf, "\nvoluntary_ctxt_switches:");
		const char *inv = strstr(buf, "\nnonvoluntary_ctxt_switches:");
		if (vol && inv) {
			uint64_t v = acct_num(strchr(vol, ':') + 1, &end);
			const char *end2;
			uint64_t w = acct_num(strchr(inv, ':') + 1, &end2);
			if (end && end2)
				acct_set(a, LP_ACCT_SWITCHES, v + w);
		}
	}
}

/* The calling thread's own figures, for what /proc did not give. */
static void acct_self(struct lp_task_acct *a)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		if (!(a->have & (1u << LP_ACCT_SWITCHES)))
			acct_set(a, LP_ACCT_SWITCHES, (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw));
		if (!(a->have & (1u << LP_ACCT_MINFLT)))
			acct_set(a, LP_ACCT_MINFLT, (uint64_t)ru.ru_minflt);
		if (!(a->have & (1u << LP_ACCT_MAJFLT)))
			acct_set(a, LP_ACCT_MAJFLT, (uint64_t)ru.ru_majflt);
	}
	struct timespec ts;
	if (!(a->have & (1u << LP_ACCT_CPU_NS)) && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		acct_set(a, LP_ACCT_CPU_NS,
			 (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

void lp_task_acct_read(uint32_t tid, int self, struct lp_task_acct *a)
{
	int saved = errno;
	memset(a, 0, sizeof(*a));
	acct_from_sched(tid, a);
	acct_from_stat(tid, a);
	acct_fallback(tid, a);
	if (self)
		acct_self(a);
	errno = saved;
}
