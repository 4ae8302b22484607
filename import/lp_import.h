/* SPDX-License-Identifier: MIT */
/*
 * The importer: every process log of a run -> one SQLite database. It is
 * the only writer of the database. Each source (core, NVTX, CUDA,
 * counters) plugs in as an lp_import_source owning a range of record types
 * and its own tables (schemas/<source>.sql).
 */
#ifndef LP_IMPORT_H
#define LP_IMPORT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_log_format.h"
#include "lp_map.h"

struct lp_symtab;

/* State of the process whose log is being imported. */
struct lp_proc {
	int64_t id; /* processes.id */
	uint32_t pid;
	uint64_t start_ns;
	uint64_t end_ns;       /* last timestamp seen, or exit */
	struct lp_map strings; /* local string id -> strings.id */
	struct lp_map stacks;  /* local stack id -> stacks.id */
	struct lp_map threads; /* tid -> threads.id */
	struct lp_map pcs;     /* return address -> frames.id: symbolized once */
	struct lp_symtab *symtab;
	int jit_symbols;   /* names read from the process's perf map, < 0: none */
	uint64_t unmapped; /* frames in no module and no perf map */
};

struct lp_import {
	sqlite3 *db;
	struct lp_proc *proc; /* current process (during record callbacks) */
	char *err;
	size_t errlen;
	uint64_t unknown_records;
	/* private to lp_import.c */
	struct lp_import_priv *priv;
};

struct lp_import_source {
	const char *name;
	uint16_t first_type, last_type; /* record types routed to record() */
	const char *schema;		/* SQL run when the database is created */
	const char *indexes;		/* SQL run after every row is in */
	/* After every source's indexes (work that decides what to run). */
	int (*after_indexes)(struct lp_import *imp);
	int (*begin)(struct lp_import *imp, void **state);
	int (*record)(struct lp_import *imp, void *state, uint32_t tid,
		      const struct lp_rec_header *h, const void *payload, size_t len);
	/* Optional, pass 1 (definitions): the same records, all of the current
	 * process's before its first record() call. For definitions that an
	 * event written by another thread may precede in record()'s order
	 * (per thread, threads interleaved by chunk). */
	int (*define)(struct lp_import *imp, void *state, uint32_t tid,
		      const struct lp_rec_header *h, const void *payload, size_t len);
	/* After the last record of the current process (close open ranges...). */
	int (*end_process)(struct lp_import *imp, void *state);
	/* After every log, before indexes: cross-process work, meta rows. */
	int (*finish)(struct lp_import *imp, void *state);
	void (*destroy)(void *state);
};

/* Helpers for sources (valid during record/end_process callbacks). */
int64_t lp_import_string(struct lp_import *imp, uint32_t local_id);	    /* 0 if unknown */
int64_t lp_import_stack(struct lp_import *imp, uint32_t local_id);	    /* 0 if none */
int64_t lp_import_thread(struct lp_import *imp, uint32_t tid);		    /* creates the row */
int64_t lp_import_intern(struct lp_import *imp, const char *s, size_t len); /* strings.id */
int lp_import_meta(struct lp_import *imp, const char *key, const char *text, int64_t num);
/* The state src's begin() made in this import, NULL before it ran: for a
 * source's functions that the driver calls outside its hooks. */
void *lp_import_state(struct lp_import *imp, const struct lp_import_source *src);
/* Prepare once per import; failures fill imp->err. */
sqlite3_stmt *lp_import_prepare(struct lp_import *imp, const char *sql);
/* Step an insert/update statement and reset it: 0 or -EIO. */
int lp_import_step(struct lp_import *imp, sqlite3_stmt *st);

struct lp_import_opts {
	int force;		 /* replace an existing output file */
	const char *run_cmdline; /* shown in meta, may be NULL */
	/* For `latprof run`'s meta (docs/schema.md), 0 when not known: the
	 * cores the app was started with, and the machine's online CPUs. */
	int run_cpus_allowed;
	long host_cpus_online;
};

struct lp_import_stats {
	int processes;
	long long threads;
	long long records;
	long long lock_waits;
	long long unknown_records;
	long long dropped_records;
	long long dropped_strings; /* names and stacks whose definition was lost */
	long long dropped_holds;   /* holds of contended mutexes not timed */
	long long damaged_chunks;
};

/*
 * Import every *.lplog in dir into out (created atomically: a temporary file
 * in the same directory, linked into place; an existing out is replaced only
 * with opts->force). Returns 0; -EINVAL for damaged or foreign input;
 * -EEXIST, -ENOENT or another -errno for output problems. err gets one
 * sentence.
 */
int lp_import_dir(const char *dir, const char *out, const struct lp_import_opts *opts,
		  struct lp_import_stats *stats, char *err, size_t errlen);

/*
 * A capture another profiler wrote (import/captures/lp_import_nsys.c,
 * lp_import_kineto.c) -> a database of the same schema and the same atomic
 * publication as lp_import_dir. fill() writes the rows (the sources' tables
 * exist, their begin() ran); meta() runs after the sources' finish() so its
 * keys replace their defaults (cuda.captured...). -EINVAL: damaged input.
 */
struct lp_import_foreign_ops {
	int (*fill)(struct lp_import *imp, void *ctx);
	int (*meta)(struct lp_import *imp, void *ctx);
	void (*end)(struct lp_import *imp, void *ctx); /* always, before the database closes */
};
/* input_bytes: the capture's size (a large one gets large pages). */
int lp_import_foreign(const char *out, const struct lp_import_opts *opts, int64_t input_bytes,
		      const struct lp_import_foreign_ops *ops, void *ctx, char *err, size_t errlen);

#endif
