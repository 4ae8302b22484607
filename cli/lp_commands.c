/* SPDX-License-Identifier: MIT */
/* The command table: one line per cmd_*.c, in the order help lists them. */
#include "lp_cli.h"

extern const struct lp_cmd lp_cmd_run, lp_cmd_import;
extern const struct lp_cmd lp_cmd_report;
extern const struct lp_cmd lp_cmd_diff, lp_cmd_check;
extern const struct lp_cmd lp_cmd_plot, lp_cmd_export;

const struct lp_cmd *const lp_commands[] = {
    &lp_cmd_run,    &lp_cmd_import, &lp_cmd_report, &lp_cmd_plot,
    &lp_cmd_export, &lp_cmd_diff,   &lp_cmd_check,  NULL,
};
