/* SPDX-License-Identifier: MIT */
/*
 * The per-process event log: the one contract between the code that runs
 * inside the app (collector/, preload/) and the importer (import/).
 * Documented field by field in schemas/eventlog.md; bump LP_LOG_VERSION on
 * any layout change so an old importer refuses a new log instead of
 * misreading it.
 *
 * Layout: [file header, LP_LOG_HEADER_SIZE bytes][chunk 0][chunk 1]...
 * Every chunk is chunk_size bytes: a chunk header, then 8-byte aligned
 * records. A chunk has one writer at a time (a thread); the writer publishes
 * `committed` with a release store after each whole record, so a reader that
 * loads it with acquire semantics never sees a torn record. All integers are
 * little-endian (the writer is the host; the importer checks the byte-order
 * mark).
 */
#ifndef LP_LOG_FORMAT_H
#define LP_LOG_FORMAT_H

#include <stdint.h>

#define LP_LOG_MAGIC "LPLOG\0\r\n"
#define LP_LOG_VERSION 1u
#define LP_LOG_BOM 0x01020304u
#define LP_LOG_HEADER_SIZE 4096u
#define LP_CHUNK_MAGIC 0x4b43504cu /* "LPCK" */
#define LP_REC_ALIGN 8u

/* Header flags. */
#define LP_LOGF_CLOSED 0x1u /* the process ran its exit path */
#define LP_LOGF_LOWFD 0x2u  /* its descriptor is below 512: RLIMIT_NOFILE left no room above */

enum lp_clock_kind {
	LP_CLOCK_MONOTONIC_NS = 1, /* timestamps are CLOCK_MONOTONIC ns */
};

struct lp_log_header {
	char magic[8];
	uint32_t version;
	uint32_t bom;
	uint32_t header_size;
	uint32_t chunk_size;
	uint32_t max_chunks;
	uint32_t clock_kind;
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;	    /* CLOCK_MONOTONIC at log creation */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at the same moment */
	/* Updated by the app while it runs (atomics). */
	uint32_t n_chunks; /* chunks handed out (may exceed max: then dropped) */
	uint32_t flags;
	uint64_t dropped_records; /* records not written: no chunk, reentrancy */
	uint64_t dropped_chunks;  /* chunk allocations that failed (disk full) */
	uint64_t dropped_strings; /* intern table full */
	uint64_t exit_ns;	  /* set with LP_LOGF_CLOSED */
	uint64_t dropped_holds;	  /* holds of contended mutexes not timed */
	char reserved[LP_LOG_HEADER_SIZE - 104];
};
_Static_assert(sizeof(struct lp_log_header) == LP_LOG_HEADER_SIZE, "header size");

struct lp_chunk_header {
	uint32_t magic;	    /* LP_CHUNK_MAGIC once the chunk is usable */
	uint32_t index;	    /* position in the file */
	uint64_t committed; /* bytes of whole records after this header */
};
_Static_assert(sizeof(struct lp_chunk_header) == 16, "chunk header size");

/* Every record starts with this; size covers header and payload, is a
 * multiple of LP_REC_ALIGN and never 0. */
struct lp_rec_header {
	uint16_t type;
	uint16_t size;
	uint32_t aux; /* type-specific small field (see each record) */
};
_Static_assert(sizeof(struct lp_rec_header) == 8, "record header size");

/*
 * Record types. Each source owns a range so sources can grow independently:
 *   1..31 core, 32..63 NVTX, 64..127 CUDA/CUPTI, 128..159 counters.
 * An importer skips (and counts) types it does not know.
 */
enum lp_rec_type {
	LP_REC_CTX = 1,		  /* aux = tid; u64 seq: records that follow belong to tid */
	LP_REC_STRING = 2,	  /* aux = length; lp_rec_string + bytes */
	LP_REC_STACK = 3,	  /* aux = frame count; lp_rec_stack + u64 pcs */
	LP_REC_MODULE = 4,	  /* aux = path length; lp_rec_module + path */
	LP_REC_PROC_START = 5,	  /* aux = cmdline length; lp_rec_proc_start + argv */
	LP_REC_PROC_EXIT = 6,	  /* aux = title length; lp_rec_proc_exit + /proc/self/cmdline */
	LP_REC_EXEC = 7,	  /* aux = path length; lp_rec_exec + path */
	LP_REC_THREAD_START = 8,  /* lp_rec_thread_start */
	LP_REC_THREAD_NAME = 9,	  /* lp_rec_thread_name */
	LP_REC_THREAD_END = 10,	  /* lp_rec_thread_end */
	LP_REC_LOCK_WAIT = 11,	  /* aux = lp_lock_kind; lp_rec_lock_wait */
	LP_REC_COND_WAIT = 12,	  /* aux = lp_cond_kind; lp_rec_cond_wait */
	LP_REC_CHILD_STATUS = 13, /* lp_rec_child_status: a wait() result */
	LP_REC_BLOCK = 14,	  /* aux = lp_block_call; lp_rec_block */
	LP_REC_LOCK_SHARED = 15,  /* aux = path length; lp_rec_lock_shared */
	LP_REC_LOCK_HOLD = 16,	  /* aux = lp_lock_kind; lp_rec_lock_hold */
	LP_REC_CORE_LAST = 31,

