/* SPDX-License-Identifier: MIT */
#include "lp_expect.h"
#include "lp_boot.h"
#include "lp_breakdown.h"
#include "lp_db.h"
#include "lp_findings.h"
#include "lp_stats.h"
#include "lp_suggest.h"
#include "lp_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {"<", "<=", ">", ">=", "==", "!="};

const char *lp_cmp_op_name(enum lp_cmp_op op)
{
	return op_names[op];
}

/* ---------------------------------------------------------------- parser */

struct cursor {
	const char *s;
	size_t i;
	size_t *pos;
	char *err;
	size_t errlen;
};

static void skip_ws(struct cursor *c)
{
	while (isspace((unsigned char)c->s[c->i]))
		c->i++;
}

static int fail_at(struct cursor *c, size_t at, const char *msg)
{
	*c->pos = at;
	snprintf(c->err, c->errlen, "%s", msg);
	return -EINVAL;
}

/* A limit outside what the metric can measure: -EDOM (the check refuses
 * the expectation rather than evaluate it). */
static int fail_domain(struct cursor *c, size_t at, const char *msg)
{
	fail_at(c, at, msg);
	return -EDOM;
}

static int is_time_metric(enum lp_metric m)
{
	return m != LP_M_COUNT && m != LP_M_SHARE;
}

static int parse_selector(struct cursor *c, struct lp_expect *e)
{
	static const struct {
		const char *prefix;
		enum lp_sel_kind kind;
	} kinds[] = {{"stage:", LP_SEL_STAGE},
		     {"range:", LP_SEL_RANGE},
		     {"lock:", LP_SEL_LOCK},
		     {"finding:", LP_SEL_FINDING}};
	size_t start = c->i, end = start;
	while (c->s[end] && c->s[end] != ')')
		end++;
	if (!c->s[end])
		return fail_at(c, end, "missing ')' after the selector");
	size_t len = end - start;
	while (len && isspace((unsigned char)c->s[start + len - 1]))
		len--;
	if (!len)
		return fail_at(c, start,
			       "empty selector (request, stage:NAME, range:NAME, lock:NAME, "
			       "finding:ID or a category)");
	const char *sel = c->s + start;
	c->i = end + 1;
	if (len == 7 && strncmp(sel, "request", 7) == 0) {
		e->sel = LP_SEL_REQUEST;
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		size_t pl = strlen(kinds[k].prefix);
		if (len >= pl && strncmp(sel, kinds[k].prefix, pl) == 0) {
			if (len == pl)
				return fail_at(c, start + pl, "a name must follow the ':'");
			e->sel = kinds[k].kind;
			e->arg = strndup(sel + pl, len - pl);
			return e->arg ? 0 : -ENOMEM;
		}
	}
	for (size_t k = 0; k < len; k++)
		if (!(isalnum((unsigned char)sel[k]) || sel[k] == '-' || sel[k] == '_'))
			return fail_at(c, start + k,
				       "unknown selector (request, stage:NAME, range:NAME, "
				       "lock:NAME, finding:ID or a category such as lock-wait)");
	e->sel = LP_SEL_CATEGORY;
	e->arg = strndup(sel, len);
	return e->arg ? 0 : -ENOMEM;
}

/* A category as the breakdown names it: lock-wait is lock_wait. */
static void category_key(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s", name);
	for (char *p = out; *p; p++)
		if (*p == '-')
			*p = '_';
}

static int category_known(const char *name)
{
	char want[64];
	category_key(name, want, sizeof(want));
	if (!strcmp(want, "cpu") || !strcmp(want, "on_cpu") || !strcmp(want, "preempted") ||
	    !strcmp(want, "cpu_or_preempted"))
		return 1;
	for (size_t k = 0; k < lp_breakdown_ncategories; k++)
		if (!strcmp(want, lp_breakdown_categories[k].name))
			return 1;
	return 0;
}

/* Closest of n names within 2 edits, or NULL. */
static const char *closest(const char *word, const char *const *names, size_t n)
{
	return lp_suggest(word, names, n);
}

/* "unknown WHAT 'ARG' (did you mean X?); the WHATs are A B C" into the
 * cursor's error, cut to its size. */
