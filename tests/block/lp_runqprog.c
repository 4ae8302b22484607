/* SPDX-License-Identifier: MIT */
/*
 * lp_runqprog PAIRS MSGS WORK_US OUT: PAIRS socketpairs, two threads each,
 * passing a 64-byte message back and forth MSGS times; each side spends
 * WORK_US of its own CPU time (CLOCK_THREAD_CPUTIME_ID) per message, then
 * sends and waits for the reply with poll() and recv(). More threads than
 * CPUs: each wake-up waits for a CPU.
 *
 * At its end each thread reads its own /proc/thread-self/schedstat (time
 * on a CPU, time on a run queue, both ns since the thread began) and
 * writes one line to OUT: "tid=T wall_ns=W cpu_ns=C run_delay_ns=R
 * calls_ns=K calls_runq_ns=Q polls=P recvs=N", where W is its own clock
 * from its first instruction to that read, K the time it spent inside
 * send, poll and recv by its own clock, and Q the part of R that accrued
 * inside them (schedstat read around each, by syscall(): a hooked pread
 * preempted on a busy machine would be recorded as a wait of its own).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

static long msgs, work_us;
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t run_delay(int fd)
{
	char buf[96];
	unsigned long long cpu, delay;
	long n = syscall(SYS_pread64, fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return sscanf(buf, "%llu %llu", &cpu, &delay) == 2 ? delay : 0;
}

static void work(void)
{
	uint64_t until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)work_us * 1000u;
	volatile uint64_t x = 0;
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 200; i++)
			x += (uint64_t)i;
}

struct side {
	int fd;
	int first; /* sends before it receives */
};

static void die(const char *what)
{
	fprintf(stderr, "lp_runqprog: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *run(void *arg)
{
	const struct side *s = arg;
	int sfd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		die("schedstat");
	uint64_t w0 = clock_ns(CLOCK_MONOTONIC), calls = 0, queued = 0;
	long polls = 0, recvs = 0;
	char buf[64];
	memset(buf, 7, sizeof(buf));
	for (long i = 0; i < msgs; i++) {
		if (!s->first || i) {
			struct pollfd p = {.fd = s->fd, .events = POLLIN};
			uint64_t q0 = run_delay(sfd), t0 = clock_ns(CLOCK_MONOTONIC);
			if (poll(&p, 1, -1) != 1)
				die("poll");
			if (recv(s->fd, buf, sizeof(buf), MSG_WAITALL) != (ssize_t)sizeof(buf))
				die("recv");
			calls += clock_ns(CLOCK_MONOTONIC) - t0;
			queued += run_delay(sfd) - q0;
			polls++;
			recvs++;
		}
		work();
		uint64_t q0 = run_delay(sfd), t0 = clock_ns(CLOCK_MONOTONIC);
		if (send(s->fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			die("send");
		calls += clock_ns(CLOCK_MONOTONIC) - t0;
		queued += run_delay(sfd) - q0;
	}
	if (s->first) { /* the last reply */
		uint64_t q0 = run_delay(sfd), t0 = clock_ns(CLOCK_MONOTONIC);
		if (recv(s->fd, buf, sizeof(buf), MSG_WAITALL) != (ssize_t)sizeof(buf))
			die("recv");
		calls += clock_ns(CLOCK_MONOTONIC) - t0;
		queued += run_delay(sfd) - q0;
		recvs++;
	}
	close(sfd);
	char st[128] = "";
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (!f || !fgets(st, sizeof(st), f))
		die("schedstat");
	fclose(f);
	uint64_t wall = clock_ns(CLOCK_MONOTONIC) - w0;
	unsigned long long cpu = 0, delay = 0;
	if (sscanf(st, "%llu %llu", &cpu, &delay) != 2)
		die("schedstat format");
	pthread_mutex_lock(&out_lock);
	fprintf(
	    out,
	    "tid=%ld wall_ns=%llu cpu_ns=%llu run_delay_ns=%llu calls_ns=%llu calls_runq_ns=%llu "
	    "polls=%ld recvs=%ld\n",
	    (long)syscall(SYS_gettid), (unsigned long long)wall, cpu, delay,
	    (unsigned long long)calls, (unsigned long long)queued, polls, recvs);
	fflush(out);
	pthread_mutex_unlock(&out_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: lp_runqprog PAIRS MSGS WORK_US OUT\n");
		return 2;
	}
	int pairs = atoi(argv[1]);
	msgs = atol(argv[2]);
	work_us = atol(argv[3]);
	out = fopen(argv[4], "w");
	if (pairs < 1 || pairs > 64 || msgs < 1 || !out)
		die("arguments");
	pthread_t th[128];
	struct side sides[128];
	for (int p = 0; p < pairs; p++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			die("socketpair");
		sides[2 * p] = (struct side){sv[0], 1};
		sides[2 * p + 1] = (struct side){sv[1], 0};
	}
	for (int i = 0; i < 2 * pairs; i++)
		if (pthread_create(&th[i], NULL, run, &sides[i]))
			die("pthread_create");
	for (int i = 0; i < 2 * pairs; i++)
		pthread_join(th[i], NULL);
	fclose(out);
	return 0;
}
