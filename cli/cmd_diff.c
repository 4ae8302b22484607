/* SPDX-License-Identifier: MIT */
/* latprof diff: per-stage, per-metric intervals between runs; exit 1 on regression. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_cli.h"
#include "lp_diff.h"
#include "lp_diff_html.h"
#include "lp_report_diff.h"

struct diff_args {
	const char **base, **new_;
	size_t nbase, nnew;
	struct lp_diff_opts opts;
	const char *format;
	const char *output; /* -o FILE; NULL: stdout */
	int force;
};

/* "5%" and "0.5%" are percentages, and so is 0; a bare number other than 0
 * is refused, as a time without a unit is everywhere (5 could be 5% or 500%). */
static int parse_threshold(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%") != 0) || !(v >= 0) || isinf(v) ||
	    (!*end && v != 0))
		return -1;
	*out = v / 100;
	return 0;
}

/* Named metrics, or any quantile as p<percent> (p95, p99.5). */
static int parse_metrics(const char *s, struct lp_diff_opts *o)
{
	o->metrics = 0;
	o->nquant = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		int m = lp_metric_parse(s, len);
		char *end;
		if (m >= 0 && m <= LP_M_MIN) {
			o->metrics |= 1u << m;
		} else if (s[0] == 'p' && len > 1) {
			double pct = strtod(s + 1, &end);
			if (end != s + len || !(pct > 0 && pct < 100) || o->nquant == 8)
				return -1;
			o->quant[o->nquant++] = pct / 100;
		} else {
			return -1;
		}
		s += len + (s[len] == ',');
	}
	return o->metrics || o->nquant ? 0 : -1;
}

/* Value of "--opt VALUE" or "--opt=VALUE"; advances *i. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);
	if (strncmp(argv[*i], name, len) != 0)
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

/* The long options parse_args takes: the names a misspelt one is held to. */
static const char *const diff_options[] = {
    "alpha",	   "base",  "force",  "format",	 "inconclusive-exit", "metric", "new",
    "no-findings", "noise", "output", "request", "threshold",	      "vs"};

