/* SPDX-License-Identifier: MIT */
/* CUDA report writers (report/lp_report_cuda.h). Tables follow nsys stats
 * (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum). */
#include "lp_report_cuda.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lp_out.h"
#include "lp_report_locks.h" /* lp_txt_ns, lp_txt_cell */
#include "lp_view.h"

static const char *const lp_view_names[] = {"kernels", "memcpy", "sync", "cuda-api"};

static void txt_capture(FILE *f, const struct lp_cuda_capture *c)
{
	char cell[900];
	lp_txt_cell(cell, sizeof(cell), c->status, 800);
	fprintf(f, "GPU data: %s\n", cell);
	if (c->dropped)
		fprintf(f, "warning: CUPTI dropped %" PRId64 " activity records: totals are low\n",
			c->dropped);
}

static void txt_stat(FILE *f, const struct lp_cuda_stat *s)
{
	char b[6][32];
	fprintf(f, " %10s %9" PRId64 " %10s %10s %10s %10s %10s",
		lp_txt_ns((double)s->total, b[0], 32), s->n, lp_txt_ns(s->mean, b[1], 32),
		lp_txt_ns((double)s->med, b[2], 32), lp_txt_ns((double)s->min, b[3], 32),
		lp_txt_ns((double)s->max, b[4], 32), lp_txt_ns(s->stddev, b[5], 32));
}

static const char lp_stat_head[] =
    "      Total Instances        Avg        Med        Min        Max     StdDev";

/* The device column, only when the rows are split by device (more than
 * one device in the capture): "-" for rows without a device of their own. */
static void txt_dev_head(FILE *f, const struct lp_cuda_report *r)
{
	if (r->devices > 1)
		fputs("  Dev", f);
}

static void txt_dev(FILE *f, const struct lp_cuda_report *r, int64_t dev)
{
	if (r->devices > 1 && dev >= 0)
		fprintf(f, " %4" PRId64, dev);
	else if (r->devices > 1)
		fputs("    -", f);
}

static void txt_extras(FILE *f, const struct lp_cuda_report *r)
{
	char b[3][32];
	if (r->launch_delay.n)
		fprintf(f,
			"\nkernel launch delay (API call end -> kernel start) over %" PRId64
			" kernels: median %s, mean %s, max %s\n",
			r->launch_delay.n, lp_txt_ns((double)r->launch_delay.med, b[0], 32),
			lp_txt_ns(r->launch_delay.mean, b[1], 32),
			lp_txt_ns((double)r->launch_delay.max, b[2], 32));
	if (r->graph_launches)
		fprintf(f,
			"CUDA graphs: %" PRId64 " launches ran %" PRId64
			" kernel nodes (%.1f per launch); the delay above counts each launch once, "
			"to its first node\n",
			r->graph_launches, r->graph_kernels,
			(double)r->graph_kernels / (double)r->graph_launches);
	if (r->requests)
		fprintf(f, "GPU idle inside %" PRId64 " requests: %s of %s (%.1f%%)\n", r->requests,
			lp_txt_ns((double)r->gpu_idle_ns, b[0], 32),
			lp_txt_ns((double)r->request_ns, b[1], 32),
			r->request_ns ? 100.0 * (double)r->gpu_idle_ns / (double)r->request_ns : 0);
	if (r->nstages) {
		fprintf(f,
			"\nGPU work by launching stage (innermost NVTX range at the API call):\n");
		fprintf(f, "%-24s %9s %11s %11s %11s %11s\n", "stage", "launches", "kernel",
			"memcpy", "memset", "kdelay p50");
		for (size_t i = 0; i < r->nstages; i++) {
			const struct lp_cuda_stage_row *s = &r->stages[i];
			char cell[128], t[4][32];
			lp_txt_cell(cell, sizeof(cell), s->stage, 24);
			fprintf(f, "%-24s %9" PRId64 " %11s %11s %11s %11s\n", cell, s->launches,
				lp_txt_ns((double)s->kernel_ns, t[0], 32),
				lp_txt_ns((double)s->memcpy_ns, t[1], 32),
				lp_txt_ns((double)s->memset_ns, t[2], 32),
				lp_txt_ns((double)s->launch_delay.med, t[3], 32));
		}
	}
}

