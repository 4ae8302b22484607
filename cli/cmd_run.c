/* SPDX-License-Identifier: MIT */
/*
 * latprof run: start the app with the collectors injected, follow its
 * process tree as subreaper, pass its exit status through, then import.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lp_cli.h"
#include "lp_db.h"
#include "lp_cmd_run.h"
#include "lp_import.h"
#include "lp_inf_table.h"
#include "lp_import_sources.h"

/* 0, or -ENOENT when nothing of that name exists, -EACCES (-EISDIR) when
 * one exists that cannot be run: a shell's 127 and 126. */
static int find_program(const char *prog, char *out, size_t len)
{
	struct stat st;
	if (strchr(prog, '/')) {
		snprintf(out, len, "%s", prog);
		if (stat(prog, &st) == 0 && S_ISDIR(st.st_mode))
			return -EISDIR;
		return access(prog, X_OK) == 0 ? 0 : -errno;
	}
	const char *path = getenv("PATH");
	char *copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	int rc = -ENOENT;
	for (char *save, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", *dir ? dir : ".", prog);
		if (stat(out, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (access(out, X_OK) == 0) {
			rc = 0;
			break;
		}
		rc = -EACCES; /* execvp too goes on searching, then says so */
	}
	free(copy);
	return rc;
}

static void setenv_prepend(const char *name, const char *value, char sep)
{
	const char *old = getenv(name);
	if (old && *old) {
		char *v = xasprintf("%s%c%s", value, sep, old);
		setenv(name, v, 1);
		free(v);
	} else {
		setenv(name, value, 1);
	}
}

/* A runtime's options variable: the user's own value first, ours after. */
static void setenv_append(const char *name, const char *value)
{
	const char *old = getenv(name);
	if (old && *old) {
		char *v = xasprintf("%s %s", old, value);
		setenv(name, v, 1);
		free(v);
	} else {
		setenv(name, value, 1);
	}
}

/* A JVM's compiled Java code lies in no module and has no unwind tables:
 * frame pointers let the recorder walk through it and the perf map the
 * JVM writes at exit (/tmp/perf-<pid>.map) names it at import. The user's
 * own options come first; their own choice of these flags is left alone. */
static void java_env(const char *prog)
{
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	if (strcmp(base, "java"))
		return;
	const char *old = getenv("JAVA_TOOL_OPTIONS");
	if (old && (strstr(old, "PreserveFramePointer") || strstr(old, "PerfMap")))
		return;
	setenv_append("JAVA_TOOL_OPTIONS", "-XX:+UnlockDiagnosticVMOptions "
					   "-XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit");
}

/* Node (V8) keeps frame pointers through its JIT code and builtins; its
 * perf map names the JavaScript functions, and interpreted functions get
 * a named native frame of their own with --interpreted-frames-native-stack
 * (both allowed in NODE_OPTIONS). V8 writes the map as it compiles, so a
 * killed process keeps what it wrote. The user's own perf flags win. */
static void node_env(const char *prog)
{
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	if (strcmp(base, "node") && strcmp(base, "nodejs"))
		return;
	const char *old = getenv("NODE_OPTIONS");
	if (old && strstr(old, "--perf-"))
		return;
	setenv_append("NODE_OPTIONS", "--perf-basic-prof --interpreted-frames-native-stack");
}

/* The child: collectors in the environment, default signal handling. */
static void exec_app(const struct lp_run_opts *o, char **argv)
{
	struct sigaction sa = {0};
	sigset_t none;
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setenv("LATPROF_DIR", o->logdir, 1);
	/* The core named before the interposer that needs it: the loader then
	 * finds it loaded by its soname instead of searching the interposer's
	 * RUNPATH, where glibc tries ~20 hwcaps subdirectories (tls/haswell/
	 * x86_64 ...), an openat and a stat each, in every exec'd image. */
	char *preload = xasprintf("%s/liblatprof_core.so:%s/liblatprof_preload.so", lp_cli_libdir(),
				  lp_cli_libdir());
	/* glibc's LD_PRELOAD takes spaces or colons; ours goes first. */
	setenv_prepend("LD_PRELOAD", preload, ':');
	lp_run_env_sources(o);
	java_env(argv[0]);
	node_env(argv[0]);
#ifdef LATPROF_ASAN_RUNTIME
	/* Sanitizer build: our libraries need the ASan runtime first in the
	 * app's link map. The app's own leaks and crashes are not ours: its
	 * SIGSEGV must still kill it with SIGSEGV. */
	setenv_prepend("LD_PRELOAD", LATPROF_ASAN_RUNTIME, ':');
	setenv_prepend("ASAN_OPTIONS",
		       "detect_leaks=0:handle_segv=0:handle_sigbus=0:"
		       "handle_sigfpe=0:handle_sigill=0:handle_abort=0",
		       ':');
#endif
	execvp(argv[0], argv);
	fprintf(stderr, "latprof: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* "<pid> <raw wait status> <CLOCK_MONOTONIC ns>": the time is when a
 * process killed by a signal ended, for the waits it died in. */
static void note_reaped(FILE *reaped, pid_t pid, int status)
{
	if (reaped) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		fprintf(reaped, "%d %d %llu\n", (int)pid, status,
			(unsigned long long)t.tv_sec * 1000000000ull +
			    (unsigned long long)t.tv_nsec);
		fflush(reaped);
	}
}

/* Reap the app and every orphan reparented to us until the app is gone;
 * then collect zombies already waiting. Returns the app's wait status. */
static int wait_tree(pid_t app, FILE *reaped)
{
	int app_status = 0, status;
	for (;;) {
		pid_t p = waitpid(-1, &status, __WALL | WUNTRACED);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFSTOPPED(status)) {
			lp_run_signals_stopped(p, status);
			continue;
		}
		note_reaped(reaped, p, status);
		if (p == app) {
			app_status = status;
			break;
		}
	}
	lp_run_signals_app_gone();
	pid_t p;
	while ((p = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
		note_reaped(reaped, p, status);
	return app_status;
}

/* Our children still running after the app exited: descendants it left
 * behind (daemons, background jobs), reparented to us as subreaper. */
static int count_children(pid_t *first)
{
	/* No child in any state (the common case): nothing to look for in
	 * /proc, whose scan took about 1 ms of a 15 ms `latprof run` of
	 * /bin/true. WNOWAIT: a zombie stays for the scan to count. */
	siginfo_t si;
	if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT | __WALL) &&
	    errno == ECHILD)
		return 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	pid_t self = getpid();
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[300], buf[512];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = 0;
		char *rp = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
		int ppid = 0;
		if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == self && n++ == 0)
			*first = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return n;
}

/* --wait=all: reap descendants until none is left, or until INT, TERM or
 * HUP reaches latprof (polling, so a restarted waitpid cannot hide it). */
static void wait_descendants(FILE *reaped)
{
	int status;
	while (!lp_run_signals_stop_requested()) {
		pid_t p = waitpid(-1, &status, WNOHANG | __WALL);
		if (p > 0) {
			note_reaped(reaped, p, status);
			continue;
		}
		if (p < 0 && errno != EINTR)
			return; /* ECHILD: every descendant is gone */
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* Say which descendants were not waited for: their recording is partial.
 * Returns how many are still running. */
static int report_left_running(const struct lp_run_opts *o)
{
	pid_t first = 0;
	int n = count_children(&first);
	if (!n)
		return 0;
	fprintf(stderr,
		"latprof: %d descendant%s of the app still running (pid %d%s) %s; "
		"what %s recorded so far is imported%s\n",
		n, n == 1 ? "" : "s", (int)first, n > 1 ? ", ..." : "",
		o->wait_all ? "after the wait was interrupted" : "not waited for",
		n == 1 ? "it" : "they", o->wait_all ? "" : " (--wait=all waits for them)");
	return n;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* A directory whose files hold little (a short run: a few processes that
 * recorded little) goes at once: 0.1 ms, where starting rm took 0.5 ms of
 * a 15 ms `latprof run` of /bin/true. 0, or -1 to leave it to rm. */
#define LP_RUN_SMALL_LOGS ((off_t)4 << 20)
static int remove_small_logdir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	off_t held = 0;
	struct dirent *e;
	struct stat st;
	while (held <= LP_RUN_SMALL_LOGS && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISREG(st.st_mode))
				held = LP_RUN_SMALL_LOGS + 1; /* not ours to judge: rm */
			else
				held += (off_t)st.st_blocks * 512;
		}
	if (held > LP_RUN_SMALL_LOGS) {
		closedir(d);
		return -1;
	}
	rewinddir(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return rmdir(dir) ? -1 : 0;
}

/* The logs go in the background, by a grandchild that outlives us: unlinking
 * the dirty pages of a pre-forking server's logs takes 0.1-0.3 s (PostgreSQL,
 * 15 processes), and whoever stops `latprof run` (a service manager, a
 * script) waits for the app and its database, not for that. The directory
 * is private (mkdtemp, 0700) and the database is already in place. */
static void remove_logdir(struct lp_run_opts *o)
{
	const char *dir = o->logdir;
	lp_run_unmark_logs(o);
	if (remove_small_logdir(dir) == 0)
		return;
	char *cmd[] = {"rm", "-rf", "--", (char *)dir, NULL};
	pid_t p = fork();
	if (p == 0) {
		if (fork() == 0) {
			int fd = open("/dev/null", O_RDWR);
			/* Our stdout/stderr may be a pipe someone reads to EOF. */
			if (fd >= 0 && (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0))
				_exit(127);
			setsid();
			execvp("rm", cmd);
		}
		_exit(0);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* ", N names or stacks lost", ", N lock holds not timed" when some were,
 * for the summary line. */
static const char *names_lost(const struct lp_import_stats *st)
{
	static char buf[128];
	int n = 0;
	buf[0] = 0;
	if (st->dropped_strings)
		n = snprintf(buf, sizeof(buf), ", %lld names or stacks lost", st->dropped_strings);
	if (st->dropped_holds && n >= 0 && (size_t)n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - (size_t)n, ", %lld lock holds not timed",
			 st->dropped_holds);
	return buf;
}

/* *db: the new database, opened once for every note after the import
 * (each note opened it alone: 3 reads of its schema, 1 ms of a run of
 * /bin/true); NULL when it cannot be read. */
static int import_and_report(struct lp_run_opts *o, char *const *argv, double secs, sqlite3 **db)
{
	char err[1024];
	struct lp_import_stats st;
	struct lp_import_opts io = {.force = o->force};
	char cmdline[1024] = "";
	for (int i = 0; argv[i]; i++) {
		size_t l = strlen(cmdline);
		snprintf(cmdline + l, sizeof(cmdline) - l, "%s%s", i ? " " : "", argv[i]);
	}
	io.run_cmdline = cmdline;
	/* The cores the app was started with (its affinity: latprof's own, as
	 * `taskset -c 0 latprof run` sets it), for the cpu-starved rule. */
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		io.run_cpus_allowed = CPU_COUNT(&set);
	io.host_cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
	int rc = lp_import_dir(o->logdir, o->output, &io, &st, err, sizeof(err));
	if (rc) {
		lp_cli_error("import failed: %s", err);
		lp_cli_error("the event logs are kept in %s (latprof import %s -o FILE.db)",
			     o->logdir, o->logdir);
		return -1;
	}
	if (o->left_running) /* they still write there: removing it would race them */
		fprintf(stderr,
			"latprof: event logs kept in %s; once the descendants exit, "
			"'latprof import %s -o FILE.db' imports their whole recording\n",
			o->logdir, o->logdir);
	else if (!o->keep_logs)
		remove_logdir(o);
	else
		fprintf(stderr, "latprof: event logs kept in %s\n", o->logdir);
	fprintf(stderr,
		"latprof: recorded %d process%s, %lld thread%s, %lld lock wait%s in %.2f s "
		"(%lld records dropped%s)\n",
		st.processes, st.processes == 1 ? "" : "es", st.threads, st.threads == 1 ? "" : "s",
		st.lock_waits, st.lock_waits == 1 ? "" : "s", secs, st.dropped_records,
		names_lost(&st));
	if (st.damaged_chunks)
		fprintf(stderr,
			"latprof: %lld damaged chunk%s skipped: their records are not in the "
			"database\n",
			st.damaged_chunks, st.damaged_chunks == 1 ? "" : "s");
	lp_db_open_ro(o->output, db, err, sizeof(err)); /* *db NULL when it fails */
	lp_run_summary_notes(*db, o->output);
	fprintf(stderr, "latprof: wrote %s; see 'latprof report %s'\n", o->output, o->output);
	return 0;
}

/* clang-format off */
static const struct option lp_run_longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, 'f'},
    {"keep-logs", no_argument, NULL, 'k'},
    {"cuda", required_argument, NULL, 'C'},
    {"counters", required_argument, NULL, 'c'},
    {"block-threshold", required_argument, NULL, 'B'},
    {"wait", required_argument, NULL, 'w'},
    {"help", no_argument, NULL, 'h'},
    {0},
};
/* clang-format on */

static int run_parse(int argc, char **argv, struct lp_run_opts *o)
{
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:fh", lp_run_longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output_pattern = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'k':
			o->keep_logs = 1;
			break;
		case 'C':
		case 'c':
		case 'B':
			if (lp_run_source_option(o, c, optarg))
				return -1;
			break;
		case 'w':
			if (strcmp(optarg, "primary") && strcmp(optarg, "all")) {
				lp_cli_usage_error("run", "--wait wants primary or all, not '%s'",
						   optarg);
				return -1;
			}
			o->wait_all = !strcmp(optarg, "all");
			break;
		case 'h':
			lp_cli_print_help(&lp_cmd_run);
			exit(0);
		default:
			lp_cli_bad_option("run", argv[optind - 1], lp_run_longopts);
			return -1;
		}
	}
	if (optind >= argc) {
		lp_cli_usage_error("run", "no program given: latprof run [options] -- CMD ARGS...");
		return -1;
	}
	return optind;
}

/* The private log directory, named by its absolute path whatever TMPDIR
 * is: the app and every process it starts are handed it (LATPROF_DIR) and
 * create their logs there after any chdir. */
static int make_logdir(struct lp_run_opts *o)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	tmp = tmp && *tmp ? tmp : "/tmp";
	if (!realpath(tmp, dir))
		return lp_cli_error("cannot create a log directory in %s (TMPDIR): %s", tmp,
				    strerror(errno));
	if (snprintf(o->logdir, sizeof(o->logdir), "%s/latprof-XXXXXX", dir) >=
	    (int)sizeof(o->logdir))
		return lp_cli_error("TMPDIR %s is too long a path for the log directory", tmp);
	if (!mkdtemp(o->logdir))
		return lp_cli_error("cannot create a log directory in %s: %s", tmp,
				    strerror(errno));
	return 0;
}

