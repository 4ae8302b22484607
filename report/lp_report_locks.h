/* SPDX-License-Identifier: MIT */
/* Writers for the lock contention report (analysis/lp_locks.h). The JSON
 * follows schemas/report-locks.schema.json. */
#ifndef LP_REPORT_LOCKS_H
#define LP_REPORT_LOCKS_H

#include <stdint.h>
#include <stdio.h>

#include "lp_locks.h"

void lp_locks_write_text(FILE *f, const struct lp_lock_report *r);
void lp_locks_write_json(FILE *f, const struct lp_lock_report *r);
void lp_locks_write_csv(FILE *f, const struct lp_lock_report *r);

/* Shared by the text writers of the report command (durations: lp_out.h). */
/* s made safe for a terminal (controls and invalid UTF-8 become '?'),
 * cut to at most maxw characters with a trailing "..."; returns the width
 * in characters. NULL becomes "-". */
size_t lp_txt_cell(char *dst, size_t len, const char *s, size_t maxw);
/* Print s padded to width w (left-aligned, or right when right != 0). */
void lp_txt_pad(FILE *f, const char *s, size_t w, int right);

#endif
