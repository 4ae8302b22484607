/* SPDX-License-Identifier: MIT */
/* One line per capture format (lp_captures.h), in probe order. */
#include "lp_captures.h"

extern const struct lp_capture_format lp_capture_nsys;
extern const struct lp_capture_format lp_capture_kineto;

const struct lp_capture_format *const lp_capture_formats[] = {
    &lp_capture_nsys,
    &lp_capture_kineto,
    NULL,
};