static int run_run(int argc, char **argv)
{
	struct lp_run_opts o = {0};
	char prog[PATH_MAX];
	int first = run_parse(argc, argv, &o);
	if (first < 0)
		return LP_EXIT_USAGE;
	char **app_argv = argv + first;
	if (lp_run_check_env())
		return LP_EXIT_USAGE;
	int found = find_program(app_argv[0], prog, sizeof(prog));
	if (found == -EACCES || found == -EISDIR) {
		lp_cli_error("cannot run '%s': %s", app_argv[0], strerror(-found));
		return 126; /* as a shell: found, not executable */
	}
	if (found)
		return lp_cli_error("cannot find program '%s'", app_argv[0]);
	if (lp_run_prepare_output(&o))
		return LP_EXIT_USAGE;
	const char *why = lp_run_unattachable(prog);
	if (why)
		fprintf(stderr, "latprof: warning: %s %s\n", prog, why);
	char *preload = xasprintf("%s/liblatprof_preload.so", lp_cli_libdir());
	if (access(preload, R_OK) != 0)
		return lp_cli_error("missing %s (reinstall latprof)", preload);
	free(preload);
	if (make_logdir(&o))
		return LP_EXIT_USAGE;
	/* Without it (a full disk) processes keep their waits in progress in
	 * TLS, and a killed process's are lost, as before. */
	lp_inflight_make(o.logdir);
	char *reaped_path = xasprintf("%s/reaped", o.logdir);
	FILE *reaped = fopen(reaped_path, "we");
	free(reaped_path);

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	lp_run_signals_init();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0)
		return lp_cli_error("fork failed: %s", strerror(errno));
	if (pid == 0) {
		lp_run_signals_child();
		exec_app(&o, app_argv);
	}
	lp_run_signals_parent(pid);
	lp_run_mark_logs(&o, pid);
	int status = wait_tree(pid, reaped);
	if (o.wait_all)
		wait_descendants(reaped);
	o.left_running = report_left_running(&o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (reaped)
		fclose(reaped);
	int app_rc = exit_code(status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && lp_run_no_logs(&o)) {
		/* exec failed and the child said why; the dir holds only the reaped list */
		remove_logdir(&o);
		return 127;
	}
	if (!o.left_running && lp_run_no_logs(&o)) {
		/* Nothing to import: say why instead of an import error. */
		const char *cause = lp_run_unattachable(prog);
		fprintf(stderr, "latprof: nothing recorded: %s %s; no database written\n", prog,
			cause ? cause
			      : "wrote no event log (no free file descriptor under RLIMIT_NOFILE, "
				"or LD_PRELOAD was changed)");
		remove_logdir(&o);
		return app_rc;
	}
	if (lp_run_finish_output(&o, pid))
		return app_rc ? app_rc : LP_EXIT_USAGE;
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	sqlite3 *db = NULL;
	if (import_and_report(&o, app_argv, secs, &db))
		return app_rc ? app_rc : LP_EXIT_USAGE;
	int src_rc = lp_run_check_sources(&o, db);
	sqlite3_close(db);
	if (src_rc)
		return src_rc;
	return app_rc;
}