void lp_cuda_write_text(FILE *f, const struct lp_cuda_report *r)
{
	char cell[512];
	txt_capture(f, &r->cap);
	if (!r->n) {
		fprintf(f, "no %s records\n", lp_view_names[r->view]);
		return;
	}
	fputc('\n', f);
	switch (r->view) {
	case LP_CUDA_KERNELS:
		fprintf(f, "Time(%%)%s", lp_stat_head);
		txt_dev_head(f, r);
		fputs("  Name\n", f);
		for (size_t i = 0; i < r->n; i++) {
			fprintf(f, "%6.1f%%", 100 * r->rows.kern[i].share);
			txt_stat(f, &r->rows.kern[i].st);
			txt_dev(f, r, r->rows.kern[i].device);
			lp_txt_cell(cell, sizeof(cell), r->rows.kern[i].name, 120);
			fprintf(f, "  %s\n", cell);
		}
		break;
	case LP_CUDA_MEMCPY:
		fprintf(f, "Time(%%)%s  %12s %9s", lp_stat_head, "Bytes", "GB/s");
		txt_dev_head(f, r);
		fputs("  Copy (memory kinds)\n", f);
		for (size_t i = 0; i < r->n; i++) {
			const struct lp_cuda_memcpy_row *m = &r->rows.memcpy[i];
			fprintf(f, "%6.1f%%", 100 * m->share);
			txt_stat(f, &m->st);
			fprintf(f, "  %12" PRId64 " %9.2f", m->bytes, m->gbps);
			txt_dev(f, r, m->device);
			fprintf(f, "  %s %s -> %s%s\n", m->copy_kind, m->src_kind, m->dst_kind,
				m->async ? " async" : "");
		}
		break;
	case LP_CUDA_SYNC:
		fprintf(f, "Share%s", lp_stat_head);
		txt_dev_head(f, r);
		fputs("  Host blocked in\n", f);
		for (size_t i = 0; i < r->n; i++) {
			fprintf(f, "%5.1f%%", 100 * r->rows.sync[i].share);
			txt_stat(f, &r->rows.sync[i].st);
			txt_dev(f, r, r->rows.sync[i].device);
			fprintf(f, "  %s\n", r->rows.sync[i].type);
		}
		fprintf(f, "(share = of the recorded processes' wall time)\n");
		break;
	case LP_CUDA_API:
		fprintf(f, "Time(%%)%s", lp_stat_head);
		txt_dev_head(f, r);
		fputs("  Name\n", f);
		for (size_t i = 0; i < r->n; i++) {
			fprintf(f, "%6.1f%%", 100 * r->rows.api[i].share);
			txt_stat(f, &r->rows.api[i].st);
			txt_dev(f, r, r->rows.api[i].device);
			lp_txt_cell(cell, sizeof(cell), r->rows.api[i].name, 120);
			fprintf(f, "  %s\n", cell);
		}
		break;
	}
	if (r->devices > 1)
		fprintf(f, "(one row per device of %" PRId64 "; Dev - = %s)\n", r->devices,
			r->view == LP_CUDA_MEMCPY || r->view == LP_CUDA_KERNELS
			    ? "no device"
			    : "no GPU work of its own, or work on several devices");
	txt_extras(f, r);
}

static void json_stat(FILE *f, const struct lp_cuda_stat *s)
{
	fprintf(f,
		"\"count\": %" PRId64 ", \"total_ns\": %" PRId64
		", \"avg_ns\": %.1f, \"med_ns\": %" PRId64 ", \"min_ns\": %" PRId64
		", \"max_ns\": %" PRId64 ", \"stddev_ns\": %.1f",
		s->n, s->total, s->mean, s->med, s->min, s->max, s->stddev);
}

static int64_t row_dev(const struct lp_cuda_report *r, size_t i)
{
	switch (r->view) {
	case LP_CUDA_KERNELS:
		return r->rows.kern[i].device;
	case LP_CUDA_MEMCPY:
		return r->rows.memcpy[i].device;
	case LP_CUDA_SYNC:
		return r->rows.sync[i].device;
	case LP_CUDA_API:
		return r->rows.api[i].device;
	}
	return -1;
}

/* "device": N or null, only in rows split by device. */
static void json_dev(FILE *f, const struct lp_cuda_report *r, size_t i)
{
	int64_t d = row_dev(r, i);
	if (r->devices <= 1)
		return;
	if (d >= 0)
		fprintf(f, "\"device\": %" PRId64 ", ", d);
	else
		fputs("\"device\": null, ", f);
}

