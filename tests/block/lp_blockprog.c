/* SPDX-License-Identifier: MIT */
/*
 * Blocking-call hooks under test: every hooked family once, each made to
 * block about 3 ms by a helper thread, in a thread named after the call, so
 * the test can match rows to calls. The program checks what the hooks must
 * keep (return values, errno, cancellation) itself and exits 1 on a
 * mismatch. Modes:
 *   calls   the families: sleeps, pipe/socket/eventfd/file I/O, accept,
 *           poll/ppoll/select/pselect/epoll, fsync, syscall(SYS_futex),
 *           sigwait/sigwaitinfo/sigtimedwait/sigsuspend, fflush
 *   errno   a recorded call that succeeds leaves errno alone; one that
 *           fails sets it (threshold 0 records every call)
 *   fork    the child reads a pipe a helper writes late: its own log has it
 *   cancel  a thread cancelled inside read() ends; later calls still record
 *   clock FILE  sleeps of 3 ms, 10 x 2 ms and 100 ms, each between two
 *           CLOCK_MONOTONIC reads of its own written to FILE ("before
 *           after" ns), with pipe calls under the threshold between them:
 *           the hooks' clock (TSC ticks after the first 2 ms) must place
 *           each recorded sleep inside its bracket, on the core's clock
 *   exitwait FILE  threads still waiting when the process exits: one in
 *           pthread_cond_wait, one in read() on a pipe, one on a mutex
 *           main holds, one in waitpid() on a child; one more whose
 *           condition wait returns before exit. Each writes "NAME ns"
 *           (CLOCK_MONOTONIC just before it blocks) to FILE; main then
 *           writes "exit ns" and exits while they wait
 *   killwait FILE SIG  as exitwait, with a fifth thread asleep in nanosleep
 *           ("sleepidle"); main writes "kill ns" and the process dies of
 *           signal SIG (kill(2) to itself: SIGKILL runs no code of ours)
 *   lookup FILE  name lookups of "slow.lp-test" (getaddrinfo, AF_INET) and
 *           "slow2.lp-test" (gethostbyname) in thread "lookup", each
 *           between two CLOCK_MONOTONIC reads written to FILE ("call before
 *           after found"); the test's DNS server answers them late; then
 *           a 3 ms sleep
 *   filelock FILE  a forked child holds an flock and two fcntl record locks
 *           on FILE and lets go of each 30 ms after thread "filelock" blocked
 *           on it (/proc/locks); that thread waits for each in turn:
 *           flock(LOCK_EX), fcntl(F_SETLKW), lockf(F_LOCK)
 *   zero FILE  20 reads of 4 MB from /dev/zero (each some 100 us in the
 *           kernel, on the CPU: no sleep), in thread "zeroread", which
 *           writes to FILE the context switches the kernel counted for
 *           it across them ("switches N", /proc/thread-self/status)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lp_asleep.h"

#define DELAY_US 3000

static int fails;
#define EXPECT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "lp_blockprog: %s:%d: %s\n", __func__, __LINE__, #cond);   \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

static void pause_us(long us)
{
	struct timespec ts = {0, us * 1000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void name(const char *n)
{
	pthread_setname_np(pthread_self(), n);
}

/* A helper that writes one byte to fd the delay after thread tid blocked. */
struct late_fd {
	int fd;
	pid_t tid;
};

static void *late_write(void *arg)
{
	struct late_fd lf = *(struct late_fd *)arg;
	free(arg);
	lp_wait_asleep(getpid(), lf.tid, NULL);
	pause_us(DELAY_US);
	uint64_t one = 1;
	if (write(lf.fd, &one, sizeof(one)) < 0)
		perror("late_write");
	return NULL;
}

/* Called by the thread that blocks next, on fd's other end. */
static void later(int fd)
{
	pthread_t th;
	struct late_fd *lf = malloc(sizeof(*lf));
	lf->fd = fd;
	lf->tid = lp_gettid();
	pthread_create(&th, NULL, late_write, lf);
	pthread_detach(th);
}

