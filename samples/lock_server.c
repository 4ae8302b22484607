/* SPDX-License-Identifier: MIT */
/*
 * lock_server: a toy "model server" with the classic contention bug. A pool
 * of worker threads serves requests; each request does some CPU work, then
 * updates shared model state under one global mutex, `model_lock`, so the
 * workers queue on it. --per-thread gives each worker its own state and
 * lock: same work, no contention.
 *
 * It measures its own lock waits (clock_gettime around each acquisition) so
 * tests can check what latprof recorded against what the program saw:
 *   --stats FILE       key=value totals at exit
 *   --side-count FILE  after every long contended acquisition (see
 *                      LP_LONG_WAIT_NS), the number of them so far,
 *                      rewritten in place as one fixed-size record (always
 *                      consistent, even after SIGKILL)
 *   --kill-self-after N  raise SIGKILL after N requests (crash test)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LP_MAX_THREADS 1024
#define LP_SIDE_RECORD 64
/*
 * A failed trylock followed by a wait this long surely blocked inside
 * pthread_mutex_lock, so a profiler must have seen it. A failed trylock
 * with a short wait may have found the lock free again a moment later, so
 * such acquisitions count only as `contended` (an upper bound).
 */
#define LP_LONG_WAIT_NS 5000u

/* The shared state every request touches: the contention bug. */
pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t model_state;

struct worker {
	pthread_t th;
	int idx;
	pthread_mutex_t lock; /* --per-thread: private state, private lock */
	uint64_t state;
	uint64_t wait_ns;
	uint64_t acquisitions;
	uint64_t contended;
	uint64_t long_waits;
	uint64_t max_wait_ns;
};

static struct {
	int threads;
	long requests;
	long work_us;
	long locked_us;
	int per_thread;
	long kill_after;
	const char *stats;
	int side_fd;
} opt = {.threads = 8, .requests = 400, .work_us = 200, .locked_us = 100, .side_fd = -1};

static long next_request;
static uint64_t long_total; /* under model_lock */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burn CPU (not sleep) so the time is real work, as in a model forward pass. */
static uint64_t busy_us(long us, uint64_t seed)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000u;
	uint64_t x = seed | 1;
	while (now_ns() < end)
		for (int i = 0; i < 64; i++)
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

/* Rewrite the side file in place: one pwrite of a fixed-size record at
 * offset 0, so a reader never sees a half-updated count. */
