/* SPDX-License-Identifier: MIT */
/*
 * NVTX records (format/lp_log_nvtx.h) -> domains, categories, ranges,
 * marks (schemas/nvtx.sql).
 *
 * Records arrive in each thread's write order, but threads interleave by
 * chunk, not by time. So push/pop nesting is rebuilt from one stack per
 * (thread, domain), and start/end pairs are matched by id in whichever
 * order they show up. Range ids are handed out at push time so a child
 * (which ends first) can name its parent before the parent's row exists.
 *
 * Domains are definitions: each nvtxDomainCreate call writes its own id's
 * record in the creating thread's log, and another thread may use that
 * handle in a chunk read before it. So the definitions are read in pass 1
 * (nvtx_define), and a domain's row is found at its first use, when every
 * id of the process is known: every id of one name goes to one row.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_import.h"
#include "lp_import_sources.h"
#include "lp_log_nvtx.h"
#include "lp_nvtx_db.h"

extern const char lp_schema_nvtx_sql[];

/* An open range: a push frame, a pending start, or an end seen first. */
struct nvtx_open {
	int64_t id;   /* ranges.id */
	uint64_t key; /* start/end: nvtxRangeId_t; 0 = slot free */
	uint64_t ts;
	uint32_t tid;
	uint32_t dom;
	uint32_t name;
	uint32_t category;
	int has_attr;
	struct lp_rec_nvtx_attr a;
};

struct nvtx_stack {
	struct nvtx_open *v;
	size_t n, cap;
	uint32_t tid, dom;
};

/* nvtxRangeId_t -> slot; lp_map cannot delete, so freed slots leave stale
 * keys that are checked against the slot and swept when they pile up. */
struct nvtx_pool {
	struct lp_map idx;
	struct nvtx_open *v;
	size_t n, cap, live;
};

struct nvtx_state {
	sqlite3_stmt *ins_range, *ins_mark, *ins_domain, *ins_cat, *proc_end;
	int64_t next_id;
	/* current process */
	struct lp_map dom_defs;	 /* local domain id + 1 -> local string id of its name */
	struct lp_map domains;	 /* local domain id + 1 -> domains.id */
	struct lp_map dom_names; /* strings.id of a domain name -> domains.id */
	struct lp_map stack_idx; /* (tid << 32 | domain) + 1 -> stacks index + 1 */
	struct nvtx_stack *stacks;
	size_t n_stacks, cap_stacks;
	struct nvtx_pool starts, ends;
	uint64_t max_ts;
	/* whole import */
	long long ranges, marks, unbalanced_pops, open_at_exit, orphan_ends;
};

static void nvtx_seen(struct nvtx_state *s, uint64_t ts)
{
	if (ts > s->max_ts)
		s->max_ts = ts;
}

/* ---- domains ----------------------------------------------------------- */

static int64_t nvtx_domain_row(struct lp_import *imp, struct nvtx_state *s, const char *name,
			       int64_t name_sid)
{
	sqlite3_bind_int64(s->ins_domain, 1, imp->proc->id);
	if (name_sid)
		sqlite3_bind_int64(s->ins_domain, 2, name_sid);
	else
		sqlite3_bind_null(s->ins_domain, 2);
	sqlite3_bind_text(s->ins_domain, 3, name, -1, SQLITE_STATIC);
	if (lp_import_step(imp, s->ins_domain))
		return 0;
	return sqlite3_last_insert_rowid(imp->db);
}

/* domains.id of a local domain id: the row of its name, made at the first
 * use of any id of that name. An id without a definition in the log (its
 * record dropped) gets a row of its own, named after the id. */
