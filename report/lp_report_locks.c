/* SPDX-License-Identifier: MIT */
/* Lock contention report: text (aligned columns), JSON, CSV. */
#define _GNU_SOURCE
#include "lp_report_locks.h"

#include <inttypes.h>
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wchar.h>

#include "lp_out.h"
#include "lp_view.h"

#define LP_NAME_W 40 /* the table cuts names; each lock's section has it whole */

/* ---- text helpers ----------------------------------------------------- */

static locale_t txt_utf8;
static pthread_once_t txt_utf8_once = PTHREAD_ONCE_INIT;

static void txt_utf8_init(void)
{
	txt_utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* Columns one character (n bytes of valid UTF-8) takes on a terminal:
 * wcwidth in a UTF-8 locale (2 for CJK and most emoji, 0 for combining
 * marks), whatever the process's own locale; 1 without one. */
static size_t txt_char_width(const unsigned char *p, int n)
{
	if (n <= 1)
		return 1;
	pthread_once(&txt_utf8_once, txt_utf8_init);
	if (!txt_utf8)
		return 1;
	locale_t old = uselocale(txt_utf8);
	mbstate_t st = {0};
	wchar_t wc;
	int w = mbrtowc(&wc, (const char *)p, (size_t)n, &st) == (size_t)n ? wcwidth(wc) : 1;
	uselocale(old);
	return w < 0 ? 1 : (size_t)w;
}

/* The display width of s as lp_txt_cell writes it, up to 'stop' columns. */
static size_t txt_width(const unsigned char *p, size_t stop)
{
	size_t w = 0;
	while (*p && w <= stop) {
		int n = lp_utf8_len(p);
		w += txt_char_width(p, n);
		p += n > 1 ? n : 1;
	}
	return w;
}

size_t lp_txt_cell(char *dst, size_t len, const char *s, size_t maxw)
{
	size_t w = 0, o = 0;
	if (!s)
		s = "-";
	const unsigned char *p = (const unsigned char *)s;
	/* Cut: what fits in maxw - 3 columns, then "..." (no dots under 4). */
	int cut = txt_width(p, maxw) > maxw;
	size_t room = cut && maxw >= 4 ? maxw - 3 : maxw;
	while (*p && o + 5 < len) {
		int n = lp_utf8_len(p);
		size_t cw = txt_char_width(p, n);
		if (w + cw > room)
			break;
		if (n <= 1) {
			dst[o++] = (n == 1 && *p >= 0x20 && *p != 0x7f) ? (char)*p : '?';
			p++;
		} else {
			memcpy(dst + o, p, (size_t)n);
			o += (size_t)n;
			p += n;
		}
		w += cw;
	}
	if (cut && maxw >= 4 && o + 4 <= len) {
		memcpy(dst + o, "...", 3);
		o += 3;
		w += 3;
	}
	dst[o] = 0;
	return w;
}

void lp_txt_pad(FILE *f, const char *s, size_t w, int right)
{
	char cell[1024];
	size_t cw = lp_txt_cell(cell, sizeof(cell), s, w > 0 ? w : sizeof(cell) / 4);
	if (right)
		fprintf(f, "%*s%s", (int)(w > cw ? w - cw : 0), "", cell);
	else
		fprintf(f, "%s%*s", cell, (int)(w > cw ? w - cw : 0), "");
}

/* ---- text ------------------------------------------------------------- */

static void locks_text_table(FILE *f, const struct lp_lock_report *r)
{
	static const char *const hdr[] = {"#",	  "lock", "kind", "pid", "waits", "total",
					  "mean", "p50",  "p99",  "max", "share"};
	enum { NC = 11 };
	char cells[NC][128];
	size_t w[NC];
	for (int c = 0; c < NC; c++)
		w[c] = strlen(hdr[c]);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i <= r->n; i++) {
			if (i == 0) { /* header row */
				for (int c = 0; c < NC; c++)
					snprintf(cells[c], sizeof(cells[c]), "%s", hdr[c]);
			} else {
				const struct lp_lock_row *l = &r->locks[i - 1];
				snprintf(cells[0], 128, "%zu", i);
				lp_txt_cell(cells[1], 128, l->name, LP_NAME_W);
				lp_txt_cell(cells[2], 128,
					    l->wclass == LP_WAIT_GIL ? "gil" : l->kind, 10);
				if (l->pid)
					snprintf(cells[3], 128, "%d", l->pid);
				else /* folded over several processes */
					snprintf(cells[3], 128, "%lld procs", l->n_processes);
				snprintf(cells[4], 128, "%lld", l->count);
				lp_txt_ns((double)l->total_ns, cells[5], 128);
				lp_txt_ns(l->mean_ns, cells[6], 128);
				lp_txt_ns((double)l->p50_ns, cells[7], 128);
				lp_txt_ns((double)l->p99_ns, cells[8], 128);
				lp_txt_ns((double)l->max_ns, cells[9], 128);
				snprintf(cells[10], 128, "%.1f%%", 100.0 * l->share);
			}
			for (int c = 0; c < NC; c++) {
				char tmp[128];
				size_t cw = lp_txt_cell(tmp, sizeof(tmp), cells[c], 127);
				if (pass == 0) {
					if (cw > w[c])
						w[c] = cw;
					continue;
				}
				fputs(c ? "  " : "  ", f);
				lp_txt_pad(f, cells[c], w[c], c != 1 && c != 2);
			}
			if (pass == 1)
				fputc('\n', f);
		}
	}
}