void lp_cuda_write_json(FILE *f, const struct lp_cuda_report *r)
{
	lp_view_json_open(f, "cuda", 1);
	fprintf(f,
		"\"view\": \"%s\", \"gpu_captured\": %s, \"gpu_status\": ", lp_view_names[r->view],
		r->cap.captured ? "true" : "false");
	lp_json_str(f, r->cap.status);
	fprintf(f,
		", \"cupti_dropped_records\": %" PRId64 ", \"records_missing_unknown\": %s"
		", \"total_ns\": %" PRId64 ", \"devices\": %" PRId64
		", \"by_device\": %s,\n \"rows\": [",
		r->cap.dropped, r->cap.missing_unknown ? "true" : "false", r->total_ns, r->devices,
		r->devices > 1 ? "true" : "false");
	for (size_t i = 0; i < r->n; i++) {
		fputs(i ? ",\n  {" : "\n  {", f);
		json_dev(f, r, i);
		switch (r->view) {
		case LP_CUDA_KERNELS:
			fputs("\"name\": ", f);
			lp_json_str(f, r->rows.kern[i].name);
			fprintf(f, ", \"share\": %.6f, ", r->rows.kern[i].share);
			json_stat(f, &r->rows.kern[i].st);
			break;
		case LP_CUDA_MEMCPY: {
			const struct lp_cuda_memcpy_row *m = &r->rows.memcpy[i];
			fputs("\"copy_kind\": ", f);
			lp_json_str(f, m->copy_kind);
			fputs(", \"src_kind\": ", f);
			lp_json_str(f, m->src_kind);
			fputs(", \"dst_kind\": ", f);
			lp_json_str(f, m->dst_kind);
			fprintf(f,
				", \"async\": %s, \"bytes\": %" PRId64
				", \"gbps\": %.3f, \"share\": %.6f, ",
				m->async ? "true" : "false", m->bytes, m->gbps, m->share);
			json_stat(f, &m->st);
			break;
		}
		case LP_CUDA_SYNC:
			fputs("\"type\": ", f);
			lp_json_str(f, r->rows.sync[i].type);
			fprintf(f, ", \"share_of_wall\": %.6f, ", r->rows.sync[i].share);
			json_stat(f, &r->rows.sync[i].st);
			break;
		case LP_CUDA_API:
			fputs("\"name\": ", f);
			lp_json_str(f, r->rows.api[i].name);
			fprintf(f, ", \"share\": %.6f, ", r->rows.api[i].share);
			json_stat(f, &r->rows.api[i].st);
			break;
		}
		fputc('}', f);
	}
	fputs("],\n \"launch_delay\": {", f);
	json_stat(f, &r->launch_delay);
	fprintf(f, "},\n \"graph_launches\": %" PRId64 ", \"graph_kernels\": %" PRId64,
		r->graph_launches, r->graph_kernels);
	fprintf(f,
		",\n \"gpu_idle\": {\"requests\": %" PRId64 ", \"request_ns\": %" PRId64
		", \"idle_ns\": %" PRId64 "},\n \"stages\": [",
		r->requests, r->request_ns, r->gpu_idle_ns);
	for (size_t i = 0; i < r->nstages; i++) {
		const struct lp_cuda_stage_row *s = &r->stages[i];
		fputs(i ? ",\n  {\"stage\": " : "\n  {\"stage\": ", f);
		lp_json_str(f, s->stage);
		fprintf(f,
			", \"launches\": %" PRId64 ", \"kernel_ns\": %" PRId64
			", \"memcpy_ns\": %" PRId64 ", \"memset_ns\": %" PRId64
			", \"launch_delay\": {",
			s->launches, s->kernel_ns, s->memcpy_ns, s->memset_ns);
		json_stat(f, &s->launch_delay);
		fputs("}}", f);
	}
	fputs("]}\n", f);
}

static void csv_stat(FILE *f, const struct lp_cuda_stat *s)
{
	fprintf(f, ",%" PRId64 ",%" PRId64 ",%.1f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.1f",
		s->total, s->n, s->mean, s->med, s->min, s->max, s->stddev);
}

void lp_cuda_write_csv(FILE *f, const struct lp_cuda_report *r)
{
	static const char stat[] = "total_ns,count,avg_ns,med_ns,min_ns,max_ns,stddev_ns";
	/* The capture verdict rides on every row: a CSV consumer cannot miss it. */
	switch (r->view) {
	case LP_CUDA_KERNELS:
		fprintf(f, "gpu_captured,share,%s,name", stat);
		break;
	case LP_CUDA_MEMCPY:
		fprintf(f, "gpu_captured,share,%s,bytes,gbps,copy_kind,src_kind,dst_kind,async",
			stat);
		break;
	case LP_CUDA_SYNC:
		fprintf(f, "gpu_captured,share_of_wall,%s,type", stat);
		break;
	case LP_CUDA_API:
		fprintf(f, "gpu_captured,share,%s,name", stat);
		break;
	}
	fputs(r->devices > 1 ? ",device\n" : "\n", f);
	for (size_t i = 0; i < r->n; i++) {
		fprintf(f, "%d,", r->cap.captured);
		int64_t d = row_dev(r, i);
		switch (r->view) {
		case LP_CUDA_KERNELS:
			fprintf(f, "%.6f", r->rows.kern[i].share);
			csv_stat(f, &r->rows.kern[i].st);
			fputc(',', f);
			lp_csv_str(f, r->rows.kern[i].name);
			break;
		case LP_CUDA_MEMCPY: {
			const struct lp_cuda_memcpy_row *m = &r->rows.memcpy[i];
			fprintf(f, "%.6f", m->share);
			csv_stat(f, &m->st);
			fprintf(f, ",%" PRId64 ",%.3f,%s,%s,%s,%d", m->bytes, m->gbps, m->copy_kind,
				m->src_kind, m->dst_kind, m->async);
			break;
		}
		case LP_CUDA_SYNC:
			fprintf(f, "%.6f", r->rows.sync[i].share);
			csv_stat(f, &r->rows.sync[i].st);
			fputc(',', f);
			lp_csv_str(f, r->rows.sync[i].type);
			break;
		case LP_CUDA_API:
			fprintf(f, "%.6f", r->rows.api[i].share);
			csv_stat(f, &r->rows.api[i].st);
			fputc(',', f);
			lp_csv_str(f, r->rows.api[i].name);
			break;
		}
		if (r->devices > 1 && d >= 0)
			fprintf(f, ",%" PRId64, d);
		else if (r->devices > 1)
			fputc(',', f); /* empty: no device of its own */
		fputc('\n', f);
	}
}
