/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_plot.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lp_out.h"

const char *const lp_plot_ext[] = {"svg", "png", "pdf"};

static const char *const lp_plot_term[] = {
    "svg size 900,420 dynamic font 'sans,11' background '#ffffff'",
    "pngcairo size 900,420 font 'sans,10' background '#ffffff'",
    "pdfcairo size 9in,4.2in font 'sans,10'",
};

const char *lp_plot_gnuplot(void)
{
	static char path[4096];
	const char *p = getenv("PATH");
	while (p && *p) {
		size_t n = strcspn(p, ":");
		snprintf(path, sizeof(path), "%.*s/gnuplot", (int)(n ? n : 1), n ? p : ".");
		if (access(path, X_OK) == 0)
			return path;
		p += n + (p[n] == ':');
	}
	return NULL;
}

void lp_plot_gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		int n = *p < 0x80 ? 1 : lp_utf8_len(p);
		if (!n) {
			fputc('?', f);
			p++;
			continue;
		}
		if (*p == '\'')
			fputs("''", f);
		else if (*p >= 0x20 && *p != 0x7f)
			fwrite(p, 1, (size_t)n, f);
		p += n;
	}
	fputc('\'', f);
}

static void gp_head(FILE *f, const char *name, const char *title, enum lp_plot_fmt fmt)
{
	fprintf(f, "# latprof chart: %s. Run from this directory: gnuplot %s.gp\n", title, name);
	fprintf(f, "set terminal %s\nset output '%s.%s'\n", lp_plot_term[fmt], name,
		lp_plot_ext[fmt]);
	fprintf(f, "set title '%s' noenhanced\nset grid\nset key outside right top noenhanced\n",
		title);
}

static double plot_ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* ---- latency over time ---- */

static const char *lat_skip(const struct lp_plot_input *in)
{
	return in->ts->nreq ? NULL : "no request ranges (the run has no NVTX ranges)";
}

/*
 * A point per request is exact but grows with the run: 20 M ranges made a
 * 2 GB page. Above LP_LAT_FULL requests the chart keeps, per column of
 * 1/LP_LAT_COLS of the run, its fastest and its slowest request (the
 * band, outliers included), plus the LP_LAT_SLOWEST slowest of the run:
 * at most 2 * LP_LAT_COLS + LP_LAT_SLOWEST points whatever the run's size.
 */
#define LP_LAT_FULL 4000
#define LP_LAT_COLS 1000
#define LP_LAT_SLOWEST 200

size_t lp_plot_lat_points(const struct lp_timeseries *ts)
{
	return ts->nreq <= LP_LAT_FULL ? ts->nreq : 0;
}

