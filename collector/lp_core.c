/* SPDX-License-Identifier: MIT */
/*
 * Recording core (see lp_core.h and schemas/eventlog.md).
 *
 * Memory: the file starts as its header alone and grows a chunk at a time.
 * Chunks are prepared in batches ahead of their use (lp_chunk_ready): blocks
 * reserved, pages written with zeros and mapped, before any record is
 * written there: a full disk is a failed refill, counted, never a SIGBUS
 * in the app, and the hot path takes no page fault. Chunks are
 * mapped in segments of growing size (1, 2, 4 ... 256 chunks, then 256 at a
 * time), so the address space taken follows what was written, not
 * LATPROF_LOG_MB; a process that records little maps 64 KiB.
 *
 * Names and stacks are interned in a table of levels that are allocated
 * as they fill (16 Ki slots, then 4 times as many each, 1 Mi at most); a
 * lookup probes at most LP_INTERN_PROBES slots per level. Past the last
 * level a name is written again with a fresh id at each use: more log
 * space, nothing lost, the cost per record stays bounded.
 */
#define _GNU_SOURCE
#include "lp_core.h"

#include <assert.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

/* xxHash (libxxhash-dev), inlined so the app gets no extra DT_NEEDED: a
 * well-tested 64-bit hash whose collisions we can afford to ignore. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lp_counters.h"
#include "lp_inflight_format.h"
#include "lp_ptab.h"
#include "lp_raw.h"

#define LP_DEFAULT_CHUNK LP_CHUNK_SIZE
#define LP_DEFAULT_LOG_MB 1024u
#define LP_MAX_LOG_MB 65536u
/* Segments 0..LP_SEG_GEOM-1 hold 1, 2, 4 ... chunks, every later one
 * LP_SEG_CHUNKS: chunk index -> segment is a shift and a divide. */
#define LP_SEG_GEOM 8u
#define LP_SEG_CHUNKS (1u << LP_SEG_GEOM)
#define LP_MAX_CHUNKS ((uint32_t)((uint64_t)LP_MAX_LOG_MB * 1024 * 1024 / LP_DEFAULT_CHUNK))
#define LP_SEGS (LP_SEG_GEOM + LP_MAX_CHUNKS / LP_SEG_CHUNKS + 1)
#define LP_INTERN_L0_BITS 14u
#define LP_INTERN_GROWTH 2u /* each level 4 times the one before */
#define LP_INTERN_LEVELS 4u /* 16 Ki .. 1 Mi slots, 21 MiB in all, 680 Ki names */
#define LP_INTERN_PROBES 32u
#define LP_FREE_CHUNKS 1024u
#define LP_REFILL_BACKOFF 4096u
#define LP_MAX_FRAMES 32

struct lp_intern_slot {
	uint64_t hash;
	uint32_t id;
	uint32_t definer; /* tid of the thread defining it, 0 once it is done */
};

/* The fields a forked child writes come first, in a page or two; the big
 * arrays after them: each page of this the child touches is a page fault. */
static struct lp_state {
	int active;   /* recording in this process: the image is in the table */
	int log_open; /* its log exists (lp_log_lazy): records go there */
	int open_failed;
	uint32_t opener; /* tid of the thread creating the log, 0 none */
	int fd;
	struct lp_log_header *hdr; /* its own mapping, page-rounded */
	uint32_t segs_hi;	   /* segments below this may be mapped */
	int seg_lock;		   /* mapping a segment */
	int prep_lock;		   /* preparing chunks (lp_chunk_ready) */
	uint32_t ready;		   /* chunks below this are prepared */
	size_t page;
	uint32_t chunk_size;
	uint32_t max_chunks;
	dev_t dev;
	ino_t ino;
	int exited;
	uint32_t next_id;
	uint64_t next_seq;
	int free_lock;
	uint32_t n_free;
	pthread_key_t key;
	int key_ok;
	uint32_t log_mb; /* read once at init: the app may change the env later */
	void (*on_open)(void);
	/* The intern table's levels: copy-on-write views of the parent's in a
	 * forked child, which unmaps them. */
	struct lp_intern_slot *levels[LP_INTERN_LEVELS];
	uint32_t level_used[LP_INTERN_LEVELS]; /* slots claimed in each */
	/* This image, as the table and a later log header both name it. */
	uint64_t start_ns, start_rt;
	uint32_t pid, ppid, parent_tid;
	char comm[16];
	uint32_t cmdline_len;
	/* Chunk data of each segment, NULL until mapped. A process maps the
	 * first few (8 segments hold 255 chunks): those share the first page
	 * with the fields above. */
	char *segs[LP_SEGS];
	char cmdline[4096];
	char path[PATH_MAX];
	char dir[PATH_MAX];
	struct lp_chunk_header *free_chunks[LP_FREE_CHUNKS];
} g = {.fd = -1};

/* Bumped in the child after fork so stale per-thread state is noticed. */
static uint32_t lp_gen = 1;
static pthread_mutex_t lp_init_lock = PTHREAD_MUTEX_INITIALIZER;

__thread struct lp_thread lp_rec_self __attribute__((tls_model("initial-exec")));

/* The vfork child this thread's memory now runs (pid 0: none). TLS the
 * child shares with its waiting parent thread: only the child writes it
 * (at its start) and the parent clears it once resumed. */
struct lp_vfork {
	uint32_t pid;
	int ended; /* its exit is in the table */
	uint64_t start_ns;
};
static __thread struct lp_vfork lp_vf __attribute__((tls_model("initial-exec")));

static int lp_open_log(void);

enum lp_drop_kind { LP_DROP_RECORD, LP_DROP_CHUNK, LP_DROP_STRING, LP_DROP_HOLD };

/* Drops before this image had a log, by kind: if a log is created later,
 * its header takes them over (lp_drop_carry), since the table is then no
 * longer written for this image. (Four threads interning one stack while
 * the first creates the log: the others' bounded waits end in drops.) */
static uint64_t lp_pre_log_drops[4];

static uint64_t *lp_drop_counter(struct lp_log_header *h, enum lp_drop_kind k)
{
	return k == LP_DROP_CHUNK    ? &h->dropped_chunks
	       : k == LP_DROP_STRING ? &h->dropped_strings
	       : k == LP_DROP_HOLD   ? &h->dropped_holds
				     : &h->dropped_records;
}

