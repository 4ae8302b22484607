/* SPDX-License-Identifier: MIT */
/* Lock waits put in start order: runs per thread, merged (lp_waitsort.h). */
#include "lp_waitsort.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lp_util.h"

#define LP_WAITSORT_END UINT32_MAX

/*
 * The rows live in one mapping of LP_WAITSORT_CAP rows, made at the first
 * row: the kernel gives it pages as they are first written (in huge pages
 * where it may), and it never moves. A growing array copied itself at
 * every doubling (realloc moved 40% of the import's page faults) and
 * faulted its pages in 4 KiB at a time.
 */
static int waitsort_map(struct lp_waitsort *w)
{
	size_t bytes = LP_WAITSORT_CAP * sizeof(*w->rows);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	lp_huge_advise(p, bytes);
	w->rows = p;
	return 0;
}

int lp_waitsort_add(struct lp_waitsort *w, const struct lp_waitsort_row *r)
{
	/* Row indices are 32-bit; the caller drains long before. */
	assert(w->n < LP_WAITSORT_END);
	size_t th = r->thread_id;
	if (!w->rows && waitsort_map(w))
		return -ENOMEM;
	if (w->n >= LP_WAITSORT_CAP || LP_GROW(w->runs, w->nruns, w->cap_runs))
		return -ENOMEM;
	if (th >= w->cap_tail) {
		size_t old = w->cap_tail;
		if (LP_GROW(w->tail, th, w->cap_tail))
			return -ENOMEM;
		memset(w->tail + old, 0, (w->cap_tail - old) * sizeof(*w->tail));
	}
	uint32_t i = (uint32_t)w->n++;
	w->rows[i] = *r;
	w->rows[i].next_ = LP_WAITSORT_END;
	uint32_t t = w->tail[th];
	if (t && w->rows[t - 1].start_ns <= r->start_ns)
		w->rows[t - 1].next_ = i; /* the thread's run goes on */
	else
		w->runs[w->nruns++] = i;
	w->tail[th] = i + 1;
	return 0;
}

/* A run's next row in the merge: its start, then its arrival. */
struct waitsort_head {
	int64_t start_ns;
	uint32_t row;
};

static int head_before(const struct waitsort_head *a, const struct waitsort_head *b)
{
	return a->start_ns < b->start_ns || (a->start_ns == b->start_ns && a->row < b->row);
}

static void heap_down(struct waitsort_head *h, size_t n, size_t i)
{
	struct waitsort_head x = h[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && head_before(&h[c + 1], &h[c]))
			c++;
		if (!head_before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void waitsort_reset(struct lp_waitsort *w)
{
	w->n = 0;
	w->nruns = 0;
	if (w->tail)
		memset(w->tail, 0, w->cap_tail * sizeof(*w->tail));
}

int lp_waitsort_drain(struct lp_waitsort *w, int (*emit)(void *ctx, const struct lp_waitsort_row *),
		      void *ctx)
{
	size_t n = w->nruns;
	int rc = 0;
	struct waitsort_head *h = n ? malloc(n * sizeof(*h)) : NULL;
	if (n && !h) { /* the same rows, out of order, rather than none */
		for (size_t i = 0; i < w->n && rc == 0; i++)
			rc = emit(ctx, &w->rows[i]);
		waitsort_reset(w);
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		h[i] = (struct waitsort_head){w->rows[w->runs[i]].start_ns, w->runs[i]};
	for (size_t i = n / 2; i-- > 0;)
		heap_down(h, n, i);
	while (n && rc == 0) {
		const struct lp_waitsort_row *r = &w->rows[h[0].row];
		rc = emit(ctx, r);
		if (r->next_ == LP_WAITSORT_END) {
			h[0] = h[--n];
		} else {
			h[0].row = r->next_;
			h[0].start_ns = w->rows[r->next_].start_ns;
		}
		heap_down(h, n, 0);
	}
	free(h);
	waitsort_reset(w);
	return rc;
}

void lp_waitsort_free(struct lp_waitsort *w)
{
	if (w->rows)
		munmap(w->rows, LP_WAITSORT_CAP * sizeof(*w->rows));
	free(w->runs);
	free(w->tail);
	memset(w, 0, sizeof(*w));
}
