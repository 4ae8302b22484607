/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges and a thread whose names are HTML/JS injection attempts, for
 * the HTML report's escaping test: requests "req<svg onload=...>" with
 * stages named <img ...>, </script><script>..., and quotes, on a thread
 * named with markup, plus a contended mutex so locks show too.
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t lp_mu = PTHREAD_MUTEX_INITIALIZER;

static void lp_spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *lp_worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "</script>\"'<b>");
	for (int i = 0; i < 40; i++) {
		nvtxRangePushA("req\"<svg onload=document.body.dataset.pwned=1>");
		nvtxRangePushA("<img src=x onerror=alert(1)>");
		lp_spin_us(300 + 50 * (i % 7));
		nvtxRangePop();
		nvtxRangePushA("</script><script>document.body.dataset.pwned=2</script>");
		pthread_mutex_lock(&lp_mu);
		lp_spin_us(400);
		pthread_mutex_unlock(&lp_mu);
		nvtxRangePop();
		nvtxRangePushA("quote\"s 'single' & amp");
		lp_spin_us(200);
		nvtxRangePop();
		nvtxRangePop();
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, lp_worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