static void lp_drop(enum lp_drop_kind k)
{
	struct lp_log_header *h = g.hdr;
	if (!h) {
		/* no log (yet): the table's exit record counts the lost records (a
		 * lost definition is also its record's loss, counted once there) */
		if (k == LP_DROP_RECORD)
			lp_ptab_lose(1);
		__atomic_fetch_add(&lp_pre_log_drops[k], 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(lp_drop_counter(h, k), 1, __ATOMIC_RELAXED);
}

/* Moves the drops counted before the log existed into its header: at its
 * creation, and again at exit for one that raced with it. */
static void lp_drop_carry(void)
{
	for (int k = LP_DROP_RECORD; k <= LP_DROP_HOLD; k++) {
		uint64_t n = __atomic_exchange_n(&lp_pre_log_drops[k], 0, __ATOMIC_RELAXED);
		if (n && g.hdr)
			__atomic_fetch_add(lp_drop_counter(g.hdr, (enum lp_drop_kind)k), n,
					   __ATOMIC_RELAXED);
	}
}

void lp_core_drop_hold(void)
{
	lp_drop(LP_DROP_HOLD);
}

uint32_t lp_tid(void)
{
	struct lp_thread *t = &lp_rec_self;
	if (t->gen != lp_gen || !t->tid) {
		int saved = errno;
		t->tid = (uint32_t)LP_RAW(SYS_gettid, 0, 0, 0, 0, 0, 0);
		t->gen = lp_gen;
		t->chunk = NULL;
		t->busy = 0;
		errno = saved;
	}
	return t->tid;
}

int lp_core_active(void)
{
	return __atomic_load_n(&g.active, __ATOMIC_ACQUIRE);
}

/*
 * A daemon started as root drops to its own user before it serves
 * (memcached -u, a forked nginx or Apache worker, sshd's privilege
 * separation). The run's directory (mkdtemp, 0700) and the files every
 * process of the run opens there (the process table, the table of waits
 * in progress, the counter cache; 0600) are root's: after the drop the
 * process could create no log, nor could any process it forks or execs,
 * and every record was dropped (memcached -u nobody: 50,136 of them, one
 * thread seen). While still root, hand them to uid: root (latprof run and
 * its import) reads them all the same, and no one else gains access. A
 * later drop to another uid takes them over; the first uid's new processes
 * then count their records as dropped. A log this process already has
 * stays root's and stays writable through its open descriptor.
 */
void lp_core_before_uid_drop(uid_t uid)
{
	if (!lp_core_active() || uid == 0 || uid == (uid_t)-1 || geteuid() != 0)
		return;
	static const char *const shared[] = {LP_PTAB_NAME, LP_INF_FILE, LP_CNT_CACHE_FILE};
	int saved = errno;
	int dfd = open(g.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0) {
		if (fchown(dfd, uid, (gid_t)-1) == 0)
			for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
				(void)fchownat(dfd, shared[i], uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW);
		close(dfd);
	}
	errno = saved;
}

const char *lp_core_dir(void)
{
	return lp_core_active() ? g.dir : NULL;
}

void lp_core_image(uint32_t *pid, uint64_t *start_ns)
{
	int on = lp_core_active();
	*pid = on ? g.pid : 0;
	*start_ns = on ? g.start_ns : 0;
}

/* Held for a few instructions, or for the system calls that prepare
 * chunks: past a short spin the waiter yields, since on a loaded machine
 * (a storm of new threads) the holder may be off its CPU for a whole time
 * slice while every waiter spins. */
static void lp_spin_lock(int *l)
{
	for (unsigned spins = 0; __atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE); spins++) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			if (++spins >= 64) {
				LP_RAW(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
				spins = 0;
			}
#if defined(__x86_64__)
			__builtin_ia32_pause();
#endif
		}
	}
}