static int64_t nvtx_domain(struct lp_import *imp, struct nvtx_state *s, uint32_t dom)
{
	uint64_t id, name;
	if (lp_map_get(&s->domains, (uint64_t)dom + 1, &id))
		return (int64_t)id;
	int defined = dom && lp_map_get(&s->dom_defs, (uint64_t)dom + 1, &name);
	int64_t sid = defined ? lp_import_string(imp, (uint32_t)name) : 0, row;
	if (sid && lp_map_get(&s->dom_names, (uint64_t)sid, &id)) {
		row = (int64_t)id;
	} else {
		char alt[32];
		snprintf(alt, sizeof(alt), "(domain %u)", dom);
		row = nvtx_domain_row(imp, s, dom && !defined ? alt : "", sid);
		if (!row || (sid && lp_map_put(&s->dom_names, (uint64_t)sid, (uint64_t)row)))
			return 0;
	}
	return lp_map_put(&s->domains, (uint64_t)dom + 1, (uint64_t)row) ? 0 : row;
}

/* Pass 1: where every domain id of the process gets its name. */
static int nvtx_define(struct lp_import *imp, void *state, uint32_t tid,
		       const struct lp_rec_header *h, const void *p, size_t len)
{
	struct nvtx_state *s = state;
	const struct lp_rec_nvtx_domain *r = p;
	(void)imp;
	(void)tid;
	if (h->type != LP_REC_NVTX_DOMAIN || len < sizeof(*r) || !h->aux)
		return 0;
	return lp_map_put(&s->dom_defs, (uint64_t)h->aux + 1, r->name) ? -ENOMEM : 0;
}

/* ---- rows -------------------------------------------------------------- */

static void bind_payload(sqlite3_stmt *st, int i, const struct nvtx_open *o)
{
	union {
		uint64_t u;
		double d;
		float f;
	} v = {.u = o->a.payload};
	switch (o->has_attr ? o->a.payload_type : 0) {
	case 1: /* NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 */
	case 2: /* INT64 */
		sqlite3_bind_int64(st, i, (int64_t)o->a.payload);
		break;
	case 3: /* DOUBLE */
		sqlite3_bind_double(st, i, v.d);
		break;
	case 4: /* UNSIGNED_INT32 */
		sqlite3_bind_int64(st, i, (uint32_t)o->a.payload);
		break;
	case 5: /* INT32 */
		sqlite3_bind_int64(st, i, (int32_t)(uint32_t)o->a.payload);
		break;
	case 6: /* FLOAT: low half of the raw bits */
		v.u = (uint32_t)o->a.payload;
		sqlite3_bind_double(st, i, v.f);
		break;
	default:
		sqlite3_bind_null(st, i);
	}
}

static void bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int nvtx_insert(struct lp_import *imp, struct nvtx_state *s, const struct nvtx_open *o,
		       uint64_t end, uint32_t end_tid, int64_t parent, int depth, unsigned flags)
{
	sqlite3_stmt *st = s->ins_range;
	int64_t dom = nvtx_domain(imp, s, o->dom);
	int64_t t0 = lp_import_thread(imp, o->tid);
	int64_t t1 = end_tid == o->tid ? t0 : lp_import_thread(imp, end_tid);
	if (!dom || !t0 || !t1)
		return -EIO;
	if (end < o->ts)
		end = o->ts;
	sqlite3_bind_int64(st, 1, o->id);
	sqlite3_bind_int64(st, 2, imp->proc->id);
	sqlite3_bind_int64(st, 3, dom);
	bind_id(st, 4, lp_import_string(imp, o->name));
	sqlite3_bind_int64(st, 5, o->category);
	sqlite3_bind_int64(st, 6, (int64_t)o->ts);
	sqlite3_bind_int64(st, 7, (int64_t)end);
	sqlite3_bind_int64(st, 8, t0);
	sqlite3_bind_int64(st, 9, t1);
	bind_id(st, 10, parent);
	sqlite3_bind_int(st, 11, depth);
	bind_payload(st, 12, o);
	if (o->has_attr && (o->a.flags & LP_NVTX_ATTR_COLOR))
		sqlite3_bind_int64(st, 13, o->a.color);
	else
		sqlite3_bind_null(st, 13);
	sqlite3_bind_int(st, 14, (int)flags);
	s->ranges++;
	return lp_import_step(imp, st);
}