static void *t_sleeps(void *arg)
{
	(void)arg;
	name("sleeps");
	struct timespec ts = {0, DELAY_US * 1000};
	EXPECT(nanosleep(&ts, NULL) == 0);
	EXPECT(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == 0);
	EXPECT(usleep(DELAY_US) == 0);
	return NULL;
}

static void *t_pipe(void *arg)
{
	(void)arg;
	name("pipe");
	int p[2];
	uint64_t v;
	EXPECT(pipe(p) == 0);
	later(p[1]);
	EXPECT(read(p[0], &v, sizeof(v)) == sizeof(v));
	later(p[1]);
	struct pollfd pf = {.fd = p[0], .events = POLLIN};
	EXPECT(poll(&pf, 1, -1) == 1 && read(p[0], &v, sizeof(v)) == sizeof(v));
	later(p[1]);
	struct timespec ts = {5, 0};
	EXPECT(ppoll(&pf, 1, &ts, NULL) == 1 && read(p[0], &v, sizeof(v)) == sizeof(v));
	later(p[1]);
	fd_set rs;
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	EXPECT(select(p[0] + 1, &rs, NULL, NULL, NULL) == 1 && read(p[0], &v, sizeof(v)) == 8);
	later(p[1]);
	FD_SET(p[0], &rs);
	EXPECT(pselect(p[0] + 1, &rs, NULL, NULL, &ts, NULL) == 1 &&
	       read(p[0], &v, sizeof(v)) == 8);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN}, out;
	EXPECT(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
	later(p[1]);
	EXPECT(epoll_wait(ep, &out, 1, -1) == 1 && read(p[0], &v, sizeof(v)) == 8);
	close(ep);
	close(p[0]);
	close(p[1]);
	return NULL;
}

static void *t_eventfd(void *arg)
{
	(void)arg;
	name("eventfd");
	int e = eventfd(0, 0);
	uint64_t v = 0;
	later(e);
	EXPECT(read(e, &v, sizeof(v)) == sizeof(v) && v == 1);
	close(e);
	return NULL;
}

static void *t_socket(void *arg)
{
	(void)arg;
	name("socket");
	int sv[2];
	char c;
	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	later(sv[1]);
	EXPECT(recv(sv[0], &c, 1, 0) == 1);
	char rest[7];
	EXPECT(recv(sv[0], rest, sizeof(rest), 0) == 7); /* the rest of the u64: not blocking */
	close(sv[0]);
	close(sv[1]);
	/* accept on a listening socket a helper connects to late */
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "@lp_blockprog_%d", getpid());
	a.sun_path[0] = 0; /* abstract */
	socklen_t al =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
	EXPECT(bind(l, (struct sockaddr *)&a, al) == 0 && listen(l, 1) == 0);
	pid_t acceptor = lp_gettid(), app = getpid();
	if (fork() == 0) {
		lp_wait_asleep(app, acceptor, NULL);
		pause_us(DELAY_US);
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		_exit(connect(s, (struct sockaddr *)&a, al) == 0 ? 0 : 1);
	}
	int s = accept(l, NULL, NULL);
	EXPECT(s >= 0);
	int st;
	wait(&st);
	close(s);
	close(l);
	return NULL;
}

static void *t_file(void *arg)
{
	name("file");
	int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	static char buf[1 << 20];
	memset(buf, 7, sizeof(buf));
	for (int i = 0; i < 8; i++)
		EXPECT(write(fd, buf, sizeof(buf)) == sizeof(buf));
	EXPECT(fsync(fd) == 0);
	close(fd);
	unlink((const char *)arg);
	return NULL;
}

/* A helper that drains a pipe after the delay. */
static void *late_drain(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static char sink[1 << 17];
	pause_us(DELAY_US);
	while (read(fd, sink, sizeof(sink)) == (ssize_t)sizeof(sink))
		;
	return NULL;
}