	LP_REC_NVTX_FIRST = 32,
	LP_REC_NVTX_LAST = 63,
	LP_REC_CUDA_FIRST = 64,
	LP_REC_CUDA_LAST = 127,
	LP_REC_COUNTERS_FIRST = 128,
	LP_REC_COUNTERS_LAST = 159,
	LP_REC_PY_FIRST = 160,
	LP_REC_PY_WAIT = 160, /* lp_rec_py_wait: the Python side of one wait */
	LP_REC_PY_INFO = 161, /* lp_rec_py_info: the CPython found, once */
	LP_REC_PY_LAST = 175,
};

/* A CTX record opens each stretch of records one thread wrote into a chunk;
 * seq grows across the process, so sorting stretches by seq restores each
 * thread's order even when chunks are reused out of index order. */
struct lp_rec_ctx {
	uint64_t seq;
};

struct lp_rec_string {
	uint32_t id; /* per-process, > 0 */
	uint32_t pad;
	/* char bytes[aux], not NUL-terminated */
};

struct lp_rec_stack {
	uint32_t id; /* per-process, > 0 */
	uint32_t pad;
	/* uint64_t pcs[aux], innermost first */
};

struct lp_rec_module {
	uint64_t load_bias; /* dlpi_addr: address = bias + ELF vaddr */
	uint64_t start;	    /* lowest mapped PT_LOAD address */
	uint64_t end;	    /* one past the highest */
			    /* char path[aux] */
};

struct lp_rec_proc_start {
	uint64_t ts;
	uint32_t pid;
	uint32_t ppid;
	uint64_t realtime_ns;
	/* char argv[aux]: arguments, each NUL-terminated */
};

enum lp_exit_how {
	LP_EXIT_RETURN = 1,	/* exit()/return from main: status valid */
	LP_EXIT_UNDERSCORE = 2, /* _exit()/_Exit() */
	LP_EXIT_SIGNAL = 3,	/* fatal signal observed in-process */
	LP_EXIT_DESTRUCTOR = 4, /* ran exit handlers; status unknown in-process */
};

struct lp_rec_proc_exit {
	uint64_t ts;
	int32_t status;
	uint32_t how; /* lp_exit_how */
};

struct lp_rec_exec {
	uint64_t ts;
	/* char path[aux] */
};

struct lp_rec_thread_start {
	uint64_t ts;
	uint32_t tid;
	uint32_t parent_tid; /* creator, 0 for the main thread */
};

struct lp_rec_thread_name {
	uint64_t ts;
	uint32_t tid;
	uint32_t name; /* string id */
};

struct lp_rec_thread_end {
	uint64_t ts;
	uint32_t tid;
	uint32_t pad;
};

enum lp_lock_kind {
	LP_LOCK_MUTEX = 1,
	LP_LOCK_RWLOCK_RD = 2,
	LP_LOCK_RWLOCK_WR = 3,
	LP_LOCK_SEM = 4,
	LP_LOCK_SPIN = 5,
	/* a futex word waited on through syscall(SYS_futex): owner is the
	 * thread that woke the waiter, 0 if unknown */
	LP_LOCK_FUTEX = 6,
};

/*
 * A lock in shared memory (a process-shared semaphore or mutex, a futex
 * without FUTEX_PRIVATE_FLAG, in a MAP_SHARED mapping): the mapping's
 * identity, the same in every process that maps it, at whatever address.
 * Written by a thread before its first recorded wait on that address.
 * The struct is followed by char path[aux]: the mapping's path in
 * /proc/PID/maps, no NUL.
 */
struct lp_rec_lock_shared {
	uint64_t lock;	 /* the address this process waits on */
	uint64_t dev;	 /* the mapping's device, as makedev(major, minor) */
	uint64_t ino;	 /* its inode */
	uint64_t offset; /* the lock's offset in the file or shared memory object */
};

