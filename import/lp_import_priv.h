/* SPDX-License-Identifier: MIT */
/* The framework's state (lp_import.c), which the driver
 * (lp_import_driver.c) embeds in its own and opens and closes; sources see
 * only struct lp_import. */
#ifndef LP_IMPORT_PRIV_H
#define LP_IMPORT_PRIV_H

#include "lp_import.h"
#include "lp_import_sources.h" /* LP_IMPORT_MAX_SOURCES */

struct lp_import_priv {
	struct lp_map strings; /* xxh64(content) -> strings.id */
	struct lp_map frames;  /* xxh64(module, offset) -> frames.id */
	sqlite3_stmt *ins_string, *ins_frame, *ins_stack, *ins_stack_frame, *ins_thread, *ins_meta;
	/* Each source of this import and the state its begin() made; the
	 * driver fills them, lp_import_state reads them. */
	const struct lp_import_source *src[LP_IMPORT_MAX_SOURCES];
	void *state[LP_IMPORT_MAX_SOURCES];
};

/* Prepares the framework's statements once the schemas exist: 0 or -EIO. */
int lp_import_fw_open(struct lp_import *imp);
void lp_import_fw_close(struct lp_import *imp);

/* A stack definition record (LP_REC_STACK) -> stacks and stack_frames rows,
 * its frames symbolized once per address: 0 or -EIO. */
int lp_import_stack_def(struct lp_import *imp, const struct lp_rec_header *h, const void *payload,
			size_t len);

#endif