/* fflush into a full pipe: blocks until the helper drains it. */
static void *t_stdio(void *arg)
{
	(void)arg;
	name("stdio");
	int p[2];
	static char full[1 << 16], line[100]; /* under st_blksize: buffered, not written through */
	EXPECT(pipe(p) == 0 && fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
	EXPECT(write(p[1], full, sizeof(full)) == sizeof(full)); /* a pipe holds 64 KiB */
	FILE *f = fdopen(p[1], "w");
	EXPECT(f && setvbuf(f, NULL, _IOFBF, 1 << 14) == 0);
	if (!f)
		return NULL;
	EXPECT(fwrite(line, 1, sizeof(line), f) == sizeof(line));
	pthread_t th;
	pthread_create(&th, NULL, late_drain, (void *)(intptr_t)p[0]);
	EXPECT(fflush(f) == 0);
	pthread_join(th, NULL);
	fclose(f);
	close(p[0]);
	return NULL;
}

static void *t_futex(void *arg)
{
	(void)arg;
	name("futex");
	static uint32_t word;
	struct timespec ts = {0, DELAY_US * 1000};
	errno = 0;
	long rc = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	EXPECT(rc == -1 && errno == ETIMEDOUT);
	return NULL;
}

static void run(void *(*fn)(void *), void *arg)
{
	pthread_t th;
	pthread_create(&th, NULL, fn, arg);
	pthread_join(th, NULL);
}

/* A helper that sends sig to thread th the delay after it blocked. */
struct late_sig {
	pthread_t th;
	pid_t tid;
	int sig;
};

static void *late_kill(void *arg)
{
	struct late_sig ls = *(struct late_sig *)arg;
	free(arg);
	lp_wait_asleep(getpid(), ls.tid, NULL);
	pause_us(DELAY_US);
	pthread_kill(ls.th, ls.sig);
	return NULL;
}

static void signal_later(int sig)
{
	pthread_t th;
	struct late_sig *ls = malloc(sizeof(*ls));
	ls->th = pthread_self();
	ls->tid = lp_gettid();
	ls->sig = sig;
	pthread_create(&th, NULL, late_kill, ls);
	pthread_detach(th);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void *t_signals(void *arg)
{
	(void)arg;
	name("signals");
	sigset_t usr1, none;
	int sig;
	siginfo_t si;
	struct timespec ts = {5, 0};
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&none);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	signal_later(SIGUSR1);
	EXPECT(sigwait(&usr1, &sig) == 0 && sig == SIGUSR1);
	signal_later(SIGUSR1);
	EXPECT(sigwaitinfo(&usr1, &si) == SIGUSR1);
	signal_later(SIGUSR1);
	EXPECT(sigtimedwait(&usr1, &si, &ts) == SIGUSR1);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	signal_later(SIGUSR1); /* sigsuspend unblocks it atomically: no lost wake-up */
	EXPECT(sigsuspend(&none) == -1 && errno == EINTR);
	return NULL;
}

static void mode_calls(const char *file)
{
	run(t_sleeps, NULL);
	run(t_pipe, NULL);
	run(t_eventfd, NULL);
	run(t_socket, NULL);
	run(t_file, (void *)file);
	run(t_futex, NULL);
	run(t_signals, NULL);
	run(t_stdio, NULL);
}

static void mode_errno(void)
{
	int p[2];
	char c = 'x';
	EXPECT(pipe(p) == 0);
	errno = 4242;
	EXPECT(write(p[1], &c, 1) == 1 && errno == 4242);
	EXPECT(read(p[0], &c, 1) == 1 && errno == 4242);
	EXPECT(read(-1, &c, 1) == -1 && errno == EBADF);
	EXPECT(recv(p[0], &c, 1, 0) == -1 && errno == ENOTSOCK);
	struct timespec bad = {0, -1};
	EXPECT(nanosleep(&bad, NULL) == -1 && errno == EINVAL);
	EXPECT(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL) == EINVAL);
	close(p[0]);
	close(p[1]);
}