static void locks_text_threads(FILE *f, const char *title, const struct lp_lock_thread *t, size_t n)
{
	char buf[32], id[32];
	if (!n)
		return;
	fprintf(f, "   %s\n", title);
	size_t nw = 4;
	for (size_t i = 0; i < n; i++) {
		char cell[128];
		size_t cw = lp_txt_cell(cell, sizeof(cell), t[i].name, 32);
		if (cw > nw)
			nw = cw;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%d", t[i].tid);
		fputs("     ", f);
		lp_txt_pad(f, id, 8, 1);
		fputs("  ", f);
		lp_txt_pad(f, t[i].name, nw, 0);
		fprintf(f, "  %10lld waits  ", t[i].count);
		lp_txt_pad(f, lp_txt_ns((double)t[i].wait_ns, buf, sizeof(buf)), 9, 1);
		fputc('\n', f);
	}
}

static void locks_text_detail(FILE *f, size_t rank, const struct lp_lock_row *l)
{
	char buf[32];
	fprintf(f, "\n#%zu ", rank);
	lp_txt_pad(f, l->name, 0, 0);
	if (l->folded) /* no one lock: the waiters' semaphores at one site */
		fprintf(f,
			"  (%lld per-thread semaphores, each waited on by one thread; %lld "
			"process%s of ",
			l->folded, l->n_processes, l->n_processes == 1 ? "" : "es");
	else
		fprintf(f, "  (%s at 0x%" PRIx64 ", pid %d ", l->kind ? l->kind : "?", l->address,
			l->pid);
	lp_txt_pad(f, l->process, 0, 0);
	if (l->module) {
		fputs(", in ", f);
		lp_txt_pad(f, l->module, 0, 0);
	}
	fputs(")\n", f);
	fprintf(f, "   call sites (%zu of %zu)\n", l->n_sites, l->n_sites_total);
	for (size_t i = 0; i < l->n_sites; i++) {
		fprintf(f, "     %10lld waits  ", l->sites[i].count);
		lp_txt_pad(f, lp_txt_ns((double)l->sites[i].wait_ns, buf, sizeof(buf)), 9, 1);
		fputs("  ", f);
		lp_txt_pad(f, l->sites[i].where, 0, 0);
		if (l->sites[i].source) {
			fputs("  \"", f);
			lp_txt_pad(f, l->sites[i].source, 0, 0);
			fputc('"', f);
		}
		fputc('\n', f);
		/* the site and the two frames above it: Python's where it has
		 * them (the native chain is in JSON and --native) */
		const char *chain = l->sites[i].py_chain ? l->sites[i].py_chain : l->sites[i].chain;
		if (chain) {
			fputs("                                  ", f);
			lp_txt_pad(f, chain, 0, 0);
			fputc('\n', f);
		}
	}
	if (l->n_py_holders) {
		fprintf(f, "   GIL holders' Python functions (%lld of %lld waits known)\n",
			l->py_holder_waits, l->count);
		for (size_t i = 0; i < l->n_py_holders; i++) {
			const struct lp_py_holder *h = &l->py_holders[i];
			const char *base =
			    h->file && strrchr(h->file, '/') ? strrchr(h->file, '/') + 1 : h->file;
			fprintf(f, "     %5.1f%% of GIL wait  %10lld waits  ",
				l->total_ns > 0 ? 100.0 * (double)h->wait_ns / (double)l->total_ns
						: 0,
				h->count);
			lp_txt_pad(f, h->function, 0, 0);
			fputs(" in ", f);
			lp_txt_pad(f, base, 0, 0);
			fputc('\n', f);
		}
	}
	locks_text_threads(f, "top waiters (tid, name)", l->waiters, l->n_waiters);
	locks_text_threads(f, "top owners (held it while others waited)", l->owners, l->n_owners);
	if (l->owner_unknown)
		fprintf(f, "     owner unknown for %lld waits\n", l->owner_unknown);
	if (l->holder_stage) {
		fputs("   holders were in stage ", f);
		lp_txt_pad(f, l->holder_stage, 0, 0);
		fprintf(f, " (%lld of %lld waits)\n", l->holder_stage_waits, l->count);
	}
	if (l->holds) {
		fprintf(f,
			"   holds >= 50 us: %lld, p50 %.3f ms, p99 %.3f ms, max %.3f ms, %.3f ms "
			"inside requests\n",
			l->holds, (double)l->hold_p50_ns / 1e6, (double)l->hold_p99_ns / 1e6,
			(double)l->hold_max_ns / 1e6, (double)l->held_in_req_ns / 1e6);
		fputs("     held longest at ", f);
		lp_txt_pad(f, l->hold_site, 0, 0);
		if (l->hold_stage) {
			fputs(" in stage ", f);
			lp_txt_pad(f, l->hold_stage, 0, 0);
		}
		fputc('\n', f);
	}
	if (l->timeouts)
		fprintf(f, "     %lld waits timed out\n", l->timeouts);
}

