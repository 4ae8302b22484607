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

#endif
