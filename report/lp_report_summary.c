/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* sigabbrev_np */
#include "lp_report_summary.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "lp_db.h"
#include "lp_out.h"
#include "lp_report_locks.h"

static int is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
}

/* "exit 0", "crashed (SIGSEGV)", "signal 9", "exec", "running or killed" */
static void proc_end(char *buf, size_t len, const struct lp_summary_proc *p)
{
	const char *abbrev = p->exit_signal ? sigabbrev_np(p->exit_signal) : NULL;
	if (p->exit_signal && is_crash(p->exit_signal) && abbrev)
		snprintf(buf, len, "crashed (SIG%s)", abbrev);
	else if (p->exit_signal)
		snprintf(buf, len, "signal %d", p->exit_signal);
	else if (p->has_status)
		snprintf(buf, len, "exit %d", p->exit_status);
	else if (p->exit_how && !strcmp(p->exit_how, "exec"))
		snprintf(buf, len, "exec");
	else
		snprintf(buf, len, "unknown (log %s)", p->log_closed ? "closed" : "not closed");
}

static double proc_dur(const struct lp_summary_proc *p)
{
	return p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) : 0;
}

void lp_summary_write_text(FILE *f, const struct lp_run_summary *s)
{
	char a[32];
	fputs("Run: ", f);
	lp_txt_pad(f, s->run_cmdline ? s->run_cmdline : (s->n_procs ? s->procs[0].cmdline : NULL),
		   0, 0);
	fprintf(f, "\n  duration %s, %zu process%s, %lld thread%s",
		lp_txt_ns(s->end_ns > s->start_ns ? (double)(s->end_ns - s->start_ns) : 0, a,
			  sizeof(a)),
		s->n_procs, s->n_procs == 1 ? "" : "es", s->threads, s->threads == 1 ? "" : "s");
	if (s->wall_start) {
		fputs(", started ", f);
		lp_txt_pad(f, s->wall_start, 0, 0);
	}
	if (s->host) {
		fputs(" on ", f);
		lp_txt_pad(f, s->host, 0, 0);
	}
	if (s->import_source) /* nsys and Kineto do not say what they lost */
		fputs("\n  dropped while recording: not recorded in the source capture\n", f);
	else
		fprintf(f,
			"\n  dropped while recording: %lld records, %lld chunks, %lld names or "
			"stacks\n",
			s->dropped_records, s->dropped_chunks, s->dropped_strings);
	fputs("  GPU: ", f);
	fputs(s->gpu_captured ? "captured" : "no GPU data", f);
	if (s->gpu_status) {
		fputs(" (", f);
		lp_txt_pad(f, s->gpu_status, 0, 0);
		fputc(')', f);
	}
	fputs("\n\n", f);

	lp_summary_write_procs(f, s, 0);
}

static void proc_line(FILE *f, const struct lp_summary_proc *p, const char *count, const char *name,
		      const char *via, int imported)
{
	char a[32], end[64], id[32];
	proc_end(end, sizeof(end), p);
	if (imported) /* a foreign capture has no exit status */
		snprintf(end, sizeof(end), "not recorded");
	snprintf(id, sizeof(id), "%d", p->pid);
	fputs("  ", f);
	lp_txt_pad(f, id, 8, 1);
	fprintf(f, "  %8d  %7lld  ", p->ppid, p->threads);
	lp_txt_pad(f, lp_txt_ns(proc_dur(p), a, sizeof(a)), 9, 1);
	fputs("  ", f);
	lp_txt_pad(f, end, 18, 0);
	fputs("  ", f);
	if (count)
		fputs(count, f);
	lp_txt_pad(f, name, 0, 0); /* last column: no padding */
	if (via) {
		fputs("  (via ", f);
		lp_txt_pad(f, via, 0, 0);
		fputc(')', f);
	}
	fputc('\n', f);
}

