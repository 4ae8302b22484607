/* SPDX-License-Identifier: MIT */
/* latprof check: assert expectations on a recorded run; exit 1 when one fails. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_cli.h"
#include "lp_db.h"
#include "lp_diff.h"
#include "lp_expect.h"
#include "lp_out.h"

struct check_item {
	struct lp_expect e;
	struct lp_expect_result r;
};

struct check_args {
	const char *db, *junit, *request;
	int strict, force;
	int inconclusive_exit;
	struct check_item *items;
	size_t n, cap;
};

/* One clear error with the expression and a caret under the fault. */
static int bad_expr(const char *where, const char *text, size_t pos, const char *msg)
{
	fprintf(stderr, "latprof: %s%sbad expectation: %s\n  %s\n  %*s^\n", where ? where : "",
		where ? ": " : "", msg, text, (int)pos, "");
	return LP_EXIT_USAGE;
}

/* An expectation that parses but cannot mean anything: one line. */
static int bad_meaning(const char *where, const char *text, const char *msg)
{
	return lp_cli_error("%s%sexpectation '%s': %s", where ? where : "", where ? ": " : "", text,
			    msg);
}

static int add_expr(struct check_args *a, const char *text, const char *where)
{
	char err[1024];
	size_t pos = 0;
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 8;
		a->items = xrealloc(a->items, a->cap * sizeof(*a->items));
	}
	int rc = lp_expect_parse(text, &a->items[a->n].e, &pos, err, sizeof(err));
	if (rc == -EDOM)
		return bad_meaning(where, text, err);
	if (rc)
		return bad_expr(where, text, pos, err);
	a->n++;
	return 0;
}

/* One expectation per line; blank lines and '#' comments skipped. */
static int add_file(struct check_args *a, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	if (!f)
		return lp_cli_error("cannot open %s: %s", path, strerror(errno));
	while (!rc && getline(&line, &cap, f) >= 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		const char *p = line + strspn(line, " \t");
		if (!*p || *p == '#')
			continue;
		char *where = xasprintf("%s:%d", path, lineno);
		rc = add_expr(a, line, where);
		free(where);
	}
	free(line);
	fclose(f);
	return rc;
}

/* The long options parse_args takes: the names a misspelt one is held to. */
static const char *const check_options[] = {
    "expect", "expect-file", "junit", "request", "strict", "force", "inconclusive-exit"};

static int parse_args(int argc, char **argv, struct check_args *a)
{
	int rc = 0;
	a->inconclusive_exit = LP_DIFF_EXIT_INCONCLUSIVE;
	for (int i = 1; i < argc && !rc; i++) {
		const char *s = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(s, "--expect") || !strcmp(s, "--expect-file") ||
		    !strcmp(s, "--junit") || !strcmp(s, "--request") ||
		    !strcmp(s, "--inconclusive-exit")) {
			if (!v)
				return lp_cli_usage_error("check", "%s needs a value", s);
			i++;
			if (!strcmp(s, "--expect"))
				rc = add_expr(a, v, NULL);
			else if (!strcmp(s, "--expect-file"))
				rc = add_file(a, v);
			else if (!strcmp(s, "--junit"))
				a->junit = v;
			else if (!strcmp(s, "--inconclusive-exit") &&
				 (strlen(v) != 1 || !strchr("013", v[0])))
				return lp_cli_usage_error(
				    "check", "bad --inconclusive-exit '%s' (0, 1 or 3)", v);
			else if (!strcmp(s, "--inconclusive-exit"))
				a->inconclusive_exit = v[0] - '0';
			else
				a->request = v;
		} else if (!strcmp(s, "--strict")) {
			a->strict = 1;
		} else if (!strcmp(s, "--force") || !strcmp(s, "-f")) {
			a->force = 1;
		} else if (s[0] == '-' && s[1]) {
			return lp_cli_bad_option_names("check", s, check_options,
						       sizeof(check_options) /
							   sizeof(check_options[0]));
		} else if (!a->db) {
			a->db = s;
		} else {
			return lp_cli_usage_error("check", "give one database (extra '%s')", s);
		}
	}
	if (rc)
		return rc;
	if (!a->db)
		return lp_cli_usage_error("check", "give the database to check");
	if (!a->n)
		return lp_cli_usage_error("check", "give at least one --expect or --expect-file");
	if (a->junit && lp_cli_out_check(a->junit, a->force, 0, &a->db, 1))
		return LP_EXIT_USAGE;
	return 0;
}

