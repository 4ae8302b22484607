/* SPDX-License-Identifier: MIT */
/*
 * offcpu_stages: one NVTX stage per place a request's time can go, so a
 * breakdown can be checked against what the program measured itself.
 * Each "request" runs, in order:
 *   sleep    nanosleep()
 *   file     pread() with O_DIRECT of a file the page cache does not hold
 *   socket   recv() on a socketpair whose peer thread answers after a delay
 *   poll     poll() on a pipe a peer thread writes after a delay
 *   spin     spinning on the CPU
 *   starved  spinning while --spinners other threads spin too (run it under
 *            `taskset -c 0` so they share one CPU): waiting for a CPU
 * Usage: offcpu_stages [--requests N] [--delay-us D] [--spinners K]
 *                      [--file PATH] [--stats FILE]
 * The stats are key=value totals over all requests: <stage>_wall_ns (time in
 * the stage), <stage>_call_ns (time inside its blocking calls), <stage>_cpu_ns
 * (the thread's CPU time in the stage, CLOCK_THREAD_CPUTIME_ID),
 * <stage>_runq_ns (of <stage>_call_ns, the time the thread waited for a CPU:
 * the kernel's run_delay, /proc/thread-self/schedstat, read where the call
 * is timed; 0 where the kernel does not keep it), <stage>_queued_ns (the
 * same over the whole stage).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <nvtx3/nvToolsExt.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { ST_SLEEP, ST_FILE, ST_SOCKET, ST_POLL, ST_SPIN, ST_STARVED, ST_N };
static const char *const stage_names[ST_N] = {"sleep", "file", "socket", "poll", "spin", "starved"};

#define LP_BLOCK 65536 /* bytes per O_DIRECT read */
#define LP_FILE_BLOCKS 256

static struct {
	long requests;
	long delay_us;
	int spinners;
	const char *file, *stats;
} cfg = {20, 2000, 3, "offcpu_stages.dat", NULL};

static uint64_t wall_ns[ST_N], call_ns[ST_N], cpu_ns[ST_N], runq_ns[ST_N], queued_ns[ST_N];
static int schedstat = -1;
static int sock[2], pipefd[2];
static volatile int stop_spinning, spinners_run;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's run_delay (ns on a run queue since it began). By
 * syscall(): a pread() preempted on a busy machine would be recorded as
 * file I/O of the stage. */
static uint64_t run_delay_ns(void)
{
	char buf[96];
	unsigned long long cpu, delay;
	long n = schedstat < 0 ? -1 : syscall(SYS_pread64, schedstat, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return sscanf(buf, "%llu %llu", &cpu, &delay) == 2 ? delay : 0;
}

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Spins until this thread has had `us` of CPU. */
static void spin_cpu_us(long us)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)us * 1000u;
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

/* Socket peer: one byte in, a delay, one byte back. */
static void *socket_peer(void *arg)
{
	(void)arg;
	char c;
	while (recv(sock[1], &c, 1, 0) == 1) {
		sleep_us(cfg.delay_us);
		if (send(sock[1], &c, 1, 0) != 1)
			break;
	}
	return NULL;
}