/* Fill an open-range slot from a PUSH/START/MARK body and its attr tail. */
static void nvtx_fill(struct nvtx_open *o, uint32_t tid, uint32_t dom, uint64_t ts, uint32_t name,
		      uint32_t category, const void *tail, size_t tail_len)
{
	o->tid = tid;
	o->dom = dom;
	o->ts = ts;
	o->name = name;
	o->category = category;
	o->has_attr = tail_len >= sizeof(o->a);
	if (o->has_attr)
		memcpy(&o->a, tail, sizeof(o->a));
}

/* ---- push/pop ---------------------------------------------------------- */

static struct nvtx_stack *nvtx_stack(struct nvtx_state *s, uint32_t tid, uint32_t dom)
{
	uint64_t key = ((uint64_t)tid << 32 | dom) + 1, i;
	if (lp_map_get(&s->stack_idx, key, &i))
		return &s->stacks[i - 1];
	if (s->n_stacks == s->cap_stacks) {
		size_t cap = s->cap_stacks ? 2 * s->cap_stacks : 16;
		void *n = realloc(s->stacks, cap * sizeof(*s->stacks));
		if (!n)
			return NULL;
		s->stacks = n;
		s->cap_stacks = cap;
	}
	struct nvtx_stack *k = &s->stacks[s->n_stacks++];
	memset(k, 0, sizeof(*k));
	k->tid = tid;
	k->dom = dom;
	if (lp_map_put(&s->stack_idx, key, s->n_stacks))
		return NULL;
	return k;
}

static int nvtx_push(struct nvtx_state *s, uint32_t tid, uint32_t dom, uint64_t ts, uint32_t name,
		     uint32_t category, const void *tail, size_t tail_len)
{
	struct nvtx_stack *k = nvtx_stack(s, tid, dom);
	if (!k)
		return -ENOMEM;
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 16;
		void *n = realloc(k->v, cap * sizeof(*k->v));
		if (!n)
			return -ENOMEM;
		k->v = n;
		k->cap = cap;
	}
	struct nvtx_open *o = &k->v[k->n++];
	nvtx_fill(o, tid, dom, ts, name, category, tail, tail_len);
	o->id = s->next_id++;
	nvtx_seen(s, ts);
	return 0;
}

static int nvtx_pop(struct lp_import *imp, struct nvtx_state *s, uint32_t tid, uint32_t dom,
		    const struct lp_rec_nvtx_pop *r)
{
	struct nvtx_stack *k = nvtx_stack(s, tid, dom);
	if (!k)
		return -ENOMEM;
	nvtx_seen(s, r->ts);
	if (!k->n) {
		s->unbalanced_pops++;
		return 0;
	}
	size_t d = --k->n;
	assert(d < k->cap && d <= INT_MAX); /* its depth is stored as an int */
	return nvtx_insert(imp, s, &k->v[d], r->ts, tid, d ? k->v[d - 1].id : 0, (int)d, 0);
}

/* ---- start/end --------------------------------------------------------- */

static struct nvtx_open *pool_find(struct nvtx_pool *p, uint64_t key)
{
	uint64_t i;
	if (!lp_map_get(&p->idx, key, &i) || p->v[i].key != key)
		return NULL;
	return &p->v[i];
}

/* Drop freed slots and stale keys once they outnumber the live ones. */
static int pool_sweep(struct nvtx_pool *p)
{
	struct lp_map idx = {0};
	size_t w = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].key)
			continue;
		p->v[w] = p->v[i];
		if (lp_map_put(&idx, p->v[w].key, w)) {
			lp_map_free(&idx);
			return -ENOMEM;
		}
		w++;
	}
	lp_map_free(&p->idx);
	p->idx = idx;
	p->n = w;
	return 0;
}

static struct nvtx_open *pool_add(struct nvtx_pool *p, uint64_t key)
{
	if (p->n == p->cap && p->n > 2 * p->live + 1024 && pool_sweep(p))
		return NULL;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		void *n = realloc(p->v, cap * sizeof(*p->v));
		if (!n)
			return NULL;
		p->v = n;
		p->cap = cap;
	}
	if (lp_map_put(&p->idx, key, p->n))
		return NULL;
	struct nvtx_open *o = &p->v[p->n++];
	memset(o, 0, sizeof(*o));
	o->key = key;
	p->live++;
	return o;
}

