/* SPDX-License-Identifier: MIT */
/*
 * What latprof run could not record, said by name at the end of a run:
 * programs the interposer cannot attach to (static, set-user-ID: the
 * loader ignores LD_PRELOAD; 32-bit, or exec'd in a chroot: the recorder
 * left itself out of their LD_PRELOAD), children that exec'd and wrote no
 * event log, tasks made by a raw clone(), threads whose CPU counters could
 * not be opened, and descriptors of the app's that latprof held.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_cmd_run.h"
#include "lp_db.h"

/* 1: an ELF of another class than ours (a 32-bit program). */
static int run_summary_other_class(const char *prog)
{
	int fd = open(prog, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	unsigned char id[EI_NIDENT];
	int other = pread(fd, id, sizeof(id), 0) == (ssize_t)sizeof(id) &&
		    !memcmp(id, ELFMAG, SELFMAG) &&
		    id[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
	close(fd);
	return other;
}

static int run_summary_is_static(const char *prog)
{
	int fd = open(prog, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ElfW(Ehdr) eh;
	int is_static = 0;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(ElfW(Phdr))) {
		is_static = 1;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			ElfW(Phdr) ph;
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
				(ssize_t)sizeof(ph) ||
			    ph.p_type == PT_INTERP) {
				is_static = 0;
				break;
			}
		}
	}
	close(fd);
	return is_static;
}

/* The dynamic loader ignores LD_PRELOAD for a static binary (no PT_INTERP:
 * no loader at all) and, in secure-execution mode, for one whose set-user-ID
 * or set-group-ID bit changes credentials (ld.so(8)). */
const char *lp_run_unattachable(const char *prog)
{
	struct stat st;
	if (stat(prog, &st) != 0)
		return NULL;
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		return "is set-user/group-ID: the loader ignores LD_PRELOAD, so the interposer "
		       "cannot attach";
	if (run_summary_is_static(prog))
		return "is statically linked: the interposer cannot attach, so nothing inside it "
		       "is recorded";
	return NULL;
}

/* execvp records the name it was given: find it the way it did. */
static const char *resolve(const char *name, char *buf, size_t len)
{
	if (strchr(name, '/'))
		return name;
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	const char *found = name;
	for (char *save, *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", *dir ? dir : ".", name);
		if (access(buf, X_OK) == 0) {
			found = buf;
			break;
		}
	}
	free(copy);
	return found;
}

#define RUN_ELF_CLASS_WHY                                                                          \
	"is a 32-bit program (another ELF class than latprof's interposer, which it cannot "       \
	"load): latprof left itself out of its LD_PRELOAD, so nothing inside it is recorded"

/* The recorder's reason (processes.exec_unrecorded), else what the path
 * tells, else the causes left. */
static const char *unrecorded_why(const char *path, const char *known)
{
	char buf[PATH_MAX];
	if (known && !strcmp(known, "elf-class"))
		return RUN_ELF_CLASS_WHY;
	if (known && !strcmp(known, "chroot"))
		return "was exec'd in a chroot where latprof's library is absent: latprof left "
		       "itself out of its LD_PRELOAD, so nothing inside it is recorded";
	const char *prog = path ? resolve(path, buf, sizeof(buf)) : NULL;
	const char *why = prog ? lp_run_unattachable(prog) : NULL;
	if (why)
		return why;
	if (prog && run_summary_other_class(prog))
		return RUN_ELF_CLASS_WHY;
	return "it started no recorder (no free file descriptor under RLIMIT_NOFILE, or "
	       "LD_PRELOAD changed by the app)";
}

static int unrecorded_row(sqlite3_stmt *st, void *ctx)
{
	int *n = ctx;
	const char *path = (const char *)sqlite3_column_text(st, 1);
	fprintf(stderr, "latprof: not recorded: pid %lld, which exec'd %s: %s\n",
		(long long)sqlite3_column_int64(st, 0), path ? path : "?",
		unrecorded_why(path, (const char *)sqlite3_column_text(st, 2)));
	++*n;
	return 0;
}