/* One line: every recorded wait (lock, condition, join, CUDA sync) by class. Only
 * contention and gil are ranked below; the others are not contention. */
static void locks_text_classes(FILE *f, const struct lp_lock_report *r)
{
	char a[32];
	long long any = 0;
	for (int c = 0; c < LP_WAIT_NCLASSES; c++)
		any += r->class_n[c];
	if (!any)
		return;
	fputs("Waits by class:", f);
	for (int c = 0; c < LP_WAIT_NCLASSES; c++) {
		if (!r->class_n[c])
			continue;
		double share = r->thread_time_ns > 0
				   ? 100.0 * (double)r->class_ns[c] / (double)r->thread_time_ns
				   : 0;
		fprintf(f, " %s %lld, %s (%.1f%%);", lp_wait_class_name(c), r->class_n[c],
			lp_txt_ns((double)r->class_ns[c], a, sizeof(a)), share);
	}
	fputs(" ranked: contention and gil\n", f);
}

void lp_locks_write_text(FILE *f, const struct lp_lock_report *r)
{
	char a[32], b[32], c[32];
	/* the ranked waits: contention and the GIL */
	long long n = r->class_n[LP_WAIT_CONTENTION] + r->class_n[LP_WAIT_GIL];
	int64_t ns = r->class_ns[LP_WAIT_CONTENTION] + r->class_ns[LP_WAIT_GIL];
	double share = r->thread_time_ns > 0 ? 100.0 * (double)ns / (double)r->thread_time_ns : 0;
	fprintf(f,
		"Locks: %lld contended, %lld contended acquisitions, %s waited (%.1f%% of %s %s "
		"time, %lld threads)\n",
		r->n_locks, n, lp_txt_ns((double)ns, a, sizeof(a)), share,
		lp_txt_ns((double)r->thread_time_ns, b, sizeof(b)),
		strcmp(r->thread_time_basis ? r->thread_time_basis : "", "threads") ? "process"
										    : "thread",
		r->n_threads);
	fprintf(f, "Condition waits: %lld, %s\n", r->cond_waits,
		lp_txt_ns((double)r->cond_wait_ns, c, sizeof(c)));
	locks_text_classes(f, r);
	if (!r->n) {
		fputs("No contended lock acquisitions were recorded.\n", f);
		return;
	}
	fputc('\n', f);
	locks_text_table(f, r);
	for (size_t i = 0; i < r->n; i++)
		locks_text_detail(f, i + 1, &r->locks[i]);
}

/* ---- JSON ------------------------------------------------------------- */

