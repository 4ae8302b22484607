/* SPDX-License-Identifier: MIT */
/*
 * Recording core (see lp_core.h and schemas/eventlog.md).
 *
 * Memory: the whole log is mapped once, MAP_SHARED, at its maximum size.
 * Blocks are reserved per chunk with fallocate() on the (rare) chunk
 * refill path, so a full disk shows up as a failed refill (counted) instead
 * of a SIGBUS when a page of a sparse file is first touched.
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* xxHash (libxxhash-dev), inlined so the app gets no extra DT_NEEDED: a
 * well-tested 64-bit hash whose collisions we can afford to ignore. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define LP_DEFAULT_CHUNK (64u * 1024u)
#define LP_DEFAULT_LOG_MB 1024u
#define LP_INTERN_SLOTS (1u << 15)
#define LP_FREE_CHUNKS 1024u
#define LP_REFILL_BACKOFF 4096u
#define LP_MAX_FRAMES 32

struct lp_thread {
	struct lp_chunk_header *chunk;
	uint32_t used; /* bytes after the chunk header */
	uint32_t pending;
	uint32_t tid;
	uint32_t gen; /* lp_gen when tid/chunk were set */
	uint32_t backoff;
	volatile sig_atomic_t busy;
};

struct lp_intern_slot {
	uint64_t hash;
	uint32_t id;
	uint32_t pad;
};

static struct lp_state {
	int active;
	int fd;
	char *base;
	size_t map_size;
	struct lp_log_header *hdr;
	uint32_t chunk_size;
	uint32_t max_chunks;
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
	char dir[PATH_MAX];
	int exited;
	uint32_t next_id;
	uint64_t next_seq;
	int free_lock;
	uint32_t n_free;
	struct lp_chunk_header *free_chunks[LP_FREE_CHUNKS];
	pthread_key_t key;
	int key_ok;
	uint32_t log_mb; /* read once at init: the app may change the env later */
} g = {.fd = -1};

/* Bumped in the child after fork so stale per-thread state is noticed. */
static uint32_t lp_gen = 1;
static pthread_mutex_t lp_init_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lp_intern_slot lp_slots[LP_INTERN_SLOTS];

static __thread struct lp_thread lp_self __attribute__((tls_model("initial-exec")));

static int lp_open_log(void);

