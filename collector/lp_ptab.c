/* SPDX-License-Identifier: MIT */
/*
 * The process table writer (lp_ptab.h, lp_ptab_format.h): one O_APPEND
 * descriptor per process, inherited by forked children, reopened by each
 * exec'd image (an open of an existing file allocates no inode: that was
 * the point). Each record is one write(), so records of concurrent
 * processes never interleave.
 *
 * Like the log descriptor the table's is high-numbered and close-on-exec,
 * and the app may close it and reuse the number: every write first checks
 * with fstat() that the descriptor still names our file, and reopens it by
 * path if not; the app's own file is never written. Where RLIMIT_NOFILE
 * leaves no room above LP_PTAB_FD_MIN (ulimit -n 8), a descriptor kept
 * open would take one of the app's few: each record then opens the table,
 * writes and closes it (a few records per process). A file size limit
 * (RLIMIT_FSIZE) is respected with a margin, so a write never raises
 * SIGXFSZ in the app.
 */
#define _GNU_SOURCE
#include "lp_ptab.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lp_raw.h"

#define LP_PTAB_FD_MIN 512
#define LP_PTAB_FSIZE_MARGIN (64u * 1024u) /* room left for other processes' records */

static struct {
	int fd;
	dev_t dev;
	ino_t ino;
	uint64_t fsize; /* RLIMIT_FSIZE at open, UINT64_MAX: none */
	uint64_t lost;	/* this image's records that were not written */
	int fresh;	/* just opened and checked: the next write needs no fstat */
	int transient;	/* no descriptor kept between records (lp_ptab_reopen) */
	uint64_t fresh_size;
	char path[PATH_MAX];
} lp_pt = {.fd = -1};

/* Raw (lp_raw.h), as the writes: every process, forked children included,
 * checks its descriptor before each record, and a forked child faults in
 * each page of libc text it first runs (fork copies no page-table entries
 * of file mappings). The kernel's struct stat is glibc's on x86-64 and
 * AArch64. */
static int lp_ptab_fstat(int fd, struct stat *st)
{
	return LP_RAW(SYS_fstat, fd, st, 0, 0, 0, 0) == 0 ? 0 : -1;
}

static int lp_ptab_reopen(void)
{
	int fd = open(lp_pt.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, LP_PTAB_FD_MIN);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (hi < 0) { /* EINVAL: the limit is at or below LP_PTAB_FD_MIN */
		close(fd);
		lp_pt.transient = 1;
		lp_pt.fd = -1;
		return 0;
	}
	lp_pt.fd = fd; /* an old number belongs to the app now: never close it */
	lp_pt.dev = st.st_dev;
	lp_pt.ino = st.st_ino;
	lp_pt.fresh_size = (uint64_t)st.st_size;
	__atomic_store_n(&lp_pt.fresh, 1, __ATOMIC_RELEASE);
	return 0;
}

int lp_ptab_open(const char *dir)
{
	int saved = errno;
	/* Not snprintf: its code is three pages no short process otherwise
	 * faults in (a shell's /bin/true). */
	static const char name[] = "/" LP_PTAB_NAME;
	size_t dl = strlen(dir);
	if (dl + sizeof(name) > sizeof(lp_pt.path))
		return -ENAMETOOLONG;
	memcpy(lp_pt.path, dir, dl);
	memcpy(lp_pt.path + dl, name, sizeof(name));
	struct rlimit rl;
	lp_pt.fsize = UINT64_MAX;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		lp_pt.fsize = rl.rlim_cur;
	int rc = lp_ptab_reopen();
	errno = saved;
	return rc;
}

/* The descriptor if it still names the table (size in *size), else a
 * reopened one; -1 when neither. */
static int lp_ptab_fd(uint64_t *size)
{
	struct stat st;
	/* Opened and checked by this image a moment ago (at its start, with no
	 * app code in between): the exec'd image's first record skips a
	 * second fstat. Loaded first: a forked child must not write here. */
	if (__atomic_load_n(&lp_pt.fresh, __ATOMIC_ACQUIRE) &&
	    __atomic_exchange_n(&lp_pt.fresh, 0, __ATOMIC_ACQ_REL)) {
		*size = lp_pt.fresh_size;
		return lp_pt.fd;
	}
	if (lp_pt.fd >= 0 && lp_ptab_fstat(lp_pt.fd, &st) == 0 && st.st_dev == lp_pt.dev &&
	    st.st_ino == lp_pt.ino) {
		*size = (uint64_t)st.st_size;
		return lp_pt.fd;
	}
	if (!lp_pt.path[0] || lp_ptab_reopen())
		return -1;
	__atomic_store_n(&lp_pt.fresh, 0, __ATOMIC_RELEASE);
	*size = lp_pt.fresh_size;
	return lp_pt.fd;
}