static void json_threads(FILE *f, const char *key, const struct lp_lock_thread *t, size_t n)
{
	fprintf(f, ",\n      \"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"tid\": %d, \"name\": ", i ? ", " : "", t[i].tid);
		lp_json_str(f, t[i].name);
		fprintf(f, ", \"count\": %lld, \"wait_ns\": %" PRId64 "}", t[i].count,
			t[i].wait_ns);
	}
	fputc(']', f);
}

static void json_site(FILE *f, const struct lp_lock_site *s)
{
	fputs("{\"where\": ", f);
	lp_json_str(f, s->where);
	fputs(", \"function\": ", f);
	lp_json_str(f, s->function);
	fputs(", \"file\": ", f);
	lp_json_str(f, s->file);
	if (s->file)
		fprintf(f, ", \"line\": %d", s->line);
	else
		fputs(", \"line\": null", f);
	fputs(", \"module\": ", f);
	lp_json_str(f, s->module);
	if (s->module)
		fprintf(f, ", \"offset\": \"0x%" PRIx64 "\"", s->offset);
	else
		fputs(", \"offset\": null", f);
	fprintf(f, ", \"depth\": %d, \"chain\": ", s->depth);
	lp_json_str(f, s->chain);
	fprintf(f, ", \"python\": %s, \"source\": ", s->python ? "true" : "false");
	lp_json_str(f, s->source);
	fputs(", \"py_chain\": ", f);
	lp_json_str(f, s->py_chain);
	fprintf(f, ", \"count\": %lld, \"wait_ns\": %" PRId64 "}", s->count, s->wait_ns);
}

static void json_lock(FILE *f, size_t rank, const struct lp_lock_row *l)
{
	fprintf(f, "    {\n      \"rank\": %zu,\n      \"name\": ", rank);
	lp_json_str(f, l->name);
	fputs(",\n      \"symbol\": ", f);
	lp_json_str(f, l->symbol);
	fputs(",\n      \"module\": ", f);
	lp_json_str(f, l->module);
	fprintf(f, ",\n      \"address\": \"0x%" PRIx64 "\",\n      \"kind\": ", l->address);
	lp_json_str(f, l->kind);
	fprintf(f, ",\n      \"class\": \"%s\",\n      \"pid\": %d,\n      \"process\": ",
		lp_wait_class_name(l->wclass), l->pid);
	lp_json_str(f, l->process);
	fprintf(f,
		",\n      \"count\": %lld,\n      \"timeouts\": %lld,\n      \"total_ns\": %" PRId64
		",\n      \"mean_ns\": %.1f,\n      \"p50_ns\": %" PRId64
		",\n      \"p99_ns\": %" PRId64 ",\n      \"max_ns\": %" PRId64
		",\n      \"share\": %.6f",
		l->count, l->timeouts, l->total_ns, l->mean_ns, l->p50_ns, l->p99_ns, l->max_ns,
		l->share);
	fprintf(f, ",\n      \"sites_total\": %zu,\n      \"sites\": [", l->n_sites_total);
	for (size_t i = 0; i < l->n_sites; i++) {
		fputs(i ? ",\n        " : "\n        ", f);
		json_site(f, &l->sites[i]);
	}
	fputs(l->n_sites ? "\n      ]" : "]", f);
	json_threads(f, "waiters", l->waiters, l->n_waiters);
	json_threads(f, "owners", l->owners, l->n_owners);
	if (l->folded)
		fprintf(f, ",\n      \"folded\": %lld,\n      \"processes\": %lld", l->folded,
			l->n_processes);
	fprintf(f, ",\n      \"py_holder_waits\": %lld,\n      \"py_holders\": [",
		l->py_holder_waits);
	for (size_t i = 0; i < l->n_py_holders; i++) {
		const struct lp_py_holder *h = &l->py_holders[i];
		fputs(i ? ", {\"function\": " : "{\"function\": ", f);
		lp_json_str(f, h->function);
		fputs(", \"file\": ", f);
		lp_json_str(f, h->file);
		fprintf(f, ", \"count\": %lld, \"wait_ns\": %" PRId64 ", \"share\": %.6f}",
			h->count, h->wait_ns,
			l->total_ns > 0 ? (double)h->wait_ns / (double)l->total_ns : 0);
	}
	fputc(']', f);
	fprintf(f, ",\n      \"owner_unknown\": %lld,\n      \"holder_stage\": ", l->owner_unknown);
	lp_json_str(f, l->holder_stage);
	fprintf(f, ",\n      \"holder_stage_waits\": %lld", l->holder_stage_waits);
	fprintf(f,
		",\n      \"holds\": %lld, \"hold_p50_ns\": %" PRId64 ", \"hold_p99_ns\": %" PRId64
		", \"hold_max_ns\": %" PRId64 ", \"hold_total_ns\": %" PRId64
		", \"held_in_requests_ns\": %" PRId64 ",\n      \"hold_site\": ",
		l->holds, l->hold_p50_ns, l->hold_p99_ns, l->hold_max_ns, l->hold_total_ns,
		l->held_in_req_ns);
	lp_json_str(f, l->hold_site);
	fputs(", \"hold_stage\": ", f);
	lp_json_str(f, l->hold_stage);
	fputs("\n    }", f);
}