/* Min-heap of request indices by latency: the k slowest seen so far. */
static void heap_push(const struct lp_ts_req *req, size_t *heap, size_t *n, size_t k, size_t i)
{
	size_t at;
	if (*n < k) {
		at = (*n)++;
	} else if (req[i].dur_ns > req[heap[0]].dur_ns) {
		at = 0; /* replace the root, sift down */
		for (;;) {
			size_t c = 2 * at + 1;
			if (c >= *n)
				break;
			if (c + 1 < *n && req[heap[c + 1]].dur_ns < req[heap[c]].dur_ns)
				c++;
			if (req[heap[c]].dur_ns >= req[i].dur_ns)
				break;
			heap[at] = heap[c];
			at = c;
		}
		heap[at] = i;
		return;
	} else {
		return;
	}
	while (at && req[heap[(at - 1) / 2]].dur_ns > req[i].dur_ns) { /* sift up */
		heap[at] = heap[(at - 1) / 2];
		at = (at - 1) / 2;
	}
	heap[at] = i;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* Indices (ascending, so by start) of the requests drawn; *n gets how many. */
static size_t *lat_pick(const struct lp_timeseries *ts, size_t *n)
{
	size_t cap = 2 * LP_LAT_COLS + LP_LAT_SLOWEST, k = 0, nheap = 0;
	size_t *pick = malloc(cap * sizeof(*pick));
	size_t *lo = malloc(2 * LP_LAT_COLS * sizeof(*lo)), *hi = lo ? lo + LP_LAT_COLS : NULL;
	if (!pick || !lo) {
		free(pick);
		free(lo);
		*n = 0;
		return NULL;
	}
	for (size_t c = 0; c < 2 * LP_LAT_COLS; c++)
		lo[c] = SIZE_MAX;
	/* Columns over the requests' own time span (sorted by start). */
	int64_t t0 = ts->req[0].start_ns, t1 = ts->req[ts->nreq - 1].start_ns;
	double span = (double)(t1 > t0 ? t1 - t0 : 1);
	for (size_t i = 0; i < ts->nreq; i++) {
		double x = (double)(ts->req[i].start_ns - t0) / span * LP_LAT_COLS;
		size_t c = x <= 0 ? 0 : x >= LP_LAT_COLS ? LP_LAT_COLS - 1 : (size_t)x;
		if (lo[c] == SIZE_MAX || ts->req[i].dur_ns < ts->req[lo[c]].dur_ns)
			lo[c] = i;
		if (hi[c] == SIZE_MAX || ts->req[i].dur_ns > ts->req[hi[c]].dur_ns)
			hi[c] = i;
		heap_push(ts->req, pick + 2 * LP_LAT_COLS, &nheap, LP_LAT_SLOWEST, i);
	}
	k = 2 * LP_LAT_COLS + nheap;
	memcpy(pick, lo, 2 * LP_LAT_COLS * sizeof(*pick));
	free(lo);
	qsort(pick, k, sizeof(*pick), cmp_size);
	size_t m = 0;
	for (size_t i = 0; i < k && pick[i] != SIZE_MAX; i++)
		if (!m || pick[m - 1] != pick[i])
			pick[m++] = pick[i];
	*n = m;
	return pick;
}

static void lat_row(FILE *f, const struct lp_timeseries *ts, size_t i)
{
	fprintf(f, "%lld %lld %lld\n", (long long)(ts->req[i].start_ns - ts->start_ns),
		(long long)ts->req[i].dur_ns, (long long)ts->req[i].range_id);
}

static void lat_dat(FILE *f, const void *arg)
{
	const struct lp_plot_input *in = arg;
	const struct lp_timeseries *ts = in->ts;
	fprintf(f, "# requests %zu p50_ns %lld p90_ns %lld p99_ns %lld\n", ts->nreq,
		(long long)ts->p50_ns, (long long)ts->p90_ns, (long long)ts->p99_ns);
	if (lp_plot_lat_points(ts)) {
		fputs("# start_ns_since_run_start latency_ns range_id\n", f);
		for (size_t i = 0; i < ts->nreq; i++)
			lat_row(f, ts, i);
		return;
	}
	size_t n;
	size_t *pick = lat_pick(ts, &n);
	fprintf(f,
		"# downsampled: per 1/%d of the run its fastest and slowest request, and the "
		"%d slowest of the run: %zu of %zu requests\n",
		LP_LAT_COLS, LP_LAT_SLOWEST, n, ts->nreq);
	fputs("# start_ns_since_run_start latency_ns range_id\n", f);
	for (size_t i = 0; i < n; i++)
		lat_row(f, ts, pick[i]);
	free(pick);
}

static void lat_gp(FILE *f, const void *arg, const char *name)
{
	const struct lp_plot_input *in = arg;
	const struct lp_timeseries *ts = in->ts;
	fprintf(f, "p50 = %.6f\np99 = %.6f\n", plot_ms(ts->p50_ns), plot_ms(ts->p99_ns));
	fputs("set xlabel 'time since run start (s)'\nset ylabel 'request latency (ms)'\n"
	      "set yrange [0:*]\n",
	      f);
	char title[160];
	if (lp_plot_lat_points(ts) || ts->nreq == 0)
		snprintf(title, sizeof(title), "request");
	else
		snprintf(title, sizeof(title),
			 "%zu requests: fastest and slowest per 1/%d of the "
			 "run, %d slowest",
			 ts->nreq, LP_LAT_COLS, LP_LAT_SLOWEST);
	fprintf(
	    f,
	    "plot '%s.dat' using ($1/1e9):($2/1e6) with points pt 7 ps 0.4 lc rgb '#4477aa' "
	    "title '%s', \\\n"
	    "     p50 with lines lw 2 lc rgb '#228833' title sprintf('p50 %%.3g ms', p50), \\\n"
	    "     p99 with lines lw 2 dt 2 lc rgb '#ee6677' title sprintf('p99 %%.3g ms', p99)\n",
	    name, title);
}

/* ---- latency CDF ---- */

static const char *cdf_skip(const struct lp_plot_input *in)
{
	return in->ts->nreq >= 2 ? NULL : "fewer than 2 requests";
}

#define LP_CDF_POINTS 2000

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void lp_plot_cdf_rows(FILE *f, const double *sorted, size_t n)
{
	size_t step = n > LP_CDF_POINTS ? n / LP_CDF_POINTS : 1;
	for (size_t i = 0; i < n; i += step)
		fprintf(f, "%lld %.6f\n", (long long)sorted[i], (double)(i + 1) / (double)n);
	if (n && (n - 1) % step)
		fprintf(f, "%lld 1.000000\n", (long long)sorted[n - 1]);
}

static void cdf_dat(FILE *f, const void *arg)
{
	const struct lp_plot_input *in = arg;
	const struct lp_timeseries *ts = in->ts;
	size_t n = ts->nreq;
	double *d = malloc(n * sizeof(*d));
	if (!d)
		return;
	for (size_t i = 0; i < n; i++)
		d[i] = (double)ts->req[i].dur_ns;
	qsort(d, n, sizeof(*d), cmpd);
	fputs("# latency_ns fraction_of_requests_at_or_below\n", f);
	lp_plot_cdf_rows(f, d, n);
	free(d);
}

void lp_plot_cdf_axes(FILE *f, double min_ns, double max_ns, double p50_ns)
{
	/* a log axis when the tail spans an order of magnitude past the median */
	int logx = min_ns > 0 && (max_ns >= 10 * p50_ns || max_ns >= 100 * min_ns);
	fprintf(f, "%sset logscale x\n", logx ? "" : "# ");
	fputs("set xlabel 'request latency (ms)'\nset ylabel 'fraction of requests'\n"
	      "set yrange [0:1.02]\nset key bottom right inside\n",
	      f);
	fprintf(f, "set arrow from graph 0, first 0.99 to graph 1, first 0.99 nohead dt 3\n");
}

static void cdf_gp(FILE *f, const void *arg, const char *name)
{
	const struct lp_plot_input *in = arg;
	const struct lp_timeseries *ts = in->ts;
	int64_t mn = INT64_MAX, mx = 0;
	for (size_t i = 0; i < ts->nreq; i++) {
		mn = ts->req[i].dur_ns < mn ? ts->req[i].dur_ns : mn;
		mx = ts->req[i].dur_ns > mx ? ts->req[i].dur_ns : mx;
	}
	lp_plot_cdf_axes(f, (double)mn, (double)mx, (double)ts->p50_ns);
	fprintf(f,
		"plot '%s.dat' using ($1/1e6):2 with steps lw 2 lc rgb '#4477aa' "
		"title 'CDF'\n",
		name);
}

/* ---- stage bars at p50 / p90 / p99 ---- */

static const char *stage_skip(const struct lp_plot_input *in)
{
	return in->bd && in->bd->has_ranges && in->bd->nstages ? NULL : "no request stages";
}

/* A bar segment per stage is readable for a handful of stages: with more
 * than LP_STAGE_MAX the chart shows those with the largest share. */
#define LP_STAGE_MAX 16

static int share_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x > y ? -1 : x < y;
}

