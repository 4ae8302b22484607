/* SPDX-License-Identifier: MIT */
/*
 * Reading a log never touches a page that may not exist: the header and
 * each chunk header are read with pread (a hole reads as zeros, past the
 * end as a short read), and a chunk's records are read through the
 * mapping only after lseek(SEEK_HOLE) said they lie in written data. A
 * mapped page of a hole would be allocated on first touch, and on a full
 * tmpfs that is a SIGBUS: the kept logs of a run whose disk filled have
 * such holes.
 */
#define _GNU_SOURCE
#include "lp_logread.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lp_ptab_format.h"

static int log_fail(char *err, size_t errlen, const char *path, const char *why)
{
	snprintf(err, errlen, "%s: %s", path, why);
	return -EINVAL;
}

static int log_check_header(const struct lp_log *log, char *err, size_t errlen)
{
	const struct lp_log_header *h = &log->hdr;
	char why[160];

	if (memcmp(h->magic, LP_LOG_MAGIC, 8) != 0)
		return log_fail(err, errlen, log->path, "not a latprof event log (bad magic)");
	if (h->bom != LP_LOG_BOM)
		return log_fail(err, errlen, log->path, "written with another byte order");
	if (h->version != LP_LOG_VERSION) {
		snprintf(why, sizeof(why),
			 "event log format version %u; this latprof reads version %u", h->version,
			 LP_LOG_VERSION);
		return log_fail(err, errlen, log->path, why);
	}
	if (h->header_size != LP_LOG_HEADER_SIZE || h->chunk_size < 4096 ||
	    h->chunk_size % LP_REC_ALIGN || h->chunk_size > (1u << 30) || h->max_chunks == 0)
		return log_fail(err, errlen, log->path, "damaged header (impossible sizes)");
	if (h->clock_kind != LP_CLOCK_MONOTONIC_NS)
		return log_fail(err, errlen, log->path, "unknown clock kind");
	/* The file grows a chunk at a time (a writer before that made it its
	 * full size at once): chunks past its end were never written. */
	return 0;
}