static int parse_args(int argc, char **argv, struct diff_args *a)
{
	const char ***list = NULL;
	size_t *nlist = NULL;
	const char *v;
	a->base = xcalloc((size_t)argc, sizeof(char *));
	a->new_ = xcalloc((size_t)argc, sizeof(char *));
	a->opts.threshold = 0.05;
	a->opts.alpha = 0.05;
	a->opts.noise = -1;
	a->opts.inconclusive_exit = LP_DIFF_EXIT_INCONCLUSIVE;
	a->format = "text";
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (strcmp(s, "--base") == 0) {
			list = &a->base;
			nlist = &a->nbase;
		} else if (strcmp(s, "--new") == 0 || strcmp(s, "--vs") == 0) {
			list = &a->new_;
			nlist = &a->nnew;
		} else if ((v = opt_value(argc, argv, &i, "--threshold"))) {
			if (parse_threshold(v, &a->opts.threshold))
				return lp_cli_usage_error(
				    "diff",
				    "bad --threshold '%s' (a percentage with its unit: 5%%)", v);
		} else if ((v = opt_value(argc, argv, &i, "--alpha"))) {
			char *end;
			a->opts.alpha = strtod(v, &end);
			if (end == v || *end || !(a->opts.alpha > 0 && a->opts.alpha < 1))
				return lp_cli_usage_error("diff",
							  "bad --alpha '%s' (0 < alpha < 1)", v);
		} else if ((v = opt_value(argc, argv, &i, "--metric"))) {
			if (parse_metrics(v, &a->opts))
				return lp_cli_usage_error(
				    "diff",
				    "bad --metric '%s' (p50,p90,p99,p999,mean,"
				    "max,min or any pN such as p95)",
				    v);
		} else if ((v = opt_value(argc, argv, &i, "--noise"))) {
			if (parse_threshold(v, &a->opts.noise))
				return lp_cli_usage_error(
				    "diff", "bad --noise '%s' (a percentage with its unit: 10%%)",
				    v);
		} else if ((v = opt_value(argc, argv, &i, "--inconclusive-exit"))) {
			if (strlen(v) != 1 || !strchr("013", v[0]))
				return lp_cli_usage_error(
				    "diff", "bad --inconclusive-exit '%s' (0, 1 or 3)", v);
			a->opts.inconclusive_exit = v[0] - '0';
		} else if ((v = opt_value(argc, argv, &i, "--request"))) {
			a->opts.request = v;
		} else if ((v = opt_value(argc, argv, &i, "--format"))) {
			a->format = v;
		} else if ((v = opt_value(argc, argv, &i, "--output")) ||
			   (v = opt_value(argc, argv, &i, "-o"))) {
			a->output = v;
		} else if (strcmp(s, "--no-findings") == 0) {
			lp_findings_provider = NULL; /* the rule engine reads every table */
		} else if (strcmp(s, "--force") == 0 || strcmp(s, "-f") == 0) {
			a->force = 1;
		} else if (s[0] == '-' && s[1]) {
			return lp_cli_bad_option_names("diff", s, diff_options,
						       sizeof(diff_options) /
							   sizeof(diff_options[0]));
		} else if (list) {
			(*list)[(*nlist)++] = s;
		} else {
			a->base[a->nbase++] = s; /* before --vs: base, or BASE NEW */
		}
	}
	if (!list && a->nbase > 2)
		return lp_cli_usage_error(
		    "diff", "more than two databases: put --vs between the "
			    "base runs and the new ones (B1.db B2.db --vs N1.db N2.db)");
	if (!list && a->nbase == 2)
		a->new_[a->nnew++] = a->base[--a->nbase];
	if (!a->nbase || !a->nnew)
		return lp_cli_usage_error(
		    "diff", "give BASE.db NEW.db, or BASE1.db BASE2.db... --vs NEW1.db NEW2.db...");
	if (strcmp(a->format, "text") && strcmp(a->format, "markdown") &&
	    strcmp(a->format, "json") && strcmp(a->format, "html"))
		return lp_cli_usage_error(
		    "diff", "--format is text, markdown, json or html (not '%s')", a->format);
	if (a->output) {
		const char **in = xcalloc(a->nbase + a->nnew, sizeof(*in));
		memcpy(in, a->base, a->nbase * sizeof(*in));
		memcpy(in + a->nbase, a->new_, a->nnew * sizeof(*in));
		int rc = lp_cli_out_check(a->output, a->force, 0, in, a->nbase + a->nnew);
		free(in);
		return rc;
	}
	return 0;
}

/* The chosen format to stdout or -o FILE; LP_EXIT_OK or LP_EXIT_USAGE. */
static int diff_write(const struct diff_args *a, const struct lp_side *base,
		      const struct lp_side *new_, const struct lp_diff *d)
{
	char err[1024];
	void *page = NULL;
	if (strcmp(a->format, "html") == 0 &&
	    !(page = lp_diff_html_build(base, new_, d, err, sizeof(err))))
		return lp_cli_error("%s", err);
	FILE *f = a->output ? lp_cli_fopen_out(a->output, a->force) : stdout;
	if (f && page)
		lp_diff_html_write(f, page);
	else if (f && strcmp(a->format, "json") == 0)
		lp_diff_write_json(f, d);
	else if (f && strcmp(a->format, "markdown") == 0)
		lp_diff_write_markdown(f, d);
	else if (f)
		lp_diff_write_text(f, d);
	lp_diff_html_free(page);
	if (!f)
		return LP_EXIT_USAGE;
	int bad = ferror(f) | fflush(f);
	if (f != stdout)
		bad |= fclose(f);
	if (bad)
		return lp_cli_error("cannot write %s", a->output ? a->output : "the output");
	return LP_EXIT_OK;
}