unsigned char *lp_plot_top_stages(const struct lp_breakdown *b, size_t k)
{
	unsigned char *on = calloc(b->nstages + 1, 1);
	double *sh = malloc((b->nstages + 1) * sizeof(*sh));
	if (!on || !sh) {
		free(on);
		free(sh);
		return NULL;
	}
	for (size_t i = 0; i < b->nstages; i++)
		sh[i] = b->stages[i].share;
	double cut = -1;
	if (b->nstages > k && k) {
		qsort(sh, b->nstages, sizeof(*sh), share_desc);
		cut = sh[k - 1];
	}
	for (size_t i = 0, n = 0; i < b->nstages && n < k; i++)
		if (b->stages[i].share >= cut) {
			on[i] = 1;
			n++;
		}
	free(sh);
	return on;
}

static unsigned char *stage_on(const struct lp_breakdown *b)
{
	return lp_plot_top_stages(b, LP_STAGE_MAX);
}

static void stage_dat(FILE *f, const void *arg)
{
	const struct lp_plot_input *in = arg;
	const struct lp_breakdown *b = in->bd;
	fputs("# per stage: its p50, p90 and p99 per-request time (ns), as report --breakdown\n",
	      f);
	fputs("# rows: percentile; columns: stage 1..N in the order of the script's titles, then\n"
	      "# the whole request's own percentile (stages peak in different requests: their\n"
	      "# percentiles do not add up to the request's)\n",
	      f);
	unsigned char *on = stage_on(b);
	if (!on)
		return;
	if (b->nstages > LP_STAGE_MAX)
		fprintf(f, "# the %d stages with the largest share of %zu\n", LP_STAGE_MAX,
			b->nstages);
	static const char *const lbl[] = {"p50", "p90", "p99"};
	for (int r = 0; r < 3; r++) {
		fputs(lbl[r], f);
		for (size_t s = 0; s < b->nstages; s++) {
			if (!on[s])
				continue;
			const struct lp_dist *st = &b->stages[s].st;
			int64_t v = r == 0 ? st->p50 : r == 1 ? st->p90 : st->p99;
			fprintf(f, " %lld", (long long)v);
		}
		const struct lp_dist *rq = &b->req;
		fprintf(f, " %lld\n", (long long)(r == 0 ? rq->p50 : r == 1 ? rq->p90 : rq->p99));
	}
	free(on);
}

