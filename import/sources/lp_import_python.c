/* SPDX-License-Identifier: MIT */
/*
 * Python records (preload/lp_py.c): each wait's Python frames, the GIL's
 * holder at a GIL wait, and the CPython an image ran. Frames arrive as
 * one interned string per distinct stack ("function\x1ffile\x1fline",
 * joined by \x1e, innermost first): parsed once per string into py_frames
 * and py_stacks. At the end, each frame gets its source line's text where
 * the file is readable now.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_import.h"
#include "lp_util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

extern const char lp_schema_python_sql[];

#define PY_FRAME_SEP '\x1e'
#define PY_FIELD_SEP '\x1f'

struct py_state {
	sqlite3_stmt *sel_str, *ins_frame, *ins_stack, *ins_sf, *ins_wait, *ins_rt;
	struct lp_map stacks; /* strings.id -> py_stacks.id */
	struct lp_map frames; /* xxh3 of a frame's text -> py_frames.id */
};

/* The standard library's modules a thread waits inside when it waits on a
 * lock, a queue or a future: never the call site the user wrote. */
static int py_wait_lib(const char *file)
{
	if (!strstr(file, "/python3.") || strstr(file, "-packages/"))
		return 0;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	return !strcmp(base, "threading.py") || !strcmp(base, "queue.py") ||
	       strstr(file, "/concurrent/futures/") != NULL;
}

/* One frame's text (len bytes) -> py_frames.id, 0 when malformed. */
static int64_t py_frame_id(struct lp_import *imp, struct py_state *s, const char *t, size_t len,
			   int *lib)
{
	uint64_t key = XXH3_64bits(t, len) | 1, id;
	char buf[1024];
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, t, len);
	buf[len] = 0;
	char *file = strchr(buf, PY_FIELD_SEP),
	     *line = file ? strchr(file + 1, PY_FIELD_SEP) : NULL;
	if (!line)
		return 0;
	*file++ = 0;
	*line++ = 0;
	*lib = py_wait_lib(file);
	if (lp_map_get(&s->frames, key, &id))
		return (int64_t)id;
	long ln = strtol(line, NULL, 10);
	sqlite3_bind_text(s->ins_frame, 1, buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s->ins_frame, 2, file, -1, SQLITE_TRANSIENT);
	if (ln > 0)
		sqlite3_bind_int64(s->ins_frame, 3, ln);
	else
		sqlite3_bind_null(s->ins_frame, 3);
	sqlite3_bind_int(s->ins_frame, 4, *lib);
	if (lp_import_step(imp, s->ins_frame))
		return 0;
	id = (uint64_t)sqlite3_last_insert_rowid(imp->db);
	return lp_map_put(&s->frames, key, id) ? 0 : (int64_t)id;
}

/* The text of strings.id sid, malloc'd; NULL when absent. */
static char *py_text(struct py_state *s, int64_t sid)
{
	sqlite3_bind_int64(s->sel_str, 1, sid);
	char *t = lp_db_step_row(s->sel_str) ? lp_db_col_strdup(s->sel_str, 0) : NULL;
	sqlite3_reset(s->sel_str);
	return t;
}

/* py_stacks.id of the frames in strings.id sid; 0 none, -1 error. */
static int64_t py_stack_id(struct lp_import *imp, struct py_state *s, int64_t sid)
{
	uint64_t id;
	if (!sid)
		return 0;
	if (lp_map_get(&s->stacks, (uint64_t)sid, &id))
		return (int64_t)id;
	char *t = py_text(s, sid);
	if (!t)
		return 0;
	int64_t fids[32], site = 0;
	int n = 0;
	for (char *p = t; *p && n < 32;) {
		char *end = strchr(p, PY_FRAME_SEP);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int lib = 0;
		int64_t f = py_frame_id(imp, s, p, len, &lib);
		if (f) {
			fids[n++] = f;
			if (!site && !lib)
				site = f;
		}
		p = end ? end + 1 : p + len;
	}
	free(t);
	if (!n)
		return 0;
	sqlite3_bind_int(s->ins_stack, 1, n);
	sqlite3_bind_int64(s->ins_stack, 2, site ? site : fids[0]);
	if (lp_import_step(imp, s->ins_stack))
		return -1;
	id = (uint64_t)sqlite3_last_insert_rowid(imp->db);
	for (int i = 0; i < n; i++) {
		sqlite3_bind_int64(s->ins_sf, 1, (int64_t)id);
		sqlite3_bind_int(s->ins_sf, 2, i);
		sqlite3_bind_int64(s->ins_sf, 3, fids[i]);
		if (lp_import_step(imp, s->ins_sf))
			return -1;
	}
	if (lp_map_put(&s->stacks, (uint64_t)sid, id))
		return -1;
	return (int64_t)id;
}