static int unknown_name(struct cursor *c, const char *what, const char *arg,
			const char *const *names, size_t n)
{
	char msg[512];
	size_t o = 0;
	const char *near = closest(arg, names, n);
	o += (size_t)snprintf(msg, sizeof(msg), "unknown %s '%.80s'", what, arg);
	if (near && o < sizeof(msg))
		o += (size_t)snprintf(msg + o, sizeof(msg) - o, " (did you mean %s?)", near);
	if (o < sizeof(msg))
		o += (size_t)snprintf(msg + o, sizeof(msg) - o, "; known:");
	for (size_t k = 0; k < n && o < sizeof(msg); k++)
		o += (size_t)snprintf(msg + o, sizeof(msg) - o, " %s", names[k]);
	return fail_domain(c, c->i, msg);
}

/* A finding is one of the rules' ids, a category one of the breakdown's:
 * a name neither knows can only be a typo, and its count would be 0. */
static int known_name(struct cursor *c, struct lp_expect *e)
{
	const char *names[64] = {0};
	size_t n = 0;
	if (e->sel == LP_SEL_FINDING && !lp_rule_find(e->arg)) {
		for (size_t k = 0; k < lp_nrules && n < ARRAY_SIZE(names); k++)
			names[n++] = lp_rules[k]->id;
		return unknown_name(c, "finding", e->arg, names, n);
	}
	if (e->sel == LP_SEL_CATEGORY && !category_known(e->arg)) {
		static const char *const rest[] = {"on-cpu", "preempted", "cpu-or-preempted",
						   "cpu"};
		char dashed[LP_BREAKDOWN_MAXCAT][32];
		for (size_t k = 0; k < lp_breakdown_ncategories && n < LP_BREAKDOWN_MAXCAT; k++) {
			snprintf(dashed[n], sizeof(dashed[n]), "%s",
				 lp_breakdown_categories[k].name);
			for (char *p = dashed[n]; *p; p++)
				*p = *p == '_' ? '-' : *p;
			names[n] = dashed[n];
			n++;
		}
		for (size_t k = 0; k < ARRAY_SIZE(rest); k++)
			names[n++] = rest[k];
		return unknown_name(c, "category", e->arg, names, n);
	}
	return 0;
}

static int parse_op(struct cursor *c, struct lp_expect *e)
{
	const char *p = c->s + c->i;
	for (int k = 5; k >= 0; k--) { /* two-character operators first */
		size_t l = strlen(op_names[k]);
		if (l == 2 && strncmp(p, op_names[k], 2) == 0) {
			e->op = (enum lp_cmp_op)k;
			c->i += 2;
			return 0;
		}
	}
	if (*p == '<' || *p == '>') {
		e->op = *p == '<' ? LP_OP_LT : LP_OP_GT;
		c->i++;
		return 0;
	}
	return fail_at(c, c->i, "expected a comparison: < <= > >= == !=");
}

/* A plain decimal number (digits, an optional fraction and exponent): no
 * sign, since no limit is negative, and no hex or inf that strtod takes.
 * Its length, 0 when there is none. */
static size_t decimal_len(const char *p)
{
	size_t i = 0, digits = 0;
	while (isdigit((unsigned char)p[i]))
		i++, digits++;
	if (p[i] == '.')
		for (i++; isdigit((unsigned char)p[i]); i++)
			digits++;
	if (!digits)
		return 0;
	if (p[i] == 'e' || p[i] == 'E') {
		size_t j = i + 1 + (p[i + 1] == '+' || p[i + 1] == '-');
		if (isdigit((unsigned char)p[j])) {
			while (isdigit((unsigned char)p[j]))
				j++;
			i = j;
		}
	}
	return i;
}