const struct lp_cmd lp_cmd_run = {
    .name = "run",
    .run = run_run,
    .summary = "record a program: lock waits, NVTX stages, CUDA work, CPU counters",
    .usage = "usage: latprof run [-o FILE.db] [--force] [--keep-logs] [--cuda=auto|on|off]\n"
	     "                   [--counters LIST] [--block-threshold DUR]\n"
	     "                   [--wait=primary|all] -- CMD ARGS...\n\n"
	     "  -o, --output FILE   database to write (default latprof-N.db in the current\n"
	     "                      directory); %p expands to the app's pid, %q{VAR} to\n"
	     "                      the value of environment variable VAR\n"
	     "  -f, --force         overwrite FILE if it exists\n"
	     "      --keep-logs     keep the raw event logs after import\n"
	     "      --cuda=MODE     CUDA capture: auto (default), on (exit 2 when nothing\n"
	     "                      was captured), off\n"
	     "      --counters LIST CPU counters (libpfm4 names), 'default', 'hw', 'none'\n"
	     "      --block-threshold DUR  record sleeps, descriptor I/O, poll waits,\n"
	     "                      fsync and futex waits lasting at least DUR that\n"
	     "                      left the CPU (10us default; a unit is required:\n"
	     "                      ns, us, ms, s; 0 records every call; off)\n"
	     "      --wait=WHAT     primary (default): import once the app exits; all: also\n"
	     "                      wait for the descendants it left running (daemons,\n"
	     "                      background jobs) until they exit or latprof gets\n"
	     "                      INT, TERM or HUP\n\n"
	     "Environment (checked before the app starts; sizes take M, G units):\n"
	     "TMPDIR (where the private log directory is made),\n"
	     "LATPROF_LOG_MB (log size cap per process, default 1024, e.g. 2G),\n"
	     "LATPROF_COUNTERS_INTERVAL_NS (least time between two counter reads on a\n"
	     "thread, default 20000; 0 reads at every NVTX boundary),\n"
	     "LATPROF_CUPTI (path of the libcupti to use, e.g. a PyTorch wheel's copy;\n"
	     "default: the build's soname through the library path, then the build's\n"
	     "CUDA directory), LATPROF_CUDA_BUFFER_MB (CUPTI buffers, default 64),\n"
	     "LATPROF_BLOCK_SWITCH=off (time every blocking call over the threshold,\n"
	     "also those that never left the CPU; default: found by a probe).\n\n"
	     "The exit status is the app's (128+N when signal N killed it). Signals\n"
	     "INT, TERM, HUP, QUIT, USR1, USR2 sent to latprof are forwarded to the app,\n"
	     "which runs in a process group of its own (and holds the terminal when\n"
	     "latprof does): kill %1, kill -PGID and Ctrl-C each reach it once.\n"
	     "If the import fails, the logs are kept and 'latprof import DIR' retries.\n"
	     "While the app runs, FILE.db.logs links to the log directory: if latprof\n"
	     "itself is killed, 'latprof import FILE.db.logs -o FILE.db' imports it.\n",
};
