/* SPDX-License-Identifier: MIT */
/*
 * The run's process table (format/lp_ptab_format.h) -> processes and
 * threads rows for the images that never created a log of their own: a
 * shell's /bin/true, a pre-forked child that exited idle. An image that has
 * a log (same pid and start_ns in its header) is imported from the log
 * alone: the log's records win, and the table's lines for it are skipped.
 *
 * The table is read whole (about 100 bytes a process). A record that fails
 * its checksum (a short write on a full disk, a cut file) is skipped byte
 * by byte to the next good one and counted in meta import.ptab_damaged.
 */
#define _GNU_SOURCE
#include "lp_import_proctab.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lp_import_sources.h"
#include "lp_util.h"
#include "lp_logread.h"
#include "lp_ptab_format.h"
#include "lp_util.h"

static uint64_t ptab_key(uint32_t pid, uint64_t start_ns)
{
	uint64_t k = lp_map_mix(start_ns) ^ pid;
	return k ? k : 1;
}

/* The image (pid, start_ns), created when new: NULL only out of memory. */
static struct lp_ptab_image *ptab_image(struct lp_ptab *t, uint32_t pid, uint64_t start_ns)
{
	uint64_t at;
	if (lp_map_get(&t->by_key, ptab_key(pid, start_ns), &at) && t->v[at].pid == pid &&
	    t->v[at].start_ns == start_ns)
		return &t->v[at];
	for (size_t i = 0; i < t->n; i++) /* a key collision: rare */
		if (t->v[i].pid == pid && t->v[i].start_ns == start_ns)
			return &t->v[i];
	if (LP_GROW(t->v, t->n, t->cap))
		return NULL;
	struct lp_ptab_image *im = &t->v[t->n];
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->start_ns = start_ns;
	im->end_ns = start_ns;
	if (lp_map_put(&t->by_key, ptab_key(pid, start_ns), t->n))
		return NULL;
	t->n++;
	return im;
}

static char *ptab_text(const unsigned char *p, size_t n, size_t *len)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
		*len = n;
	}
	return s;
}

/* One checked record; -ENOMEM only. */
static int ptab_apply(struct lp_ptab *t, const struct lp_ptab_rec *r, const unsigned char *body,
		      size_t body_len)
{
	struct lp_ptab_image *im = ptab_image(t, r->pid, r->start_ns);
	if (!im)
		return -ENOMEM;
	if (r->lost > im->lost)
		im->lost = r->lost;
	if (r->ts > im->end_ns)
		im->end_ns = r->ts;
	size_t fixed = r->type == LP_PTAB_START	  ? sizeof(struct lp_ptab_start)
		       : r->type == LP_PTAB_EXIT  ? sizeof(struct lp_ptab_exit)
		       : r->type == LP_PTAB_CLONE ? sizeof(struct lp_ptab_clone)
						  : 0;
	if (body_len < fixed || r->len > body_len - fixed)
		return 0; /* cannot happen with a good checksum, but never trust */
	const unsigned char *text = body + fixed;
	if (r->type == LP_PTAB_START && !im->cmdline) {
		struct lp_ptab_start s;
		memcpy(&s, body, sizeof(s));
		im->ppid = s.ppid;
		im->parent_tid = s.parent_tid;
		im->realtime_ns = s.realtime_ns;
		memcpy(im->comm, s.comm, sizeof(s.comm));
		im->comm[sizeof(s.comm)] = 0;
		im->cmdline = ptab_text(text, r->len, &im->cmdline_len);
		return im->cmdline ? 0 : -ENOMEM;
	}
	if (r->type == LP_PTAB_EXEC) {
		size_t pl = strnlen((const char *)text, r->len);
		free(im->exec_path);
		free(im->exec_why);
		im->exec_why = NULL;
		im->exec_path = ptab_text(text, pl, &(size_t){0});
		im->how = 0;			      /* an exit after this: the exec failed */
		if (im->exec_path && pl + 1 < r->len) /* why it is not recorded, after a NUL */
			im->exec_why = ptab_text(
			    text + pl + 1, strnlen((const char *)text + pl + 1, r->len - pl - 1),
			    &(size_t){0});
		return im->exec_path ? 0 : -ENOMEM;
	}
	if (r->type == LP_PTAB_CLONE) {
		struct lp_ptab_clone c;
		memcpy(&c, body, sizeof(c));
		if (c.flags & CLONE_THREAD)
			im->clone_threads++;
		else
			im->clone_procs++;
		return 0;
	}
	if (r->type == LP_PTAB_EXIT) {
		struct lp_ptab_exit e;
		memcpy(&e, body, sizeof(e));
		im->status = e.status;
		im->how = e.how ? e.how : 1;
		free(im->exec_path);
		im->exec_path = NULL;
		free(im->exec_why);
		im->exec_why = NULL;
		free(im->title);
		im->title = ptab_text(text, r->len, &im->title_len);
		return im->title ? 0 : -ENOMEM;
	}
	return 0;
}

