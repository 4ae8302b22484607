/* SPDX-License-Identifier: MIT */
/*
 * Plays the CUDA driver's part for tests/cuda/test_collector.py: loads
 * CUDA_INJECTION64_PATH (set by latprof run) and calls its
 * InitializeInjection, as cuInit does, then makes GPU work appear through
 * the stand-in libcupti (fake_cupti.c) inside NVTX "request" ranges. The
 * driver calls the collector makes on its own (cuCtxSynchronize on the
 * primary contexts before its final flush, cuDeviceGetPCIBusId) are
 * exported from here.
 *
 * usage: fake_cupti_app MODE
 *   normal        20 requests x 50 launches; exit normally (atexit flush)
 *   reset-exit    10 requests, cudaDeviceReset (whose flush saves them),
 *                 5 more launches, then _exit
 *   limit         launches that fill and hold buffers past the collector's
 *                 LATPROF_CUDA_BUFFER_MB limit: records dropped and counted
 *   sigterm       1,000 launches, then SIGTERM to itself (default action)
 *   uexit         1,000 launches, then _exit(0)
 *   running       1,000 launches, the last 10 still running, then _exit(0):
 *                 the final flush synchronizes first
 *   hung          as running, but cuCtxSynchronize never returns
 *   threads       20 threads, each 5 requests x 20 launches, joined
 *   graph         20 requests, each one cudaGraphLaunch of 50 1-us nodes
 *   queries       20 requests x (50 launches + 100 cudaGetDevice)
 *   kineto        10 requests; then a second CUPTI client (the PyTorch
 *                 profiler) takes the callbacks for 5 requests and stops
 *   kineto-late   as kineto, but what is complete is flushed to latprof
 *                 first, and 5 more requests follow the profiler's stop
 *                 (its kinds off: not recorded)
 *   fork          10 requests, fork (child exits at once), wait <= 5 s
 *   init          InitializeInjection only, then "initialized PATH" and exit 0
 * Prints "launches N written W" (W = records the stand-in stored).
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int (*emit_ex)(int n, int hold, int running);
static int (*graph)(int nodes);
static int (*queries)(int n);
static void (*gpu_sync)(void);
static int sync_hangs;

/* ---- the driver entry points the collector resolves ------------------ */
EXPORT CUresult cuDeviceGetCount(int *n)
{
	*n = 1;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	*dev = ordinal;
	return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned *flags, int *active)
{
	(void)dev;
	*flags = 0;
	*active = 1;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	(void)dev;
	*ctx = (CUcontext)0x1;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	(void)dev;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	(void)ctx;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
	*ctx = (CUcontext)0x1;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSynchronize(void)
{
	while (sync_hangs)
		pause();
	if (gpu_sync)
		gpu_sync();
	return CUDA_SUCCESS;
}
static void (*driver_call)(uint32_t cbid);
EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
	if (driver_call)
		driver_call(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent);
	*ctx = (CUcontext)0x1;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetPCIBusId(char *out, int len, CUdevice dev)
{
	(void)dev;
	snprintf(out, (size_t)len, "0000:17:00.0");
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

/* ---- the second CUPTI client: the PyTorch profiler's calls ----------- */
static long kineto_records;
static void CUPTIAPI kineto_req(uint8_t **b, size_t *size, size_t *max)
{
	*b = aligned_alloc(8, 1 << 20);
	*size = 1 << 20;
	*max = 0;
}
static CUptiResult (*next_rec)(uint8_t *, size_t, CUpti_Activity **);
static void CUPTIAPI kineto_done(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
	CUpti_Activity *a = NULL;
	(void)c, (void)s, (void)size;
	while (next_rec && next_rec(b, valid, &a) == CUPTI_SUCCESS)
		__atomic_add_fetch(&kineto_records, 1, __ATOMIC_RELAXED);
	free(b);
}
static uint64_t CUPTIAPI kineto_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int kineto(void *cupti, int requests, int per, int flush_first)
{
#define SYM(n) __typeof__(&n) p_##n = (__typeof__(&n))dlsym(cupti, #n)
	SYM(cuptiActivityDisable);
	SYM(cuptiActivityEnable);
	SYM(cuptiActivityRegisterTimestampCallback);
	SYM(cuptiActivityRegisterCallbacks);
	SYM(cuptiActivityFlushAll);
	SYM(cuptiSubscribe);
#undef SYM
	next_rec = (CUptiResult(*)(uint8_t *, size_t, CUpti_Activity **))dlsym(
	    cupti, "cuptiActivityGetNextRecord");
	static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
						   CUPTI_ACTIVITY_KIND_RUNTIME};
	int written = 0;
	/* the profiler's own callbacks need CUPTI's one subscriber */
	CUpti_SubscriberHandle sub;
	printf("kineto subscribe %s\n",
	       p_cuptiSubscribe(&sub, NULL, NULL) == CUPTI_SUCCESS ? "ok" : "refused");
	if (flush_first) /* what is complete so far goes to the first client */
		p_cuptiActivityFlushAll(0);
	/* profiler start: every kind off so its clock may be set, its callbacks */
	for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		p_cuptiActivityDisable((CUpti_ActivityKind)k);
	p_cuptiActivityRegisterTimestampCallback(kineto_clock);
	p_cuptiActivityRegisterCallbacks(kineto_req, kineto_done);
	for (size_t i = 0; i < 2; i++)
		p_cuptiActivityEnable(kinds[i]);
	for (int r = 0; r < requests; r++) {
		nvtxRangePushA("request");
		written += emit_ex(per, 0, 0);
		nvtxRangePop();
	}
	/* profiler stop: flush to itself, kinds off */
	p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	for (size_t i = 0; i < 2; i++)
		p_cuptiActivityDisable(kinds[i]);
	printf("kineto records %ld\n", kineto_records);
	return written;
}

struct worker {
	int written;
};

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	for (int r = 0; r < 5; r++) {
		nvtxRangePushA("request");
		w->written += emit_ex(20, 0, 0);
		nvtxRangePop();
	}
	return NULL;
}