/* The descriptor for a vfork child, which must not change lp_pt (its
 * parent's memory), and for every record where none is kept (transient):
 * the inherited one if it still names the table, else a fresh one the
 * caller closes (*own set). */
static int lp_ptab_child_fd(uint64_t *size, int *own)
{
	struct stat st;
	*own = 0;
	if (lp_pt.fd >= 0 && lp_ptab_fstat(lp_pt.fd, &st) == 0 && st.st_dev == lp_pt.dev &&
	    st.st_ino == lp_pt.ino) {
		*size = (uint64_t)st.st_size;
		return lp_pt.fd;
	}
	int fd =
	    lp_pt.path[0] ? open(lp_pt.path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW) : -1;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*own = 1;
	*size = (uint64_t)st.st_size;
	return fd;
}

/* One writev(): one write to the file, as atomic against other appenders
 * as a write() of the whole. No record-sized buffer on the stack: a forked
 * child would fault in fresh stack pages for it. */
static int lp_ptab_write(int child, uint16_t type, uint32_t pid, uint64_t start_ns, uint64_t ts,
			 const void *fixed, size_t flen, const void *text, size_t tlen)
{
	static const char zeros[8];
	struct lp_ptab_rec r;
	if (tlen > LP_PTAB_MAX_TEXT)
		tlen = LP_PTAB_MAX_TEXT;
	if (flen > 64)
		return -EINVAL;
	size_t size = (sizeof(r) + flen + tlen + 7) & ~(size_t)7;
	size_t pad = size - sizeof(r) - flen - tlen;
	int saved = errno;
	memset(&r, 0, sizeof(r));
	r.magic = LP_PTAB_MAGIC;
	r.type = type;
	r.size = (uint16_t)size;
	r.pid = pid;
	r.start_ns = start_ns;
	r.ts = ts;
	r.len = (uint32_t)tlen;
	uint64_t lost = child ? 0 : __atomic_load_n(&lp_pt.lost, __ATOMIC_RELAXED);
	r.lost = (uint32_t)(lost > UINT32_MAX ? UINT32_MAX : lost);
	struct iovec iov[4] = {
	    {&r, sizeof(r)}, {(void *)fixed, flen}, {(void *)text, tlen}, {(void *)zeros, pad}};
	XXH32_state_t h;
	XXH32_reset(&h, 0);
	for (int i = 0; i < 4; i++)
		XXH32_update(&h, iov[i].iov_base, iov[i].iov_len);
	r.check = XXH32_digest(&h);
	uint64_t cur = 0;
	int own = 0;
	int fd = child || lp_pt.transient ? lp_ptab_child_fd(&cur, &own) : lp_ptab_fd(&cur);
	ssize_t w = -1;
	if (fd >= 0 &&
	    (lp_pt.fsize == UINT64_MAX || cur + size + LP_PTAB_FSIZE_MARGIN <= lp_pt.fsize)) {
		/* The raw syscall: writev() would reach the interposer's own
		 * blocking-call hook, through a sanitizer's interceptor that hides
		 * that the call is ours, and a slow write would be recorded as
		 * the app's (and create the log it saves). */
		do
			w = LP_RAW(SYS_writev, fd, iov, 4, 0, 0, 0);
		while (w < 0 && errno == EINTR);
	}
	if (own)
		close(fd);
	int rc = w == (ssize_t)size ? 0 : -EIO;
	if (rc)
		__atomic_fetch_add(&lp_pt.lost, 1, __ATOMIC_RELAXED);
	errno = saved;
	return rc;
}

int lp_ptab_put(uint16_t type, uint32_t pid, uint64_t start_ns, uint64_t ts, const void *fixed,
		size_t flen, const void *text, size_t tlen)
{
	return lp_ptab_write(0, type, pid, start_ns, ts, fixed, flen, text, tlen);
}

int lp_ptab_put_child(uint16_t type, uint32_t pid, uint64_t start_ns, uint64_t ts,
		      const void *fixed, size_t flen, const void *text, size_t tlen)
{
	return lp_ptab_write(1, type, pid, start_ns, ts, fixed, flen, text, tlen);
}

void lp_ptab_lose(uint64_t n)
{
	__atomic_fetch_add(&lp_pt.lost, n, __ATOMIC_RELAXED);
}

void lp_ptab_fork_child(void)
{
	if (lp_pt.lost) /* no write (a copy-on-write fault) when already 0 */
		lp_pt.lost = 0;
}