/* 1 when a whole, checked record starts at buf[0] (len bytes left). */
static int ptab_good(const unsigned char *buf, size_t len, struct lp_ptab_rec *r)
{
	if (len < sizeof(*r))
		return 0;
	memcpy(r, buf, sizeof(*r));
	if (r->magic != LP_PTAB_MAGIC || r->size < sizeof(*r) || r->size % 8 || r->size > len)
		return 0;
	unsigned char copy[sizeof(*r) + 64 + LP_PTAB_MAX_TEXT + 8];
	if (r->size > sizeof(copy))
		return 0;
	memcpy(copy, buf, r->size);
	memset(copy + offsetof(struct lp_ptab_rec, check), 0, sizeof(r->check));
	return XXH32(copy, r->size, 0) == r->check;
}

static int ptab_parse(struct lp_ptab *t, const unsigned char *buf, size_t len)
{
	size_t pos = 0;
	int bad = 0;
	while (pos < len) {
		struct lp_ptab_rec r;
		if (!ptab_good(buf + pos, len - pos, &r)) {
			t->damaged += !bad; /* a run of bad bytes counts once */
			bad = 1;
			pos++;
			continue;
		}
		bad = 0;
		int rc = ptab_apply(t, &r, buf + pos + sizeof(r), r.size - sizeof(r));
		if (rc)
			return rc;
		pos += r.size;
	}
	return 0;
}

int lp_ptab_read(const char *dir, struct lp_ptab *t, char *err, size_t errlen)
{
	char path[4096];
	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", dir, LP_PTAB_NAME);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT
			   ? 0
			   : (snprintf(err, errlen, "%s: %s", path, strerror(errno)), -errno);
	struct stat st;
	unsigned char *buf = NULL;
	ssize_t got = -1;
	if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1)))
		got = pread(fd, buf, (size_t)st.st_size,
			    0); /* it may still grow: what is there now */
	close(fd);
	int rc = got < 0 ? -EIO : ptab_parse(t, buf, (size_t)got);
	free(buf);
	if (rc)
		snprintf(err, errlen, "%s: cannot read the process table (%s)", path,
			 strerror(-rc));
	return rc;
}

void lp_ptab_free(struct lp_ptab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].cmdline);
		free(t->v[i].title);
		free(t->v[i].exec_path);
		free(t->v[i].exec_why);
	}
	free(t->v);
	free(t->order);
	lp_ptab_release(t);
	lp_map_free(&t->by_key);
	memset(t, 0, sizeof(*t));
}