static void lp_spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* A lock held across system calls (preparing chunks): waiters sleep on a
 * futex after a short spin instead of taking the CPU from the holder (a
 * storm of 5,000 new threads spent over half its time spinning on it).
 * 0 free, 1 held, 2 held with sleepers. Raw futex calls (no hook of the
 * interposer's); the refill's caller keeps errno. */
static void lp_sleep_lock(int *l)
{
	int c = 0;
	for (int spins = 0; spins < 64; spins++, c = 0) {
		if (__atomic_compare_exchange_n(l, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
#if defined(__x86_64__)
		__builtin_ia32_pause();
#endif
	}
	if (c != 2)
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		LP_RAW(SYS_futex, l, FUTEX_WAIT_PRIVATE, 2, 0, 0, 0);
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	}
}

static void lp_sleep_unlock(int *l)
{
	if (__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) == 2)
		LP_RAW(SYS_futex, l, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* The app may have closed our descriptor (and reused its number): make sure
 * fd still names our log before fallocate() or pwrite() touches it. Slow
 * path only. */
static int lp_log_fd(void)
{
	struct stat st;
	if (g.fd >= 0 && fstat(g.fd, &st) == 0 && st.st_dev == g.dev && st.st_ino == g.ino)
		return g.fd;
	int fd = open(g.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_dev != g.dev || st.st_ino != g.ino) {
		close(fd);
		return -1;
	}
	g.fd = fd; /* the old number belongs to the app now: never close it */
	return fd;
}

/* Chunk index -> its segment, the segment's first chunk and its length. */
static uint32_t lp_seg_of(uint32_t idx, uint32_t *first, uint32_t *len)
{
	uint32_t s;
	if (idx < LP_SEG_CHUNKS - 1) {
		s = 31u - (uint32_t)__builtin_clz(idx + 1);
		*first = (1u << s) - 1;
		*len = 1u << s;
	} else {
		s = LP_SEG_GEOM + (idx - (LP_SEG_CHUNKS - 1)) / LP_SEG_CHUNKS;
		*first = LP_SEG_CHUNKS - 1 + (s - LP_SEG_GEOM) * LP_SEG_CHUNKS;
		*len = LP_SEG_CHUNKS;
	}
	if (*first + *len > g.max_chunks)
		*len = g.max_chunks - *first;
	assert(s < LP_SEGS && idx >= *first && idx < *first + *len);
	return s;
}

/* The mapping of a segment: offsets are rounded down to a page, so the
 * chunk data starts `delta` bytes in (0 with 4 KiB pages). */
static void lp_seg_span(uint32_t first, uint32_t len, off_t *at, size_t *delta, size_t *size)
{
	off_t off = (off_t)LP_LOG_HEADER_SIZE + (off_t)first * g.chunk_size;
	*at = off & ~(off_t)(g.page - 1);
	*delta = (size_t)(off - *at);
	*size = *delta + (size_t)len * g.chunk_size;
}

/* Address of chunk idx, mapping its segment on first use. Mapping past
 * the end of the file is allowed; no page is touched before its chunk was
 * prepared (lp_prepare), so the part past the end is never accessed. */
static struct lp_chunk_header *lp_chunk_addr(uint32_t idx)
{
	uint32_t first, len;
	uint32_t s = lp_seg_of(idx, &first, &len);
	char *b = __atomic_load_n(&g.segs[s], __ATOMIC_ACQUIRE);
	if (!b) {
		lp_spin_lock(&g.seg_lock);
		b = g.segs[s];
		int fd = b ? -1 : lp_log_fd();
		if (fd >= 0) {
			off_t at;
			size_t delta, size;
			lp_seg_span(first, len, &at, &delta, &size);
			void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at);
			if (p != MAP_FAILED) {
				/* Pages are put in by lp_prepare; should one be faulted
				 * anyway (evicted after writeback), read no neighbours. */
				madvise(p, size, MADV_RANDOM);
				b = (char *)p + delta;
				__atomic_store_n(&g.segs[s], b, __ATOMIC_RELEASE);
				if (g.segs_hi <= s)
					g.segs_hi = s + 1;
			}
		}
		lp_spin_unlock(&g.seg_lock);
		if (!b)
			return NULL;
	}
	return (struct lp_chunk_header *)(b + (size_t)(idx - first) * g.chunk_size);
}

/* Zeros written into the log to prepare chunks (never written here). */
static char lp_zeros[LP_DEFAULT_CHUNK];

/*
 * Make chunks [first, first + n), all in one segment, safe to write before
 * any record goes there: their blocks reserved (posix_fallocate; where a
 * filesystem lacks it, the write below extends the file), their pages put
 * in the page cache by writing zeros, and mapped (MADV_POPULATE_WRITE, which
 * reports a failure instead of raising SIGBUS). Whole-page writes read
 * nothing: faulting the pages in read each one (zero-filled, through
 * readahead) at several times the cost, inside the writer's records. A
 * chunk that cannot be prepared is never used: no page left to chance, a
 * full disk is a failed refill. Raw pwrite: no hook of the interposer's.
 */
static int lp_prepare(uint32_t first, uint32_t n)
{
	int fd = lp_log_fd();
	struct lp_chunk_header *c = lp_chunk_addr(first);
	if (fd < 0 || !c)
		return -1;
	off_t off = (off_t)LP_LOG_HEADER_SIZE + (off_t)first * g.chunk_size;
	size_t len = (size_t)n * g.chunk_size;
	int rc = posix_fallocate(fd, off, (off_t)len);
	if (rc && (rc != EOPNOTSUPP && rc != EINVAL && rc != ENOSYS))
		return -1; /* ENOSPC, EFBIG, EIO ... */
	for (size_t done = 0; done < len;) {
		size_t k = len - done < sizeof(lp_zeros) ? len - done : sizeof(lp_zeros);
		long w = LP_RAW(SYS_pwrite64, fd, lp_zeros, k, off + (off_t)done, 0, 0);
		if (w < 0 && errno == EINTR) /* a signal handler of the app's ran */
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	uintptr_t lo = (uintptr_t)c & ~(uintptr_t)(g.page - 1);
	if (madvise((void *)lo, (size_t)((uintptr_t)c - lo) + len, MADV_POPULATE_WRITE) == 0)
		return 0;
	return errno == EINVAL ? 0 : -1; /* EINVAL: kernel without it; pages are in */
}

/*
 * Chunk idx, handed out by n_chunks, prepared. Chunks are prepared in
 * order, ahead of their use, in batches that grow with the log (1, 1, 2, 4
 * ... LP_PREP_MAX chunks, within a segment): a process that records little
 * prepares one chunk, a busy one pays the system calls once per batch and
 * a new thread's first chunk is usually ready. Only chunks at or past
 * g.ready are written here, and none of those has had a record: each
 * owner waits here first.
 */
#define LP_PREP_MAX 16u
static int lp_chunk_ready(uint32_t idx)
{
	if (idx < __atomic_load_n(&g.ready, __ATOMIC_ACQUIRE))
		return 0;
	int rc = 0;
	lp_sleep_lock(&g.prep_lock);
	while (rc == 0 && g.ready <= idx) {
		uint32_t first = g.ready, sfirst, slen;
		lp_seg_of(first, &sfirst, &slen);
		uint32_t n = first ? (first < LP_PREP_MAX ? first : LP_PREP_MAX) : 1;
		if (n < idx + 1 - first)
			n = idx + 1 - first;
		if (n > sfirst + slen - first)
			n = sfirst + slen - first;
		rc = lp_prepare(first, n);
		if (rc && n > 1) /* the disk may hold less: just the next one */
			rc = lp_prepare(first, n = 1);
		if (rc == 0)
			__atomic_store_n(&g.ready, first + n, __ATOMIC_RELEASE);
	}
	lp_sleep_unlock(&g.prep_lock);
	return rc;
}

static struct lp_chunk_header *lp_chunk_new(void)
{
	struct lp_chunk_header *c = NULL;

	lp_spin_lock(&g.free_lock);
	if (g.n_free)
		c = g.free_chunks[--g.n_free];
	lp_spin_unlock(&g.free_lock);
	if (c)
		return c;

	uint32_t idx = __atomic_fetch_add(&g.hdr->n_chunks, 1, __ATOMIC_RELAXED);
	if (idx >= g.max_chunks) {
		lp_drop(LP_DROP_CHUNK);
		return NULL;
	}
	if (lp_chunk_ready(idx) != 0 || !(c = lp_chunk_addr(idx))) {
		lp_drop(LP_DROP_CHUNK);
		return NULL;
	}
	c->index = idx;
	c->committed = 0;
	__atomic_store_n(&c->magic, LP_CHUNK_MAGIC, __ATOMIC_RELEASE);
	return c;
}

/* Hand a chunk with room left to the next thread that needs one: 10,000
 * short-lived threads must not need 10,000 chunks. */
static void lp_chunk_retire(struct lp_thread *t)
{
	struct lp_chunk_header *c = t->chunk;
	t->chunk = NULL;
	if (!c || g.chunk_size - sizeof(*c) - t->used < g.chunk_size / 8)
		return;
	lp_spin_lock(&g.free_lock);
	if (g.n_free < LP_FREE_CHUNKS)
		g.free_chunks[g.n_free++] = c;
	lp_spin_unlock(&g.free_lock);
}

static void lp_thread_exit(void *arg)
{
	(void)arg;
	struct lp_thread *t = &lp_rec_self;
	if (!__atomic_load_n(&g.log_open, __ATOMIC_ACQUIRE) || t->gen != lp_gen)
		return;
	struct lp_rec_thread_end *r = lp_rec_begin(LP_REC_THREAD_END, 0, sizeof(*r));
	if (r) {
		r->ts = lp_now();
		r->tid = t->tid;
		r->pad = 0;
		lp_rec_commit();
	}
	lp_chunk_retire(t);
}

static int lp_thread_refill(struct lp_thread *t, uint32_t need)
{
	if (t->backoff) {
		t->backoff--;
		return -1;
	}
	int first = t->chunk == NULL;
	lp_chunk_retire(t);
	struct lp_chunk_header *c = lp_chunk_new();
	if (!c) {
		t->backoff = LP_REFILL_BACKOFF;
		return -1;
	}
	t->chunk = c;
	t->used = (uint32_t)c->committed;
	if (t->used + 16 + need > g.chunk_size - sizeof(*c)) {
		t->chunk = NULL; /* a reused chunk too full for this record */
		return lp_thread_refill(t, need);
	}
	/* Every stretch of a chunk starts by naming its thread. */
	struct lp_rec_header *h = (struct lp_rec_header *)((char *)(c + 1) + t->used);
	h->type = LP_REC_CTX;
	h->size = 16;
	h->aux = t->tid;
	((struct lp_rec_ctx *)(h + 1))->seq = __atomic_add_fetch(&g.next_seq, 1, __ATOMIC_RELAXED);
	t->used += 16;
	__atomic_store_n(&c->committed, t->used, __ATOMIC_RELEASE);
	if (first && g.key_ok)
		pthread_setspecific(g.key, (void *)1);
	return 0;
}

/*
 * The image's first record creates its log (lp_open_log): until then the
 * process is only in the run's process table, which is what makes a process
 * that records nothing cheap. One thread creates it while the others wait
 * (a create takes ~0.2 ms on ext4); a signal handler that interrupts the
 * creating thread and records gets no log: the record is dropped and
 * counted, in the log's header once it exists (lp_drop_carry). Nothing of
 * latprof's own reaches here from the creation: its one hooked call, the
 * header's pwrite, is a raw syscall. A failed creation (disk full) is not
 * retried: every later record is counted as lost in the table's exit
 * record. Returns 0 once a log exists.
 */
static __attribute__((noinline)) int lp_log_lazy(void)
{
	if (!lp_core_active())
		return -1;
	int saved = errno;
	uint32_t me = lp_tid();
	int rc = -1;
	for (;;) {
		if (__atomic_load_n(&g.log_open, __ATOMIC_ACQUIRE)) {
			rc = 0;
			break;
		}
		if (__atomic_load_n(&g.open_failed, __ATOMIC_ACQUIRE))
			break;
		uint32_t owner = 0;
		if (__atomic_compare_exchange_n(&g.opener, &owner, me, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			if (!g.log_open && !g.open_failed && lp_open_log() != 0)
				__atomic_store_n(&g.open_failed, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&g.opener, 0, __ATOMIC_RELEASE);
			continue;
		}
		if (owner == me)
			break; /* a signal handler inside our own creation */
		sched_yield();
	}
	if (rc)
		lp_drop(LP_DROP_RECORD);
	errno = saved;
	return rc;
}

void *lp_rec_begin(uint16_t type, uint32_t aux, size_t payload)
{
	lp_test_slow_hotpath();
	if (!__atomic_load_n(&g.log_open, __ATOMIC_ACQUIRE) && lp_log_lazy())
		return NULL;
	struct lp_thread *t = &lp_rec_self;
	lp_tid();
	if (t->busy) { /* a signal handler interrupted a record */
		lp_drop(LP_DROP_RECORD);
		return NULL;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	size_t need = (sizeof(struct lp_rec_header) + payload + LP_REC_ALIGN - 1) & ~(size_t)7;
	if (need > UINT16_MAX || need > g.chunk_size / 2)
		goto drop;
	if (!t->chunk || t->used + need > g.chunk_size - sizeof(struct lp_chunk_header)) {
		int saved = errno;
		int rc = lp_thread_refill(t, (uint32_t)need);
		errno = saved;
		if (rc)
			goto drop;
	}
	struct lp_rec_header *h = (struct lp_rec_header *)((char *)(t->chunk + 1) + t->used);
	h->type = type;
	h->size = (uint16_t)need;
	h->aux = aux;
	t->pending = (uint32_t)need;
	return h + 1;
drop:
	lp_drop(LP_DROP_RECORD);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
	return NULL;
}

void lp_rec_commit(void)
{
	struct lp_thread *t = &lp_rec_self;
	/* Only after a successful lp_rec_begin() on this very thread (t is
	 * thread-local): busy, pending and the chunk are that begin's. */
	assert(t->busy && t->pending && t->chunk);
	t->used += t->pending;
	t->pending = 0;
	__atomic_store_n(&t->chunk->committed, t->used, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

void lp_rec_put8_slow(uint16_t type, uint32_t aux, uint64_t v)
{
	uint64_t *p = lp_rec_begin(type, aux, sizeof(v));
	if (p) {
		*p = v;
		lp_rec_commit();
	}
}

/*
 * Three records in one reservation, so that no chunk refill can come
 * between them: a CTX naming `tid`, the record, and a CTX naming this
 * thread again for whatever it writes next. The reader splits stretches at
 * CTX records anywhere in a chunk (import/sources/lp_logread.c) and orders them by
 * seq, so the record joins tid's records after all it wrote itself.
 */
void *lp_rec_begin_for(uint32_t tid, uint16_t type, uint32_t aux, size_t payload)
{
	uint32_t self = lp_tid();
	if (tid == self)
		return lp_rec_begin(type, aux, payload);
	size_t rec = (sizeof(struct lp_rec_header) + payload + LP_REC_ALIGN - 1) & ~(size_t)7;
	if (rec > UINT16_MAX)
		return NULL;
	struct lp_rec_header *h = lp_rec_begin(LP_REC_CTX, tid, 8 + rec + 16);
	if (!h)
		return NULL;
	h--; /* lp_rec_begin returned the payload after the header */
	h->size = 16;
	((struct lp_rec_ctx *)(h + 1))->seq = __atomic_add_fetch(&g.next_seq, 1, __ATOMIC_RELAXED);
	struct lp_rec_header *r = (struct lp_rec_header *)((char *)h + 16);
	r->type = type;
	r->size = (uint16_t)rec;
	r->aux = aux;
	struct lp_rec_header *back = (struct lp_rec_header *)((char *)r + rec);
	back->type = LP_REC_CTX;
	back->size = 16;
	back->aux = self;
	((struct lp_rec_ctx *)(back + 1))->seq =
	    __atomic_add_fetch(&g.next_seq, 1, __ATOMIC_RELAXED);
	return r + 1;
}

/* Write a definition record for a new id; 0 when it could not be stored
 * (counted: the records that name it will have no name). */
static uint32_t lp_define(uint16_t type, uint32_t aux, const void *a, size_t alen)
{
	uint32_t id = __atomic_add_fetch(&g.next_id, 1, __ATOMIC_RELAXED);
	uint32_t *rec = lp_rec_begin(type, aux, 8 + alen);
	if (!rec) {
		lp_drop(LP_DROP_STRING);
		return id;
	}
	rec[0] = id;
	rec[1] = 0;
	memcpy(rec + 2, a, alen);
	lp_rec_commit();
	return id;
}

/* Level k of the intern table, allocated by the first thread that needs
 * it (a losing racer unmaps its copy). Private anonymous memory: a forked
 * child drops its copy-on-write view with one munmap. */
static struct lp_intern_slot *lp_level(uint32_t k)
{
	struct lp_intern_slot *t = __atomic_load_n(&g.levels[k], __ATOMIC_ACQUIRE);
	if (t)
		return t;
	size_t size = sizeof(*t) << (LP_INTERN_L0_BITS + LP_INTERN_GROWTH * k);
	int saved = errno;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = saved;
	if (p == MAP_FAILED)
		return NULL;
	if (size >= (2u << 20)) /* random probes: one TLB entry per 2 MiB */
		madvise(p, size, MADV_HUGEPAGE);
	errno = saved;
	if (!__atomic_compare_exchange_n(&g.levels[k], &t, p, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap(p, size);
		return t;
	}
	return p;
}

/* How long a thread waits for a name another thread is defining, past its
 * spins (lp_intern_wait). */
#define LP_INTERN_WAIT_NS 10000000ull

/*
 * A name another thread is defining: its id once published, UINT32_MAX if
 * none comes. Bounded, since the definer may be the thread this one
 * interrupted (a signal handler interning what the code beneath it was
 * defining), may have failed (no log space: it clears its mark), or may be
 * stopped. Spins first; then, while the definer's mark says it is at work
 * and it is not this thread, yields for at most LP_INTERN_WAIT_NS. The
 * spins alone ran out in CI's ASan tier, four workers interning one new
 * stack on a loaded host with the definer descheduled: that wait was kept
 * without its stack.
 */
static uint32_t lp_intern_wait(struct lp_intern_slot *s)
{
	for (int spin = 0; spin < 100000; spin++) {
		uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
		if (id)
			return id;
	}
	uint32_t definer = __atomic_load_n(&s->definer, __ATOMIC_ACQUIRE);
	if (!definer || definer == lp_tid())
		return UINT32_MAX;
	uint64_t end = lp_now() + LP_INTERN_WAIT_NS;
	do {
		LP_RAW(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
		uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
		if (id)
			return id;
	} while (__atomic_load_n(&s->definer, __ATOMIC_ACQUIRE) && lp_now() < end);
	uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
	return id ? id : UINT32_MAX;
}

/* The id of hash h, or 0 when it has none yet and slot *out is where it
 * goes (NULL: no level can take it). Lock-free open addressing on the
 * 64-bit hash alone: a collision would merge two names, which at 2^-64 per
 * pair we accept. A level takes new hashes until it is half full, so its
 * probe runs stay short (a cache line or two); a lookup goes down the
 * levels until a hit, or an empty slot in the level still taking them.
 * Two threads racing past a level as it closes may define the same name
 * twice, under two ids: harmless, the importer merges names by value. */
static uint32_t lp_intern_find(uint64_t h, struct lp_intern_slot **out)
{
	*out = NULL;
	for (uint32_t k = 0; k < LP_INTERN_LEVELS; k++) {
		struct lp_intern_slot *t = lp_level(k);
		if (!t)
			return 0;
		uint32_t bits = LP_INTERN_L0_BITS + LP_INTERN_GROWTH * k;
		uint32_t mask = (1u << bits) - 1;
		int open = __atomic_load_n(&g.level_used[k], __ATOMIC_RELAXED) < (mask + 1) / 2;
		uint32_t i = (uint32_t)(h >> 24) & mask;
		for (uint32_t probe = 0; probe < LP_INTERN_PROBES; probe++, i = (i + 1) & mask) {
			struct lp_intern_slot *s = &t[i];
			uint64_t cur = __atomic_load_n(&s->hash, __ATOMIC_ACQUIRE);
			if (cur == 0) {
				if (!open)
					break; /* not in this level */
				uint64_t zero = 0;
				if (__atomic_compare_exchange_n(&s->hash, &zero, h, 0,
								__ATOMIC_ACQ_REL,
								__ATOMIC_ACQUIRE)) {
					__atomic_fetch_add(&g.level_used[k], 1, __ATOMIC_RELAXED);
					__atomic_store_n(&s->definer, lp_tid(), __ATOMIC_RELEASE);
					*out = s;
					return 0;
				}
				cur = zero;
			}
			if (cur != h)
				continue;
			return lp_intern_wait(s);
		}
	}
	return 0;
}

/* The winner of a slot writes the definition record before publishing the
 * id, and then clears its mark (also when the definition failed: the name
 * then stays undefined, each later use dropped after its spins, as
 * before). When every level is full the name is defined again, under a
 * new id, at each use: nothing lost, constant cost, only log space spent. */
static uint32_t lp_intern(uint64_t h, uint16_t type, uint32_t aux, const void *a, size_t alen)
{
	if (!lp_core_active())
		return 0;
	/* The log first: a thread that claimed a slot and then created the log
	 * (milliseconds on ext4) left the others' bounded waits for its id to
	 * end in drops, 1-9 of 256 stacks in bench_gen_log's four threads. */
	if (!__atomic_load_n(&g.log_open, __ATOMIC_ACQUIRE) && lp_log_lazy()) {
		lp_drop(LP_DROP_STRING); /* its record's drop is counted there */
		return 0;
	}
	struct lp_intern_slot *slot;
	uint32_t id = lp_intern_find(h ? h : 1, &slot);
	if (id == UINT32_MAX) {
		lp_drop(LP_DROP_STRING);
		return 0;
	}
	if (id)
		return id;
	id = lp_define(type, aux, a, alen);
	if (slot) {
		if (id)
			__atomic_store_n(&slot->id, id, __ATOMIC_RELEASE);
		__atomic_store_n(&slot->definer, 0, __ATOMIC_RELEASE);
	}
	return id;
}

uint32_t lp_intern_string(const char *s, size_t len)
{
	if (len > 4000)
		len = 4000;
	return lp_intern(XXH3_64bits_withSeed(s, len, 1), LP_REC_STRING, (uint32_t)len, s, len);
}

uint32_t lp_intern_stack(const uint64_t *pcs, unsigned n)
{
	if (!n)
		return 0;
	size_t len = n * sizeof(uint64_t);
	return lp_intern(XXH3_64bits_withSeed(pcs, len, 2), LP_REC_STACK, n, pcs, len);
}

void lp_core_warm_unwinder(void)
{
	static int done;
	if (__atomic_load_n(&done, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	void *warm[2];
	int saved = errno;
	backtrace(warm, 2);
	lp_unwind_resolve();
	errno = saved;
}

uint32_t lp_capture_stack(unsigned skip)
{
	lp_core_warm_unwinder();
	void *buf[LP_MAX_FRAMES];
	int n = lp_core_backtrace(buf, LP_MAX_FRAMES);
	skip += 1; /* this function */
	if (n <= (int)skip)
		return 0;
	uint64_t pcs[LP_MAX_FRAMES];
	unsigned k = 0;
	for (int i = (int)skip; i < n; i++)
		pcs[k++] = (uint64_t)(uintptr_t)buf[i];
	return lp_intern_stack(pcs, k);
}

static int lp_module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *path = data;
	if (info->dlpi_name && info->dlpi_name[0])
		path = info->dlpi_name;
	if (!path || path[0] != '/')
		return 0; /* vdso, or main program without a readable path */
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t s = info->dlpi_addr + ph->p_vaddr;
		if (s < lo)
			lo = s;
		if (s + ph->p_memsz > hi)
			hi = s + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	size_t len = strnlen(path, PATH_MAX);
	struct lp_rec_module *m = lp_rec_begin(LP_REC_MODULE, (uint32_t)len, sizeof(*m) + len);
	if (m) {
		m->load_bias = info->dlpi_addr;
		m->start = lo;
		m->end = hi;
		memcpy(m + 1, path, len);
		lp_rec_commit();
	}
	return 0;
}

/* The main program's path as the user named it: the kernel resolves a
 * symlink at exec, so /proc/self/exe names the file the link points to
 * (redis-check-rdb for a redis-server link). The name exec was given
 * (AT_EXECFN) is kept when it is absolute and still leads to that file;
 * the import reads the program through it all the same. */
static void lp_core_exe_path(char *exe, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", exe, size - 1);
	exe[n > 0 ? n : 0] = 0;
	const char *fn = (const char *)getauxval(AT_EXECFN);
	char real[PATH_MAX];
	if (n > 0 && fn && fn[0] == '/' && strcmp(fn, exe) && strlen(fn) < size &&
	    realpath(fn, real) && !strcmp(real, exe))
		strcpy(exe, fn);
}

/* Only into an existing log: a log records the modules when it is created,
 * so a library loaded and unloaded before then needs no record. */
void lp_core_record_modules(void)
{
	if (!__atomic_load_n(&g.log_open, __ATOMIC_ACQUIRE))
		return;
	int saved = errno;
	char exe[PATH_MAX];
	lp_core_exe_path(exe, sizeof(exe));
	dl_iterate_phdr(lp_module_cb, exe);
	errno = saved;
}

/* The argv area [lp_arg_lo, lp_arg_hi), as the kernel's arg_start and
 * arg_end name it, from the arguments glibc hands every ELF constructor;
 * NULL when the strings were not laid out contiguously. */
static const char *lp_arg_lo, *lp_arg_hi;

__attribute__((constructor)) static void lp_core_args(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc <= 0 || !argv || !argv[0])
		return;
	const char *end = argv[0];
	for (int i = 0; i < argc; i++) {
		if (!argv[i] || argv[i] != end)
			return;
		end += strlen(argv[i]) + 1;
	}
	lp_arg_lo = argv[0];
	lp_arg_hi = end;
}

/* This process's argv area as the kernel shows it (NUL-separated, cut at
 * len); 0 bytes when it cannot be read. Read from memory when we know the
 * area and it still ends in a NUL (else the kernel would read on into the
 * environment, as setproctitle-style titles need): /proc/self/cmdline
 * costs an open, a read and a close, twice in every process. */
static ssize_t lp_read_cmdline(char *buf, size_t len)
{
	if (lp_arg_lo && lp_arg_hi[-1] == 0) {
		size_t n = (size_t)(lp_arg_hi - lp_arg_lo);
		n = n < len ? n : len;
		memcpy(buf, lp_arg_lo, n);
		return (ssize_t)n;
	}
	ssize_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len);
		close(fd);
	}
	return n < 0 ? 0 : n;
}

/* The image's start as captured when it began (lp_image_capture): a log
 * created later still says when and as what the process started. */
static void lp_record_proc_start(void)
{
	size_t n = g.cmdline_len;
	struct lp_rec_proc_start *r = lp_rec_begin(LP_REC_PROC_START, (uint32_t)n, sizeof(*r) + n);
	if (!r)
		return;
	r->ts = g.start_ns;
	r->pid = g.pid;
	r->ppid = g.ppid;
	r->realtime_ns = g.start_rt;
	memcpy(r + 1, g.cmdline, n);
	lp_rec_commit();
}

/* The main thread as it was at the image's start; its counters, if the
 * interposer asked for them (lp_core_on_log_open), open now. */
static void lp_record_main_thread(void)
{
	struct lp_rec_thread_start *r = lp_rec_begin(LP_REC_THREAD_START, 0, sizeof(*r));
	if (r) {
		r->ts = g.start_ns;
		r->tid = g.pid;
		r->parent_tid = g.parent_tid;
		lp_rec_commit();
	}
	size_t len = strnlen(g.comm, sizeof(g.comm));
	if (len) {
		uint32_t id = lp_intern_string(g.comm, len);
		struct lp_rec_thread_name *n = lp_rec_begin(LP_REC_THREAD_NAME, 0, sizeof(*n));
		if (n) {
			n->ts = g.start_ns;
			n->tid = g.pid;
			n->name = id;
			lp_rec_commit();
		}
	}
	if (g.on_open)
		g.on_open();
}

static uint32_t lp_env_u32(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	unsigned long v = strtoul(s, NULL, 10);
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/* Create the log under a private name, DIR/.p<pid>.new; lp_publish_file()
 * gives it its real name once the header is complete, so an importer that
 * lists the directory mid-run (the app's daemon child is still starting)
 * never sees a half-made log. Caller holds lp_init_lock or is the only
 * thread. */
static int lp_create_file(uint32_t pid)
{
	int len = snprintf(g.path, sizeof(g.path), "%s/.p%u.new", g.dir, pid);
	if (len < 0 || (size_t)len >= sizeof(g.path))
		return -ENAMETOOLONG;
	for (int tries = 0; tries < 2; tries++) {
		int fd = open(g.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
		unlink(g.path); /* left by an earlier image with our pid that died here */
	}
	return -EEXIST;
}

/* link() to DIR/p<pid>-<n>.lplog, the first free n (a new image after exec
 * keeps the pid, so n counts up); link never replaces an existing name. */
static int lp_publish_file(uint32_t pid)
{
	char tmp[PATH_MAX];
	memcpy(tmp, g.path, sizeof(tmp));
	for (int n = 0; n < 1000; n++) {
		int len = snprintf(g.path, sizeof(g.path), "%s/p%u-%d.lplog", g.dir, pid, n);
		if (len < 0 || (size_t)len >= sizeof(g.path))
			break;
		if (link(tmp, g.path) == 0) {
			unlink(tmp);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	int rc = errno == EEXIST || errno == 0 ? -EEXIST : -errno;
	memcpy(g.path, tmp, sizeof(tmp)); /* the caller unlinks it */
	return rc;
}

static void lp_fill_header(struct lp_log_header *h, uint32_t pid)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, LP_LOG_MAGIC, 8);
	h->version = LP_LOG_VERSION;
	h->bom = LP_LOG_BOM;
	h->header_size = LP_LOG_HEADER_SIZE;
	h->chunk_size = g.chunk_size;
	h->max_chunks = g.max_chunks;
	h->clock_kind = LP_CLOCK_MONOTONIC_NS;
	h->pid = pid;
	h->ppid = g.ppid;
	h->start_ns = g.start_ns; /* the image's start: the table's key for it */
	h->start_realtime_ns = g.start_rt;
}

/* Chunks the log may hold: LATPROF_LOG_MB, capped at RLIMIT_FSIZE (never
 * grow the file past it: that would raise SIGXFSZ). 0 if not even two. */
static uint32_t lp_max_chunks(void)
{
	uint64_t total = (uint64_t)g.log_mb << 20;
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < total)
		total = rl.rlim_cur;
	if (total < LP_LOG_HEADER_SIZE + 2ull * g.chunk_size)
		return 0;
	uint64_t n = (total - LP_LOG_HEADER_SIZE) / g.chunk_size;
	return n < LP_MAX_CHUNKS ? (uint32_t)n : LP_MAX_CHUNKS;
}

/* Unmap the header and every segment (after fork: the parent's). */
static void lp_unmap_all(void)
{
	for (uint32_t s = 0, first = 0; s < g.segs_hi && first < g.max_chunks; s++) {
		uint32_t f, len;
		lp_seg_of(first, &f, &len);
		if (g.segs[s]) {
			off_t at;
			size_t delta, size;
			lp_seg_span(first, len, &at, &delta, &size);
			LP_RAW(SYS_munmap, g.segs[s] - delta, size, 0, 0, 0, 0);
			g.segs[s] = NULL;
		}
		first += len;
	}
	g.segs_hi = 0;
	if (g.hdr)
		LP_RAW(SYS_munmap, g.hdr, LP_LOG_HEADER_SIZE, 0, 0, 0, 0);
	g.hdr = NULL;
}

/* Caller owns g.opener (lp_log_lazy). The file
 * starts as the header alone, written with pwrite: writing it through the
 * mapping would fault in a page of a sparse file, and readahead would
 * zero-fill its neighbours in every process (most of a process's start
 * cost on ext4 before). */
static int lp_open_log(void)
{
	uint32_t pid = (uint32_t)getpid();
	struct lp_log_header hdr;
	int fd = lp_create_file(pid);
	if (fd < 0)
		return fd;
	/* Keep our descriptor out of the low numbers apps tend to assume. */
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	g.chunk_size = LP_DEFAULT_CHUNK;
	g.page = (size_t)sysconf(_SC_PAGESIZE);
	g.max_chunks = lp_max_chunks();
	if (!g.max_chunks || g.page < 4096 || g.page & (g.page - 1))
		goto fail_einval;
	lp_fill_header(&hdr, pid);
	/* The raw syscall: a sanitizer's pwrite interceptor would hand the call
	 * to the interposer's hook from an address that is not latprof's, and
	 * its record, refused while this thread creates the log, would count
	 * as the app's drop (lp_log_lazy). */
	if (LP_RAW(SYS_pwrite64, fd, &hdr, sizeof(hdr), 0, 0, 0) != (long)sizeof(hdr))
		goto fail_errno; /* ENOSPC already: this process goes unrecorded */
	void *p = mmap(NULL, LP_LOG_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail_errno;
	struct stat st;
	fstat(fd, &st);
	g.dev = st.st_dev;
	g.ino = st.st_ino;
	g.fd = fd;
	g.hdr = p;
	if (hi < 0) /* it takes one of the app's descriptors: latprof run says so */
		__atomic_fetch_or(&g.hdr->flags, LP_LOGF_LOWFD, __ATOMIC_RELAXED);
	g.ready = 0;
	g.next_id = 0;
	g.next_seq = 0;
	int rc = lp_publish_file(pid);
	if (rc) {
		lp_unmap_all();
		g.fd = -1;
		errno = -rc;
		goto fail_errno;
	}
	__atomic_store_n(&g.log_open, 1, __ATOMIC_RELEASE);
	lp_drop_carry();
	lp_record_proc_start();
	lp_core_record_modules();
	lp_record_main_thread();
	return 0;
fail_einval:
	errno = EINVAL;
fail_errno:
	rc = -errno;
	close(fd);
	unlink(g.path);
	return rc;
}

/* Who this image is: captured once at its start (exec'd image: at init;
 * forked child: in the fork handler), written to the table now and to the
 * log if one is created later. */
static void lp_image_capture(uint32_t parent_tid)
{
	struct timespec rt;
	/* Raw: in a forked child each page of libc text first run faults. */
	g.pid = (uint32_t)LP_RAW(SYS_getpid, 0, 0, 0, 0, 0, 0);
	g.ppid = (uint32_t)LP_RAW(SYS_getppid, 0, 0, 0, 0, 0, 0);
	g.parent_tid = parent_tid;
	g.start_ns = lp_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	g.start_rt = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	memset(g.comm, 0, sizeof(g.comm));
	/* The raw syscall: prctl() is the interposer's own hook. */
	LP_RAW(SYS_prctl, PR_GET_NAME, g.comm, 0, 0, 0, 0);
	ssize_t n = lp_read_cmdline(g.cmdline, sizeof(g.cmdline));
	g.cmdline_len = (uint32_t)n;
}

/* Put the image in the process table; without a table (it could not be
 * opened or written) create the log now, as before the table existed, so
 * that the process is never missing. Caller holds lp_init_lock or is the
 * only thread. 0 when the process records. */
static int lp_image_start(void)
{
	struct lp_ptab_start st = {
	    .realtime_ns = g.start_rt, .ppid = g.ppid, .parent_tid = g.parent_tid};
	memcpy(st.comm, g.comm, sizeof(st.comm));
	__atomic_store_n(&g.active, 1, __ATOMIC_RELEASE);
	if (lp_ptab_put(LP_PTAB_START, g.pid, g.start_ns, g.start_ns, &st, sizeof(st), g.cmdline,
			g.cmdline_len) == 0)
		return 0;
	int rc = lp_log_lazy();
	if (rc)
		__atomic_store_n(&g.active, 0, __ATOMIC_RELEASE);
	return rc;
}

static void lp_atfork_child(void)
{
	lp_core_after_fork_child();
}

int lp_core_init(void)
{
	if (lp_core_active())
		return 0;
	int saved = errno;
	int rc = 0;
	pthread_mutex_lock(&lp_init_lock);
	if (g.active || g.exited)
		goto out;
	const char *dir = getenv("LATPROF_DIR");
	if (!dir || !*dir || strlen(dir) >= sizeof(g.dir)) {
		rc = -ENOENT;
		goto out;
	}
	strcpy(g.dir, dir);
	g.log_mb = lp_env_u32("LATPROF_LOG_MB", LP_DEFAULT_LOG_MB, 1, LP_MAX_LOG_MB);
	g.key_ok = pthread_key_create(&g.key, lp_thread_exit) == 0;
	lp_image_capture(0);
	lp_ptab_open(g.dir); /* a failure: lp_image_start creates the log */
	rc = lp_image_start();
	if (rc == 0)
		pthread_atfork(NULL, NULL, lp_atfork_child);
out:
	pthread_mutex_unlock(&lp_init_lock);
	errno = saved;
	return rc;
}

void lp_core_on_log_open(void (*fn)(void))
{
	g.on_open = fn;
}

static void (*lp_on_exit[4])(void);

void lp_core_on_exit(void (*fn)(void))
{
	for (size_t i = 0; i < sizeof(lp_on_exit) / sizeof(lp_on_exit[0]); i++) {
		void (*none)(void) = NULL;
		if (__atomic_compare_exchange_n(&lp_on_exit[i], &none, fn, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) ||
		    none == fn)
			return;
	}
}

static void lp_run_on_exit(void)
{
	static int ran;
	if (__atomic_exchange_n(&ran, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; i < sizeof(lp_on_exit) / sizeof(lp_on_exit[0]); i++) {
		void (*fn)(void) = __atomic_load_n(&lp_on_exit[i], __ATOMIC_ACQUIRE);
		if (fn)
			fn();
	}
}

void lp_core_after_fork_child(void)
{
	if (!lp_core_active())
		return;
	int saved = errno;
	/* The forking thread's tid, still in our copy of its TLS. */
	uint32_t parent_tid = lp_rec_self.gen == lp_gen ? lp_rec_self.tid : 0;
	__atomic_store_n(&g.active, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g.log_open, 0, __ATOMIC_RELEASE);
	g.open_failed = 0;
	g.opener = 0;
	lp_gen++;
	/* The parent's mapping and fd are the parent's: drop them; the child
	 * creates a log of its own when it first records. Only this thread
	 * exists, so no locking. */
	lp_unmap_all();
	if (g.fd >= 0) /* raw, as lp_cnt_close_run: no libc text to fault in */
		LP_RAW(SYS_close, g.fd, 0, 0, 0, 0, 0);
	g.fd = -1;
	g.free_lock = 0;
	g.seg_lock = 0;
	g.prep_lock = 0;
	g.n_free = 0;
	g.exited = 0;
	/* The intern levels are copy-on-write views of the parent's: unmap,
	 * never clear them (clearing would copy every page the parent used). */
	for (uint32_t k = 0; k < LP_INTERN_LEVELS; k++)
		if (g.levels[k]) {
			LP_RAW(SYS_munmap, g.levels[k],
			       sizeof(struct lp_intern_slot)
				   << (LP_INTERN_L0_BITS + LP_INTERN_GROWTH * k),
			       0, 0, 0, 0);
			g.levels[k] = NULL;
			g.level_used[k] = 0;
		}
	static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	if (memcmp(&lp_init_lock, &fresh, sizeof(fresh))) /* a write is a COW fault */
		memcpy(&lp_init_lock, &fresh, sizeof(fresh));
	lp_rec_self.chunk = NULL;
	lp_rec_self.busy = 0;
	lp_rec_self.backoff = 0;
	lp_tid();
	lp_ptab_fork_child();
	for (int k = 0; k < 3; k++) /* the parent's; a write is a COW fault */
		if (lp_pre_log_drops[k])
			lp_pre_log_drops[k] = 0;
	lp_image_capture(parent_tid);
	lp_image_start();
	errno = saved;
}

/* The child's start as the table's START record, built on this stack
 * from what the parent captured (its comm and command line, which the
 * child has until it execs). No log, no lock, nothing of the parent's
 * written: the table's descriptor is the child's own copy. */
void lp_core_vfork_child(uint32_t parent_tid)
{
	if (!lp_core_active())
		return;
	int saved = errno;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	struct lp_ptab_start st = {.realtime_ns =
				       (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec,
				   .ppid = g.pid,
				   .parent_tid = parent_tid};
	memcpy(st.comm, g.comm, sizeof(st.comm));
	lp_vf.pid = (uint32_t)LP_RAW(SYS_getpid, 0, 0, 0, 0, 0, 0);
	lp_vf.ended = 0;
	lp_vf.start_ns = lp_now();
	lp_ptab_put_child(LP_PTAB_START, lp_vf.pid, lp_vf.start_ns, lp_vf.start_ns, &st, sizeof(st),
			  g.cmdline, g.cmdline_len);
	errno = saved;
}

void lp_core_vfork_parent(void)
{
	lp_vf.pid = 0;
}

int lp_core_in_vfork(void)
{
	return lp_vf.pid != 0;
}

void lp_core_before_exec(const char *path, const char *why)
{
	if (!lp_core_active())
		return;
	size_t len = path ? strnlen(path, PATH_MAX) : 0;
	char text[PATH_MAX + 64];
	size_t wl = why ? strnlen(why, 63) : 0;
	/* why after the path's NUL: an importer that does not know it reads the path */
	if (path && wl && len + 1 + wl <= sizeof(text)) {
		memcpy(text, path, len);
		text[len] = 0;
		memcpy(text + len + 1, why, wl);
		path = text;
		len += 1 + wl;
	}
	if (lp_vf.pid) {
		lp_ptab_put_child(LP_PTAB_EXEC, lp_vf.pid, lp_vf.start_ns, lp_now(), NULL, 0, path,
				  len);
		return;
	}
	if (!__atomic_load_n(&g.log_open, __ATOMIC_ACQUIRE)) {
		lp_ptab_put(LP_PTAB_EXEC, g.pid, g.start_ns, lp_now(), NULL, 0, path, len);
		return;
	}
	struct lp_rec_exec *r = lp_rec_begin(LP_REC_EXEC, (uint32_t)len, sizeof(*r) + len);
	if (r) {
		r->ts = lp_now();
		if (len)
			memcpy(r + 1, path, len);
		lp_rec_commit();
	}
}

void lp_core_raw_clone(uint64_t flags, uint32_t tid)
{
	if (!lp_core_active() || lp_vf.pid)
		return;
	struct lp_ptab_clone c = {.flags = flags, .tid = tid};
	lp_ptab_put(LP_PTAB_CLONE, g.pid, g.start_ns, lp_now(), &c, sizeof(c), NULL, 0);
}

void lp_core_detach_child(void)
{
	int saved = errno;
	__atomic_store_n(&g.active, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g.log_open, 0, __ATOMIC_RELEASE);
	g.open_failed = 1;
	g.exited = 1;
	/* Our own copies of the mappings; the descriptor may be the parent's
	 * too (CLONE_FILES): left open. */
	lp_unmap_all();
	errno = saved;
}

/* The title as it is now: servers rewrite their argv area (postgres:
 * "postgres: user db [local] idle"), and that is the name users know their
 * processes by. Exit is not a hot path. */
static void lp_exit_to_table(int status, unsigned how)
{
	char title[512];
	int saved = errno;
	ssize_t n = lp_read_cmdline(title, sizeof(title));
	struct lp_ptab_exit e = {.status = status, .how = how};
	if (lp_vf.pid)
		lp_ptab_put_child(LP_PTAB_EXIT, lp_vf.pid, lp_vf.start_ns, lp_now(), &e, sizeof(e),
				  title, (size_t)n);
	else
		lp_ptab_put(LP_PTAB_EXIT, g.pid, g.start_ns, lp_now(), &e, sizeof(e), title,
			    (size_t)n);
	errno = saved;
}

void lp_core_exit(int status, unsigned how)
{
	if (!lp_core_active())
		return;
	/* A vfork child's exit (exit() runs our destructor too): its own
	 * record, once; the parent's g.exited and log are not its to touch. */
	if (lp_vf.pid) {
		if (!lp_vf.ended) {
			lp_vf.ended = 1;
			lp_exit_to_table(status, how);
		}
		return;
	}
	if (!__atomic_load_n(&g.exited, __ATOMIC_ACQUIRE))
		lp_run_on_exit(); /* before g.exited: their records still go to the log */
	if (__atomic_exchange_n(&g.exited, 1, __ATOMIC_ACQ_REL))
		return;
	if (!__atomic_load_n(&g.log_open, __ATOMIC_ACQUIRE)) {
		lp_exit_to_table(status, how);
		return;
	}
	lp_core_record_modules(); /* catches libraries dlopen'd since start */
	int saved = errno;
	char title[512];
	ssize_t n = lp_read_cmdline(title, sizeof(title));
	errno = saved;
	struct lp_rec_proc_exit *r =
	    lp_rec_begin(LP_REC_PROC_EXIT, (uint32_t)n, sizeof(*r) + (size_t)n);
	if (r) {
		r->ts = lp_now();
		r->status = status;
		r->how = how;
		memcpy(r + 1, title, (size_t)n);
		lp_rec_commit();
	}
	lp_drop_carry();
	g.hdr->exit_ns = lp_now();
	__atomic_fetch_or(&g.hdr->flags, LP_LOGF_CLOSED, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void lp_core_fini(void)
{
	lp_core_exit(0, LP_EXIT_DESTRUCTOR);
}