static void pool_del(struct nvtx_pool *p, struct nvtx_open *o)
{
	o->key = 0;
	p->live--;
}

static void pool_free(struct nvtx_pool *p)
{
	lp_map_free(&p->idx);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int nvtx_pair(struct lp_import *imp, struct nvtx_state *s, const struct nvtx_open *o,
		     uint64_t end, uint32_t end_tid)
{
	unsigned flags = LP_RANGEF_STARTEND | (end_tid != o->tid ? LP_RANGEF_CROSS_THREAD : 0);
	return nvtx_insert(imp, s, o, end, end_tid, 0, 0, flags);
}

static int nvtx_start(struct lp_import *imp, struct nvtx_state *s, uint32_t tid, uint32_t dom,
		      const void *p, size_t len)
{
	const struct lp_rec_nvtx_start *r = p;
	struct nvtx_open tmp, *o;
	nvtx_seen(s, r->ts);
	nvtx_fill(&tmp, tid, dom, r->ts, r->name, r->category, r + 1, len - sizeof(*r));
	tmp.id = s->next_id++;
	struct nvtx_open *e = r->id ? pool_find(&s->ends, r->id) : NULL;
	if (e) { /* the end was in a chunk read earlier */
		int rc = nvtx_pair(imp, s, &tmp, e->ts, e->tid);
		pool_del(&s->ends, e);
		return rc;
	}
	o = pool_add(&s->starts, r->id);
	if (!o)
		return -ENOMEM;
	tmp.key = r->id;
	*o = tmp;
	return 0;
}

static int nvtx_end(struct lp_import *imp, struct nvtx_state *s, uint32_t tid,
		    const struct lp_rec_nvtx_end *r)
{
	nvtx_seen(s, r->ts);
	struct nvtx_open *o = r->id ? pool_find(&s->starts, r->id) : NULL;
	if (o) {
		int rc = nvtx_pair(imp, s, o, r->ts, tid);
		pool_del(&s->starts, o);
		return rc;
	}
	if (!r->id || pool_find(&s->ends, r->id)) {
		s->orphan_ends++; /* never started, or ended twice */
		return 0;
	}
	struct nvtx_open *e = pool_add(&s->ends, r->id);
	if (!e)
		return -ENOMEM;
	e->ts = r->ts;
	e->tid = tid;
	return 0;
}

/* ---- marks, categories ------------------------------------------------- */

static int nvtx_mark(struct lp_import *imp, struct nvtx_state *s, uint32_t tid, uint32_t dom,
		     const void *p, size_t len)
{
	const struct lp_rec_nvtx_push *r = p;
	struct nvtx_open o;
	nvtx_fill(&o, tid, dom, r->ts, r->name, r->category, r + 1, len - sizeof(*r));
	int64_t d = nvtx_domain(imp, s, dom), t = lp_import_thread(imp, tid);
	if (!d || !t)
		return -EIO;
	sqlite3_stmt *st = s->ins_mark;
	sqlite3_bind_int64(st, 1, imp->proc->id);
	sqlite3_bind_int64(st, 2, d);
	bind_id(st, 3, lp_import_string(imp, r->name));
	sqlite3_bind_int64(st, 4, r->category);
	sqlite3_bind_int64(st, 5, (int64_t)r->ts);
	sqlite3_bind_int64(st, 6, t);
	bind_payload(st, 7, &o);
	nvtx_seen(s, r->ts);
	s->marks++;
	return lp_import_step(imp, st);
}

static int nvtx_category(struct lp_import *imp, struct nvtx_state *s, uint32_t dom,
			 const struct lp_rec_nvtx_category *r)
{
	int64_t d = nvtx_domain(imp, s, dom), sid = lp_import_string(imp, r->name);
	if (!d)
		return -EIO;
	if (!sid)
		return 0;
	sqlite3_bind_int64(s->ins_cat, 1, d);
	sqlite3_bind_int64(s->ins_cat, 2, r->category);
	sqlite3_bind_int64(s->ins_cat, 3, sid);
	return lp_import_step(imp, s->ins_cat);
}

static int nvtx_record(struct lp_import *imp, void *state, uint32_t tid,
		       const struct lp_rec_header *h, const void *p, size_t len)
{
	struct nvtx_state *s = state;
	uint32_t dom = h->aux;
	switch (h->type) {
	case LP_REC_NVTX_PUSH: {
		const struct lp_rec_nvtx_push *r = p;
		return len >= sizeof(*r) ? nvtx_push(s, tid, dom, r->ts, r->name, r->category,
						     r + 1, len - sizeof(*r))
					 : 0;
	}
	case LP_REC_NVTX_PUSH_NAME:
		return len >= sizeof(struct lp_rec_nvtx_pop)
			   ? nvtx_push(s, tid, 0, ((const struct lp_rec_nvtx_pop *)p)->ts, h->aux,
				       0, NULL, 0)
			   : 0;
	case LP_REC_NVTX_POP:
		return len >= sizeof(struct lp_rec_nvtx_pop) ? nvtx_pop(imp, s, tid, dom, p) : 0;
	case LP_REC_NVTX_START:
		return len >= sizeof(struct lp_rec_nvtx_start)
			   ? nvtx_start(imp, s, tid, dom, p, len)
			   : 0;
	case LP_REC_NVTX_END:
		return len >= sizeof(struct lp_rec_nvtx_end) ? nvtx_end(imp, s, tid, p) : 0;
	case LP_REC_NVTX_MARK:
		return len >= sizeof(struct lp_rec_nvtx_push) ? nvtx_mark(imp, s, tid, dom, p, len)
							      : 0;
	case LP_REC_NVTX_DOMAIN: /* defined in pass 1; a domain without events gets its row */
		return dom && !nvtx_domain(imp, s, dom) ? -EIO : 0;
	case LP_REC_NVTX_CATEGORY:
		return len >= sizeof(struct lp_rec_nvtx_category) ? nvtx_category(imp, s, dom, p)
								  : 0;
	default:
		imp->unknown_records++;
		return 0;
	}
}

/* ---- process end ------------------------------------------------------- */

static int first_int_row(sqlite3_stmt *st, void *ctx)
{
	*(int64_t *)ctx = sqlite3_column_int64(st, 0);
	return LP_DB_STOP;
}

static uint64_t nvtx_proc_end(struct lp_import *imp, struct nvtx_state *s)
{
	uint64_t end = s->max_ts;
	/* The core source ran first and stored the exit (or last) timestamp. */
	int64_t v = 0;
	char e[160];
	sqlite3_bind_int64(s->proc_end, 1, imp->proc->id);
	/* a read error leaves the latest event as the end, as without a row */
	lp_db_step_all(s->proc_end, first_int_row, &v, e, sizeof(e));
	if ((uint64_t)v > end)
		end = (uint64_t)v;
	sqlite3_reset(s->proc_end);
	return end;
}

static int nvtx_end_process(struct lp_import *imp, void *state)
{
	struct nvtx_state *s = state;
	uint64_t end = nvtx_proc_end(imp, s);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < s->n_stacks; i++) {
		struct nvtx_stack *k = &s->stacks[i];
		while (rc == 0 && k->n) {
			size_t d = --k->n;
			rc = nvtx_insert(imp, s, &k->v[d], end, k->tid, d ? k->v[d - 1].id : 0,
					 (int)d, LP_RANGEF_OPEN_AT_EXIT);
			s->open_at_exit++;
		}
	}
	for (size_t i = 0; rc == 0 && i < s->starts.n; i++) {
		struct nvtx_open *o = &s->starts.v[i];
		if (!o->key)
			continue;
		rc = nvtx_insert(imp, s, o, end, o->tid, 0, 0,
				 LP_RANGEF_STARTEND | LP_RANGEF_OPEN_AT_EXIT);
		s->open_at_exit++;
	}
	s->orphan_ends += (long long)s->ends.live;
	for (size_t i = 0; i < s->n_stacks; i++)
		free(s->stacks[i].v);
	free(s->stacks);
	s->stacks = NULL;
	s->n_stacks = s->cap_stacks = 0;
	lp_map_free(&s->stack_idx);
	lp_map_free(&s->dom_defs);
	lp_map_free(&s->domains);
	lp_map_free(&s->dom_names);
	pool_free(&s->starts);
	pool_free(&s->ends);
	s->max_ts = 0;
	return rc;
}