static void stage_gp(FILE *f, const void *arg, const char *name)
{
	const struct lp_plot_input *in = arg;
	const struct lp_breakdown *b = in->bd;
	fputs("# Each bar is that stage's own percentile, side by side and never stacked:\n"
	      "# stages peak in different requests, so their percentiles do not add up; the\n"
	      "# last bar of each group is the whole request's percentile.\n",
	      f);
	fputs("set style data histograms\nset style histogram clustered gap 1\n"
	      "set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
	      "set ylabel 'per-request stage time (ms)'\nset yrange [0:*]\n",
	      f);
	unsigned char *on = stage_on(b);
	if (!on)
		return;
	if (b->nstages > LP_STAGE_MAX)
		fprintf(f,
			"set label 'the %d stages with the largest share of %zu' at graph 0, "
			"graph -0.12 noenhanced\n",
			LP_STAGE_MAX, b->nstages);
	fputs("plot ", f);
	for (size_t s = 0, col = 0; s < b->nstages; s++) {
		if (!on[s])
			continue;
		const struct lp_breakdown_stage *st = &b->stages[s];
		fprintf(f, "%s'%s.dat' using ($%zu/1e6)%s title ", col ? ", \\\n     " : "", name,
			col + 2, col ? "" : ":xtic(1)");
		col++;
		if (st->domain && *st->domain && !st->unattributed) {
			char *t;
			if (asprintf(&t, "%s::%s", st->domain, st->name) >= 0) {
				lp_plot_gp_str(f, t);
				free(t);
			}
		} else {
			lp_plot_gp_str(f, st->name);
		}
		fputs(" noenhanced", f);
	}
	size_t ncol = 0;
	for (size_t s = 0; s < b->nstages; s++)
		ncol += on[s];
	fprintf(f, ", \\\n     '%s.dat' using ($%zu/1e6) title 'whole request' lc rgb '#bbbbbb'\n",
		name, ncol + 2);
	free(on);
}

/* ---- utilization heatmap ---- */

#define LP_HEAT_MAXLANES 48

static const char *util_skip(const struct lp_plot_input *in)
{
	return in->ts->nlanes ? NULL : "no threads or GPU streams recorded";
}

static size_t util_n(const struct lp_timeseries *ts)
{
	return ts->nlanes < LP_HEAT_MAXLANES ? ts->nlanes : LP_HEAT_MAXLANES;
}

static const struct lp_timeseries *busy_cmp_ts;

