/* SPDX-License-Identifier: MIT */
/* Unit tests of import/sources/lp_waitsort.h: waits of many threads in chunks, as
 * a log holds them, some out of order within their thread and many with
 * equal starts, drained against a stable qsort of the same rows; the runs
 * it keeps; a drain stopped by its callback; the row bound. */
#include "lp_waitsort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lp_check.h"
#include "lp_rnd.h"

/* Rows of nthreads threads, each thread's starts ascending (ties every few
 * rows) except one row in `back` that steps back, written in chunks of
 * 1..64 rows of one thread at a time. dur_ns holds the arrival index. */
static struct lp_waitsort_row *log_rows(size_t n, unsigned nthreads, unsigned back)
{
	struct lp_waitsort_row *r = calloc(n, sizeof(*r));
	int64_t *clock = calloc(nthreads, sizeof(*clock));
	for (size_t i = 0; i < n;) {
		unsigned t = rnd() % nthreads, chunk = 1 + rnd() % 64;
		for (unsigned k = 0; k < chunk && i < n; k++, i++) {
			clock[t] += rnd() % 4 == 0 ? 0 : 1 + rnd() % 1000;
			int64_t start = clock[t];
			if (back && rnd() % back == 0)
				start -= rnd() % 5000;
			r[i] = (struct lp_waitsort_row){.start_ns = start,
							.dur_ns = (int64_t)i,
							.lock_id = 1 + rnd() % 7,
							.thread_id = 1 + t,
							.stack_id = rnd() % 3,
							.owner_tid = rnd() % 2 ? 1000 + t : 0,
							.flags = rnd() % 16 == 0 ? 0x104 : 0,
							.mode = rnd() % 2};
		}
	}
	free(clock);
	return r;
}

static int by_start_then_arrival(const void *a, const void *b)
{
	const struct lp_waitsort_row *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->dur_ns < y->dur_ns ? -1 : x->dur_ns > y->dur_ns;
}

struct sink {
	struct lp_waitsort_row *got;
	size_t n, stop_at;
};

static int collect(void *ctx, const struct lp_waitsort_row *r)
{
	struct sink *s = ctx;
	if (s->stop_at && s->n == s->stop_at)
		return -EIO;
	s->got[s->n++] = *r;
	return 0;
}

static int same_row(const struct lp_waitsort_row *a, const struct lp_waitsort_row *b)
{
	return a->start_ns == b->start_ns && a->dur_ns == b->dur_ns && a->lock_id == b->lock_id &&
	       a->thread_id == b->thread_id && a->stack_id == b->stack_id &&
	       a->owner_tid == b->owner_tid && a->flags == b->flags && a->mode == b->mode;
}

static void against_qsort(size_t n, unsigned nthreads, unsigned back)
{
	struct lp_waitsort_row *in = log_rows(n, nthreads, back);
	struct lp_waitsort w = {0};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = lp_waitsort_add(&w, &in[i]);
	size_t runs = w.nruns;
	struct sink s = {.got = calloc(n, sizeof(*s.got))};
	rc = rc ? rc : lp_waitsort_drain(&w, collect, &s);
	qsort(in, n, sizeof(*in), by_start_then_arrival);
	size_t same = 0;
	for (size_t i = 0; i < s.n && i < n; i++)
		same += same_row(&in[i], &s.got[i]);
	CHECK(rc == 0 && s.n == n && same == n,
	      "%zu waits of %u threads (%s out of order): %zu of %zu in (start, arrival) "
	      "order, as a stable sort puts them, from %zu runs",
	      n, nthreads, back ? "some" : "none", same, s.n, runs);
	if (!back)
		CHECK(runs == nthreads, "threads in order make one run each: %zu runs, %u threads",
		      runs, nthreads);
	CHECK(w.n == 0 && w.nruns == 0, "drained: empty again");
	/* Used again after the drain: the threads' runs start afresh. */
	struct lp_waitsort_row late = in[0];
	late.start_ns = -1;
	s.n = 0;
	rc = lp_waitsort_add(&w, &in[n - 1]);
	rc = rc ? rc : lp_waitsort_add(&w, &late);
	rc = rc ? rc : lp_waitsort_drain(&w, collect, &s);
	CHECK(rc == 0 && s.n == 2 && s.got[0].start_ns == -1 && same_row(&s.got[1], &in[n - 1]),
	      "a second drain orders the rows added after the first");
	lp_waitsort_free(&w);
	free(s.got);
	free(in);
}

static void stopped_and_bounded(void)
{
	struct lp_waitsort w = {0};
	struct sink s = {.got = calloc(16, sizeof(*s.got)), .stop_at = 3};
	CHECK(lp_waitsort_drain(&w, collect, &s) == 0 && s.n == 0, "nothing held: nothing emitted");
	for (int i = 0; i < 10; i++) {
		struct lp_waitsort_row r = {.start_ns = 10 - i, .thread_id = 1};
		lp_waitsort_add(&w, &r);
	}
	CHECK(w.nruns == 10, "a thread stepping back at every row: a run per row (%zu)", w.nruns);
	int rc = lp_waitsort_drain(&w, collect, &s);
	CHECK(rc == -EIO && s.n == 3 && s.got[0].start_ns == 1 && s.got[2].start_ns == 3 &&
		  w.n == 0,
	      "the callback's error stops the drain after 3 rows, and empties it (rc %d)", rc);
	free(s.got);

	struct lp_waitsort_row r = {.thread_id = 2};
	rc = 0;
	for (size_t i = 0; i < LP_WAITSORT_CAP && rc == 0; i++, r.start_ns++)
		rc = lp_waitsort_add(&w, &r);
	CHECK(rc == 0 && lp_waitsort_full(&w) && w.nruns == 1,
	      "%zu rows fit, then it is full, in one run", (size_t)LP_WAITSORT_CAP);
	CHECK(lp_waitsort_add(&w, &r) == -ENOMEM && w.n == LP_WAITSORT_CAP,
	      "one more is refused (-ENOMEM), nothing held changed");
	lp_waitsort_free(&w);
}

int main(void)
{
	lp_rnd_state = 0x9e3779b97f4a7c15ull;
	against_qsort(1000, 1, 0);
	against_qsort(200000, 4, 0);
	against_qsort(200000, 300, 0);
	against_qsort(200000, 8, 50);
	stopped_and_bounded();
	return lp_check_done();
}