/* lp_rec_lock_wait.flags */
#define LP_WAITF_TIMEDOUT 0x1u /* the timed form gave up */
#define LP_WAITF_FAILED 0x2u   /* returned an error other than timeout */
/* Still waiting when the process exited: end is the exit, written by the
 * exiting thread for this one (preload/lp_inflight.c). Also in
 * lp_rec_block.flags. */
#define LP_WAITF_UNFINISHED 0x4u
/* Set by the importer, never in a log: the process died of a signal in
 * this wait (its thread's slot in the run's table of waits in progress,
 * lp_inflight_format.h); end is its death. With LP_WAITF_UNFINISHED. */
#define LP_WAITF_DIED 0x8u

/*
 * runq: of a wait's time, the part the thread spent runnable but waiting
 * for a CPU (after its wake-up, or preempted inside the call), in ns, at
 * most end - start; LP_RUNQ_UNKNOWN when not measured (the thread's first
 * recorded wait, no schedstat, a wait the exit sweep wrote). Records
 * written before the field existed end before it: their runq is unknown
 * (LP_REC_*_V1_SIZE).
 */
#define LP_RUNQ_UNKNOWN UINT64_MAX

struct lp_rec_lock_wait {
	uint64_t lock;	/* address of the lock object */
	uint64_t start; /* ns: before the blocking call */
	uint64_t end;	/* ns: after it returned */
	uint32_t stack; /* stack id, 0 if none */
	uint32_t owner; /* tid holding it when the wait began, 0 if unknown */
	uint32_t flags;
	uint32_t pad;
	uint64_t runq; /* ns waiting for a CPU, or LP_RUNQ_UNKNOWN */
};
#define LP_REC_LOCK_WAIT_V1_SIZE 40u
_Static_assert(sizeof(struct lp_rec_lock_wait) == 48, "lock wait size");

/*
 * One hold of a lock that some thread has waited on in this process (from
 * that first wait on): acquisition to release, written at the release when
 * it lasted at least LP_HOLD_MIN_NS. Shorter holds, and holds of locks
 * nobody waited on, are not recorded.
 */
#define LP_HOLD_MIN_NS 50000u
struct lp_rec_lock_hold {
	uint64_t lock;	/* address of the lock object */
	uint64_t start; /* ns: acquired */
	uint64_t end;	/* ns: released */
	uint32_t stack; /* the acquiring call site, 0 if none */
	uint32_t pad;
};
_Static_assert(sizeof(struct lp_rec_lock_hold) == 32, "lock hold size");

enum lp_cond_kind {
	LP_COND_WAIT = 1,
	LP_COND_TIMEDWAIT = 2,
};

struct lp_rec_cond_wait {
	uint64_t cond;
	uint64_t mutex;
	uint64_t start;
	uint64_t end;
	uint32_t stack;
	uint32_t flags; /* LP_WAITF_* */
	uint64_t runq;	/* ns waiting for a CPU, or LP_RUNQ_UNKNOWN */
};
#define LP_REC_COND_WAIT_V1_SIZE 40u
_Static_assert(sizeof(struct lp_rec_cond_wait) == 48, "cond wait size");

/* The Python side of one wait of the writing thread: the wait whose
 * record (LOCK_WAIT, COND_WAIT or BLOCK) has this start. */
struct lp_rec_py_wait {
	uint64_t start;
	uint32_t frames;       /* STRING id: frames, innermost first (0 none) */
	uint32_t holder_tid;   /* GIL waits: the thread holding the GIL, 0 unknown */
	uint32_t holder_frame; /* STRING id: the holder's innermost frame, 0 none */
	uint32_t pad;
};
_Static_assert(sizeof(struct lp_rec_py_wait) == 24, "py wait size");

/* lp_rec_py_info.status */
enum lp_py_status {
	LP_PY_READ = 1,	   /* frames are read */
	LP_PY_UNKNOWN = 2, /* a version whose layout latprof does not know */
	LP_PY_CHECK = 3,   /* the layout check failed: no frames */
	LP_PY_NOREAD = 4,  /* no safe way to check the layout (process_vm_readv) */
};

struct lp_rec_py_info {
	uint32_t version; /* PY_VERSION_HEX of the interpreter */
	uint32_t status;  /* enum lp_py_status */
};

struct lp_rec_child_status {
	uint64_t ts;
	uint32_t pid;	/* the child */
	int32_t status; /* raw wait status */
};

