/* SPDX-License-Identifier: MIT */
/*
 * A system call made without libc's wrapper: for latprof's own I/O inside
 * the app. The wrapper's symbol (read, pwrite) resolves to the interposer's
 * hook, or to a sanitizer's interceptor that hands it to the hook from an
 * address that is not latprof's, and would time, or record, latprof's own
 * call; the interposer itself needs it while its dlsym is still resolving
 * the real function. Not a cancellation point (a thread cancelled inside
 * latprof's own read would be wrong anyway). -1 and errno on failure, as
 * libc's; other architectures than x86-64 and AArch64 get ENOSYS.
 */
#ifndef LP_RAW_H
#define LP_RAW_H

#include <errno.h>

static inline long lp_raw_syscall(long nr, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	long ret = x0;
#else
	(void)nr, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
	long ret = -ENOSYS;
#endif
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#define LP_RAW(nr, a, b, c, d, e, f)                                                               \
	lp_raw_syscall(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

#endif