static int py_wait(struct lp_import *imp, struct py_state *s, uint32_t tid,
		   const struct lp_rec_py_wait *r)
{
	int64_t thread = lp_import_thread(imp, tid);
	if (!thread)
		return -EIO;
	int64_t stack = py_stack_id(imp, s, lp_import_string(imp, r->frames));
	if (stack < 0)
		return -EIO;
	int64_t holder = 0;
	if (r->holder_frame) {
		char *t = py_text(s, lp_import_string(imp, r->holder_frame));
		int lib = 0;
		if (t)
			holder = py_frame_id(imp, s, t, strlen(t), &lib);
		free(t);
	}
	sqlite3_stmt *st = s->ins_wait;
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, (int64_t)r->start);
	if (stack)
		sqlite3_bind_int64(st, 3, stack);
	else
		sqlite3_bind_null(st, 3);
	if (r->holder_tid)
		sqlite3_bind_int64(st, 4, r->holder_tid);
	else
		sqlite3_bind_null(st, 4);
	if (holder)
		sqlite3_bind_int64(st, 5, holder);
	else
		sqlite3_bind_null(st, 5);
	return lp_import_step(imp, st);
}

static int py_info(struct lp_import *imp, struct py_state *s, const struct lp_rec_py_info *r)
{
	static const char *const what[] = {"?", "read", "unknown-version", "layout-check-failed",
					   "no-safe-read"};
	char ver[32];
	snprintf(ver, sizeof(ver), "%u.%u.%u", r->version >> 24, (r->version >> 16) & 0xff,
		 (r->version >> 8) & 0xff);
	sqlite3_bind_int64(s->ins_rt, 1, imp->proc->id);
	sqlite3_bind_text(s->ins_rt, 2, ver, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s->ins_rt, 3, r->status < ARRAY_SIZE(what) ? what[r->status] : "?", -1,
			  SQLITE_STATIC);
	return lp_import_step(imp, s->ins_rt);
}

static int py_record(struct lp_import *imp, void *state, uint32_t tid,
		     const struct lp_rec_header *h, const void *p, size_t len)
{
	struct py_state *s = state;
	if (h->type == LP_REC_PY_WAIT && len >= sizeof(struct lp_rec_py_wait))
		return py_wait(imp, s, tid, p);
	if (h->type == LP_REC_PY_INFO && len >= sizeof(struct lp_rec_py_info))
		return py_info(imp, s, p);
	return 0;
}

/* ---- source lines, at the end ---- */

struct py_line {
	int64_t id, line;
	char *file;
};

struct py_lines {
	struct py_line *v;
	size_t n, cap;
};

static int py_line_row(sqlite3_stmt *st, void *ctx)
{
	struct py_lines *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		void *v = realloc(l->v, cap * sizeof(*l->v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	struct py_line *x = &l->v[l->n];
	x->id = sqlite3_column_int64(st, 0);
	x->line = sqlite3_column_int64(st, 2);
	if (!(x->file = lp_db_col_strdup(st, 1)))
		return -ENOMEM;
	l->n++;
	return 0;
}

/* Line `want` (1-based) of f, stripped, into buf; 0 or -1. */
static int py_read_line(FILE *f, int64_t want, char *buf, size_t cap)
{
	rewind(f);
	for (int64_t n = 1; fgets(buf, (int)cap, f); n++) {
		size_t len = strlen(buf);
		int whole = len && buf[len - 1] == '\n';
		if (n == want) {
			while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
				       buf[len - 1] == ' ' || buf[len - 1] == '\t'))
				buf[--len] = 0;
			size_t lead = strspn(buf, " \t");
			memmove(buf, buf + lead, len - lead + 1);
			return 0;
		}
		/* a line longer than buf: skip the rest of it */
		while (!whole && fgets(buf, (int)cap, f)) {
			len = strlen(buf);
			whole = len && buf[len - 1] == '\n';
		}
	}
	return -1;
}

