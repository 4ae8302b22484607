/* SPDX-License-Identifier: MIT */
/*
 * The run's table of waits in progress, `inflight.lpinf` in the log
 * directory: written by the code inside the app (preload/lp_inflight.c),
 * created by `latprof run`, read by the importer. Documented in
 * schemas/eventlog.md.
 *
 * Why a file: a hook writes a wait when the wait returns, and the exit
 * sweep writes those still in progress when the process exits. A process
 * killed by a signal it does not handle (SIGKILL from a watchdog, the OOM
 * killer, a timeout; SIGSEGV) runs neither, and the waits its threads were
 * in when it died, often the reason it was killed (a deadlock, a hung
 * read), were lost: the report called that time on-CPU or preempted. Each
 * thread's slot lives in this MAP_SHARED file instead of its TLS, so the
 * kernel keeps what the thread last wrote in the page cache after the
 * process is gone, and the importer writes those waits itself.
 *
 * The file is made at its full size with posix_fallocate before the app
 * starts (no SIGBUS on a full disk later); a process that cannot map it
 * keeps its slots in TLS, as before. Slots are claimed by compare-and-swap
 * on `owner`, from any process of the run: a forked child inherits the
 * mapping, an exec'd image maps it again at its first wait.
 */
#ifndef LP_INFLIGHT_FORMAT_H
#define LP_INFLIGHT_FORMAT_H

#include <stdint.h>

#define LP_INF_FILE "inflight.lpinf"
#define LP_INF_MAGIC "LPINF\0\r\n"
#define LP_INF_VERSION 1u
#define LP_INF_HEADER_SIZE 4096u
/* 512 KiB of slots: more threads waiting at once than that in one run keep
 * theirs in TLS (counted in `full`). */
#define LP_INF_SLOTS 8192u

/* start of a slot taken by the exit sweep (its wait was written) */
#define LP_INF_TAKEN 1ull

struct lp_inf_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* LP_INF_HEADER_SIZE: slots start here */
	uint32_t slot_size;   /* sizeof(struct lp_inflight) */
	uint32_t n_slots;
	/* A TSC point taken by `latprof run` when it made the file: the
	 * importer converts a blocking call's start in ticks with it and one of
	 * its own (same boot). tsc 0: none (not x86-64, or TSC unusable). */
	uint64_t tsc;
	uint64_t tsc_ns;  /* CLOCK_MONOTONIC between the two reads */
	uint64_t tsc_w;	  /* ticks between the two reads: the point's width */
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id, NUL-terminated */
	uint32_t hint;	  /* where the next claim starts looking (atomic) */
	uint32_t full;	  /* claims that found no free slot (atomic) */
};
_Static_assert(sizeof(struct lp_inf_file_header) <= LP_INF_HEADER_SIZE, "inflight header");

/* One thread's wait in progress (64 bytes, one cache line). */
struct lp_inflight {
	uint64_t owner; /* pid << 32 | tid of the thread that holds the slot; 0 free */
	uint64_t image; /* the holder image's start_ns (the process table's key) */
	uint64_t start; /* 0: not waiting; LP_INF_TAKEN; else the wait's start in its clock */
	uint64_t obj;	/* the lock or condition; a blocking call's descriptor */
	uint64_t obj2;	/* a condition's mutex */
	uint64_t ra;	/* the hook's return address: the wait's site */
	uint32_t what;	/* record type << 8 | aux (lock kind, condition kind, call) */
	uint32_t stack; /* a lock wait's stack id, taken before it blocks; else 0 */
	uint32_t tsc;	/* a blocking call's start is in TSC ticks */
	uint32_t pad;
};
_Static_assert(sizeof(struct lp_inflight) == 64, "inflight slot size");

#endif
