/* SPDX-License-Identifier: MIT */
/*
 * Escaping for every writer. Recorded names (ranges, threads, kernels,
 * command lines, symbols) are untrusted: they may hold quotes, markup,
 * control characters and invalid UTF-8.
 */
#ifndef LP_OUT_H
#define LP_OUT_H

#include <stdio.h>

/* A JSON string literal with quotes: control characters as \u00XX, invalid
 * UTF-8 bytes as U+FFFD. NULL prints null. */
void lp_json_str(FILE *f, const char *s);
/* A CSV field per RFC 4180: quoted when needed, quotes doubled; control
 * characters become spaces. NULL prints an empty field. */
void lp_csv_str(FILE *f, const char *s);
/* HTML text or attribute value: & < > " ' escaped, controls dropped,
 * invalid UTF-8 as U+FFFD. */
void lp_html_str(FILE *f, const char *s);
/* Length of the valid UTF-8 sequence at s, 0 if invalid. */
int lp_utf8_len(const unsigned char *s);

/*
 * A duration for people, in ns, us, ms or s by its magnitude; negative values
 * keep their sign, NaN prints "-". One implementation; the entry points differ
 * in precision only, because each view's tests and readers rely on it:
 *   lp_txt_ns      3 significant digits: table cells ("12.3 us", "1.24 ms")
 *   lp_fixed_ns    2 decimals in us and ms, 3 in s: figures read side by
 *                  side (diff, check)
 *   lp_evidence_ns 1 decimal in us, 3 in ms and s: findings' evidence
 */
const char *lp_txt_ns(double ns, char *buf, size_t len);
const char *lp_fixed_ns(double ns, char *buf, size_t len);
const char *lp_evidence_ns(double ns, char *buf, size_t len);
/* Columns text written to f may use: COLUMNS, else the terminal's width when
 * f is one, else 100; at least 60. */
int lp_txt_width(FILE *f);

#endif