static const char *ptab_how(const struct lp_ptab_image *im)
{
	static const char *const how[] = {"", "exit", "_exit", "signal", "returned"};
	if (im->exec_path)
		return "exec";
	if (!im->how)
		return NULL;
	return im->how < 5 ? how[im->how] : "unknown";
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* The processes row of an image without a log, then its main thread. */
static int ptab_insert(struct lp_import *imp, sqlite3_stmt *ins, sqlite3_stmt *thr,
		       const struct lp_ptab_image *im)
{
	char *cmd = im->cmdline ? lp_import_argv_str(im->cmdline, im->cmdline_len) : NULL;
	char *title = im->title ? lp_import_argv_str(im->title, im->title_len) : NULL;
	int exited = im->how && !im->exec_path;
	sqlite3_bind_int64(ins, 1, im->pid);
	sqlite3_bind_int64(ins, 2, im->ppid);
	sqlite3_bind_int64(ins, 3, (int64_t)im->start_ns);
	sqlite3_bind_int(ins, 4, im->how || im->exec_path);
	sqlite3_bind_int64(ins, 5, (int64_t)im->lost);
	sqlite3_bind_int64(ins, 6, (int64_t)im->end_ns);
	bind_text_or_null(ins, 7, cmd);
	if (im->cmdline && im->cmdline_len)
		sqlite3_bind_text(ins, 8, im->cmdline, (int)strnlen(im->cmdline, im->cmdline_len),
				  SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(ins, 8);
	bind_text_or_null(ins, 9, title && cmd && strcmp(title, cmd) ? title : NULL);
	if (exited && (im->how == LP_EXIT_RETURN || im->how == LP_EXIT_UNDERSCORE))
		sqlite3_bind_int(ins, 10, im->status);
	else
		sqlite3_bind_null(ins, 10);
	if (exited && im->how == LP_EXIT_SIGNAL)
		sqlite3_bind_int(ins, 11, im->status);
	else
		sqlite3_bind_null(ins, 11);
	bind_text_or_null(ins, 12, ptab_how(im));
	bind_text_or_null(ins, 13, im->exec_path);
	bind_text_or_null(ins, 14, im->exec_path ? im->exec_why : NULL);
	free(cmd);
	free(title);
	if (lp_import_step(imp, ins))
		return -EIO;
	sqlite3_bind_int64(thr, 1, sqlite3_last_insert_rowid(imp->db));
	sqlite3_bind_int64(thr, 2, im->pid);
	if (im->parent_tid)
		sqlite3_bind_int64(thr, 3, im->parent_tid);
	else
		sqlite3_bind_null(thr, 3);
	bind_text_or_null(thr, 4, im->comm);
	sqlite3_bind_int64(thr, 5, (int64_t)im->start_ns);
	return lp_import_step(imp, thr);
}

/* Processes keep the order the logs' names gave them before the table
 * existed (p<pid>-<n>.lplog sorted by name): the pid as text, then start. */
static int ptab_cmp_key(uint32_t apid, uint64_t astart, uint32_t bpid, uint64_t bstart)
{
	char a[16], b[16];
	snprintf(a, sizeof(a), "%u", apid);
	snprintf(b, sizeof(b), "%u", bpid);
	int c = strcmp(a, b);
	return c ? c : astart < bstart ? -1 : astart > bstart;
}

static const struct lp_ptab *ptab_sorting;

static int ptab_cmp(const void *x, const void *y)
{
	const struct lp_ptab_image *a = &ptab_sorting->v[*(const size_t *)x];
	const struct lp_ptab_image *b = &ptab_sorting->v[*(const size_t *)y];
	return ptab_cmp_key(a->pid, a->start_ns, b->pid, b->start_ns);
}

int lp_ptab_begin(struct lp_import *imp, struct lp_ptab *t, const struct lp_log *logs, size_t nlogs)
{
	struct lp_map with_log = {0};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < nlogs; i++)
		rc = lp_map_put(&with_log, ptab_key(logs[i].hdr.pid, logs[i].hdr.start_ns), 1);
	t->order = rc ? NULL : malloc((t->n + 1) * sizeof(*t->order));
	for (size_t i = 0; t->order && i < t->n; i++) {
		uint64_t one;
		if (!lp_map_get(&with_log, ptab_key(t->v[i].pid, t->v[i].start_ns), &one))
			t->order[t->n_order++] = i; /* else its log says it all */
	}
	lp_map_free(&with_log);
	if (!t->order)
		return -ENOMEM;
	ptab_sorting = t;
	qsort(t->order, t->n_order, sizeof(*t->order), ptab_cmp);
	t->ins = lp_import_prepare(
	    imp, "INSERT INTO processes(pid, ppid, start_ns, log_closed, dropped_records, end_ns, "
		 "cmdline, exe, title, exit_status, exit_signal, exit_how, exec_path, "
		 "exec_unrecorded) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	t->thr = lp_import_prepare(
	    imp, "INSERT INTO threads(process_id, tid, parent_tid, name, start_ns) "
		 "VALUES (?,?,?,?,?)");
	t->clones = lp_import_prepare(
	    imp, "UPDATE processes SET raw_clone_threads = ?, raw_clone_processes = ? "
		 "WHERE pid = ? AND start_ns = ?");
	return t->ins && t->thr && t->clones ? 0 : -EIO;
}

int lp_ptab_import_before(struct lp_import *imp, struct lp_ptab *t, const struct lp_log *next)
{
	struct lp_ptab_counts *out = &t->counts;
	int rc = 0;
	while (rc == 0 && t->next < t->n_order) {
		const struct lp_ptab_image *im = &t->v[t->order[t->next]];
		if (next &&
		    ptab_cmp_key(im->pid, im->start_ns, next->hdr.pid, next->hdr.start_ns) > 0)
			break;
		rc = ptab_insert(imp, t->ins, t->thr, im);
		t->next++;
		out->processes++;
		out->lost += (long long)im->lost;
		out->unclosed += !im->how && !im->exec_path;
		if (im->realtime_ns &&
		    (!out->first_realtime_ns || im->realtime_ns < out->first_realtime_ns))
			out->first_realtime_ns = im->realtime_ns;
	}
	return rc;
}

void lp_ptab_release(struct lp_ptab *t)
{
	sqlite3_finalize(t->ins);
	sqlite3_finalize(t->thr);
	sqlite3_finalize(t->clones);
	t->ins = t->thr = t->clones = NULL;
}

/* Tasks made by raw clone(), on every image's row, with a log or not (the
 * table is the one place an image without a log can say it). */
static int ptab_clones(struct lp_import *imp, struct lp_ptab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct lp_ptab_image *im = &t->v[i];
		if (!im->clone_threads && !im->clone_procs)
			continue;
		sqlite3_bind_int64(t->clones, 1, im->clone_threads);
		sqlite3_bind_int64(t->clones, 2, im->clone_procs);
		sqlite3_bind_int64(t->clones, 3, im->pid);
		sqlite3_bind_int64(t->clones, 4, (int64_t)im->start_ns);
		if (lp_import_step(imp, t->clones))
			return -EIO;
	}
	return 0;
}

int lp_ptab_end(struct lp_import *imp, struct lp_ptab *t)
{
	int rc = t->clones ? ptab_clones(imp, t) : 0;
	lp_ptab_release(t);
	if (rc)
		return rc;
	return lp_import_meta(imp, "import.ptab_damaged", NULL, t->damaged);
}