static int diff_cmd(int argc, char **argv)
{
	struct diff_args a = {0};
	struct lp_side base, new_;
	struct lp_diff d;
	char err[1024];
	int rc = parse_args(argc, argv, &a);
	if (rc)
		goto out;
	char req[256];
	if (!a.opts.request && a.nbase)
		a.opts.request = lp_cli_default_request(a.base[0], req, sizeof(req));
	if (lp_sides_load(a.base, a.nbase, a.new_, a.nnew, a.opts.request, &base, &new_, err,
			  sizeof(err)) ||
	    lp_diff_compute(&base, &new_, &a.opts, &d, err, sizeof(err))) {
		rc = lp_cli_error("%s", err);
	} else {
		rc = diff_write(&a, &base, &new_, &d);
		if (rc == LP_EXIT_OK)
			rc = lp_diff_exit_status(&d);
		lp_diff_free(&d);
	}
	lp_side_free(&base);
	lp_side_free(&new_);
out:
	free(a.base);
	free(a.new_);
	return rc;
}

const struct lp_cmd lp_cmd_diff = {
    .name = "diff",
    .run = diff_cmd,
    .summary = "compare runs per stage: regression, no regression, or inconclusive",
    .usage = "usage: latprof diff BASE.db NEW.db [options]\n"
	     "       latprof diff BASE1.db BASE2.db... --vs NEW1.db NEW2.db... [options]\n"
	     "       (--base A1.db... --new B1.db... also works)\n\n"
	     "Compares the request latency and each stage's per-request time between the\n"
	     "base runs and the new runs (one database per run).\n\n"
	     "  --threshold P%   smallest relative change that counts (default 5%)\n"
	     "  --alpha A        family-wise error rate; intervals are 1 - A (default 0.05)\n"
	     "  --metric LIST    p50,p90,p99,p999,mean,max,min or any pN such as p95\n"
	     "                   (default p50,p99)\n"
	     "  --noise P%       noise floor where a side has one run (default 10%); a\n"
	     "                   percentage needs its % (5 alone is refused, 0 is 0)\n"
	     "  --inconclusive-exit N  exit status when inconclusive: 3 (default), 0 to\n"
	     "                   pass or 1 to fail a CI gate on it\n"
	     "  --request NAME   outermost range that is a request (default: most frequent)\n"
	     "  --format F       text, markdown (for a PR comment), json, or html (one\n"
	     "                   self-contained page: base and new side by side, charts)\n"
	     "  --no-findings    skip the bottleneck findings and the time by category of\n"
	     "                   both sides (the rule engine and the breakdown take seconds\n"
	     "                   on a million requests)\n"
	     "  -o, --output FILE  write there instead of stdout\n"
	     "  -f, --force      overwrite FILE if it exists\n\n"
	     "Each row (scope x metric) gets its own estimate and 1 - alpha interval of the\n"
	     "ratio new/base by bootstrap (2000+ resamples, fixed seed). With 2+ runs on both\n"
	     "sides the bootstrap resamples runs, then requests, so run-to-run noise is in\n"
	     "the interval; with one run on a side that noise is unknown and the interval\n"
	     "is widened by the noise floor. A regression needs the whole interval above\n"
	     "+threshold and p <= alpha after Holm-Bonferroni across the tested rows. A\n"
	     "quantile with fewer than 10 requests below or above it on a side (a mean:\n"
	     "fewer than 20 requests) is 'not enough data', never a verdict.\n\n"
	     "The answer is one of three: regression (a row confirmed); inconclusive (a row\n"
	     "whose estimate or interval points to a regression the test cannot confirm,\n"
	     "or whose growth is preemption while its on-CPU time did not grow; the reasons\n"
	     "and what to do are printed); or no regression larger than the resolution\n"
	     "printed (the highest upper bound of the intervals). A noise warning is\n"
	     "printed when preemption or the run-to-run spread is large against the effect.\n\n"
	     "Exit status: 1 on a regression, 3 inconclusive (see --inconclusive-exit),\n"
	     "0 no regression, 2 on bad input.\n",
};