static const char *proc_name(const struct lp_summary_proc *p)
{
	return p->title ? p->title : p->cmdline;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The program names of the images pid ran before q (a launcher chain:
 * env, a shell, a pyenv shim that exec'd the app), "env > bash > pyenv". */
static void report_summary_launchers(const struct lp_run_summary *s,
				     const struct lp_summary_proc *q, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < s->n_procs && o + 1 < len; i++) {
		const struct lp_summary_proc *p = &s->procs[i];
		if (p == q || p->pid != q->pid || p->start_ns > q->start_ns ||
		    !same_str(p->exit_how, "exec"))
			continue;
		const char *c = p->cmdline ? p->cmdline : "?";
		size_t n = strcspn(c, " ");
		const char *slash = memrchr(c, '/', n);
		if (slash)
			n -= (size_t)(slash + 1 - c), c = slash + 1;
		int w = snprintf(buf + o, len - o, "%s%.*s", o ? " > " : "", (int)n, c);
		if (w > 0)
			o += (size_t)w < len - o ? (size_t)w : len - o - 1;
	}
}

/* Whether the default view shows p: the process latprof started (its last
 * image) and the ones that recorded events (waits, ranges); when none did,
 * those that lived a tenth of the run. A launcher image that exec'd
 * another is folded into it. */
static int proc_matters(const struct lp_run_summary *s, const struct lp_summary_proc *p)
{
	if (same_str(p->exit_how, "exec"))
		return 0;
	int any = 0, root = 1;
	for (size_t i = 0; i < s->n_procs; i++) {
		any |= s->procs[i].events > 0;
		root &= s->procs[i].pid != p->ppid;
	}
	if (root)
		return 1;
	int64_t run = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	return any ? p->events > 0 : s->n_procs == 1 || proc_dur(p) * 10 >= (double)run;
}

size_t lp_summary_fold(const struct lp_run_summary *s, struct lp_summary_row *rows,
		       size_t *launchers, size_t *hidden)
{
	size_t nrows = 0;
	*launchers = *hidden = 0;
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct lp_summary_proc *p = &s->procs[i];
		if (!proc_matters(s, p)) {
			*launchers += same_str(p->exit_how, "exec");
			*hidden += !same_str(p->exit_how, "exec");
			continue;
		}
		/* identical siblings: shown once, on the first */
		size_t n = 0, first = i;
		for (size_t k = 0; k < s->n_procs; k++) {
			const struct lp_summary_proc *q = &s->procs[k];
			if (q->ppid != p->ppid || !proc_matters(s, q) ||
			    !same_str(proc_name(q), proc_name(p)))
				continue;
			if (!n)
				first = k;
			n++;
		}
		if (first != i)
			continue;
		struct lp_summary_row *r = &rows[nrows++];
		r->p = p;
		r->name = proc_name(p);
		r->count = n;
		report_summary_launchers(s, p, r->via, sizeof(r->via));
	}
	return nrows;
}

void lp_summary_write_procs(FILE *f, const struct lp_run_summary *s, int all)
{
	char count[32];
	fputs("       pid      ppid  threads   duration  end                 command\n", f);
	if (all) {
		for (size_t i = 0; i < s->n_procs; i++) {
			const struct lp_summary_proc *p = &s->procs[i];
			proc_line(f, p, NULL, p->cmdline, NULL, s->import_source != NULL);
			if (p->title)
				fprintf(f, "%55s title at exit: %s\n", "", p->title);
		}
		fputc('\n', f);
		return;
	}
	struct lp_summary_row *rows = calloc(s->n_procs + 1, sizeof(*rows));
	size_t hidden = 0, launchers = 0, n = 0;
	if (rows) /* out of memory: the footer still counts nothing shown */
		n = lp_summary_fold(s, rows, &launchers, &hidden);
	for (size_t i = 0; i < n; i++) {
		snprintf(count, sizeof(count), "%zu x ", rows[i].count);
		proc_line(f, rows[i].p, rows[i].count > 1 ? count : NULL, rows[i].name,
			  rows[i].via[0] ? rows[i].via : NULL, s->import_source != NULL);
	}
	free(rows);
	if (hidden || launchers)
		fprintf(f,
			"  (%zu launcher image%s folded, %zu process%s without recorded events "
			"not shown: latprof report --processes lists all)\n",
			launchers, launchers == 1 ? "" : "s", hidden, hidden == 1 ? "" : "es");
	fputc('\n', f);
}