/*
 * A blocking call (sleep, fd I/O, poll, fsync, futex wait, name lookup,
 * file lock, ...) that lasted at least the threshold
 * (LATPROF_BLOCK_THRESHOLD_NS) and left the CPU. The ids are stable:
 * the importer turns them into names and categories.
 */
enum lp_block_call {
	LP_BLK_NANOSLEEP = 1,
	LP_BLK_CLOCK_NANOSLEEP = 2,
	LP_BLK_USLEEP = 3,
	LP_BLK_SLEEP = 4,
	LP_BLK_READ = 10,
	LP_BLK_WRITE = 11,
	LP_BLK_PREAD = 12,
	LP_BLK_PWRITE = 13,
	LP_BLK_READV = 14,
	LP_BLK_WRITEV = 15,
	LP_BLK_FFLUSH = 16, /* stdio's explicit flush: I/O on the stream's descriptor */
	LP_BLK_RECV = 20,
	LP_BLK_SEND = 21,
	LP_BLK_RECVFROM = 22,
	LP_BLK_SENDTO = 23,
	LP_BLK_RECVMSG = 24,
	LP_BLK_SENDMSG = 25,
	LP_BLK_ACCEPT = 26,
	LP_BLK_CONNECT = 27,
	LP_BLK_SENDFILE = 28,
	LP_BLK_POLL = 30,
	LP_BLK_PPOLL = 31,
	LP_BLK_SELECT = 32,
	LP_BLK_PSELECT = 33,
	LP_BLK_EPOLL_WAIT = 34,
	LP_BLK_EPOLL_PWAIT = 35,
	LP_BLK_IO_URING_ENTER = 36, /* with IORING_ENTER_GETEVENTS and min_complete > 0 */
	LP_BLK_FSYNC = 40,
	LP_BLK_FDATASYNC = 41,
	LP_BLK_GETADDRINFO = 44, /* name lookups (DNS): socket I/O */
	LP_BLK_GETNAMEINFO = 45,
	LP_BLK_GETHOSTBYNAME = 46, /* also gethostbyname2 and the _r forms */
	LP_BLK_GETHOSTBYADDR = 47, /* also gethostbyaddr_r */
	LP_BLK_FUTEX = 50,
	LP_BLK_PTHREAD_JOIN = 51,
	LP_BLK_WAIT = 52, /* waiting for a child process */
	LP_BLK_WAITPID = 53,
	LP_BLK_WAIT3 = 54,
	LP_BLK_WAIT4 = 55,
	LP_BLK_WAITID = 56,
	LP_BLK_PAUSE = 57, /* waiting for a signal */
	LP_BLK_SIGSUSPEND = 58,
	LP_BLK_SIGWAIT = 59,
	LP_BLK_SIGWAITINFO = 60,
	LP_BLK_SIGTIMEDWAIT = 61,
	LP_BLK_FLOCK = 62, /* waiting for a file lock */
	LP_BLK_FCNTL = 63, /* F_SETLKW, F_OFD_SETLKW */
	LP_BLK_LOCKF = 64, /* F_LOCK */
	LP_BLK_CALL_MAX = 127,
};

/* What the call's descriptor was, from fstat() after the call. */
enum lp_fd_kind {
	LP_FD_NONE = 0, /* the call has no descriptor (sleep, poll, futex) */
	LP_FD_FILE = 1, /* regular file, directory or block device */
	LP_FD_SOCKET = 2,
	LP_FD_PIPE = 3, /* pipe or FIFO */
	LP_FD_EVENTFD = 4,
	LP_FD_TTY = 5,
	LP_FD_OTHER = 6,   /* other character device or anonymous inode */
	LP_FD_UNKNOWN = 7, /* fstat failed: closed meanwhile */
};

struct lp_rec_block {
	uint64_t start;	  /* ns: before the call */
	uint64_t end;	  /* ns: after it returned */
	int64_t result;	  /* return value, or -errno when it failed */
	int32_t fd;	  /* descriptor (out_fd for sendfile), -1 when none */
	uint32_t stack;	  /* stack id, 0 if none */
	uint32_t fd_kind; /* lp_fd_kind */
	uint32_t flags;	  /* LP_WAITF_UNFINISHED, else 0 */
	uint64_t runq;	  /* ns waiting for a CPU, or LP_RUNQ_UNKNOWN */
};
#define LP_REC_BLOCK_V1_SIZE 40u
_Static_assert(sizeof(struct lp_rec_block) == 48, "block size");

#endif
