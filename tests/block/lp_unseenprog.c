/* SPDX-License-Identifier: MIT */
/*
 * lp_unseenprog N EVERY SHORT_US OUT: N nanosleeps of SHORT_US with the
 * timer slack at 1 ns, and after every EVERY of them one of 3 ms. Recorded
 * with a block threshold between the two (LATPROF_BLOCK_THRESHOLD_NS=1 ms),
 * the short ones leave the CPU without being recorded: time off the CPU
 * that no recorded wait covers and that the kernel did not spend on a run
 * queue.
 *
 * At its end it reads its own /proc/thread-self/schedstat and writes one
 * line to OUT: "tid=T wall_ns=W cpu_ns=C run_delay_ns=R short_ns=S
 * long_ns=L", W its own clock from its start to that read, S and L its
 * own time inside the short and the long sleeps.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Its own time inside one nanosleep of ns. */
static uint64_t timed_sleep(long ns)
{
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	uint64_t t0 = now_ns();
	nanosleep(&ts, NULL);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: lp_unseenprog N EVERY SHORT_US OUT\n");
		return 2;
	}
	long n = atol(argv[1]), every = atol(argv[2]), short_us = atol(argv[3]);
	uint64_t start = now_ns(), shorts = 0, longs = 0;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (long i = 0; i < n; i++) {
		shorts += timed_sleep(short_us * 1000L);
		if (every > 0 && i % every == every - 1)
			longs += timed_sleep(3000000L);
	}
	unsigned long long cpu = 0, delay = 0, slices = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	if (!f || fscanf(f, "%llu %llu %llu", &cpu, &delay, &slices) != 3)
		return 1;
	fclose(f);
	uint64_t wall = now_ns() - start;
	FILE *out = fopen(argv[4], "we");
	if (!out)
		return 1;
	fprintf(out,
		"tid=%d wall_ns=%llu cpu_ns=%llu run_delay_ns=%llu short_ns=%llu long_ns=%llu\n",
		(int)gettid(), (unsigned long long)wall, cpu, delay, (unsigned long long)shorts,
		(unsigned long long)longs);
	return fclose(out) ? 1 : 0;
}