static const char *fmt_measured(const struct check_item *it, char *buf, size_t len)
{
	double v = it->r.measured;
	if (it->e.metric == LP_M_COUNT)
		snprintf(buf, len, "%.0f", v);
	else if (it->e.metric == LP_M_SHARE)
		snprintf(buf, len, "%.2f%%", v * 100);
	else
		lp_fixed_ns(v, buf, len);
	return buf;
}

static const char *status_name(enum lp_expect_status s)
{
	return s == LP_EXP_PASS		  ? "PASS"
	       : s == LP_EXP_FAIL	  ? "FAIL"
	       : s == LP_EXP_INCONCLUSIVE ? "INCONCLUSIVE"
					  : "ERROR";
}

/* "measured 41.20 ms, 95% CI 38.00 ms - 47.90 ms, from 1200 samples" */
static const char *fmt_result(const struct check_item *it, char *buf, size_t len)
{
	char m[32], lo[32], hi[32];
	fmt_measured(it, m, sizeof(m));
	if (isnan(it->r.lo)) {
		snprintf(buf, len, "measured %s (%zu samples%s)", m, it->r.samples,
			 it->r.strict_fail != 2 ? ""
			 : it->r.status == LP_EXP_FAIL
			     ? "; strict: too few beyond the quantile for an interval"
			     : "; too few beyond the quantile for an interval: record more "
			       "requests");
		return buf;
	}
	int req = it->e.sel == LP_SEL_REQUEST || it->e.sel == LP_SEL_STAGE;
	int o =
	    snprintf(buf, len, "measured %s, 95%% CI %s - %s, from %zu %s", m,
		     lp_fixed_ns(it->r.lo, lo, sizeof(lo)), lp_fixed_ns(it->r.hi, hi, sizeof(hi)),
		     it->r.samples, req ? "requests" : "samples");
	if (it->r.strict_fail == 1 && o > 0 && (size_t)o < len)
		snprintf(buf + o, len - (size_t)o, " (%sthe interval's %s bound misses the limit)",
			 it->r.status == LP_EXP_FAIL ? "strict: " : "",
			 it->e.op == LP_OP_LT || it->e.op == LP_OP_LE ? "upper" : "lower");
	return buf;
}

static void print_item(const struct check_item *it)
{
	char b[256];
	printf("%-5s %s", status_name(it->r.status), it->e.text);
	if (it->r.status == LP_EXP_ERROR)
		printf("  (%s)\n", it->r.why);
	else
		printf("  %s\n", fmt_result(it, b, sizeof(b)));
}

static int write_junit(const struct check_args *a, int fails, int errors, int unsure)
{
	FILE *f = lp_cli_fopen_out(a->junit, a->force);
	char b[64];
	if (!f)
		return LP_EXIT_USAGE;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
		"<testsuite name=\"latprof check\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" "
		"skipped=\"%d\">\n",
		a->n, fails, errors, unsure);
	for (size_t i = 0; i < a->n; i++) {
		const struct check_item *it = &a->items[i];
		fputs("  <testcase classname=\"latprof.check.", f);
		lp_html_str(f, a->db);
		fputs("\" name=\"", f);
		lp_html_str(f, it->e.text);
		fputs("\">", f);
		if (it->r.status == LP_EXP_FAIL) {
			fputs("<failure message=\"measured ", f);
			lp_html_str(f, fmt_measured(it, b, sizeof(b)));
			char res[256];
			fprintf(f, "\">");
			lp_html_str(f, fmt_result(it, res, sizeof(res)));
			fputs("; expected ", f);
			lp_html_str(f, it->e.text);
			fputs("</failure>", f);
		} else if (it->r.status == LP_EXP_INCONCLUSIVE) {
			char res[256];
			fputs("<skipped message=\"inconclusive: ", f);
			lp_html_str(f, fmt_result(it, res, sizeof(res)));
			fputs("\"/>", f);
		} else if (it->r.status == LP_EXP_ERROR) {
			fputs("<error message=\"", f);
			lp_html_str(f, it->r.why);
			fputs("\"/>", f);
		} else {
			fprintf(f, "<system-out>measured %s</system-out>",
				fmt_measured(it, b, sizeof(b)));
		}
		fputs("</testcase>\n", f);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
	if (fclose(f))
		return lp_cli_error("cannot write %s: %s", a->junit, strerror(errno));
	return 0;
}

