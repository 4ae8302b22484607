/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lp_html_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp_out.h"
#include "lp_plot.h"

static const char lp_css[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px;"
    "color:#222}h1{margin:16px 0 4px}h2{border-bottom:2px solid #4477aa;padding-bottom:2px;"
    "margin-top:32px}nav a{margin-right:12px}table{border-collapse:collapse;margin:8px 0}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top}"
    "th{background:#eef2f7}td.l,th.l{text-align:left}tr.req td{font-weight:600}"
    ".cmd{font-family:monospace;white-space:pre-wrap;word-break:break-all}"
    ".fnd{border-left:4px solid #ee6677;padding:4px 10px;margin:8px 0;background:#fdf3f4}"
    ".fnd.s1{border-color:#ccbb44;background:#fbf9ef}.fnd.s2{border-color:#ee8866}"
    ".note{color:#555}figure{margin:12px 0}figure svg{max-width:100%;height:auto}"
    "svg.tl text{font:11px sans-serif}";

void lp_html_head(FILE *f, const char *title, const char *extra_css)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n<title>",
	      f);
	lp_html_str(f, title);
	fputs("</title>\n<style>", f);
	fputs(lp_css, f);
	fputs(extra_css ? extra_css : "", f);
	fputs("</style></head><body>\n", f);
}

void lp_html_dur(FILE *f, double ns)
{
	if (ns < 1e3)
		fprintf(f, "%.0f ns", ns);
	else if (ns < 1e6)
		fprintf(f, "%.3g µs", ns / 1e3);
	else if (ns < 1e9)
		fprintf(f, "%.4g ms", ns / 1e6);
	else
		fprintf(f, "%.4g s", ns / 1e9);
}

void lp_html_td_dur(FILE *f, double ns)
{
	fputs("<td>", f);
	lp_html_dur(f, ns);
	fputs("</td>", f);
}

void lp_html_td_str(FILE *f, const char *s)
{
	fputs("<td class=\"l\">", f);
	lp_html_str(f, s ? s : "");
	fputs("</td>", f);
}

void lp_html_charts_section(FILE *f, const char *cmd, int has_gnuplot, const char *chart_err,
			    const struct lp_plot_result *res, char *const *svg, int n)
{
	fputs("<section id=\"charts\"><h2>Charts</h2>\n", f);
	if (!has_gnuplot) {
		fprintf(f,
			"<p id=\"charts-missing\" class=\"note\">Charts need gnuplot: install the "
			"<b>gnuplot-nox</b> package (apt-get install gnuplot-nox) and run "
			"<code>%s</code> again, or <code>latprof plot FILE.db -o DIR</code> for "
			"images and editable scripts.</p></section>\n",
			cmd);
		return;
	}
	if (chart_err) {
		fputs("<p class=\"note\">The charts could not be drawn: ", f);
		lp_html_str(f, chart_err);
		fputs("</p></section>\n", f);
		return;
	}
	for (int i = 0; i < n; i++) {
		const struct lp_plot_result *c = &res[i];
		if (!svg[i]) {
			fprintf(f, "<p class=\"note\" id=\"skip-%s\">%s: not drawn, %s.</p>\n",
				c->name, c->title, c->skipped ? c->skipped : "no image");
			continue;
		}
		fprintf(f, "<figure id=\"chart-%s\">\n", c->name);
		fputs(svg[i], f);
		fprintf(f, "<figcaption>%s</figcaption></figure>\n", c->title);
	}
	fputs("</section>\n", f);
}

int lp_html_tmpdir(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, len, "%s/latprof-html-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -errno;
}

void lp_html_rmtree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096 + sizeof(e->d_name) + 2];
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char tmp[65536];
	size_t n;
	while (m && (n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		fwrite(tmp, 1, n, m);
	fclose(f);
	if (m)
		fclose(m);
	return buf;
}

/* From <svg on, without the XML namespace declarations: the HTML parser
 * puts <svg> in the SVG namespace itself, and the page then names no URL
 * at all. */
char *lp_html_svg_file(const char *path)
{
	char *s = slurp(path);
	char *p = s ? strstr(s, "<svg") : NULL;
	char *out = p ? strdup(p) : NULL;
	free(s);
	if (!out)
		return NULL;
	static const char *const drop[] = {" xmlns=\"http://www.w3.org/2000/svg\"",
					   " xmlns:xlink=\"http://www.w3.org/1999/xlink\""};
	for (size_t i = 0; i < 2; i++) {
		char *x = strstr(out, drop[i] + 1);
		if (x) {
			size_t l = strlen(drop[i] + 1);
			memmove(x, x + l, strlen(x + l) + 1);
		}
	}
	return out;
}