/* One call site for the parent and the child: the child must not reuse a
 * stack id the parent interned there. */
__attribute__((noinline)) static int blocked_read(int fd)
{
	uint64_t v;
	later(fd + 1);
	return read(fd, &v, sizeof(v)) == sizeof(v);
}

static void mode_fork(void)
{
	int p[2];
	EXPECT(pipe(p) == 0 && p[1] == p[0] + 1);
	EXPECT(blocked_read(p[0]));
	pid_t pid = fork();
	if (pid == 0) {
		name("child");
		_exit(blocked_read(p[0]) ? 0 : 1);
	}
	int st;
	EXPECT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void *t_cancelled(void *arg)
{
	name("cancelled");
	char c;
	ssize_t n = read(*(int *)arg, &c, 1); /* never returns: cancelled */
	(void)n;
	return NULL;
}

static void mode_cancel(void)
{
	int p[2];
	void *res;
	pthread_t th;
	EXPECT(pipe(p) == 0);
	pthread_create(&th, NULL, t_cancelled, p);
	pause_us(DELAY_US);
	pthread_cancel(th);
	EXPECT(pthread_join(th, &res) == 0 && res == PTHREAD_CANCELED);
	run(t_sleeps, NULL); /* recorded afterwards as before */
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One sleep of `us`, bracketed by our own clock reads, written to f. */
static void bracketed_sleep(FILE *f, long us)
{
	struct timespec ts = {us / 1000000, us % 1000000 * 1000};
	uint64_t before = mono_ns();
	EXPECT(nanosleep(&ts, NULL) == 0);
	uint64_t after = mono_ns();
	fprintf(f, "%llu %llu\n", (unsigned long long)before, (unsigned long long)after);
}

static void mode_clock(const char *file)
{
	FILE *f = fopen(file, "w");
	int p[2];
	char c = 1;
	EXPECT(f && pipe(p) == 0);
	if (!f)
		return;
	name("clock");
	bracketed_sleep(f, 3000); /* the hooks calibrate the TSC past 2 ms */
	for (int i = 0; i < 10; i++) {
		for (int k = 0; k < 100; k++) /* short calls: timed, not recorded */
			EXPECT(write(p[1], &c, 1) == 1 && read(p[0], &c, 1) == 1);
		bracketed_sleep(f, 2000);
	}
	bracketed_sleep(f, 100000);
	fclose(f);
}

/* ---- exitwait ---------------------------------------------------------- */

static pthread_mutex_t ew_m = PTHREAD_MUTEX_INITIALIZER, ew_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ew_never = PTHREAD_COND_INITIALIZER, ew_soon = PTHREAD_COND_INITIALIZER;
static int ew_pipe[2], ew_blocked, ew_soon_done;
static uint64_t ew_at[5];
static const char *const ew_names[5] = {"condidle", "pipeidle", "lockidle", "waitidle",
					"sleepidle"};

/* The time just before thread i blocks, for main to write. */
static void ew_about_to_block(int i)
{
	name(ew_names[i]);
	ew_at[i] = mono_ns();
	__atomic_add_fetch(&ew_blocked, 1, __ATOMIC_RELEASE);
}

static void *ew_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	char c;
	pid_t child;
	switch (i) {
	case 0:
		pthread_mutex_lock(&ew_m);
		ew_about_to_block(i);
		for (;;)
			pthread_cond_wait(&ew_never, &ew_m);
	case 1:
		ew_about_to_block(i);
		EXPECT(read(ew_pipe[0], &c, 1) == 1);
		break;
	case 2:
		ew_about_to_block(i);
		pthread_mutex_lock(&ew_held);
		break;
	case 4:
		ew_about_to_block(i);
		pause_us(999999);
		break;
	default:
		child = fork();
		if (child == 0) { /* dies with the thread that forked it */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		ew_about_to_block(i);
		waitpid(child, NULL, 0);
	}
	return NULL;
}

static void *ew_returns(void *arg)
{
	(void)arg;
	name("condreturns");
	pthread_mutex_lock(&ew_m);
	while (!ew_soon_done)
		pthread_cond_wait(&ew_soon, &ew_m);
	pthread_mutex_unlock(&ew_m);
	return NULL;
}

/* sig 0: exit with the threads waiting; else die of sig, with a fifth. */
static void mode_exitwait(const char *path, int sig)
{
	pthread_t th;
	int n = sig ? 5 : 4;
	FILE *f = fopen(path, "w");
	EXPECT(f && pipe(ew_pipe) == 0);
	if (!f)
		return;
	pthread_mutex_lock(&ew_held);
	pthread_create(&th, NULL, ew_returns, NULL);
	for (int i = 0; i < n; i++)
		pthread_create(&th, NULL, ew_thread, (void *)(intptr_t)i);
	while (__atomic_load_n(&ew_blocked, __ATOMIC_ACQUIRE) < n)
		pause_us(1000);
	pause_us(100000);
	pthread_mutex_lock(&ew_m);
	ew_soon_done = 1;
	pthread_cond_signal(&ew_soon);
	pthread_mutex_unlock(&ew_m);
	pause_us(200000);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s %llu\n", ew_names[i], (unsigned long long)ew_at[i]);
	fprintf(f, "%s %llu\n", sig ? "kill" : "exit", (unsigned long long)mono_ns());
	fclose(f);
	if (sig) {
		signal(sig, SIG_DFL);
		kill(getpid(), sig);
	}
	exit(fails ? 1 : 0); /* with four threads still waiting */
}

/* ---- filelock ---------------------------------------------------------- */

/* How long a lock stays held once the parent waits for it. */
#define HOLD_US 30000

/* Until /proc/locks lists a request of kind ("FLOCK", "POSIX") blocked on
 * inode ino (a "-> " line), 10 s at most. No fixed hold can promise that
 * the parent waits: on a loaded machine it may reach its lock call only
 * after the lock was let go, and take it without waiting. */
static void filelock_wait_blocked(const char *kind, unsigned long ino)
{
	char want[32], ino_s[32], line[256];
	snprintf(want, sizeof(want), "-> %s", kind);
	snprintf(ino_s, sizeof(ino_s), ":%lu ", ino);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen("/proc/locks", "r");
		int found = 0;
		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, want) && strstr(line, ino_s);
		if (f)
			fclose(f);
		if (found)
			return;
		pause_us(1000);
	}
}