static int stretch_cmp(const void *a, const void *b)
{
	const struct lp_stretch *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Chunk c's header, and whether its first `committed` data bytes may be
 * read through the mapping: 1 yes, 0 absent (never written, or cut off by
 * the end of the file), -1 damaged. *data is a stretch [lo, hi) of the
 * file known to be data, from an earlier chunk's SEEK_HOLE: SEEK_HOLE from
 * a chunk returns the first hole at or after it, which in a log written
 * to the end is its end, and finding it can walk every page up to there
 * (ext4 and tmpfs look up each page of an unwritten extent in the page
 * cache). Asked once per chunk, that walk made the import of 1 M lock
 * waits (720 chunks) spend 13% of its time in the kernel's
 * mapping_seek_hole_data; with the stretch kept, a log written to the end
 * asks once. */
static int chunk_check(const struct lp_log *log, int fd, uint32_t c, uint64_t *committed,
		       uint64_t data[2])
{
	const struct lp_log_header *h = &log->hdr;
	uint64_t off = LP_LOG_HEADER_SIZE + (uint64_t)c * h->chunk_size;
	struct lp_chunk_header ch;
	if (off + sizeof(ch) > log->size ||
	    pread(fd, &ch, sizeof(ch), (off_t)off) != (ssize_t)sizeof(ch) ||
	    ch.magic != LP_CHUNK_MAGIC)
		return 0; /* past the end, a hole, reservation failed or never used */
	uint64_t end = off + sizeof(ch) + ch.committed;
	if (ch.index != c || ch.committed > h->chunk_size - sizeof(ch))
		return -1;
	if (end > log->size)
		return 0;
	if (off < data[0] || end > data[1]) {
		off_t hole = lseek(fd, (off_t)off, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole < end)
			return -1; /* records in a hole: a file sparse where it was written */
		data[0] = off;
		data[1] = (uint64_t)hole;
	}
	*committed = ch.committed;
	return 1;
}

/* Split each chunk into stretches at its CTX records. */
static int log_index(struct lp_log *log, int fd, char *err, size_t errlen)
{
	const struct lp_log_header *h = &log->hdr;
	uint32_t n = h->n_chunks < h->max_chunks ? h->n_chunks : h->max_chunks;
	size_t cap = 0, missing = 0;
	uint64_t in_file = (log->size - LP_LOG_HEADER_SIZE) / h->chunk_size + 1;
	if (n > in_file) { /* past the end: missing, without reading them */
		missing = n - in_file;
		n = (uint32_t)in_file;
	}

	uint64_t data[2] = {0, 0}; /* [lo, hi): nothing known to be data yet */
	for (uint32_t c = 0; c < n; c++) {
		uint64_t committed = 0;
		int ok = chunk_check(log, fd, c, &committed, data);
		if (ok <= 0) {
			log->damaged_chunks += ok < 0;
			missing += ok == 0;
			continue;
		}
		const unsigned char *d = log->map + LP_LOG_HEADER_SIZE + (size_t)c * h->chunk_size +
					 sizeof(struct lp_chunk_header);
		struct lp_stretch *cur = NULL;
		uint32_t off = 0;
		while (off + sizeof(struct lp_rec_header) <= committed) {
			const struct lp_rec_header *r = (const void *)(d + off);
			if (r->size < 8 || r->size % LP_REC_ALIGN || off + r->size > committed) {
				log->damaged_chunks++;
				break;
			}
			if (r->type == LP_REC_CTX && r->size >= 16) {
				if (log->n_stretches == cap) {
					cap = cap ? cap * 2 : 256;
					void *p = realloc(log->stretches, cap * sizeof(*cur));
					if (!p)
						return -ENOMEM;
					log->stretches = p;
				}
				cur = &log->stretches[log->n_stretches++];
				memcpy(&cur->seq, d + off + 8, 8);
				cur->tid = r->aux;
				cur->chunk = c;
				cur->begin = off + r->size;
				cur->end = off + r->size;
			} else if (cur) {
				cur->end = off + r->size;
			} else {
				log->orphan_bytes += r->size;
			}
			off += r->size;
		}
	}
	/* Every chunk handed out is written or its reservation failed and was
	 * counted: in a closed log, more missing than that is a cut file. */
	if ((h->flags & LP_LOGF_CLOSED) && missing > h->dropped_chunks) {
		char why[160];
		size_t cut = missing - (size_t)h->dropped_chunks;
		snprintf(why, sizeof(why), "truncated: %zu chunk%s of records missing", cut,
			 cut == 1 ? "" : "s");
		return log_fail(err, errlen, log->path, why);
	}
	if (log->n_stretches) /* qsort(NULL, 0) is undefined (found by fuzz_import) */
		qsort(log->stretches, log->n_stretches, sizeof(struct lp_stretch), stretch_cmp);
	return 0;
}

int lp_log_open(struct lp_log *log, const char *path, char *err, size_t errlen)
{
	struct stat st;
	memset(log, 0, sizeof(*log));
	log->path = path;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return log_fail(err, errlen, path, "not a regular file");
	}
	if ((size_t)st.st_size < sizeof(struct lp_log_header)) {
		close(fd);
		return log_fail(err, errlen, path, "truncated: shorter than the log header");
	}
	/* Header first, size after: every chunk reserved before the header
	 * we read (its n_chunks, its closed flag) lies within that size. */
	if (pread(fd, &log->hdr, sizeof(log->hdr), 0) != (ssize_t)sizeof(log->hdr) ||
	    fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(log->hdr)) {
		close(fd);
		return log_fail(err, errlen, path, "truncated: shorter than the log header");
	}
	log->size = (size_t)st.st_size;
	int rc = log_check_header(log, err, errlen);
	if (rc == 0) {
		void *p = mmap(NULL, log->size, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		} else {
			log->map = p;
			rc = log_index(log, fd, err, errlen);
		}
	}
	close(fd);
	if (rc)
		lp_log_close(log);
	return rc;
}

void lp_log_close(struct lp_log *log)
{
	if (log->map)
		munmap((void *)log->map, log->size);
	free(log->stretches);
	log->map = NULL;
	log->stretches = NULL;
}

int lp_log_foreach(const struct lp_log *log, lp_log_fn fn, void *ctx)
{
	const struct lp_log_header *h = &log->hdr;
	for (size_t i = 0; i < log->n_stretches; i++) {
		const struct lp_stretch *s = &log->stretches[i];
		const unsigned char *d = log->map + LP_LOG_HEADER_SIZE +
					 (size_t)s->chunk * h->chunk_size +
					 sizeof(struct lp_chunk_header);
		for (uint32_t off = s->begin; off < s->end;) {
			const struct lp_rec_header *r = (const void *)(d + off);
			int rc = fn(ctx, s->tid, r, r + 1, r->size - sizeof(*r));
			if (rc)
				return rc;
			off += r->size;
		}
	}
	return 0;
}

int lp_log_dir_count(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	int n = 0;
	struct dirent *e;
	struct stat st;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 6 && strcmp(e->d_name + len - 6, ".lplog") == 0)
			n++;
		else if (strcmp(e->d_name, LP_PTAB_NAME) == 0 &&
			 fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_size > 0)
			n++; /* processes that recorded nothing but their lives */
	}
	closedir(d);
	return n;
}
