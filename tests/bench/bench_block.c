/* SPDX-License-Identifier: MIT */
/*
 * The cost of the blocking-call hooks on calls that do not block long:
 * bench_block pipe [N]: 64-byte write() + read() on a pipe, N times (each
 * call far under the 10 us threshold: a clock read pair, no record);
 * bench_block nanosleep [N]: nanosleep(0), N times (the timer slack makes
 * each one last tens of microseconds: every call is recorded);
 * bench_block pingpong [N]: two threads pinned to one CPU pass a byte back
 * and forth over two pipes, N round trips: two context switches each, the
 * cost a thread's perf_event counters add at every switch (a thread that
 * marks no NVTX range opens none since 79b58e9; before, such round trips
 * took 1.4-1.9x as long under `latprof run`). No direct batches there: the
 * peer thread calls what the main thread calls.
 *
 * Prints "ns_per_op=X best_ns_per_op=Y direct_best_ns_per_op=Z
 * iterations=N". best_ns_per_op is the fastest batch (2,000 pairs, or 20
 * sleeps: about 1 ms, short enough that some batches run undisturbed on a
 * loaded machine): the mean carries other tenants' load, the best batch is
 * the code's own cost. Between those batches run as many that call libc's
 * own functions (dlsym in libc's handle: no interposer in the way);
 * direct_best_ns_per_op is their fastest. Under `latprof run`, best minus
 * direct best is what the hooks add, measured in one process at one load.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct calls {
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*read)(int, void *, size_t);
	int (*nanosleep)(const struct timespec *, struct timespec *);
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int pipe_loop(const struct calls *c, long n, const int *p)
{
	char buf[64];
	memset(buf, 1, sizeof(buf));
	for (long i = 0; i < n; i++)
		if (c->write(p[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
		    c->read(p[0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -1;
	return 0;
}

static int sleep_loop(const struct calls *c, long n)
{
	struct timespec zero = {0, 0};
	for (long i = 0; i < n; i++)
		if (c->nanosleep(&zero, NULL) != 0)
			return -1;
	return 0;
}

/* Ping-pong: the main thread writes to ping and reads pong, the peer the
 * other way round, each through the program's own calls. */
static int ping[2], pong[2];

static void *peer_loop(void *arg)
{
	const struct calls *c = arg;
	char b;
	while (c->read(ping[0], &b, 1) == 1 && b)
		if (c->write(pong[1], &b, 1) != 1)
			break;
	return NULL;
}

static int pingpong_loop(const struct calls *c, long n)
{
	char b = 1;
	for (long i = 0; i < n; i++)
		if (c->write(ping[1], &b, 1) != 1 || c->read(pong[0], &b, 1) != 1)
			return -1;
	return 0;
}

enum mode { M_PIPE, M_SLEEP, M_PINGPONG };

/* One batch of `c`'s calls; its ns per op, or a negative number. */
static double batch_of(enum mode m, const struct calls *c, long n, const int *p)
{
	double b0 = now_ns();
	int rc = m == M_SLEEP  ? sleep_loop(c, n)
		 : m == M_PIPE ? pipe_loop(c, n, p)
			       : pingpong_loop(c, n);
	if (rc)
		return -1;
	return (now_ns() - b0) / (double)n;
}

/* Pins the process to the CPU it runs on and starts the peer. */
static int pingpong_start(struct calls *c, pthread_t *peer)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) || pipe(ping) || pipe(pong))
		return -1;
	return pthread_create(peer, NULL, peer_loop, c) ? -1 : 0;
}

/* Batches of `batch` ops of the program's calls, each followed by as many
 * of libc's own when libc is given; prints the mean, the best batch and
 * libc's best batch. 0, or 1 when a call failed. */
static int measure(enum mode m, const struct calls *app, const struct calls *libc, long batch,
		   long n, const int *p)
{
	/* warm up: the first calls resolve the interposer's functions */
	long warm = m == M_SLEEP ? 10 : 1000;
	if (batch_of(m, app, warm, p) < 0 || (libc && batch_of(m, libc, warm, p) < 0))
		return 1;
	long total = (n + batch - 1) / batch * batch;
	double best = 1e30, direct = 1e30, sum = 0;
	for (long done = 0; done < total; done += batch) {
		double b = batch_of(m, app, batch, p);
		double d = libc ? batch_of(m, libc, batch, p) : 0;
		if (b < 0 || d < 0)
			return 1;
		sum += b * (double)batch;
		best = b < best ? b : best;
		direct = d < direct ? d : direct;
	}
	printf("ns_per_op=%.3f best_ns_per_op=%.3f", sum / (double)total, best);
	if (libc)
		printf(" direct_best_ns_per_op=%.3f", direct);
	printf(" iterations=%ld\n", total);
	return 0;
}

/* Only the program's calls (the peer makes them too), in batches of 200
 * round trips (~1-2 ms). */
static int pingpong_main(long n)
{
	static struct calls app = {write, read, nanosleep};
	pthread_t peer;
	if (pingpong_start(&app, &peer))
		return 1;
	int rc = measure(M_PINGPONG, &app, NULL, 200, n, NULL);
	char stop = 0;
	if (write(ping[1], &stop, 1) != 1 || pthread_join(peer, NULL))
		return 1;
	return rc;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "";
	enum mode m = !strcmp(name, "nanosleep")  ? M_SLEEP
		      : !strcmp(name, "pingpong") ? M_PINGPONG
						  : M_PIPE;
	if (m == M_PIPE && strcmp(name, "pipe"))
		return fprintf(stderr, "usage: bench_block pipe|nanosleep|pingpong [N]\n"), 2;
	int sleep_mode = m == M_SLEEP;
	long n = argc > 2 ? atol(argv[2]) : sleep_mode ? 20000 : m == M_PINGPONG ? 100000 : 1000000;
	if (n <= 0)
		return 2;
	if (m == M_PINGPONG)
		return pingpong_main(n);
	int p[2];
	if (pipe(p))
		return 2;
	/* The calls as the program makes them (through the interposer, if any),
	 * and libc's own. */
	struct calls app = {write, read, nanosleep}, libc;
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	libc.write = h ? (ssize_t(*)(int, const void *, size_t))dlsym(h, "write") : NULL;
	libc.read = h ? (ssize_t(*)(int, void *, size_t))dlsym(h, "read") : NULL;
	libc.nanosleep =
	    h ? (int (*)(const struct timespec *, struct timespec *))dlsym(h, "nanosleep") : NULL;
	if (!libc.write || !libc.read || !libc.nanosleep)
		return fprintf(stderr, "bench_block: libc.so.6's functions not found\n"), 2;
	return measure(m, &app, &libc, sleep_mode ? 20 : 2000, n, p);
}