/* Pipe peer: told through a second pipe when to write, writes after a delay. */
static int kick[2];
static void *pipe_peer(void *arg)
{
	(void)arg;
	char c;
	while (read(kick[0], &c, 1) == 1) {
		sleep_us(cfg.delay_us);
		if (write(pipefd[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop_spinning) {
		while (!spinners_run && !stop_spinning)
			sleep_us(200);
		while (spinners_run)
			;
	}
	return NULL;
}

static void make_file(void)
{
	int fd = open(cfg.file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(cfg.file);
		exit(2);
	}
	static char buf[LP_BLOCK];
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < LP_FILE_BLOCKS; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			exit(2);
		}
	fsync(fd);
	close(fd);
}

/* The stage's own work; returns the time spent inside its blocking call,
 * and adds the run-queue time in it to *runq. */
static uint64_t stage_work(int st, long id, int dfd, void *dbuf, uint64_t *runq)
{
	uint64_t r0 = run_delay_ns(), t0 = clock_ns(CLOCK_MONOTONIC), t1 = t0;
	char c = 'r';
	switch (st) {
	case ST_SLEEP:
		sleep_us(cfg.delay_us);
		break;
	case ST_FILE:
		for (int i = 0; i < 4; i++) {
			off_t off = (off_t)(((id * 4 + i) * 37) % LP_FILE_BLOCKS) * LP_BLOCK;
			if (pread(dfd, dbuf, LP_BLOCK, off) != LP_BLOCK) {
				perror("pread");
				exit(2);
			}
		}
		break;
	case ST_SOCKET:
		if (send(sock[0], &c, 1, 0) != 1) /* the request */
			exit(2);
		r0 = run_delay_ns();
		t0 = clock_ns(CLOCK_MONOTONIC);
		if (recv(sock[0], &c, 1, 0) != 1)
			exit(2);
		break;
	case ST_POLL: {
		struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
		if (write(kick[1], &c, 1) != 1)
			exit(2);
		r0 = run_delay_ns();
		t0 = clock_ns(CLOCK_MONOTONIC);
		if (poll(&p, 1, -1) != 1)
			exit(2);
		t1 = clock_ns(CLOCK_MONOTONIC);
		*runq += run_delay_ns() - r0;
		if (read(pipefd[0], &c, 1) != 1)
			exit(2);
		return t1 - t0;
	}
	case ST_SPIN:
		spin_cpu_us(cfg.delay_us);
		return 0;
	case ST_STARVED:
		spinners_run = 1;
		spin_cpu_us(cfg.delay_us);
		spinners_run = 0;
		return 0;
	}
	t1 = clock_ns(CLOCK_MONOTONIC);
	*runq += run_delay_ns() - r0;
	return t1 - t0;
}

static void request(long id, int dfd, void *dbuf)
{
	nvtxRangePushA("request");
	for (int st = 0; st < ST_N; st++) {
		uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t q0 = run_delay_ns();
		nvtxRangePushA(stage_names[st]);
		call_ns[st] += stage_work(st, id, dfd, dbuf, &runq_ns[st]);
		nvtxRangePop();
		queued_ns[st] += run_delay_ns() - q0;
		cpu_ns[st] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall_ns[st] += clock_ns(CLOCK_MONOTONIC) - w0;
	}
	nvtxRangePop();
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"requests", required_argument, NULL, 'n'}, {"delay-us", required_argument, NULL, 'd'},
	    {"spinners", required_argument, NULL, 'k'}, {"file", required_argument, NULL, 'f'},
	    {"stats", required_argument, NULL, 's'},	{0}};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			cfg.requests = atol(optarg);
			break;
		case 'd':
			cfg.delay_us = atol(optarg);
			break;
		case 'k':
			cfg.spinners = atoi(optarg);
			break;
		case 'f':
			cfg.file = optarg;
			break;
		case 's':
			cfg.stats = optarg;
			break;
		default:
			fprintf(stderr, "usage: offcpu_stages [--requests N] [--delay-us D] "
					"[--spinners K] [--file PATH] [--stats FILE]\n");
			exit(2);
		}
	}
	if (cfg.requests <= 0 || cfg.delay_us <= 0 || cfg.spinners < 0 || cfg.spinners > 64) {
		fprintf(stderr, "offcpu_stages: bad arguments\n");
		exit(2);
	}
}

static void write_stats(void)
{
	FILE *f = cfg.stats ? fopen(cfg.stats, "w") : stdout;
	if (!f) {
		perror(cfg.stats);
		exit(2);
	}
	fprintf(f, "requests=%ld\n", cfg.requests);
	for (int st = 0; st < ST_N; st++)
		fprintf(f,
			"%s_wall_ns=%llu\n%s_call_ns=%llu\n%s_cpu_ns=%llu\n%s_runq_ns=%llu\n"
			"%s_queued_ns=%llu\n",
			stage_names[st], (unsigned long long)wall_ns[st], stage_names[st],
			(unsigned long long)call_ns[st], stage_names[st],
			(unsigned long long)cpu_ns[st], stage_names[st],
			(unsigned long long)runq_ns[st], stage_names[st],
			(unsigned long long)queued_ns[st]);
	if (f != stdout)
		fclose(f);
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	schedstat = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	make_file();
	int dfd = open(cfg.file, O_RDONLY | O_DIRECT);
	if (dfd < 0) {
		perror("open O_DIRECT");
		return 2;
	}
	void *dbuf;
	if (posix_memalign(&dbuf, 4096, LP_BLOCK))
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock) || pipe(pipefd) || pipe(kick))
		return 2;
	pthread_t peers[2], spin[64];
	pthread_create(&peers[0], NULL, socket_peer, NULL);
	pthread_create(&peers[1], NULL, pipe_peer, NULL);
	for (int i = 0; i < cfg.spinners; i++)
		pthread_create(&spin[i], NULL, spinner, NULL);
	nvtxNameOsThreadA((uint32_t)gettid(), "main");
	for (long id = 0; id < cfg.requests; id++)
		request(id, dfd, dbuf);
	stop_spinning = 1;
	shutdown(sock[0], SHUT_RDWR);
	close(kick[1]);
	for (int i = 0; i < 2; i++)
		pthread_join(peers[i], NULL);
	for (int i = 0; i < cfg.spinners; i++)
		pthread_join(spin[i], NULL);
	close(dfd);
	unlink(cfg.file);
	free(dbuf);
	write_stats();
	return 0;
}
