/* SPDX-License-Identifier: MIT */
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

static int lp_log_fail(char *err, size_t errlen, const char *path, const char *why)
{
	snprintf(err, errlen, "%s: %s", path, why);
	return -EINVAL;
}

static int lp_log_check_header(const struct lp_log *log, char *err, size_t errlen)
{
	const struct lp_log_header *h = &log->hdr;
	char why[160];

	if (memcmp(h->magic, LP_LOG_MAGIC, 8) != 0)
		return lp_log_fail(err, errlen, log->path, "not a latprof event log (bad magic)");
	if (h->bom != LP_LOG_BOM)
		return lp_log_fail(err, errlen, log->path, "written with another byte order");
	if (h->version != LP_LOG_VERSION) {
		snprintf(why, sizeof(why),
			 "event log format version %u; this latprof reads version %u", h->version,
			 LP_LOG_VERSION);
		return lp_log_fail(err, errlen, log->path, why);
	}
	if (h->header_size != LP_LOG_HEADER_SIZE || h->chunk_size < 4096 ||
	    h->chunk_size % LP_REC_ALIGN || h->chunk_size > (1u << 30) || h->max_chunks == 0)
		return lp_log_fail(err, errlen, log->path, "damaged header (impossible sizes)");
	if (h->clock_kind != LP_CLOCK_MONOTONIC_NS)
		return lp_log_fail(err, errlen, log->path, "unknown clock kind");
	uint64_t full = LP_LOG_HEADER_SIZE + (uint64_t)h->max_chunks * h->chunk_size;
	if (log->size < full) {
		snprintf(why, sizeof(why), "truncated: %zu bytes of %llu", log->size,
			 (unsigned long long)full);
		return lp_log_fail(err, errlen, log->path, why);
	}
	return 0;
}

static int lp_stretch_cmp(const void *a, const void *b)
{
	const struct lp_stretch *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Split each chunk into stretches at its CTX records. */
static int lp_log_index(struct lp_log *log)
{
	const struct lp_log_header *h = &log->hdr;
	uint32_t n = h->n_chunks < h->max_chunks ? h->n_chunks : h->max_chunks;
	size_t cap = 0;
	uint32_t data_cap = h->chunk_size - sizeof(struct lp_chunk_header);

	for (uint32_t c = 0; c < n; c++) {
		const unsigned char *base =
		    log->map + LP_LOG_HEADER_SIZE + (size_t)c * h->chunk_size;
		const struct lp_chunk_header *ch = (const void *)base;
		if (__atomic_load_n(&ch->magic, __ATOMIC_ACQUIRE) != LP_CHUNK_MAGIC)
			continue; /* reservation failed, or never initialized */
		uint64_t committed = __atomic_load_n(&ch->committed, __ATOMIC_ACQUIRE);
		if (ch->index != c || committed > data_cap) {
			log->damaged_chunks++;
			continue;
		}
		const unsigned char *d = base + sizeof(*ch);
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
	if (log->n_stretches) /* qsort(NULL, 0) is undefined (found by fuzz_import) */
		qsort(log->stretches, log->n_stretches, sizeof(struct lp_stretch), lp_stretch_cmp);
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
		return lp_log_fail(err, errlen, path, "not a regular file");
	}
	if ((size_t)st.st_size < sizeof(struct lp_log_header)) {
		close(fd);
		return lp_log_fail(err, errlen, path, "truncated: shorter than the log header");
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	log->map = p;
	log->size = (size_t)st.st_size;
	memcpy(&log->hdr, p, sizeof(log->hdr));
	int rc = lp_log_check_header(log, err, errlen);
	if (rc == 0)
		rc = lp_log_index(log);
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
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 6 && strcmp(e->d_name + len - 6, ".lplog") == 0)
			n++;
	}
	closedir(d);
	return n;
}