void lp_summary_write_json_members(FILE *f, const struct lp_run_summary *s)
{
	fputs("\"run\": {\"cmdline\": ", f);
	lp_json_str(f, s->run_cmdline);
	fputs(", \"latprof_version\": ", f);
	lp_json_str(f, s->latprof_version);
	fputs(", \"host\": ", f);
	lp_json_str(f, s->host);
	fputs(", \"wall_start\": ", f);
	lp_json_str(f, s->wall_start);
	fprintf(f,
		", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64 ", \"duration_ns\": %" PRId64
		", \"threads\": %lld, \"lock_waits\": %lld, \"cond_waits\": %lld, "
		"\"dropped_records\": %lld, \"dropped_chunks\": %lld, \"dropped_strings\": %lld, "
		"\"gpu\": {\"captured\": %s, \"status\": ",
		s->start_ns, s->end_ns, s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0,
		s->threads, s->lock_waits, s->cond_waits, s->dropped_records, s->dropped_chunks,
		s->dropped_strings, s->gpu_captured ? "true" : "false");
	lp_json_str(f, s->gpu_status);
	fputs("},\n    \"processes\": [", f);
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct lp_summary_proc *p = &s->procs[i];
		fprintf(f, "%s\n      {\"pid\": %d, \"ppid\": %d, \"cmdline\": ", i ? "," : "",
			p->pid, p->ppid);
		lp_json_str(f, p->cmdline);
		fputs(", \"title\": ", f);
		lp_json_str(f, p->title);
		fprintf(f, ", \"events\": %lld", p->events);
		fputs(", \"exit_how\": ", f);
		lp_json_str(f, p->exit_how);
		if (p->has_status)
			fprintf(f, ", \"exit_status\": %d", p->exit_status);
		else
			fputs(", \"exit_status\": null", f);
		if (p->exit_signal)
			fprintf(f, ", \"exit_signal\": %d", p->exit_signal);
		else
			fputs(", \"exit_signal\": null", f);
		fprintf(f,
			", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64 ", \"threads\": %lld, "
			"\"dropped_records\": %lld, \"log_closed\": %s}",
			p->start_ns, p->end_ns, p->threads, p->dropped_records,
			p->log_closed ? "true" : "false");
	}
	fputs(s->n_procs ? "\n    ]}" : "]}", f);
}

void lp_summary_write_csv(FILE *f, const struct lp_run_summary *s)
{
	fputs("pid,ppid,cmdline,exit_how,exit_status,exit_signal,start_ns,end_ns,threads,"
	      "dropped_records,dropped_chunks,dropped_strings,log_closed,title\r\n",
	      f);
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct lp_summary_proc *p = &s->procs[i];
		fprintf(f, "%d,%d,", p->pid, p->ppid);
		lp_csv_str(f, p->cmdline);
		fputc(',', f);
		lp_csv_str(f, p->exit_how);
		if (p->has_status)
			fprintf(f, ",%d,", p->exit_status);
		else
			fputs(",,", f);
		if (p->exit_signal)
			fprintf(f, "%d", p->exit_signal);
		fprintf(f, ",%" PRId64 ",%" PRId64 ",%lld,%lld,%lld,%lld,%d,", p->start_ns,
			p->end_ns, p->threads, p->dropped_records, p->dropped_chunks,
			p->dropped_strings, p->log_closed);
		lp_csv_str(f, p->title);
		fputs("\r\n", f);
	}
}

const char *lp_report_origin(sqlite3 *db, char *buf, size_t len)
{
	char src[32], prod[128], ver[64], schema[64];
	if (!lp_db_meta(db, "import.source", src, sizeof(src)))
		return NULL;
	if (!lp_db_meta(db, "import.producer", prod, sizeof(prod)))
		snprintf(prod, sizeof(prod), "%s", src);
	if (!lp_db_meta(db, "import.producer_version", ver, sizeof(ver)))
		ver[0] = 0;
	if (!lp_db_meta(db, "import.schema_version", schema, sizeof(schema)))
		snprintf(schema, sizeof(schema), "unknown");
	/* 2025.5.2.266: the release is the first three parts, the build the last */
	char *dot = strchr(ver, '.');
	dot = dot ? strchr(dot + 1, '.') : NULL;
	dot = dot ? strchr(dot + 1, '.') : NULL;
	if (dot)
		*dot = 0;
	char missing[512];
	if (!lp_db_meta(db, "import.not_recorded", missing, sizeof(missing)))
		missing[0] = 0;
	int n = snprintf(buf, len, "imported from %s%s%s %s (schema %s)%s%s", prod,
			 ver[0] ? " " : "", ver, strcmp(src, "nsys") ? "trace" : "export", schema,
			 missing[0] ? "\nnot recorded in the source capture: " : "", missing);
	size_t off = n > 0 && (size_t)n < len ? (size_t)n : len - 1;
	/* what the import left out of the source, said where the origin is */
	char bad[256], cut[32];
	if (lp_db_meta(db, "import.dropped_bad_time_detail", bad, sizeof(bad)))
		off += (size_t)snprintf(buf + off, len - off,
					"\ndropped from the source capture: %s with a zero or "
					"inverted timestamp (records the source flushed before "
					"they were complete)",
					bad);
	off = off < len ? off : len - 1;
	if (lp_db_meta(db, "import.truncated_strings", cut, sizeof(cut)) && strcmp(cut, "0"))
		snprintf(buf + off, len - off,
			 "\ncut to their first %d bytes: %s string%s of the "
			 "source longer than that",
			 LP_JSTR_KEEP, cut, strcmp(cut, "1") ? "s" : "");
	return buf;
}