static int py_finish(struct lp_import *imp, void *state)
{
	(void)state;
	struct py_lines l = {0};
	int rc = lp_db_query(imp->db,
			     "SELECT id, file, line FROM py_frames WHERE line IS NOT NULL "
			     "ORDER BY file, line",
			     NULL, 0, py_line_row, &l, imp->err, imp->errlen);
	sqlite3_stmt *up =
	    rc ? NULL : lp_import_prepare(imp, "UPDATE py_frames SET source = ? WHERE id = ?");
	FILE *f = NULL;
	const char *open_file = NULL;
	char buf[512];
	for (size_t i = 0; up && rc == 0 && i < l.n; i++) {
		if (!open_file || strcmp(open_file, l.v[i].file)) {
			if (f)
				fclose(f);
			open_file = l.v[i].file;
			f = open_file[0] == '/' ? fopen(open_file, "re") : NULL;
		}
		if (!f || py_read_line(f, l.v[i].line, buf, sizeof(buf)))
			continue;
		sqlite3_bind_text(up, 1, buf, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(up, 2, l.v[i].id);
		rc = lp_import_step(imp, up);
	}
	if (f)
		fclose(f);
	if (up)
		sqlite3_finalize(up);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].file);
	free(l.v);
	return rc ? -EIO : 0;
}

static int py_begin(struct lp_import *imp, void **state)
{
	struct py_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*state = s;
	s->sel_str = lp_import_prepare(imp, "SELECT value FROM strings WHERE id = ?");
	s->ins_frame = lp_import_prepare(
	    imp, "INSERT INTO py_frames(function, file, line, wait_lib) VALUES (?,?,?,?)");
	s->ins_stack =
	    lp_import_prepare(imp, "INSERT INTO py_stacks(depth, site_frame) VALUES (?,?)");
	s->ins_sf = lp_import_prepare(
	    imp, "INSERT INTO py_stack_frames(stack_id, depth, frame_id) VALUES (?,?,?)");
	s->ins_wait = lp_import_prepare(imp, "INSERT OR IGNORE INTO py_waits(thread_id, start_ns, "
					     "py_stack_id, holder_tid, holder_frame_id) "
					     "VALUES (?,?,?,?,?)");
	s->ins_rt = lp_import_prepare(
	    imp, "INSERT INTO py_runtimes(process_id, version, frames) VALUES (?,?,?)");
	if (!s->sel_str || !s->ins_frame || !s->ins_stack || !s->ins_sf || !s->ins_wait ||
	    !s->ins_rt)
		return -EIO;
	return 0;
}

static void py_destroy(void *state)
{
	struct py_state *s = state;
	if (!s)
		return;
	sqlite3_stmt *all[] = {s->sel_str, s->ins_frame, s->ins_stack,
			       s->ins_sf,  s->ins_wait,	 s->ins_rt};
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		sqlite3_finalize(all[i]);
	lp_map_free(&s->stacks);
	lp_map_free(&s->frames);
	free(s);
}

const struct lp_import_source lp_src_python = {
    .name = "python",
    .first_type = LP_REC_PY_FIRST,
    .last_type = LP_REC_PY_LAST,
    .schema = lp_schema_python_sql,
    .indexes = "CREATE INDEX py_frames_site ON py_stacks(site_frame);",
    .begin = py_begin,
    .record = py_record,
    .finish = py_finish,
    .destroy = py_destroy,
};