static int parse_value(struct cursor *c, struct lp_expect *e)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"%", 0.01}};
	const char *p = c->s + c->i;
	size_t vstart = c->i;
	if (*p == '-')
		return fail_domain(c, c->i,
				   "a limit cannot be negative: times, counts and shares are 0 or "
				   "more");
	if (*p == '+')
		return fail_at(c, c->i, "expected a number (no sign)");
	size_t nl = decimal_len(p);
	if (!nl)
		return fail_at(c, c->i, "expected a number");
	if (isalnum((unsigned char)p[nl]) && (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
		return fail_domain(c, c->i, "a limit is a decimal number, not hex");
	char *end;
	double v = strtod(p, &end);
	if ((size_t)(end - p) < nl || !isfinite(v))
		return fail_at(c, c->i, "expected a number");
	size_t ustart = c->i + nl;
	c->i = ustart;
	skip_ws(c);
	size_t ul = 0;
	while (c->s[c->i + ul] && !isspace((unsigned char)c->s[c->i + ul]))
		ul++;
	double scale = 1;
	int is_pct = 0, is_time = 0;
	if (ul) {
		size_t k;
		for (k = 0; k < ARRAY_SIZE(units); k++)
			if (strlen(units[k].unit) == ul &&
			    strncmp(c->s + c->i, units[k].unit, ul) == 0)
				break;
		if (k == ARRAY_SIZE(units))
			return fail_at(c, c->i, "unknown unit (ns, us, ms, s or %)");
		scale = units[k].scale;
		is_pct = k == 4;
		is_time = !is_pct;
		memcpy(e->unit, units[k].unit, ul);
	}
	if (e->metric == LP_M_COUNT && ul)
		return fail_at(c, c->i, "count takes a plain number, no unit");
	if (is_time_metric(e->metric) && !ul)
		return fail_at(c, c->i,
			       "a time needs a unit: ns, us, ms or s (e.g. 'p99(request) < 50ms')");
	if (e->metric == LP_M_SHARE && is_time)
		return fail_at(c, c->i, "share takes % or a fraction, not a time unit");
	if (is_time_metric(e->metric) && is_pct)
		return fail_at(c, c->i, "a time metric takes ns, us, ms or s, not %");
	e->value = v * scale;
	if (e->metric == LP_M_COUNT && e->value != floor(e->value))
		return fail_domain(c, vstart, "a count is a whole number");
	if (e->metric == LP_M_SHARE && e->value > 1)
		return fail_domain(c, vstart,
				   is_pct ? "a share is 0% to 100%"
					  : "a share is 0 to 1 (a fraction) or 0% to 100%");
	c->i += ul;
	return 0;
}

int lp_expect_parse(const char *text, struct lp_expect *e, size_t *pos, char *err, size_t errlen)
{
	struct cursor c = {text, 0, pos, err, errlen};
	int rc;
	memset(e, 0, sizeof(*e));
	skip_ws(&c);
	size_t ms = c.i;
	while (isalnum((unsigned char)text[c.i]))
		c.i++;
	int m = lp_metric_parse(text + ms, c.i - ms);
	if (m < 0)
		return fail_at(&c, ms,
			       "unknown metric (p50 p90 p99 p999 mean max min count total "
			       "share)");
	e->metric = (enum lp_metric)m;
	skip_ws(&c);
	if (text[c.i] != '(')
		return fail_at(&c, c.i, "expected '(' after the metric");
	c.i++;
	skip_ws(&c);
	if ((rc = parse_selector(&c, e)))
		goto bad;
	if (e->sel == LP_SEL_FINDING && e->metric != LP_M_COUNT) {
		rc = fail_at(&c, ms, "findings have only a count: count(finding:ID)");
		goto bad;
	}
	if (e->sel == LP_SEL_CATEGORY && e->metric != LP_M_SHARE && e->metric != LP_M_TOTAL) {
		rc = fail_at(&c, ms, "a category has share and total only");
		goto bad;
	}
	if ((rc = known_name(&c, e)))
		goto bad;
	skip_ws(&c);
	if ((rc = parse_op(&c, e)))
		goto bad;
	skip_ws(&c);
	if ((rc = parse_value(&c, e)))
		goto bad;
	skip_ws(&c);
	if (text[c.i]) {
		rc = fail_at(&c, c.i, "unexpected text after the value");
		goto bad;
	}
	if (!(e->text = strdup(text)))
		rc = -ENOMEM;
	if (!rc)
		return 0;
bad:
	lp_expect_free(e);
	return rc;
}

void lp_expect_free(struct lp_expect *e)
{
	free(e->text);
	free(e->arg);
	e->text = e->arg = NULL;
}

/* ---------------------------------------------------------------- evaluation */

static void load_categories(struct lp_expect_ctx *c, const char *request)
{
	struct lp_breakdown_opts o = {.request = request ? request : c->side.req_name};
	struct lp_breakdown bd;
	char err[256];
	memset(&bd, 0, sizeof(bd));
	if (lp_breakdown_compute(c->db, &o, &bd, err, sizeof(err)) == 0 && bd.has_ranges) {
		c->has_bd = 1;
		c->ncat = bd.ncat < 16 ? bd.ncat : 16;
		for (int k = 0; k < c->ncat; k++) {
			snprintf(c->cat_name[k], sizeof(c->cat_name[k]), "%s", bd.cat_name[k]);
			c->cat_ns[k] = (double)bd.req_cat_ns[k];
		}
	}
	lp_breakdown_free(&bd);
}

int lp_expect_ctx_open(const char *path, const char *request, struct lp_expect_ctx *c, char *err,
		       size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	if (lp_db_open_ro(path, &c->db, err, errlen))
		return -EINVAL;
	/* Without ranges, lock expectations still make sense: the side stays
	 * empty and request/stage ones report why. */
	char serr[512];
	if (lp_db_count(c->db, "ranges") > 0) {
		if (lp_side_load_requests(&path, 1, request, &c->side, serr, sizeof(serr))) {
			snprintf(err, errlen, "%s", serr);
			lp_expect_ctx_close(c);
			return -EINVAL;
		}
		for (size_t i = 0; i < c->side.req.n; i++)
			c->req_total_ns += c->side.req.v[i];
		c->request = request;
		c->bd_pending = 1;
	}
	return 0;
}

void lp_expect_ctx_close(struct lp_expect_ctx *c)
{
	lp_side_free(&c->side);
	sqlite3_close(c->db);
	c->db = NULL;
}

static int series_row(sqlite3_stmt *st, void *ctx)
{
	struct lp_series *s = ctx;
	if (LP_GROW(s->v, s->n, s->cap))
		return -ENOMEM;
	s->v[s->n++] = (double)sqlite3_column_int64(st, 0);
	return 0;
}

static int query_series(struct lp_expect_ctx *c, const char *sql, const char *arg,
			struct lp_series *s)
{
	struct lp_db_arg a = LP_DB_TEXT(arg);
	char err[256]; /* the caller words -EIO from sqlite3_errmsg */
	int rc = lp_db_query(c->db, sql, &a, 1, series_row, s, err, sizeof(err));
	if (rc)
		return rc;
	lp_sort_doubles(s->v, s->n);
	return 0;
}

static int count_findings(struct lp_expect_ctx *c, const char *id, struct lp_expect_result *r)
{
	char **ids = NULL;
	size_t n = 0;
	if (!lp_findings_provider) {
		snprintf(r->why, sizeof(r->why),
			 "findings not available: the bottleneck rules are not built into this "
			 "latprof");
		return -ENOENT;
	}
	if (lp_findings_provider(c->db, &ids, &n, r->why, sizeof(r->why)))
		return -EIO;
	r->measured = 0;
	for (size_t i = 0; i < n; i++) {
		r->measured += strcmp(ids[i], id) == 0;
		free(ids[i]);
	}
	free(ids);
	r->samples = n;
	return 0;
}

static int eval_category(struct lp_expect_ctx *c, const struct lp_expect *e,
			 struct lp_expect_result *r)
{
	char want[64];
	size_t k;
	snprintf(want, sizeof(want), "%s", e->arg);
	for (k = 0; want[k]; k++)
		if (want[k] == '-')
			want[k] = '_';
	if (c->bd_pending) {
		c->bd_pending = 0;
		load_categories(c, c->request);
	}
	if (!c->has_bd) {
		snprintf(r->why, sizeof(r->why),
			 "no request breakdown (the run has no NVTX ranges)");
		return -ENOENT;
	}
	/* `cpu` (older files): all the time no wait covers, whatever its split */
	int is_cpu = !strcmp(want, "cpu"), found = 0;
	double ns = 0;
	for (int i = 0; i < c->ncat; i++) {
		if (is_cpu
			? strcmp(c->cat_name[i], "on_cpu") && strcmp(c->cat_name[i], "preempted") &&
			      strcmp(c->cat_name[i], "cpu_or_preempted")
			: strcmp(c->cat_name[i], want))
			continue;
		found = 1;
		ns += c->cat_ns[i];
	}
	if (found) {
		r->samples = c->side.req.n;
		r->measured = e->metric == LP_M_TOTAL ? ns
			      : c->req_total_ns > 0   ? ns / c->req_total_ns
						      : NAN;
		return 0;
	}
	int o = snprintf(r->why, sizeof(r->why),
			 "category '%s' is not recorded by this latprof "
			 "(known:",
			 e->arg);
	for (int i = 0; i < c->ncat && o > 0 && (size_t)o < sizeof(r->why); i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s", c->cat_name[i]);
		for (char *p = name; *p; p++)
			if (*p == '_')
				*p = '-';
		o += snprintf(r->why + o, sizeof(r->why) - (size_t)o, " %s", name);
	}
	if (o > 0 && (size_t)o < sizeof(r->why))
		snprintf(r->why + o, sizeof(r->why) - (size_t)o, ")");
	return -ENOENT;
}

static int found_row(sqlite3_stmt *st, void *ctx)
{
	(void)st;
	*(int *)ctx = 1;
	return 0;
}

int lp_expect_check(const struct lp_expect_ctx *c, const struct lp_expect *e, char *err,
		    size_t errlen)
{
	if (e->sel == LP_SEL_STAGE && c->side.req.n && !lp_side_stage(&c->side, e->arg)) {
		const char *names[64] = {0};
		size_t n = 0;
		for (size_t k = 0; k < c->side.nstages && n < ARRAY_SIZE(names); k++)
			names[n++] = c->side.stages[k].name;
		const char *near = closest(e->arg, names, n);
		int o = snprintf(err, errlen, "no stage '%.80s' in the requests (%s) of %s", e->arg,
				 c->side.req_name ? c->side.req_name : "request", c->path);
		if (near && o > 0 && (size_t)o < errlen)
			o += snprintf(err + o, errlen - (size_t)o, " (did you mean %s?)", near);
		if (o > 0 && (size_t)o < errlen)
			o += snprintf(err + o, errlen - (size_t)o, "; its stages:%s",
				      n ? "" : " none");
		for (size_t k = 0; k < n && o > 0 && (size_t)o < errlen; k++)
			o += snprintf(err + o, errlen - (size_t)o, " %s", names[k]);
		return -ENOENT;
	}
	if (e->sel == LP_SEL_RANGE && lp_db_has_table(c->db, "ranges")) {
		struct lp_db_arg a = LP_DB_TEXT(e->arg);
		int found = 0;
		if (lp_db_query(c->db, "SELECT 1 FROM ranges_named WHERE name = ?1 LIMIT 1", &a, 1,
				found_row, &found, err, errlen))
			return -EIO;
		if (!found) {
			snprintf(err, errlen, "no range named '%.80s' in %s", e->arg, c->path);
			return -ENOENT;
		}
	}
	return 0;
}

static int compare(double a, enum lp_cmp_op op, double b)
{
	switch (op) {
	case LP_OP_LT:
		return a < b;
	case LP_OP_LE:
		return a <= b;
	case LP_OP_GT:
		return a > b;
	case LP_OP_GE:
		return a >= b;
	case LP_OP_EQ:
		return a == b;
	default:
		return a != b;
	}
}

static int need_requests(struct lp_expect_ctx *c, struct lp_expect_result *r)
{
	if (c->side.req.n)
		return 0;
	snprintf(r->why, sizeof(r->why), "%s has no NVTX ranges, so no requests", c->path);
	return -ENOENT;
}

/* Lock names as latprof diff matches them (lp_diff.c load_locks). */
#define LOCK_WAITS_SQL                                                                             \
	"SELECT w.dur_ns FROM lock_waits w JOIN locks l ON l.id = w.lock_id LEFT JOIN stacks k "   \
	"ON k.id = w.stack_id LEFT JOIN frames f ON f.id = k.top_frame WHERE coalesce(l.name, "    \
	"l.kind || ' at ' || coalesce(f.function, f.module, '?')) = ?1"

/*
 * The 95% interval of a quantile or mean the expectation checks: the
 * bootstrap over the requests of this run (lp_boot.h; one run, so it holds
 * no run-to-run noise). Quantiles with fewer than LP_DIFF_MIN_TAIL samples
 * beyond them on a side, and max/min, get none.
 */
static void interval(const struct lp_expect_ctx *c, const struct lp_expect *e,
		     const struct lp_series *s, struct lp_expect_result *r)
{
	double q = lp_metric_q(e->metric), *v;
	size_t below, above, nb = LP_DIFF_RESAMPLES;
	const double *runs[1] = {s->v};
	struct lp_boot_runs br;
	struct lp_rng rng;
	r->lo = r->hi = NAN;
	(void)c;
	if (isnan(q) || q == 0 || q == 1)
		return;
	lp_boot_tails(s->n, q, &below, &above);
	if (q < 0 ? s->n < LP_DIFF_MIN_SAMPLES
		  : below < LP_DIFF_MIN_TAIL || above < LP_DIFF_MIN_TAIL)
		return;
	if (!(v = malloc(nb * sizeof(*v))))
		return;
	lp_rng_seed(&rng, LP_DIFF_SEED);
	if (!lp_boot_runs_init(&br, runs, &s->n, 1) && !lp_boot_draw(&br, q, &rng, v, nb)) {
		lp_sort_doubles(v, nb);
		r->lo = v[(size_t)(0.025 * (double)(nb - 1))];
		r->hi = v[(size_t)ceil(0.975 * (double)(nb - 1))];
	}
	lp_boot_runs_free(&br);
	free(v);
}

void lp_expect_eval(struct lp_expect_ctx *c, const struct lp_expect *e, struct lp_expect_result *r)
{
	struct lp_series own = {0};
	const struct lp_series *s = NULL;
	int rc = 0;
	memset(r, 0, sizeof(*r));
	r->measured = r->lo = r->hi = NAN;
	switch (e->sel) {
	case LP_SEL_REQUEST:
		if (!(rc = need_requests(c, r)))
			s = &c->side.req;
		break;
	case LP_SEL_STAGE:
		if (!(rc = need_requests(c, r)) && !(s = lp_side_stage(&c->side, e->arg)))
			s = &own; /* no such stage: count 0, other metrics undefined */
		break;
	case LP_SEL_RANGE:
		rc = query_series(c, "SELECT end_ns - start_ns FROM ranges_named WHERE name = ?1",
				  e->arg, &own);
		s = &own;
		break;
	case LP_SEL_LOCK:
		if (lp_db_has_table(c->db, "lock_waits"))
			rc = query_series(c, LOCK_WAITS_SQL, e->arg, &own);
		s = &own;
		break;
	case LP_SEL_FINDING:
		rc = count_findings(c, e->arg, r);
		break;
	case LP_SEL_CATEGORY:
		rc = eval_category(c, e, r);
		break;
	}
	if (rc == -EIO && !r->why[0])
		snprintf(r->why, sizeof(r->why), "database error: %s", sqlite3_errmsg(c->db));
	if (!rc && s) {
		r->samples = s->n;
		if (e->metric == LP_M_SHARE) {
			double t = lp_metric_value(LP_M_TOTAL, s->v, s->n);
			r->measured = c->req_total_ns > 0 ? t / c->req_total_ns : NAN;
			if (isnan(r->measured))
				snprintf(r->why, sizeof(r->why),
					 "share needs requests (NVTX ranges)");
		} else {
			r->measured = lp_metric_value(e->metric, s->v, s->n);
			interval(c, e, s, r);
			if (isnan(r->measured))
				snprintf(r->why, sizeof(r->why), "no samples for %s:%s",
					 e->sel == LP_SEL_STAGE	  ? "stage"
					 : e->sel == LP_SEL_RANGE ? "range"
								  : "lock",
					 e->arg ? e->arg : "");
		}
	}
	free(own.v);
	if (rc || isnan(r->measured))
		r->status = LP_EXP_ERROR;
	else
		r->status = compare(r->measured, e->op, e->value) ? LP_EXP_PASS : LP_EXP_FAIL;
	/* The bound of the interval on the limit's side must pass too: else
	 * inconclusive, a failure in strict mode. */
	if (r->status == LP_EXP_PASS &&
	    (e->op == LP_OP_LT || e->op == LP_OP_LE || e->op == LP_OP_GT || e->op == LP_OP_GE)) {
		double b = e->op == LP_OP_LT || e->op == LP_OP_LE ? r->hi : r->lo;
		if (isnan(b) && e->sel != LP_SEL_FINDING && is_time_metric(e->metric) &&
		    !isnan(lp_metric_q(e->metric))) {
			r->status = c->strict ? LP_EXP_FAIL : LP_EXP_INCONCLUSIVE;
			r->strict_fail = 2;
		} else if (!isnan(b) && !compare(b, e->op, e->value)) {
			r->status = c->strict ? LP_EXP_FAIL : LP_EXP_INCONCLUSIVE;
			r->strict_fail = 1;
		}
	}
}
