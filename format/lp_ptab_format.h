/* SPDX-License-Identifier: MIT */
/*
 * The run's process table, LATPROF_DIR/procs.lptab: what every process
 * image of a run says about its life (start, exec, exit) when it has no
 * event log of its own. Documented in schemas/eventlog.md ("Process
 * table"); the writer is collector/lp_ptab.c, the reader
 * import/sources/lp_import_proctab.c.
 *
 * Why a shared table: a process that records nothing (a shell's /bin/true,
 * a pre-forking server's idle child) used to create a log file of its own,
 * and creating a file (an inode) was most of its start cost on ext4. Now it
 * appends a few small records, each with one write() on an O_APPEND
 * descriptor, to a file that exists already, and creates its own log only
 * when it first records something else.
 *
 * Records are whole in the file or absent: a write() to a regular file
 * holds the inode's lock, so records of concurrent processes never
 * interleave. A short write (disk full) leaves a fragment that the
 * checksum rejects; a reader then looks for the next magic byte by byte.
 */
#ifndef LP_PTAB_FORMAT_H
#define LP_PTAB_FORMAT_H

#include <stdint.h>

#define LP_PTAB_NAME "procs.lptab"
#define LP_PTAB_MAGIC 0x42415450u /* "PTAB" */
#define LP_PTAB_MAX_TEXT 4096u

enum lp_ptab_type {
	LP_PTAB_START = 1, /* lp_ptab_start + argv (NUL-separated) */
	LP_PTAB_EXEC = 2,  /* path passed to exec */
	LP_PTAB_EXIT = 3,  /* lp_ptab_exit + title (/proc/self/cmdline at exit) */
	LP_PTAB_CLONE = 4, /* lp_ptab_clone: a task made by a raw clone(), not recorded */
};

/* Every record: this header, a fixed part by type, `len` bytes of text,
 * zero padding to a multiple of 8. (pid, start_ns) names the image: an
 * image that has a log has the same pid and start_ns in its log header. */
struct lp_ptab_rec {
	uint32_t magic;
	uint16_t type;
	uint16_t size;	/* whole record, multiple of 8 */
	uint32_t check; /* XXH32 (seed 0) of the record with check = 0 */
	uint32_t pid;
	uint64_t start_ns; /* CLOCK_MONOTONIC when the image started */
	uint64_t ts;	   /* CLOCK_MONOTONIC of this event */
	uint32_t len;	   /* bytes of text after the fixed part */
	uint32_t lost;	   /* records this image could not write so far */
};
_Static_assert(sizeof(struct lp_ptab_rec) == 40, "process table record header");

struct lp_ptab_start {
	uint64_t realtime_ns; /* CLOCK_REALTIME at start_ns */
	uint32_t ppid;
	uint32_t parent_tid; /* the thread that forked this process, 0 after exec */
	char comm[16];	     /* the main thread's name at start */
};
_Static_assert(sizeof(struct lp_ptab_start) == 32, "process table start");

struct lp_ptab_exit {
	int32_t status;
	uint32_t how; /* enum lp_exit_how (lp_log_format.h) */
};
_Static_assert(sizeof(struct lp_ptab_exit) == 8, "process table exit");

/* Written by any image, with a log or not; an importer that does not know
 * the type skips it. */
struct lp_ptab_clone {
	uint64_t flags; /* the clone flags (CLONE_THREAD, CLONE_VM, ...) */
	uint32_t tid;	/* the new task's id */
	uint32_t pad;
};
_Static_assert(sizeof(struct lp_ptab_clone) == 16, "process table clone");

#endif
