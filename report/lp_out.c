/* SPDX-License-Identifier: MIT */
#include "lp_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* decimals for us, ms, s; -1: three significant digits */
static const char *fmt_dur(double ns, int us_dec, int ms_dec, int s_dec, char *buf, size_t len)
{
	static const struct {
		double div;
		const char *unit;
	} u[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
	int dec[] = {s_dec, ms_dec, us_dec};
	if (isnan(ns)) {
		snprintf(buf, len, "-");
		return buf;
	}
	for (int i = 0; i < 3; i++)
		if (fabs(ns) >= u[i].div) {
			if (dec[i] < 0)
				snprintf(buf, len, "%.3g %s", ns / u[i].div, u[i].unit);
			else
				snprintf(buf, len, "%.*f %s", dec[i], ns / u[i].div, u[i].unit);
			return buf;
		}
	snprintf(buf, len, "%.0f ns", ns);
	return buf;
}

const char *lp_txt_ns(double ns, char *buf, size_t len)
{
	return fmt_dur(ns, -1, -1, -1, buf, len);
}

const char *lp_fixed_ns(double ns, char *buf, size_t len)
{
	return fmt_dur(ns, 2, 2, 3, buf, len);
}

const char *lp_evidence_ns(double ns, char *buf, size_t len)
{
	return fmt_dur(ns, 1, 3, 3, buf, len);
}

int lp_utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = (s[0] & 0xe0) == 0xc0	? 2
		: (s[0] & 0xf0) == 0xe0 ? 3
		: (s[0] & 0xf8) == 0xf0 ? 4
					: 0;
	if (!n || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, or a UTF-16 surrogate */
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void lp_json_str(FILE *f, const char *str)
{
	if (!str) {
		fputs("null", f);
		return;
	}
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', f);
	while (*s) {
		int n = lp_utf8_len(s);
		if (!n) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, (size_t)n, f);
		} else if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s, f);
		} else if (*s == '\n') {
			fputs("\\n", f);
		} else if (*s == '\t') {
			fputs("\\t", f);
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s);
		} else if (*s == '<' || *s == '>' || *s == '&') {
			/* safe to embed inside an HTML <script> block */
			fprintf(f, "\\u%04x", *s);
		} else {
			fputc(*s, f);
		}
		s += n;
	}
	fputc('"', f);
}

void lp_csv_str(FILE *f, const char *str)
{
	if (!str)
		return;
	int quote = strpbrk(str, ",\"\r\n") != NULL || str[0] == ' ';
	if (quote)
		fputc('"', f);
	for (const unsigned char *s = (const unsigned char *)str; *s; s++) {
		int n = lp_utf8_len(s);
		if (!n) /* a CSV reader decoding UTF-8 would fail on the whole file */
			fputs("\xef\xbf\xbd", f);
		else if (n > 1) {
			fwrite(s, 1, (size_t)n, f);
			s += n - 1;
		} else if (*s == '"')
			fputs("\"\"", f);
		else if (*s < 0x20 || *s == 0x7f)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	if (quote)
		fputc('"', f);
}

void lp_html_str(FILE *f, const char *str)
{
	if (!str)
		return;
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		int n = lp_utf8_len(s);
		if (!n) {
			fputs("&#xfffd;", f);
			s++;
			continue;
		}
		switch (n > 1 ? 0 : *s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if (n == 1 && (*s < 0x20 || *s == 0x7f) && *s != '\n' && *s != '\t')
				break;
			fwrite(s, 1, (size_t)n, f);
		}
		s += n;
	}
}

int lp_txt_width(FILE *f)
{
	const char *c = getenv("COLUMNS");
	long w = c ? strtol(c, NULL, 10) : 0;
	struct winsize ws;
	if (w <= 0 && isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0)
		w = ws.ws_col;
	if (w <= 0)
		w = 100;
	return w < 60 ? 60 : w > 400 ? 400 : (int)w;
}