static void lp_drop(uint64_t *counter)
{
	if (g.hdr)
		__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

uint32_t lp_tid(void)
{
	struct lp_thread *t = &lp_self;
	if (t->gen != lp_gen || !t->tid) {
		int saved = errno;
		t->tid = (uint32_t)syscall(SYS_gettid);
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

static void lp_spin_lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		;
}

static void lp_spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* The app may have closed our descriptor (and reused its number): make sure
 * fd still names our log before fallocate() touches it. Slow path only. */
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

static int lp_reserve(off_t off, off_t len)
{
	int fd = lp_log_fd();
	if (fd < 0)
		return -1;
	int rc = posix_fallocate(fd, off, len);
	if (rc == EOPNOTSUPP || rc == EINVAL)
		return 0; /* filesystem cannot reserve: fall back to sparse pages */
	return rc ? -1 : 0;
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
		lp_drop(&g.hdr->dropped_chunks);
		return NULL;
	}
	off_t off = (off_t)LP_LOG_HEADER_SIZE + (off_t)idx * g.chunk_size;
	if (lp_reserve(off, g.chunk_size) != 0) {
		lp_drop(&g.hdr->dropped_chunks);
		return NULL;
	}
	c = (struct lp_chunk_header *)(g.base + off);
	/* Fault the chunk's pages in now, in one call, rather than one page
	 * fault at a time inside later records (about a tenth of an NVTX
	 * push+pop). Linux >= 5.14; older kernels say EINVAL and we go on. */
	madvise(c, g.chunk_size, MADV_POPULATE_WRITE);
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
	struct lp_thread *t = &lp_self;
	if (!lp_core_active() || t->gen != lp_gen)
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

void *lp_rec_begin(uint16_t type, uint32_t aux, size_t payload)
{
	if (!lp_core_active())
		return NULL;
	struct lp_thread *t = &lp_self;
	lp_tid();
	if (t->busy) { /* a signal handler interrupted a record */
		lp_drop(&g.hdr->dropped_records);
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
	lp_drop(&g.hdr->dropped_records);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
	return NULL;
}

void lp_rec_commit(void)
{
	struct lp_thread *t = &lp_self;
	/* Only after a successful lp_rec_begin() on this very thread (t is
	 * thread-local): busy, pending and the chunk are that begin's. */
	assert(t->busy && t->pending && t->chunk);
	t->used += t->pending;
	t->pending = 0;
	__atomic_store_n(&t->chunk->committed, t->used, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/* Lock-free open addressing on the 64-bit hash alone: a collision would
 * merge two names, which at 2^-64 per pair we accept. The winner of the
 * CAS writes the definition record before publishing the id. */
static uint32_t lp_intern(uint64_t h, uint16_t type, uint32_t aux, const void *a, size_t alen,
			  const void *b, size_t blen)
{
	if (!lp_core_active())
		return 0;
	h = h ? h : 1;
	uint32_t i = (uint32_t)h & (LP_INTERN_SLOTS - 1);
	for (uint32_t probe = 0; probe < LP_INTERN_SLOTS;
	     probe++, i = (i + 1) & (LP_INTERN_SLOTS - 1)) {
		struct lp_intern_slot *s = &lp_slots[i];
		uint64_t cur = __atomic_load_n(&s->hash, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			uint64_t zero = 0;
			if (__atomic_compare_exchange_n(&s->hash, &zero, h, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				uint32_t id = __atomic_add_fetch(&g.next_id, 1, __ATOMIC_RELAXED);
				uint32_t *rec = lp_rec_begin(type, aux, 8 + alen + blen);
				if (rec) {
					rec[0] = id;
					rec[1] = 0;
					memcpy(rec + 2, a, alen);
					if (blen)
						memcpy((char *)(rec + 2) + alen, b, blen);
					lp_rec_commit();
				}
				__atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
				return id;
			}
			cur = zero;
		}
		if (cur == h) {
			/* Bounded: the claimer may be the thread we interrupted. */
			for (int spin = 0; spin < 100000; spin++) {
				uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
				if (id)
					return id;
			}
			return 0;
		}
	}
	lp_drop(&g.hdr->dropped_strings);
	return 0;
}

uint32_t lp_intern_string(const char *s, size_t len)
{
	if (len > 4000)
		len = 4000;
	return lp_intern(XXH3_64bits_withSeed(s, len, 1), LP_REC_STRING, (uint32_t)len, s, len,
			 NULL, 0);
}

uint32_t lp_intern_stack(const uint64_t *pcs, unsigned n)
{
	if (!n)
		return 0;
	size_t len = n * sizeof(uint64_t);
	return lp_intern(XXH3_64bits_withSeed(pcs, len, 2), LP_REC_STACK, n, pcs, len, NULL, 0);
}

uint32_t lp_capture_stack(unsigned skip)
{
	void *buf[LP_MAX_FRAMES];
	int saved = errno;
	int n = backtrace(buf, LP_MAX_FRAMES);
	errno = saved;
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

void lp_core_record_modules(void)
{
	if (!lp_core_active())
		return;
	int saved = errno;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	dl_iterate_phdr(lp_module_cb, exe);
	errno = saved;
}

static void lp_record_proc_start(void)
{
	char args[4096];
	ssize_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, args, sizeof(args));
		close(fd);
	}
	if (n < 0)
		n = 0;
	struct lp_rec_proc_start *r = lp_rec_begin(LP_REC_PROC_START, (uint32_t)n, sizeof(*r) + n);
	if (!r)
		return;
	r->ts = g.hdr->start_ns;
	r->pid = g.hdr->pid;
	r->ppid = g.hdr->ppid;
	r->realtime_ns = g.hdr->start_realtime_ns;
	memcpy(r + 1, args, (size_t)n);
	lp_rec_commit();
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

static void lp_fill_header(uint32_t pid)
{
	struct lp_log_header *h = g.hdr;
	struct timespec rt;
	memcpy(h->magic, LP_LOG_MAGIC, 8);
	h->version = LP_LOG_VERSION;
	h->bom = LP_LOG_BOM;
	h->header_size = LP_LOG_HEADER_SIZE;
	h->chunk_size = g.chunk_size;
	h->max_chunks = g.max_chunks;
	h->clock_kind = LP_CLOCK_MONOTONIC_NS;
	h->pid = pid;
	h->ppid = (uint32_t)getppid();
	h->start_ns = lp_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	h->start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
}

/* Caller holds lp_init_lock (or is the only thread, after fork). */
static int lp_open_log(void)
{
	uint32_t pid = (uint32_t)getpid();
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
	uint64_t total = (uint64_t)g.log_mb << 20;
	struct rlimit rl;
	/* Never grow the file past RLIMIT_FSIZE: that would raise SIGXFSZ. */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < total)
		total = rl.rlim_cur;
	if (total < LP_LOG_HEADER_SIZE + 2ull * g.chunk_size)
		goto fail_einval;
	g.max_chunks = (uint32_t)((total - LP_LOG_HEADER_SIZE) / g.chunk_size);
	g.map_size = LP_LOG_HEADER_SIZE + (size_t)g.max_chunks * g.chunk_size;
	if (ftruncate(fd, (off_t)g.map_size) != 0)
		goto fail_errno;
	int rc = posix_fallocate(fd, 0, LP_LOG_HEADER_SIZE);
	if (rc && rc != EOPNOTSUPP && rc != EINVAL) {
		errno = rc;
		goto fail_errno;
	}
	void *p = mmap(NULL, g.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail_errno;
	struct stat st;
	fstat(fd, &st);
	g.dev = st.st_dev;
	g.ino = st.st_ino;
	g.fd = fd;
	g.base = p;
	g.hdr = p;
	g.next_id = 0;
	g.next_seq = 0;
	lp_fill_header(pid);
	rc = lp_publish_file(pid);
	if (rc) {
		munmap(p, g.map_size);
		g.base = NULL;
		g.hdr = NULL;
		g.fd = -1;
		errno = -rc;
		goto fail_errno;
	}
	__atomic_store_n(&g.active, 1, __ATOMIC_RELEASE);
	lp_record_proc_start();
	lp_core_record_modules();
	return 0;
fail_einval:
	errno = EINVAL;
fail_errno:
	rc = -errno;
	close(fd);
	unlink(g.path);
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
	g.log_mb = lp_env_u32("LATPROF_LOG_MB", LP_DEFAULT_LOG_MB, 1, 65536);
	/* backtrace() loads libgcc_s (and mallocs) on first use: do it now,
	 * not inside a lock hook. */
	void *warm[2];
	backtrace(warm, 2);
	g.key_ok = pthread_key_create(&g.key, lp_thread_exit) == 0;
	rc = lp_open_log();
	if (rc == 0)
		pthread_atfork(NULL, NULL, lp_atfork_child);
out:
	pthread_mutex_unlock(&lp_init_lock);
	errno = saved;
	return rc;
}

void lp_core_after_fork_child(void)
{
	if (!lp_core_active())
		return;
	int saved = errno;
	__atomic_store_n(&g.active, 0, __ATOMIC_RELEASE);
	lp_gen++;
	/* The parent's mapping and fd are the parent's: drop them, start a log
	 * of our own. Only this thread exists, so no locking. */
	munmap(g.base, g.map_size);
	if (g.fd >= 0)
		close(g.fd);
	g.fd = -1;
	g.base = NULL;
	g.hdr = NULL;
	g.free_lock = 0;
	g.n_free = 0;
	g.exited = 0;
	memset(lp_slots, 0, sizeof(lp_slots));
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&lp_init_lock, &fresh, sizeof(fresh));
	lp_self.chunk = NULL;
	lp_self.busy = 0;
	lp_self.backoff = 0;
	lp_tid();
	lp_open_log();
	errno = saved;
}

void lp_core_before_exec(const char *path)
{
	if (!lp_core_active())
		return;
	size_t len = path ? strnlen(path, PATH_MAX) : 0;
	struct lp_rec_exec *r = lp_rec_begin(LP_REC_EXEC, (uint32_t)len, sizeof(*r) + len);
	if (r) {
		r->ts = lp_now();
		if (len)
			memcpy(r + 1, path, len);
		lp_rec_commit();
	}
}

void lp_core_exit(int status, unsigned how)
{
	if (!lp_core_active() || __atomic_exchange_n(&g.exited, 1, __ATOMIC_ACQ_REL))
		return;
	lp_core_record_modules(); /* catches libraries dlopen'd since start */
	/* The process title as it is now: servers rewrite their argv area
	 * (postgres: "postgres: user db [local] idle"), and that is the name
	 * users know their processes by. Exit is not a hot path. */
	int saved = errno;
	char title[512];
	ssize_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, title, sizeof(title));
		close(fd);
	}
	if (n < 0)
		n = 0;
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
	g.hdr->exit_ns = lp_now();
	__atomic_fetch_or(&g.hdr->flags, LP_LOGF_CLOSED, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void lp_core_fini(void)
{
	lp_core_exit(0, LP_EXIT_DESTRUCTOR);
}
