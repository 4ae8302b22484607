/* SPDX-License-Identifier: MIT */
/* `report --ranges`: count, total and percentiles of every NVTX range name
 * (analysis/lp_range_stats.h), from the ranges loaded by lp_rset.c. */
#include "lp_range_stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_rset.h"

static int rstat_cmp(const void *pa, const void *pb)
{
	const struct lp_range_stat *a = pa, *b = pb;
	if (a->st.total != b->st.total)
		return a->st.total < b->st.total ? 1 : -1;
	return strcmp(a->name, b->name);
}

int lp_range_stats_compute(sqlite3 *db, struct lp_range_stats *out, char *err, size_t errlen)
{
	struct lp_rset rs;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!lp_db_has_table(db, "ranges"))
		return 0;
	rc = lp_rset_load(db, &rs, -1, err, errlen);
	if (rc || !rs.n) {
		lp_rset_free(&rs);
		return rc;
	}
	out->has_ranges = 1;
	/* group durations by key with a counting sort: one array, no per-key malloc */
	size_t *off = calloc(rs.nkeys + 1, sizeof(*off));
	int64_t *d = malloc(rs.n * sizeof(*d));
	out->v = calloc(rs.nkeys, sizeof(*out->v));
	if (!off || !d || !out->v) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < rs.n; i++)
		off[rs.r[i].key + 1]++;
	for (size_t k = 0; k < rs.nkeys; k++)
		off[k + 1] += off[k];
	for (size_t i = 0; i < rs.n; i++)
		d[off[rs.r[i].key]++] = rs.r[i].end - rs.r[i].start;
	out->n = rs.nkeys;
	for (size_t k = 0; k < rs.nkeys; k++) {
		size_t lo = k ? off[k - 1] : 0;
		struct lp_range_stat *s = &out->v[k];
		s->domain = strdup(rs.keys[k].domain);
		s->name = strdup(rs.keys[k].name);
		if (!s->domain || !s->name) {
			rc = -ENOMEM;
			goto out;
		}
		lp_dist_of(d + lo, off[k] - lo, &s->st);
	}
	qsort(out->v, out->n, sizeof(*out->v), rstat_cmp);
out:
	free(off);
	free(d);
	lp_rset_free(&rs);
	if (rc) {
		snprintf(err, errlen, "out of memory computing range statistics");
		lp_range_stats_free(out);
	}
	return rc;
}

void lp_range_stats_free(struct lp_range_stats *s)
{
	for (size_t i = 0; s->v && i < s->n; i++) {
		free(s->v[i].domain);
		free(s->v[i].name);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}