static int busy_desc(const void *a, const void *b)
{
	int64_t x = busy_cmp_ts->lanes[*(const size_t *)a].total_busy_ns;
	int64_t y = busy_cmp_ts->lanes[*(const size_t *)b].total_busy_ns;
	return x > y   ? -1
	       : x < y ? 1
		       : (*(const size_t *)a > *(const size_t *)b) -
			     (*(const size_t *)a < *(const size_t *)b);
}

static int idx_asc(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* The lanes the heatmap draws, in lane order: all of them, or the
 * LP_HEAT_MAXLANES busiest (a run through launchers has many short-lived
 * threads that were never busy). idx has room for util_n(ts). */
static void util_pick(const struct lp_timeseries *ts, size_t *idx)
{
	size_t *all = malloc((ts->nlanes + 1) * sizeof(*all)), n = util_n(ts);
	if (!all) { /* out of memory: the first lanes */
		for (size_t i = 0; i < n; i++)
			idx[i] = i;
		return;
	}
	for (size_t i = 0; i < ts->nlanes; i++)
		all[i] = i;
	busy_cmp_ts = ts;
	qsort(all, ts->nlanes, sizeof(*all), busy_desc);
	memcpy(idx, all, n * sizeof(*idx));
	qsort(idx, n, sizeof(*idx), idx_asc);
	free(all);
}

/* Whether some lane tells on-CPU from preempted time (task-clock). */
static int util_split(const struct lp_timeseries *ts)
{
	for (size_t l = 0; l < util_n(ts); l++)
		if (ts->lanes[l].oncpu)
			return 1;
	return 0;
}

static void util_rows(FILE *f, const struct lp_timeseries *ts, int preempted)
{
	size_t idx[LP_HEAT_MAXLANES];
	util_pick(ts, idx);
	for (size_t l = 0; l < util_n(ts); l++) {
		const struct lp_ts_lane *ln = &ts->lanes[idx[l]];
		const double *v = preempted ? ln->preempted : ln->oncpu ? ln->oncpu : ln->busy;
		for (size_t b = 0; b < ts->nbins; b++)
			fprintf(f, "%s%.4f", b ? " " : "", v ? v[b] : 0.0);
		fputc('\n', f);
	}
}

static void util_dat(FILE *f, const void *arg)
{
	const struct lp_plot_input *in = arg;
	const struct lp_timeseries *ts = in->ts;
	fprintf(f,
		"# busy fraction per lane (row, as the script's ytics) and time bin of %lld ns\n",
		(long long)ts->bin_ns);
	fputs("# CPU with task-clock: on a CPU; CPU without it (ytic ends in '*'): alive and not"
	      " in a recorded lock/condition wait or blocking call; GPU: kernels, copies,"
	      " memsets\n",
	      f);
	util_rows(f, ts, 0);
	if (!util_split(ts))
		return;
	/* gnuplot's index 1: two blank lines apart */
	fputs("\n\n# index 1: preempted fraction per lane and bin (runnable but off the CPU:"
	      " outside recorded waits and not on a CPU, plus the waits' run-queue tails);"
	      " 0 where task-clock is unknown. The rest of a CPU lane's life is waiting.\n",
	      f);
	util_rows(f, ts, 1);
}

static void util_panel(FILE *f, const struct lp_timeseries *ts, const char *name, int index,
		       const char *title, const char *palette)
{
	size_t n = util_n(ts);
	double bs = (double)ts->bin_ns / 1e9;
	fprintf(f, "set title '%s' noenhanced\nset palette defined %s\n", title, palette);
	fprintf(f, "set yrange [-0.5:%zu.5] reverse\nset xrange [0:%.9f]\n", n - 1,
		bs * (double)ts->nbins);
	size_t idx[LP_HEAT_MAXLANES];
	util_pick(ts, idx);
	fputs("set ytics (", f);
	for (size_t l = 0; l < n; l++) {
		fprintf(f, "%s", l ? ", " : "");
		char lbl[80];
		const struct lp_ts_lane *ln = &ts->lanes[idx[l]];
		snprintf(
		    lbl, sizeof(lbl), "%s%s%s", ln->kind == LP_LANE_GPU ? "" : "CPU ", ln->name,
		    ln->kind == LP_LANE_CPU && !ln->oncpu && index == 0 && util_split(ts) ? " *"
											  : "");
		lp_plot_gp_str(f, lbl);
		fprintf(f, " %zu", l);
	}
	fputs(") noenhanced\n", f);
	if (ts->nlanes > n)
		fprintf(f, "set label 1 'the %zu busiest of %zu lanes' at graph 0, graph -0.12\n",
			n, ts->nlanes);
	fprintf(f, "plot '%s.dat' index %d matrix using (($1 + 0.5) * bin):2:3 with image pixels\n",
		name, index);
}

static void util_gp(FILE *f, const void *arg, const char *name)
{
	const struct lp_plot_input *in = arg;
	const struct lp_timeseries *ts = in->ts;
	static const char blue[] = "(0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')";
	fprintf(f, "bin = %.9f\n", (double)ts->bin_ns / 1e9);
	fputs("set xlabel 'time since run start (s)'\nset cbrange [0:1]\nunset grid\n"
	      "set key off\n",
	      f);
	if (!util_split(ts)) {
		fputs("set cblabel 'busy'\n", f);
		util_panel(f, ts, name, 0, "CPU thread and GPU stream utilization", blue);
		return;
	}
	/* Two panels: on a CPU, and preempted; what is in neither is waiting. */
	fputs("set multiplot layout 2,1\nset cblabel 'fraction of the bin'\n", f);
	util_panel(f, ts, name, 0,
		   "on a CPU (task-clock; * = no task-clock: not waiting) / GPU busy", blue);
	util_panel(f, ts, name, 1, "preempted: runnable, waiting for a CPU",
		   "(0 '#fff7ec', 0.5 '#fc8d59', 1 '#7f0000')");
	fputs("unset multiplot\n", f);
}

/* ---- lock wait over time ---- */

static const char *lock_skip(const struct lp_plot_input *in)
{
	return in->ts->nlock_waits ? NULL : "no contended lock waits recorded";
}

static void lock_dat(FILE *f, const void *arg)
{
	const struct lp_plot_input *in = arg;
	const struct lp_timeseries *ts = in->ts;
	fprintf(f, "# lock waits %lld, total %lld ns; bins of %lld ns\n",
		(long long)ts->nlock_waits, (long long)ts->total_lock_wait_ns,
		(long long)ts->bin_ns);
	fputs("# bin_start_ns_since_run_start lock_wait_ns waits_begun cond_wait_ns\n", f);
	for (size_t b = 0; b < ts->nbins; b++)
		fprintf(f, "%lld %lld %lld %lld\n", (long long)((int64_t)b * ts->bin_ns),
			(long long)ts->lock_wait_ns[b], (long long)ts->lock_waits[b],
			(long long)ts->cond_wait_ns[b]);
}

static void lock_gp(FILE *f, const void *arg, const char *name)
{
	const struct lp_plot_input *in = arg;
	fprintf(f, "bin = %.9f\n", (double)in->ts->bin_ns / 1e9);
	fputs("set xlabel 'time since run start (s)'\n"
	      "set ylabel 'threads waiting (average over the bin)'\nset yrange [0:*]\n"
	      "set xrange [0:*]\n"
	      "set style fill solid 0.7\nset boxwidth bin absolute\n",
	      f);
	fprintf(f,
		"plot '%s.dat' using ($1/1e9 + bin/2):($2/1e9/bin) with boxes lc rgb '#ee6677' "
		"title 'lock wait'\n",
		name);
}

struct chart {
	struct lp_plot_chart c;
	const char *(*skip)(const struct lp_plot_input *in);
};

static const struct chart lp_charts[LP_PLOT_NCHARTS] = {
    {{"latency_over_time", "Request latency over time", lat_dat, lat_gp}, lat_skip},
    {{"latency_cdf", "Request latency CDF", cdf_dat, cdf_gp}, cdf_skip},
    {{"stage_percentiles", "Stage time at p50, p90, p99", stage_dat, stage_gp}, stage_skip},
    {{"utilization", "CPU thread and GPU stream utilization", util_dat, util_gp}, util_skip},
    {{"lock_wait", "Lock wait over time", lock_dat, lock_gp}, lock_skip},
};

/* Writes NAME.EXT into tmp, a private directory of our own: O_EXCL |
 * O_NOFOLLOW, so nothing planted there is written through. */
static int write_file(const char *tmp, const char *name, const char *ext,
		      const struct lp_plot_chart *c, const void *in, enum lp_plot_fmt fmt,
		      char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%s", tmp, name, ext);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
		return -e;
	}
	if (!strcmp(ext, "dat")) {
		c->dat(f, in);
	} else {
		gp_head(f, name, c->title, fmt);
		c->gp(f, in, name);
	}
	int bad = ferror(f);
	bad |= fclose(f) != 0;
	if (bad) {
		snprintf(err, errlen, "cannot write %s", path);
		return -EIO;
	}
	return 0;
}