void lp_locks_write_json(FILE *f, const struct lp_lock_report *r)
{
	lp_view_json_open(f, "locks", 1);
	fprintf(f,
		"\"top\": %d,\n"
		"  \"totals\": {\"threads\": %lld, \"thread_time_ns\": %" PRId64
		", \"thread_time_basis\": ",
		r->top, r->n_threads, r->thread_time_ns);
	lp_json_str(f, r->thread_time_basis ? r->thread_time_basis : "threads");
	fprintf(f,
		", \"contended_locks\": %lld, \"lock_waits\": %lld, \"lock_wait_ns\": %" PRId64
		", \"cond_waits\": %lld, \"cond_wait_ns\": %" PRId64 ", \"classes\": {",
		r->n_locks, r->lock_waits, r->lock_wait_ns, r->cond_waits, r->cond_wait_ns);
	for (int c = 0; c < LP_WAIT_NCLASSES; c++)
		fprintf(f, "%s\"%s\": {\"count\": %lld, \"wait_ns\": %" PRId64 "}", c ? ", " : "",
			lp_wait_class_name(c), r->class_n[c], r->class_ns[c]);
	fputs("}},\n  \"locks\": [", f);
	for (size_t i = 0; i < r->n; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_lock(f, i + 1, &r->locks[i]);
	}
	fputs(r->n ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* ---- CSV: one row per lock, its top site/waiter/owner flattened -------- */

void lp_locks_write_csv(FILE *f, const struct lp_lock_report *r)
{
	fputs("rank,name,symbol,module,address,kind,class,pid,process,count,timeouts,total_ns,mean_"
	      "ns,"
	      "p50_ns,p99_ns,max_ns,share,top_site,top_site_count,top_waiter_tid,top_waiter_name,"
	      "top_owner_tid,top_owner_name,folded,processes\r\n",
	      f);
	for (size_t i = 0; i < r->n; i++) {
		const struct lp_lock_row *l = &r->locks[i];
		fprintf(f, "%zu,", i + 1);
		lp_csv_str(f, l->name);
		fputc(',', f);
		lp_csv_str(f, l->symbol);
		fputc(',', f);
		lp_csv_str(f, l->module);
		fprintf(f, ",0x%" PRIx64 ",", l->address);
		lp_csv_str(f, l->kind);
		fprintf(f, ",%s,%d,", lp_wait_class_name(l->wclass), l->pid);
		lp_csv_str(f, l->process);
		fprintf(f, ",%lld,%lld,%" PRId64 ",%.1f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.6f,",
			l->count, l->timeouts, l->total_ns, l->mean_ns, l->p50_ns, l->p99_ns,
			l->max_ns, l->share);
		lp_csv_str(f, l->n_sites ? l->sites[0].where : NULL);
		if (l->n_sites)
			fprintf(f, ",%lld,", l->sites[0].count);
		else
			fputs(",,", f);
		if (l->n_waiters)
			fprintf(f, "%d,", l->waiters[0].tid);
		else
			fputc(',', f);
		lp_csv_str(f, l->n_waiters ? l->waiters[0].name : NULL);
		if (l->n_owners)
			fprintf(f, ",%d,", l->owners[0].tid);
		else
			fputs(",,", f);
		lp_csv_str(f, l->n_owners ? l->owners[0].name : NULL);
		/* a folded row: how many per-thread semaphores, in how many
		 * processes (its pid is 0 when more than one); empty otherwise */
		if (l->folded)
			fprintf(f, ",%lld,%lld\r\n", l->folded, l->n_processes);
		else
			fputs(",,\r\n", f);
	}
}