static void side_update(uint64_t count)
{
	char rec[LP_SIDE_RECORD];
	memset(rec, ' ', sizeof(rec));
	int n = snprintf(rec, sizeof(rec), "long_waits=%llu pid=%d", (unsigned long long)count,
			 (int)getpid());
	rec[n] = ' ';
	rec[sizeof(rec) - 1] = '\n';
	if (pwrite(opt.side_fd, rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
		perror("lock_server: side file");
}

/*
 * Acquire m, adding the time it took to the worker's totals. Returns 1 for
 * a long contended wait (see LP_LONG_WAIT_NS).
 */
static int lock_timed(struct worker *w, pthread_mutex_t *m)
{
	uint64_t t0 = now_ns();
	int contended = 0;
	if (pthread_mutex_trylock(m) != 0) {
		pthread_mutex_lock(m);
		contended = 1;
	}
	uint64_t d = now_ns() - t0;
	w->wait_ns += d;
	w->acquisitions++;
	w->contended += (uint64_t)contended;
	if (d > w->max_wait_ns)
		w->max_wait_ns = d;
	if (!contended || d < LP_LONG_WAIT_NS)
		return 0;
	w->long_waits++;
	return 1;
}

static void serve(struct worker *w, long req)
{
	uint64_t r = busy_us(opt.work_us, (uint64_t)req);
	if (opt.per_thread) {
		lock_timed(w, &w->lock);
		w->state += busy_us(opt.locked_us, r);
		pthread_mutex_unlock(&w->lock);
		return;
	}
	int waited = lock_timed(w, &model_lock);
	model_state += busy_us(opt.locked_us, r);
	if (waited) {
		long_total++;
		if (opt.side_fd >= 0)
			side_update(long_total);
	}
	pthread_mutex_unlock(&model_lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%d", w->idx);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		long req = __atomic_fetch_add(&next_request, 1, __ATOMIC_RELAXED);
		if (req >= opt.requests)
			break;
		serve(w, req);
		if (opt.kill_after > 0 && req + 1 == opt.kill_after)
			raise(SIGKILL);
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lock_server [--threads N] [--requests N] [--work-us N] [--locked-us N]\n"
		"                   [--per-thread] [--stats FILE] [--side-count FILE]\n"
		"                   [--kill-self-after N]\n");
	exit(2);
}

static long num_arg(const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "lock_server: bad number '%s' (%ld..%ld)\n", s, lo, hi);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"threads", required_argument, NULL, 't'},
	    {"requests", required_argument, NULL, 'n'},
	    {"work-us", required_argument, NULL, 'w'},
	    {"locked-us", required_argument, NULL, 'l'},
	    {"per-thread", no_argument, NULL, 'p'},
	    {"stats", required_argument, NULL, 's'},
	    {"side-count", required_argument, NULL, 'c'},
	    {"kill-self-after", required_argument, NULL, 'k'},
	    {0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			opt.threads = (int)num_arg(optarg, 1, LP_MAX_THREADS);
			break;
		case 'n':
			opt.requests = num_arg(optarg, 0, 1L << 40);
			break;
		case 'w':
			opt.work_us = num_arg(optarg, 0, 10000000);
			break;
		case 'l':
			opt.locked_us = num_arg(optarg, 0, 10000000);
			break;
		case 'p':
			opt.per_thread = 1;
			break;
		case 's':
			opt.stats = optarg;
			break;
		case 'k':
			opt.kill_after = num_arg(optarg, 1, 1L << 40);
			break;
		case 'c':
			opt.side_fd = open(optarg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (opt.side_fd < 0) {
				perror(optarg);
				exit(2);
			}
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
}

static void report(struct worker *ws, uint64_t elapsed)
{
	uint64_t wait = 0, acq = 0, cont = 0, lng = 0, max = 0;
	for (int i = 0; i < opt.threads; i++) {
		wait += ws[i].wait_ns;
		acq += ws[i].acquisitions;
		cont += ws[i].contended;
		lng += ws[i].long_waits;
		max = ws[i].max_wait_ns > max ? ws[i].max_wait_ns : max;
	}
	printf("lock_server: %ld requests on %d threads (%s) in %.3f s\n", opt.requests,
	       opt.threads, opt.per_thread ? "per-thread state" : "global model_lock",
	       (double)elapsed / 1e9);
	printf("lock_server: lock wait %.3f ms total over %llu acquisitions, %llu contended, "
	       "max %.3f ms\n",
	       (double)wait / 1e6, (unsigned long long)acq, (unsigned long long)cont,
	       (double)max / 1e6);
	if (!opt.stats)
		return;
	FILE *f = fopen(opt.stats, "w");
	if (!f) {
		perror(opt.stats);
		exit(2);
	}
	fprintf(f,
		"threads=%d\nrequests=%ld\nper_thread=%d\nelapsed_ns=%llu\nwait_ns=%llu\n"
		"acquisitions=%llu\ncontended=%llu\nlong_waits=%llu\nmax_wait_ns=%llu\n",
		opt.threads, opt.requests, opt.per_thread, (unsigned long long)elapsed,
		(unsigned long long)wait, (unsigned long long)acq, (unsigned long long)cont,
		(unsigned long long)lng, (unsigned long long)max);
	fclose(f);
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	struct worker *ws = calloc((size_t)opt.threads, sizeof(*ws));
	if (!ws)
		return 1;
	uint64_t t0 = now_ns();
	for (int i = 0; i < opt.threads; i++) {
		ws[i].idx = i;
		pthread_mutex_init(&ws[i].lock, NULL);
		int rc = pthread_create(&ws[i].th, NULL, worker_main, &ws[i]);
		if (rc) {
			fprintf(stderr, "lock_server: pthread_create: %s\n", strerror(rc));
			return 1;
		}
	}
	for (int i = 0; i < opt.threads; i++)
		pthread_join(ws[i].th, NULL);
	report(ws, now_ns() - t0);
	free(ws);
	return 0;
}