static int nvtx_finish(struct lp_import *imp, void *state)
{
	struct nvtx_state *s = state;
	int rc = lp_import_meta(imp, "nvtx.ranges", NULL, s->ranges);
	rc = rc ? rc : lp_import_meta(imp, "nvtx.marks", NULL, s->marks);
	rc = rc ? rc : lp_import_meta(imp, "nvtx.unbalanced_pops", NULL, s->unbalanced_pops);
	rc = rc ? rc : lp_import_meta(imp, "nvtx.open_at_exit", NULL, s->open_at_exit);
	rc = rc ? rc : lp_import_meta(imp, "nvtx.orphan_ends", NULL, s->orphan_ends);
	return rc;
}

static int nvtx_begin(struct lp_import *imp, void **state)
{
	struct nvtx_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*state = s;
	s->next_id = 1;
	s->ins_range = lp_import_prepare(
	    imp, "INSERT INTO ranges(id, process_id, domain_id, name_id, category, start_ns, "
		 "end_ns, start_thread_id, end_thread_id, parent_id, depth, payload, color, flags) "
		 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	s->ins_mark = lp_import_prepare(
	    imp, "INSERT INTO marks(process_id, domain_id, name_id, category, ts_ns, thread_id, "
		 "payload) VALUES (?,?,?,?,?,?,?)");
	s->ins_domain = lp_import_prepare(
	    imp, "INSERT INTO domains(process_id, name) VALUES (?1, coalesce((SELECT value FROM "
		 "strings WHERE id = ?2), ?3))");
	s->ins_cat = lp_import_prepare(
	    imp, "INSERT INTO categories(domain_id, category, name) SELECT ?1, ?2, value FROM "
		 "strings WHERE id = ?3");
	s->proc_end =
	    lp_import_prepare(imp, "SELECT coalesce(end_ns, 0) FROM processes WHERE id = ?");
	if (!s->ins_range || !s->ins_mark || !s->ins_domain || !s->ins_cat || !s->proc_end)
		return -EIO;
	return 0;
}

static void nvtx_destroy(void *state)
{
	struct nvtx_state *s = state;
	if (!s)
		return;
	sqlite3_finalize(s->ins_range);
	sqlite3_finalize(s->ins_mark);
	sqlite3_finalize(s->ins_domain);
	sqlite3_finalize(s->ins_cat);
	sqlite3_finalize(s->proc_end);
	for (size_t i = 0; i < s->n_stacks; i++)
		free(s->stacks[i].v);
	free(s->stacks);
	lp_map_free(&s->stack_idx);
	lp_map_free(&s->dom_defs);
	lp_map_free(&s->domains);
	lp_map_free(&s->dom_names);
	pool_free(&s->starts);
	pool_free(&s->ends);
	free(s);
}

static const char lp_nvtx_indexes[] = "CREATE INDEX ranges_start ON ranges(start_ns);"
				      "CREATE INDEX ranges_name ON ranges(name_id);"
				      "CREATE INDEX ranges_parent ON ranges(parent_id);"
				      "CREATE INDEX marks_ts ON marks(ts_ns);";

const struct lp_import_source lp_src_nvtx = {
    .name = "nvtx",
    .first_type = LP_REC_NVTX_FIRST,
    .last_type = LP_REC_NVTX_LAST,
    .schema = lp_schema_nvtx_sql,
    .indexes = lp_nvtx_indexes,
    .begin = nvtx_begin,
    .record = nvtx_record,
    .define = nvtx_define,
    .end_process = nvtx_end_process,
    .finish = nvtx_finish,
    .destroy = nvtx_destroy,
};