/* Tasks made by raw clone() (outside pthread_create and fork): counted by
 * their parents, nothing of theirs recorded. */
static void raw_clones(sqlite3 *db)
{
	int64_t thr = lp_db_int(db, "SELECT coalesce(sum(raw_clone_threads), 0) FROM processes", 0);
	int64_t proc =
	    lp_db_int(db, "SELECT coalesce(sum(raw_clone_processes), 0) FROM processes", 0);
	if (!thr && !proc)
		return;
	int64_t pid = lp_db_int(db,
				"SELECT pid FROM processes WHERE raw_clone_threads + "
				"raw_clone_processes > 0 ORDER BY id LIMIT 1",
				0);
	int64_t parents = lp_db_int(
	    db, "SELECT count(*) FROM processes WHERE raw_clone_threads + raw_clone_processes > 0",
	    0);
	fprintf(stderr,
		"latprof: not recorded: %lld thread%s and %lld process%s made by a raw clone() "
		"(pid %lld%s), outside pthread_create and fork, which latprof follows: nothing "
		"they did is in the recording\n",
		(long long)thr, thr == 1 ? "" : "s", (long long)proc, proc == 1 ? "" : "es",
		(long long)pid, parents > 1 ? ", ..." : "");
}

/* Event logs whose descriptor sat among the app's own: RLIMIT_NOFILE at or
 * below 512 leaves no room above them (the process table's descriptor is
 * then opened for each record instead, and holds none). */
static void low_fd(sqlite3 *db)
{
	char buf[32];
	long long n = lp_db_meta(db, "low_fd_logs", buf, sizeof(buf)) ? atoll(buf) : 0;
	if (n > 0)
		fprintf(
		    stderr,
		    "latprof: %lld process%s ran with RLIMIT_NOFILE at or below 512: latprof "
		    "held one of %s descriptors for its event log (under a limit, it could open "
		    "one file fewer)\n",
		    n, n == 1 ? "" : "es", n == 1 ? "its" : "their");
}

static void unrecorded(sqlite3 *db, const char *dbpath)
{
	char err[512];
	int n = 0;
	/* An image that ended by exec and that no recorded image continues. */
	lp_db_each(db,
		   "SELECT p.pid, p.exec_path, p.exec_unrecorded FROM processes p WHERE "
		   "p.exec_path IS NOT NULL AND NOT EXISTS (SELECT 1 FROM processes q WHERE "
		   "q.exec_from = p.id) ORDER BY p.id",
		   NULL, 0, unrecorded_row, &n, err, sizeof(err));
	raw_clones(db);
	low_fd(db);
	/* Threads with no counter values in processes where other threads
	 * have some: their own group failed to open (a process that counted
	 * nothing at all is named by the sources' line). */
#define LP_HAS_CNT(t)                                                                              \
	"(EXISTS (SELECT 1 FROM thread_counters c WHERE c.thread_id = " t ".id) OR EXISTS "        \
	"(SELECT 1 FROM counter_samples s WHERE s.thread_id = " t ".id))"
#define LP_COUNTING                                                                                \
	"EXISTS (SELECT 1 FROM threads o WHERE o.process_id = t.process_id AND " LP_HAS_CNT("o") ")"
	int64_t all = lp_db_int(db, "SELECT count(*) FROM threads t WHERE " LP_COUNTING, 0);
	int64_t none = lp_db_int(
	    db, "SELECT count(*) FROM threads t WHERE " LP_COUNTING " AND NOT " LP_HAS_CNT("t"), 0);
	/* A thread's counts are read when it ends, which a process killed by
	 * a signal never does: not a failure to open them. */
	int64_t killed =
	    lp_db_int(db,
		      "SELECT count(*) FROM threads t JOIN processes p ON p.id = "
		      "t.process_id WHERE p.exit_signal IS NOT NULL AND p.log_closed = 0 "
		      "AND " LP_COUNTING " AND NOT " LP_HAS_CNT("t"),
		      0);
#undef LP_COUNTING
#undef LP_HAS_CNT
	if (lp_db_fault(db, err, sizeof(err))) {
		fprintf(stderr, "latprof: cannot check %s for unrecorded processes: %s\n", dbpath,
			err);
		return;
	}
	/* The recorder says which groups ran out of descriptors (CNT_NOFD);
	 * the others' counts were never read: the thread ended before its
	 * group was opened or first read, or its process ended by _exit. */
	char buf[32];
	int64_t nofd = lp_db_meta(db, "counters.threads_no_fd", buf, sizeof(buf)) ? atoll(buf) : 0;
	if (nofd > none - killed)
		nofd = none - killed;
	if (nofd > 0)
		fprintf(stderr,
			"latprof: %lld of %lld threads of counting processes have no CPU "
			"counters: their counter group could not be opened (out of file "
			"descriptors: RLIMIT_NOFILE)\n",
			(long long)nofd, (long long)all);
	if (none - killed - nofd > 0)
		fprintf(stderr,
			"latprof: %lld of %lld threads of counting processes have no CPU "
			"counters: they ended before their counts were read (before their counter "
			"group was opened or first read, or in a process that ended by _exit)\n",
			(long long)(none - killed - nofd), (long long)all);
	if (killed > 0)
		fprintf(stderr,
			"latprof: %lld threads of processes killed by a signal have no CPU "
			"counters: a thread's counts are read when it ends, which they never did\n",
			(long long)killed);
}