/* The child: locks everything, says so, then lets go of each lock HOLD_US
 * after the parent blocked on it (the last, bytes 2-3, when it exits). */
static void filelock_holder(const char *path, int told)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	struct flock range = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 2};
	if (fd < 0 || fstat(fd, &st) || flock(fd, LOCK_EX) || fcntl(fd, F_SETLK, &range))
		_exit(1);
	range.l_start = 2;
	if (fcntl(fd, F_SETLK, &range) || write(told, "x", 1) != 1)
		_exit(1);
	filelock_wait_blocked("FLOCK", (unsigned long)st.st_ino);
	pause_us(HOLD_US);
	flock(fd, LOCK_UN);
	filelock_wait_blocked("POSIX", (unsigned long)st.st_ino);
	pause_us(HOLD_US);
	range.l_start = 0;
	range.l_type = F_UNLCK;
	fcntl(fd, F_SETLK, &range);
	filelock_wait_blocked("POSIX", (unsigned long)st.st_ino);
	pause_us(HOLD_US);
	_exit(0);
}

static void mode_filelock(const char *path)
{
	int told[2], status = -1;
	char c;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT(fd >= 0 && pipe(told) == 0 && write(fd, "0123", 4) == 4);
	pid_t child = fork();
	if (child == 0)
		filelock_holder(path, told[1]);
	EXPECT(child > 0 && read(told[0], &c, 1) == 1);
	name("filelock");
	int fd2 = open(path, O_RDWR); /* another open file description: flock conflicts */
	EXPECT(fd2 >= 0 && flock(fd2, LOCK_EX) == 0);
	struct flock range = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 2};
	EXPECT(fcntl(fd, F_SETLKW, &range) == 0);
	EXPECT(lseek(fd, 2, SEEK_SET) == 2 && lockf(fd, F_LOCK, 2) == 0);
	EXPECT(waitpid(child, &status, 0) == child && status == 0);
	close(fd2);
	close(fd);
}