static int threads(void)
{
	pthread_t t[20];
	struct worker w[20];
	int written = 0;
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 20; i++)
		pthread_create(&t[i], NULL, thread_main, &w[i]);
	for (int i = 0; i < 20; i++) {
		pthread_join(t[i], NULL);
		written += w[i].written;
	}
	return written;
}

static int mode_is(const char *mode, const char *m)
{
	return !strcmp(mode, m);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "normal";
	/* FAKE_APP_DLOPEN: a library loaded before CUDA starts, as PyTorch has
	 * libtorch_cuda loaded by then */
	const char *pre = getenv("FAKE_APP_DLOPEN");
	if (pre && *pre && !dlopen(pre, RTLD_NOW | RTLD_LOCAL))
		return fprintf(stderr, "fake_cupti_app: %s\n", dlerror()), 3;
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	void *h = inj ? dlopen(inj, RTLD_NOW) : NULL;
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	if (!init || init() != 1)
		return fprintf(stderr, "fake_cupti_app: no injection library (%s)\n",
			       inj ? dlerror() : "CUDA_INJECTION64_PATH unset"),
		       3;
	if (mode_is(mode, "init"))
		return printf("initialized %s\n", inj) < 0;
	/* Loaded for the injection library, locally: not in the global scope. */
	void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	emit_ex = cupti ? (int (*)(int, int, int))dlsym(cupti, "fake_cupti_emit_ex") : NULL;
	graph = cupti ? (int (*)(int))dlsym(cupti, "fake_cupti_graph") : NULL;
	queries = cupti ? (int (*)(int))dlsym(cupti, "fake_cupti_queries") : NULL;
	gpu_sync = cupti ? (void (*)(void))dlsym(cupti, "fake_cupti_sync") : NULL;
	driver_call = cupti ? (void (*)(uint32_t))dlsym(cupti, "fake_cupti_driver_call") : NULL;
	void (*reset)(void) =
	    cupti ? (void (*)(void))dlsym(cupti, "fake_cupti_device_reset") : NULL;
	if (!emit_ex || !reset || !graph || !queries || !gpu_sync)
		return fprintf(stderr, "fake_cupti_app: libcupti is not the stand-in\n"), 3;
	int launches = 0, written = 0;
	int kill_modes = mode_is(mode, "sigterm") || mode_is(mode, "uexit") ||
			 mode_is(mode, "running") || mode_is(mode, "hung");
	int requests = mode_is(mode, "reset-exit") || mode_is(mode, "kineto") ||
			       mode_is(mode, "kineto-late") || mode_is(mode, "fork") || kill_modes
			   ? 10
		       : mode_is(mode, "limit") ? 4
						: 20;
	int per = mode_is(mode, "limit") ? 12000 : kill_modes ? 100 : 50;
	if (mode_is(mode, "threads")) {
		written = threads();
		launches = 20 * 5 * 20;
		requests = 0;
	}
	sync_hangs = mode_is(mode, "hung");
	for (int r = 0; r < requests; r++) {
		int last = r == requests - 1;
		nvtxRangePushA("request");
		int w;
		if (mode_is(mode, "graph")) {
			w = graph(per);
		} else {
			w = emit_ex(
			    per, mode_is(mode, "limit"),
			    last && (mode_is(mode, "running") || mode_is(mode, "hung")) ? 10 : 0);
			if (mode_is(mode, "queries"))
				queries(100);
		}
		if (w < 0)
			return fprintf(stderr, "fake_cupti_app: CUPTI was not started\n"), 4;
		written += w;
		launches += per;
		usleep(200);
		nvtxRangePop();
	}
	if (mode_is(mode, "kineto") || mode_is(mode, "kineto-late")) {
		int k = kineto(cupti, 5, per, mode_is(mode, "kineto-late"));
		printf("kineto written %d\n", k);
	}
	if (mode_is(mode, "kineto-late")) /* after its stop: kinds off, not recorded */
		for (int r = 0; r < 5; r++)
			emit_ex(per, 0, 0);
	printf("launches %d written %d\n", launches, written);
	fflush(stdout);
	if (mode_is(mode, "reset-exit")) {
		reset();
		emit_ex(5, 0, 0); /* after the reset: saved by the flush at _exit */
		_exit(0);
	}
	if (mode_is(mode, "sigterm"))
		kill(getpid(), SIGTERM);
	if (mode_is(mode, "uexit") || mode_is(mode, "running") || mode_is(mode, "hung"))
		_exit(0);
	if (mode_is(mode, "fork")) {
		pid_t c = fork();
		if (c == 0)
			exit(0); /* runs atexit handlers and the recorder's exit */
		int st = 0;
		for (int i = 0; i < 500 && waitpid(c, &st, WNOHANG) == 0; i++)
			usleep(10000);
		if (waitpid(c, &st, WNOHANG) == 0) {
			kill(c, SIGKILL);
			waitpid(c, &st, 0);
			printf("child hung in exit\n");
		} else {
			printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
	}
	return CUDA_SUCCESS;
}