/* gnuplot NAME.gp in dir; its stderr passes through. */
static int run_gnuplot(const char *gp, const char *dir, const char *name, char *err, size_t errlen)
{
	char script[512];
	snprintf(script, sizeof(script), "%s.gp", name);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot run gnuplot: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		if (chdir(dir) == 0) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd >= 0)
				dup2(fd, 0);
			execl(gp, "gnuplot", script, (char *)NULL);
		}
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "gnuplot failed on %s/%s", dir, script);
		return -EIO;
	}
	return 0;
}

int lp_plot_render_chart(const char *dir, const struct lp_plot_chart *c, const void *arg,
			 enum lp_plot_fmt fmt, char *image, size_t imagelen, char *err,
			 size_t errlen)
{
	const char *gp = lp_plot_gnuplot();
	if (!gp) {
		snprintf(err, errlen,
			 "gnuplot is not installed (Debian/Ubuntu: apt-get install "
			 "gnuplot-nox)");
		return -ENOENT;
	}
	/* The files are made in a private directory (gnuplot's own fopen
	 * follows symlinks), then renamed into dir: rename replaces a symlink
	 * planted at the name instead of writing through it. */
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s/.latprof-plot-XXXXXX", dir);
	if (!mkdtemp(tmp)) {
		snprintf(err, errlen, "cannot write into %s: %s", dir, strerror(errno));
		return -errno;
	}
	const char *ext[] = {"dat", "gp", lp_plot_ext[fmt]};
	int rc = write_file(tmp, c->name, "dat", c, arg, fmt, err, errlen);
	if (!rc)
		rc = write_file(tmp, c->name, "gp", c, arg, fmt, err, errlen);
	if (!rc)
		rc = run_gnuplot(gp, tmp, c->name, err, errlen);
	for (int i = 0; i < 3; i++) {
		char from[4096 + 64], to[4096];
		snprintf(from, sizeof(from), "%s/%s.%s", tmp, c->name, ext[i]);
		snprintf(to, sizeof(to), "%s/%s.%s", dir, c->name, ext[i]);
		if (!rc && rename(from, to)) {
			rc = -errno;
			snprintf(err, errlen, "cannot write %s: %s", to, strerror(errno));
		}
		unlink(from); /* after a failure: leave nothing behind */
	}
	rmdir(tmp);
	if (!rc)
		snprintf(image, imagelen, "%s/%s.%s", dir, c->name, lp_plot_ext[fmt]);
	return rc;
}

const char *lp_plot_chart_name(int i)
{
	return i >= 0 && i < LP_PLOT_NCHARTS ? lp_charts[i].c.name : NULL;
}

int lp_plot_render(const char *dir, const struct lp_plot_input *in, enum lp_plot_fmt fmt,
		   struct lp_plot_result res[LP_PLOT_NCHARTS], char *err, size_t errlen)
{
	if (!lp_plot_gnuplot()) {
		snprintf(err, errlen,
			 "gnuplot is not installed (Debian/Ubuntu: apt-get install "
			 "gnuplot-nox)");
		return -ENOENT;
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	int made = 0;
	for (int i = 0; i < LP_PLOT_NCHARTS; i++) {
		const struct chart *c = &lp_charts[i];
		memset(&res[i], 0, sizeof(res[i]));
		res[i].name = c->c.name;
		res[i].title = c->c.title;
		if ((res[i].skipped = c->skip(in)))
			continue;
		int rc = lp_plot_render_chart(dir, &c->c, in, fmt, res[i].image,
					      sizeof(res[i].image), err, errlen);
		if (rc)
			return rc;
		made++;
	}
	return made;
}
