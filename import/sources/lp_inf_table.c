/* SPDX-License-Identifier: MIT */
/*
 * The run's table of waits in progress, tool side (lp_inf_table.h).
 *
 * Workload: made once per run (512 KiB, one posix_fallocate); read once
 * per import, slot by slot with pread (never through a mapping: the
 * importer must not take SIGBUS from a file someone cut).
 *
 * A blocking call's slot holds its start in TSC ticks when the process
 * timed calls with the TSC (preload/lp_blk_clock.h). Its ns are found from
 * two points of (ticks, CLOCK_MONOTONIC): the one `latprof run` took when it
 * made the file and one taken here, on the same boot (the boot id in the
 * header). The TSC the kernel keeps time with is invariant and shared by
 * all CPUs (the processes checked that, lp_tsc_usable), so the rate
 * between the two points holds for every process of the run, to the
 * points' widths over the run's length (CLOCK_MONOTONIC's NTP slewing
 * aside, at most 500 ppm).
 */
#define _GNU_SOURCE
#include "lp_inf_table.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lp_inflight_format.h"
#include "lp_log_format.h"
#include "lp_tsc.h"

static void inf_boot_id(char out[40])
{
	memset(out, 0, 40);
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, 39);
	close(fd);
	for (ssize_t i = 0; i < n; i++)
		if (out[i] == '\n')
			out[i] = 0;
}

static void inf_path(const char *dir, char path[PATH_MAX])
{
	snprintf(path, PATH_MAX, "%s/%s", dir, LP_INF_FILE);
}

int lp_inflight_make(const char *dir)
{
	char path[PATH_MAX];
	inf_path(dir, path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	off_t size = LP_INF_HEADER_SIZE + (off_t)LP_INF_SLOTS * sizeof(struct lp_inflight);
	struct lp_inf_file_header h = {.version = LP_INF_VERSION,
				       .header_size = LP_INF_HEADER_SIZE,
				       .slot_size = sizeof(struct lp_inflight),
				       .n_slots = LP_INF_SLOTS};
	memcpy(h.magic, LP_INF_MAGIC, sizeof(h.magic));
	if (lp_tsc_usable()) {
		struct lp_tsc_pt p;
		lp_tsc_pt_best(&p, 16, 200);
		h.tsc = p.tsc;
		h.tsc_ns = p.ns;
		h.tsc_w = p.w;
	}
	inf_boot_id(h.boot_id);
	/* Every block reserved: a process of the app writes its slots through a
	 * mapping, where a hole on a full disk would be SIGBUS. */
	int rc = posix_fallocate(fd, 0, size);
	if (rc == 0 && pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		rc = errno ? errno : EIO;
	close(fd);
	if (rc)
		unlink(path);
	return -rc;
}

/* ns per tick << 32 from the file's point to one taken now, or 0. */
static uint64_t inf_rate(const struct lp_inf_file_header *h, struct lp_tsc_pt *now)
{
	char boot[40];
	inf_boot_id(boot);
	if (!h->tsc || !boot[0] || strncmp(boot, h->boot_id, sizeof(boot)) || !lp_tsc_usable())
		return 0;
	lp_tsc_pt_best(now, 16, 200);
	struct lp_tsc_pt then = {.tsc = h->tsc, .ns = h->tsc_ns, .w = h->tsc_w};
	/* quality 1000: the rate errs by at most 0.1% (a 10 ms run suffices) */
	return lp_tsc_rate(&then, now, 1000);
}

static int inf_push(struct lp_inf_waits *out, const struct lp_inf_wait *w)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? 2 * out->cap : 16;
		void *v = realloc(out->v, cap * sizeof(*out->v));
		if (!v)
			return -ENOMEM;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = *w;
	return 0;
}

int lp_inflight_load(const char *dir, struct lp_inf_waits *out)
{
	memset(out, 0, sizeof(*out));
	char path[PATH_MAX];
	inf_path(dir, path);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	struct lp_inf_file_header h;
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, LP_INF_MAGIC, sizeof(h.magic)) || h.version != LP_INF_VERSION ||
	    h.header_size != LP_INF_HEADER_SIZE || h.slot_size != sizeof(struct lp_inflight) ||
	    st.st_size <
		(off_t)(LP_INF_HEADER_SIZE + (off_t)h.n_slots * sizeof(struct lp_inflight)))
		goto out;
	out->full = h.full;
	struct lp_tsc_pt now;
	uint64_t rate = 0;
	int rate_tried = 0;
	struct lp_inflight buf[64];
	for (uint32_t i = 0; rc == 0 && i < h.n_slots; i += 64) {
		uint32_t k = h.n_slots - i < 64 ? h.n_slots - i : 64;
		ssize_t want = (ssize_t)(k * sizeof(buf[0]));
		if (pread(fd, buf, (size_t)want, LP_INF_HEADER_SIZE + (off_t)i * sizeof(buf[0])) !=
		    want)
			break;
		for (uint32_t j = 0; rc == 0 && j < k; j++) {
			const struct lp_inflight *s = &buf[j];
			if (!s->owner || s->start <= LP_INF_TAKEN)
				continue;
			struct lp_inf_wait w = {.pid = (uint32_t)(s->owner >> 32),
						.tid = (uint32_t)s->owner,
						.image = s->image,
						.start = s->start,
						.obj = s->obj,
						.obj2 = s->obj2,
						.ra = s->ra,
						.what = s->what,
						.stack = s->stack};
			if (s->tsc) {
				if (!rate_tried++)
					rate = inf_rate(&h, &now);
				if (!rate || s->start < h.tsc) {
					out->unconverted++;
					continue;
				}
				w.start = h.tsc_ns + lp_tsc_ticks_ns(s->start - h.tsc, rate);
			}
			rc = inf_push(out, &w);
		}
	}
out:
	close(fd);
	return rc;
}

void lp_inflight_free(struct lp_inf_waits *w)
{
	free(w->v);
	memset(w, 0, sizeof(*w));
}
