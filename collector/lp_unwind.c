/* SPDX-License-Identifier: MIT */
/*
 * The stack of the calling thread: libgcc's DWARF unwinder, then, where it
 * stops in code without unwind tables (a JIT's, or a runtime's own
 * builtins: V8's lie in the node binary), the frame-pointer chain from that
 * frame on. A JVM run with -XX:+PreserveFramePointer keeps that chain
 * through its compiled and interpreted Java frames, V8 through its JIT code
 * and builtins. A stack unwound to its end stops at a frame whose frame
 * pointer is 0 (_start and clone clear it), so nothing more is walked.
 * Every frame pointer is checked before it is read (inside the thread's
 * stack, above the last one, aligned), so a frame that does not keep the
 * chain ends the walk, never faults.
 */
#define _GNU_SOURCE
#include "lp_core.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include <unwind.h>

#if defined(__x86_64__)
#define LP_FP_REG 6 /* DWARF number of rbp */
#elif defined(__aarch64__)
#define LP_FP_REG 29 /* x29 */
#endif

/* libgcc_s's unwinder, looked up once backtrace() has loaded it (linking
 * it would load it into every process at start). */
static _Unwind_Reason_Code (*unw_backtrace)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*unw_ip)(struct _Unwind_Context *);
static _Unwind_Word (*unw_gr)(struct _Unwind_Context *, int);
static _Unwind_Word (*unw_cfa)(struct _Unwind_Context *);

void lp_unwind_resolve(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return;
	unw_ip = (_Unwind_Ptr(*)(struct _Unwind_Context *))dlsym(h, "_Unwind_GetIP");
	unw_gr = (_Unwind_Word(*)(struct _Unwind_Context *, int))dlsym(h, "_Unwind_GetGR");
	unw_cfa = (_Unwind_Word(*)(struct _Unwind_Context *))dlsym(h, "_Unwind_GetCFA");
	void *bt = dlsym(h, "_Unwind_Backtrace");
	if (unw_ip && unw_gr && unw_cfa)
		__atomic_store_n(&unw_backtrace,
				 (_Unwind_Reason_Code(*)(_Unwind_Trace_Fn, void *))bt,
				 __ATOMIC_RELEASE);
	dlclose(h);
}

struct unw {
	void **buf;
	int n, max;
	uintptr_t fp, cfa; /* of the last frame the unwinder reached */
};

static _Unwind_Reason_Code unw_cb(struct _Unwind_Context *ctx, void *arg)
{
	struct unw *u = arg;
	if (u->n >= u->max)
		return _URC_END_OF_STACK;
	uintptr_t pc = unw_ip(ctx);
	if (!pc)
		return _URC_END_OF_STACK;
	u->buf[u->n++] = (void *)pc;
#ifdef LP_FP_REG
	u->fp = unw_gr(ctx, LP_FP_REG);
	u->cfa = unw_cfa(ctx);
#endif
	return _URC_NO_REASON;
}

/* The calling thread's stack, asked once per thread. The main thread's
 * ends at glibc's __libc_stack_end (pthread_getattr_np would read
 * /proc/self/maps to find it: file I/O inside the app); its low end is the
 * last frame the unwinder reached, which fp_walk starts from anyway. */
static __thread uintptr_t lp_stk_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t lp_stk_hi __attribute__((tls_model("initial-exec")));
extern void *__libc_stack_end;

static int stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
	if (!lp_stk_hi && lp_tid() == (uint32_t)getpid()) {
		lp_stk_lo = 0;
		lp_stk_hi = (uintptr_t)__libc_stack_end;
	}
	if (!lp_stk_hi) {
		pthread_attr_t a;
		void *addr;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &a))
			return -1;
		int rc = pthread_attr_getstack(&a, &addr, &size);
		pthread_attr_destroy(&a);
		if (rc || !size)
			return -1;
		lp_stk_lo = (uintptr_t)addr;
		lp_stk_hi = (uintptr_t)addr + size;
	}
	*lo = lp_stk_lo;
	*hi = lp_stk_hi;
	return 0;
}

static int fp_walk(struct unw *u)
{
	uintptr_t lo, hi, fp = u->fp, floor = u->cfa ? u->cfa - 2 * sizeof(void *) : 0;
	if (stack_bounds(&lo, &hi))
		return u->n;
	if (floor > lo)
		lo = floor;
	while (u->n < u->max) {
		if (fp < lo || fp > hi - 2 * sizeof(uintptr_t) || fp % sizeof(uintptr_t))
			break;
		const uintptr_t *f = (const uintptr_t *)fp;
		uintptr_t ret = f[1];
		if (ret < 4096)
			break;
		u->buf[u->n++] = (void *)ret;
		lo = fp + 2 * sizeof(uintptr_t); /* the next frame lies above */
		fp = f[0];
	}
	return u->n;
}

int lp_core_backtrace(void **buf, int max)
{
	_Unwind_Reason_Code (*bt)(_Unwind_Trace_Fn, void *) =
	    __atomic_load_n(&unw_backtrace, __ATOMIC_ACQUIRE);
	if (!bt)
		return backtrace(buf, max); /* keeps errno */
	int saved = errno;
	struct unw u = {.buf = buf, .max = max};
	bt(unw_cb, &u);
	if (u.n > 0 && u.n < max && u.fp)
		fp_walk(&u);
	errno = saved;
	return u.n;
}