/* ---- lookup ------------------------------------------------------------ */

static void mode_lookup(const char *path)
{
	FILE *out = fopen(path, "w");
	EXPECT(out != NULL);
	if (!out)
		return;
	name("lookup");
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	uint64_t before = mono_ns();
	int rc = getaddrinfo("slow.lp-test", "80", &hints, &res);
	uint64_t after = mono_ns();
	fprintf(out, "getaddrinfo %llu %llu %d\n", (unsigned long long)before,
		(unsigned long long)after, rc == 0);
	if (res)
		freeaddrinfo(res);
	before = mono_ns();
	struct hostent *h = gethostbyname("slow2.lp-test");
	after = mono_ns();
	fprintf(out, "gethostbyname %llu %llu %d\n", (unsigned long long)before,
		(unsigned long long)after, h != NULL);
	fclose(out);
	pause_us(3000); /* recorded: the lookups left their hooks' guard down */
}

/* ---- zero -------------------------------------------------------------- */

/* voluntary + nonvoluntary context switches of the calling thread */
static long thread_switches(void)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	char line[256];
	long n = 0, v;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			n += v;
	if (f)
		fclose(f);
	return n;
}

static void mode_zero(const char *path)
{
	enum { SIZE = 4 << 20, READS = 20 };
	FILE *out = fopen(path, "w");
	char *buf = malloc(SIZE);
	int fd = open("/dev/zero", O_RDONLY);
	EXPECT(out && buf && fd >= 0);
	if (!out || !buf || fd < 0)
		return;
	name("zeroread");
	memset(buf, 1, SIZE); /* its pages faulted in before the window */
	long before = thread_switches();
	for (int i = 0; i < READS; i++)
		EXPECT(read(fd, buf, SIZE) == SIZE);
	long after = thread_switches();
	fprintf(out, "switches %ld\n", after - before);
	fclose(out);
	close(fd);
	free(buf);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "calls"))
		mode_calls(argc > 2 ? argv[2] : "lp_blockprog.dat");
	else if (!strcmp(mode, "errno"))
		mode_errno();
	else if (!strcmp(mode, "fork"))
		mode_fork();
	else if (!strcmp(mode, "cancel"))
		mode_cancel();
	else if (!strcmp(mode, "clock") && argc > 2)
		mode_clock(argv[2]);
	else if (!strcmp(mode, "exitwait") && argc > 2)
		mode_exitwait(argv[2], 0);
	else if (!strcmp(mode, "killwait") && argc > 3)
		mode_exitwait(argv[2], atoi(argv[3]));
	else if (!strcmp(mode, "zero") && argc > 2)
		mode_zero(argv[2]);
	else if (!strcmp(mode, "lookup") && argc > 2)
		mode_lookup(argv[2]);
	else if (!strcmp(mode, "filelock") && argc > 2)
		mode_filelock(argv[2]);
	else
		return fprintf(stderr, "usage: lp_blockprog calls [FILE]|errno|fork|cancel|clock "
				       "FILE|exitwait FILE|killwait FILE SIG|zero FILE|lookup "
				       "FILE|filelock FILE\n"),
		       2;
	return fails ? 1 : 0;
}
