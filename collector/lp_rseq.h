/* SPDX-License-Identifier: MIT */
/*
 * Did this thread leave its CPU during a call? One store before and one
 * load after tell, through the rseq area that glibc (2.35 and later)
 * registers with the kernel for every thread it starts.
 *
 * The ABI (linux/rseq.h, field rseq_cs): user space stores there the
 * address of a critical-section descriptor; the kernel sets the field to
 * NULL "when it detects that it is preempting or delivering a signal
 * outside of the range targeted by the rseq_cs". Preempting, there, is any
 * switch away from the thread, a sleep included: the scheduler flags every
 * task it switches out (rseq_preempt() from prepare_task_switch()) and the
 * flagged task inspects the field on its way back to user space. So a
 * thread that stores the address of a descriptor whose range never holds
 * its instruction pointer, makes a call, and finds the field still set, ran
 * on its CPU throughout the call: it did not sleep, was not preempted, took
 * no signal. The converse errs the safe way: the kernel inspects the field
 * on other returns to user space too (after task work, such as the
 * scheduler's mm_cid compaction every 100 ms of a task's run), so a call
 * now and then finds it cleared without having left the CPU, and is timed
 * as it would be without rseq.
 *
 * The blocking-call hooks use this to skip their second clock read on a
 * call that did not leave the CPU (a TSC read costs 20-30 ns on the VMs we
 * measured; the store and load, 1 ns): such a call is not time off the
 * CPU, however long, and is not recorded (its time is on-CPU time, as the
 * kernel's utime and stime count it).
 *
 * The kernel kills a thread whose descriptor fails its checks (SIGSEGV), so
 * ours is a real one: version 0, a one-instruction range and an abort
 * address in our text, the abort address outside the range and preceded by
 * the signature the thread registered with (glibc's RSEQ_SIG, 0x53053053 on
 * x86). Only the thread that registered the area writes it (the ABI's
 * rule): each hook writes its own thread's. A thread without a registered
 * area (glibc.pthread.rseq=0, a kernel without rseq) is never armed.
 *
 * The clearing is the ABI's, but a kernel or sandbox that did not clear
 * would make every blocking call look on-CPU; so lp_rseq_probe() checks it
 * once, on a 1 ms sleep, in `latprof run` (LATPROF_BLOCK_SWITCH=rseq tells
 * the interposer it passed). x86-64 only, like the TSC timing it serves.
 *
 * LP_RSEQ_DEFINE must appear in one source file of each binary that
 * includes this header.
 */
#ifndef LP_RSEQ_H
#define LP_RSEQ_H

#include <stddef.h>
#include <stdint.h>

struct lp_rseq {
	int on;	       /* armed calls possible in this process (set once) */
	ptrdiff_t off; /* glibc's __rseq_offset: the area from the thread pointer */
	uint64_t desc; /* address of the descriptor, the armed value */
};

#if defined(__x86_64__)
#include <dlfcn.h>
#include <linux/rseq.h>
#include <time.h>

extern struct lp_rseq lp_rseq __attribute__((visibility("hidden")));
extern struct rseq_cs lp_rseq_desc __attribute__((visibility("hidden")));
extern const char lp_rseq_cs_start[] __attribute__((visibility("hidden")));
extern const char lp_rseq_cs_abort[] __attribute__((visibility("hidden")));

/* The descriptor's range (one nop, never executed) and abort address (a
 * ud2 after glibc's RSEQ_SIG: the kernel never jumps there, as no thread
 * runs inside the range). */
#define LP_RSEQ_DEFINE                                                                             \
	__asm__(".pushsection .text.lp_rseq,\"ax\",@progbits\n"                                    \
		".p2align 4\n"                                                                     \
		".globl lp_rseq_cs_start\n"                                                        \
		".hidden lp_rseq_cs_start\n"                                                       \
		"lp_rseq_cs_start:\n"                                                              \
		"nop\n"                                                                            \
		".long 0x53053053\n"                                                               \
		".globl lp_rseq_cs_abort\n"                                                        \
		".hidden lp_rseq_cs_abort\n"                                                       \
		"lp_rseq_cs_abort:\n"                                                              \
		"ud2\n"                                                                            \
		".popsection\n");                                                                  \
	struct lp_rseq lp_rseq;                                                                    \
	struct rseq_cs lp_rseq_desc

static inline struct rseq *lp_rseq_area(void)
{
	char *tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (struct rseq *)(tp + lp_rseq.off);
}

/* Before the call: 1 when armed (the caller then asks lp_rseq_stayed). */
static inline int lp_rseq_arm(void)
{
	if (!__atomic_load_n(&lp_rseq.on, __ATOMIC_RELAXED))
		return 0;
	struct rseq *rs = lp_rseq_area();
	if ((int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED) < 0)
		return 0; /* this thread's area is not registered */
	__atomic_store_n(&rs->rseq_cs, lp_rseq.desc, __ATOMIC_RELAXED);
	return 1;
}

/* After the call: 1 when the thread stayed on its CPU since it armed;
 * disarms. A call through an opaque pointer orders both accesses. */
static inline int lp_rseq_stayed(void)
{
	struct rseq *rs = lp_rseq_area();
	if (__atomic_load_n(&rs->rseq_cs, __ATOMIC_RELAXED) != lp_rseq.desc)
		return 0; /* cleared by the kernel (or set by a signal handler's code) */
	__atomic_store_n(&rs->rseq_cs, 0, __ATOMIC_RELAXED);
	return 1;
}

/* Once per process, before any thread arms: 1 when glibc registered this
 * thread's area (so it registers every thread's). */
static inline int lp_rseq_init(void)
{
	const ptrdiff_t *off = (const ptrdiff_t *)dlsym(RTLD_DEFAULT, "__rseq_offset");
	const unsigned *size = (const unsigned *)dlsym(RTLD_DEFAULT, "__rseq_size");
	if (!off || !size || *size < 16)
		return 0; /* rseq_cs ends at byte 16 */
	lp_rseq.off = *off;
	if ((int32_t)lp_rseq_area()->cpu_id < 0)
		return 0;
	lp_rseq_desc.version = 0;
	lp_rseq_desc.flags = 0;
	lp_rseq_desc.start_ip = (uint64_t)(uintptr_t)lp_rseq_cs_start;
	lp_rseq_desc.post_commit_offset = 1; /* the nop */
	lp_rseq_desc.abort_ip = (uint64_t)(uintptr_t)lp_rseq_cs_abort;
	lp_rseq.desc = (uint64_t)(uintptr_t)&lp_rseq_desc;
	__atomic_store_n(&lp_rseq.on, 1, __ATOMIC_RELEASE);
	return 1;
}

/* Whether this kernel clears the field on a switch: armed across a 1 ms
 * sleep, which always switches away. 1 when it does. */
static inline int lp_rseq_probe(void)
{
	struct timespec ms = {0, 1000000};
	if (!lp_rseq_init() || !lp_rseq_arm())
		return 0;
	nanosleep(&ms, NULL);
	if (lp_rseq_stayed()) {
		__atomic_store_n(&lp_rseq.on, 0, __ATOMIC_RELAXED);
		return 0;
	}
	return 1;
}

#else /* !__x86_64__: never armed */

#define LP_RSEQ_DEFINE struct lp_rseq lp_rseq
extern struct lp_rseq lp_rseq;
static inline int lp_rseq_arm(void)
{
	return 0;
}
static inline int lp_rseq_stayed(void)
{
	return 0;
}
static inline int lp_rseq_init(void)
{
	return 0;
}
static inline int lp_rseq_probe(void)
{
	return 0;
}

#endif
#endif