static int check_cmd(int argc, char **argv)
{
	struct check_args a = {0};
	struct lp_expect_ctx ctx;
	char err[1024];
	int fails = 0, errors = 0, unsure = 0;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		goto out;
	char req[256];
	if (!a.request)
		a.request = lp_cli_default_request(a.db, req, sizeof(req));
	if (lp_expect_ctx_open(a.db, a.request, &ctx, err, sizeof(err))) {
		rc = lp_cli_error("%s", err);
		goto out;
	}
	ctx.strict = a.strict;
	/* Every name checked before any verdict: a typo is never a pass. */
	for (size_t i = 0; i < a.n; i++)
		if (lp_expect_check(&ctx, &a.items[i].e, err, sizeof(err))) {
			rc = bad_meaning(NULL, a.items[i].e.text, err);
			lp_expect_ctx_close(&ctx);
			goto out;
		}
	for (size_t i = 0; i < a.n; i++) {
		lp_expect_eval(&ctx, &a.items[i].e, &a.items[i].r);
		fails += a.items[i].r.status == LP_EXP_FAIL;
		errors += a.items[i].r.status == LP_EXP_ERROR;
		unsure += a.items[i].r.status == LP_EXP_INCONCLUSIVE;
	}
	/* a lookup that answered its default for a failed read: no verdicts */
	if (lp_db_fault(ctx.db, err, sizeof(err))) {
		lp_expect_ctx_close(&ctx);
		rc = lp_cli_error("%s: %s", a.db, err);
		goto out;
	}
	for (size_t i = 0; i < a.n; i++)
		print_item(&a.items[i]);
	lp_expect_ctx_close(&ctx);
	printf("%zu expectation%s: %zu passed, %d failed, %d inconclusive, %d not evaluated\n", a.n,
	       a.n == 1 ? "" : "s", a.n - (size_t)fails - (size_t)errors - (size_t)unsure, fails,
	       unsure, errors);
	if (a.junit && (rc = write_junit(&a, fails, errors, unsure)))
		goto out;
	/* Not evaluable (unknown stage, findings unavailable) is an input error. */
	rc = errors   ? LP_EXIT_USAGE
	     : fails  ? LP_EXIT_FAIL
	     : unsure ? a.inconclusive_exit
		      : LP_EXIT_OK;
out:
	for (size_t i = 0; i < a.n; i++)
		lp_expect_free(&a.items[i].e);
	free(a.items);
	return rc;
}

const struct lp_cmd lp_cmd_check = {
    .name = "check",
    .run = check_cmd,
    .summary = "assert latency expectations on a run; exit 1 when one fails",
    .usage =
	"usage: latprof check FILE.db --expect EXPR... [--expect-file F] [--junit OUT.xml]\n"
	"                     [--request NAME] [--strict] [--inconclusive-exit N] [--force]\n\n"
	"EXPR is metric(selector) op value[unit], e.g.\n"
	"  'p99(request) < 50ms'  'p50(stage:infer) < 8ms'  'share(lock-wait) < 20%'\n"
	"  'count(lock:queue_lock) <= 100'  'count(finding:lock-contention) == 0'\n"
	"metrics:   p50 p90 p99 p999 mean max min count total share\n"
	"selectors: request, stage:NAME, range:NAME, lock:NAME, finding:ID, or a time\n"
	"           category: gil-wait, lock-wait, cond-wait, idle-wait, join-wait,\n"
	"           cpu (CUDA ones when recorded)\n"
	"ops: < <= > >= == !=   units: ns us ms s (time, required), % (share)\n"
	"share is the selector's total time over all request time. --expect-file\n"
	"takes one expression per line ('#' starts a comment). An existing OUT.xml\n"
	"is overwritten only with -f/--force (never FILE.db).\n\n"
	"A quantile or mean is printed with its 95% interval (bootstrap over the\n"
	"run's requests), e.g. 'measured 41.20 ms, 95% CI 38.00 ms - 47.90 ms, from\n"
	"1200 samples'. Each expectation is PASS, FAIL (the measured value misses the\n"
	"limit) or INCONCLUSIVE: the measured value meets a bound (<, <=, >, >=) but\n"
	"the interval's far end does not (the upper end for < and <=), or a quantile\n"
	"has fewer than 10 samples beyond it and so no interval. --strict makes\n"
	"inconclusive a failure; --inconclusive-exit N sets its exit status (3 by\n"
	"default; 0 to let it pass, 1 to fail). JUnit writes it as skipped.\n\n"
	"Every expectation is checked before any is evaluated: a finding id or\n"
	"category latprof does not know, a stage or range the run does not have, a\n"
	"negative or hex limit, a share above 100% or a fractional count is refused\n"
	"with one line naming it (a lock name is not checked: the database holds\n"
	"only contended locks, so one that never waited counts 0).\n\n"
	"Exit status: 0 all pass, 1 one failed, 3 none failed but one is inconclusive,\n"
	"2 bad input, a refused expectation or one that cannot be evaluated (no NVTX\n"
	"ranges, findings not available). latprof diff uses the same 0, 1, 3.\n",
};
