/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* sigabbrev_np */
#include "lp_report_summary.h"

#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "lp_out.h"
#include "lp_report_locks.h"

static int lp_is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
}

/* "exit 0", "crashed (SIGSEGV)", "signal 9", "exec", "running or killed" */
static void lp_proc_end(char *buf, size_t len, const struct lp_summary_proc *p)
{
	const char *abbrev = p->exit_signal ? sigabbrev_np(p->exit_signal) : NULL;
	if (p->exit_signal && lp_is_crash(p->exit_signal) && abbrev)
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

static double lp_proc_dur(const struct lp_summary_proc *p)
{
	return p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) : 0;
}

void lp_summary_write_text(FILE *f, const struct lp_run_summary *s)
{
	char a[32], end[64], id[32];
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
	fprintf(f, "\n  dropped while recording: %lld records, %lld chunks, %lld names or stacks\n",
		s->dropped_records, s->dropped_chunks, s->dropped_strings);
	fputs("  GPU: ", f);
	fputs(s->gpu_captured ? "captured" : "no GPU data", f);
	if (s->gpu_status) {
		fputs(" (", f);
		lp_txt_pad(f, s->gpu_status, 0, 0);
		fputc(')', f);
	}
	fputs("\n\n", f);

	fputs("       pid      ppid  threads   duration  end                 command\n", f);
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct lp_summary_proc *p = &s->procs[i];
		lp_proc_end(end, sizeof(end), p);
		snprintf(id, sizeof(id), "%d", p->pid);
		fputs("  ", f);
		lp_txt_pad(f, id, 8, 1);
		fprintf(f, "  %8d  %7lld  ", p->ppid, p->threads);
		lp_txt_pad(f, lp_txt_ns(lp_proc_dur(p), a, sizeof(a)), 9, 1);
		fputs("  ", f);
		lp_txt_pad(f, end, 18, 0);
		fputs("  ", f);
		lp_txt_pad(f, p->cmdline, 0, 0); /* last column: no padding */
		fputc('\n', f);
	}
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
	      "dropped_records,dropped_chunks,dropped_strings,log_closed\r\n",
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
		fprintf(f, ",%" PRId64 ",%" PRId64 ",%lld,%lld,%lld,%lld,%d\r\n", p->start_ns,
			p->end_ns, p->threads, p->dropped_records, p->dropped_chunks,
			p->dropped_strings, p->log_closed);
	}
}