struct class_line {
	char text[512];
	size_t len;
	long long other; /* waits of a class other than contention */
};

static int class_row(sqlite3_stmt *st, void *ctx)
{
	struct class_line *c = ctx;
	const char *name = (const char *)sqlite3_column_text(st, 0);
	long long n = sqlite3_column_int64(st, 1);
	if (sqlite3_column_int(st, 2) != 0)
		c->other += n;
	if (c->len < sizeof(c->text))
		c->len += (size_t)snprintf(c->text + c->len, sizeof(c->text) - c->len, "%s%lld %s",
					   c->len ? ", " : "", n, name ? name : "?");
	return 0;
}

/* The recorded waits by class: a join or a GIL hand-over is a
 * wait, not contention, and the line says so when there are any. */
static int classes(sqlite3 *db, const char *dbpath)
{
	char err[512];
	struct class_line c = {.len = 0};
	int rc =
	    lp_db_each(db,
		       "SELECT c.name, count(*), w.class FROM lock_waits w JOIN wait_classes c "
		       "ON c.id = w.class GROUP BY w.class ORDER BY w.class",
		       NULL, 0, class_row, &c, err, sizeof(err));
	if (rc || lp_db_fault(db, err, sizeof(err))) {
		fprintf(stderr, "latprof: cannot count the waits by class in %s: %s\n", dbpath,
			err);
		return -EIO;
	}
	if (c.other)
		fprintf(stderr,
			"latprof: lock waits by class: %s (only contention ranks as a contended "
			"lock; 'latprof report --locks' shows each class)\n",
			c.text);
	return 0;
}

/* A run without NVTX ranges has no requests or stages: said once, with how
 * to add them, instead of each rule saying it has none. */
static void nvtx_hint(sqlite3 *db)
{
	if (lp_db_int(db, "SELECT count(*) FROM (SELECT 1 FROM ranges LIMIT 1)", 1) != 0)
		return;
	fputs("latprof: no NVTX ranges: mark each request (and its stages) to get per-request "
	      "latency, stages and diff: C nvtxRangePushA(\"request\")/nvtxRangePop(), C++ "
	      "nvtx3::scoped_range r{\"request\"}, Python 'with nvtx.annotate(\"request\"):' "
	      "(README, Getting started)\n",
	      stderr);
}

void lp_run_summary_notes(sqlite3 *db, const char *dbpath)
{
	if (db)
		nvtx_hint(db);
	/* a read fault stays on the connection: said once, by the first */
	if (db && classes(db, dbpath) == 0)
		unrecorded(db, dbpath);
}
