/* SPDX-License-Identifier: MIT */
/* db/lp_db_schemas.c lists the schema of every import source, and only
 * those: the whole-database check reads that list without the importer, so
 * a source whose tables were missing from it would go unchecked. */
#include <stddef.h>

#include "lp_check.h"
#include "lp_db.h"
#include "lp_import_sources.h"

int main(void)
{
	int n_src = 0, n_db = 0;
	for (int i = 0; lp_import_sources[i]; i++) {
		const char *sch = lp_import_sources[i]->schema;
		if (!sch)
			continue;
		n_src++;
		int found = 0;
		for (int j = 0; lp_db_schemas[j]; j++)
			found += lp_db_schemas[j] == sch;
		CHECK(found == 1, "source %s: its schema is in lp_db_schemas once (%d)",
		      lp_import_sources[i]->name, found);
	}
	for (int j = 0; lp_db_schemas[j]; j++)
		n_db++;
	CHECK(n_src == 5 && n_db == n_src, "5 schemas, one per source with tables (%d, %d)", n_src,
	      n_db);
	return lp_check_done();
}
