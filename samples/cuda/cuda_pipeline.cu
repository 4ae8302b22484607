// SPDX-License-Identifier: MIT
/*
 * samples/cuda: a CUDA request pipeline, NVTX-annotated, for latprof's GPU
 * capture. Each request ("request" range) has stages "h2d", "compute",
 * "sync", "d2h".
 *
 *   default   pageable host memory, cudaMemcpy (synchronous), three kernels,
 *             cudaDeviceSynchronize, cudaMemcpy back: the host is blocked in
 *             synchronization for most of each request.
 *   --fixed   pinned host memory, cudaMemcpyAsync on two streams with double
 *             buffering, one cudaStreamSynchronize per batch of two requests.
 *
 *   --launch-loop N   instead of requests: N launches of a ~1 µs kernel,
 *             one sync at the end; prints "launch loop: N launches in X us".
 *             The overhead benchmark of tests/gpu/run.sh (in-app time, so
 *             CUDA and CUPTI start-up are not counted).
 *
 * usage: cuda_pipeline [--fixed] [--requests N] [--size BYTES] [--launch-loop N]
 * Exit status: 0 ok, 2 bad arguments, 3 CUDA error (no GPU or driver, out of
 * memory...): one line "cuda_pipeline: <call>: <cudaGetErrorString>" on stderr.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "cuda_pipeline: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(3);                                                                   \
		}                                                                                  \
	} while (0)

__global__ void scale(float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

__global__ void add_bias(float *x, int n, float b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += b;
}

// A little real work so kernel time is visible next to copies.
__global__ void smooth(float *x, int n, int rounds)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i];
	for (int r = 0; r < rounds; r++)
		v = 0.5f * v + 0.25f * sinf(v);
	x[i] = v;
}

// Spins ~1 µs: at the H200's 1.98 GHz boost, 2000 cycles.
__global__ void tiny(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

static int run_launch_loop(int launches)
{
	struct timespec a, b;
	tiny<<<1, 32>>>(2000); // warm-up: module load and first launch
	CK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &a);
	nvtxRangePushA("launch_loop");
	for (int i = 0; i < launches; i++)
		tiny<<<1, 32>>>(2000);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();
	clock_gettime(CLOCK_MONOTONIC, &b);
	double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
	printf("launch loop: %d launches in %.0f us (%.3f us/launch)\n", launches, us,
	       us / launches);
	return 0;
}

static void launch_all(float *d, int n, cudaStream_t s)
{
	int bs = 256, gs = (n + bs - 1) / bs;
	scale<<<gs, bs, 0, s>>>(d, n, 1.5f);
	add_bias<<<gs, bs, 0, s>>>(d, n, 0.25f);
	smooth<<<gs, bs, 0, s>>>(d, n, 64);
	CK(cudaGetLastError());
}

static void fill(float *h, int n, int req)
{
	for (int i = 0; i < n; i++)
		h[i] = (float)((i + req) % 97) * 0.01f;
}

static int run_slow(int requests, int n)
{
	size_t bytes = (size_t)n * sizeof(float);
	float *h = (float *)malloc(bytes), *d = NULL;
	if (!h)
		return fprintf(stderr, "cuda_pipeline: out of memory\n"), 3;
	CK(cudaMalloc(&d, bytes));
	for (int r = 0; r < requests; r++) {
		nvtxRangePushA("request");
		fill(h, n, r);
		nvtxRangePushA("h2d");
		CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice)); // pageable: staged, blocking
		nvtxRangePop();
		nvtxRangePushA("compute");
		launch_all(d, n, 0);
		nvtxRangePop();
		nvtxRangePushA("sync");
		CK(cudaDeviceSynchronize());
		nvtxRangePop();
		nvtxRangePushA("d2h");
		CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
		nvtxRangePop();
		nvtxRangePop();
	}
	CK(cudaFree(d));
	free(h);
	return 0;
}

static int run_fixed(int requests, int n)
{
	size_t bytes = (size_t)n * sizeof(float);
	float *h[2], *d[2];
	cudaStream_t s[2];
	for (int i = 0; i < 2; i++) {
		CK(cudaMallocHost(&h[i], bytes)); // pinned: truly async copies
		CK(cudaMalloc(&d[i], bytes));
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
	}
	for (int r = 0; r < requests; r += 2) {
		int batch = requests - r < 2 ? requests - r : 2;
		for (int b = 0; b < batch; b++) { // request r+b on stream b, buffer b
			nvtxRangePushA("request");
			fill(h[b], n, r + b);
			nvtxRangePushA("h2d");
			CK(cudaMemcpyAsync(d[b], h[b], bytes, cudaMemcpyHostToDevice, s[b]));
			nvtxRangePop();
			nvtxRangePushA("compute");
			launch_all(d[b], n, s[b]);
			nvtxRangePop();
			nvtxRangePushA("d2h");
			CK(cudaMemcpyAsync(h[b], d[b], bytes, cudaMemcpyDeviceToHost, s[b]));
			nvtxRangePop();
			nvtxRangePop();
		}
		nvtxRangePushA("sync"); // one wait per batch
		for (int b = 0; b < batch; b++)
			CK(cudaStreamSynchronize(s[b]));
		nvtxRangePop();
	}
	for (int i = 0; i < 2; i++) {
		CK(cudaStreamDestroy(s[i]));
		CK(cudaFreeHost(h[i]));
		CK(cudaFree(d[i]));
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fixed = 0, requests = 200, n = 1 << 20, launches = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fixed"))
			fixed = 1;
		else if (!strcmp(argv[i], "--requests") && i + 1 < argc)
			requests = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			n = (int)(strtoll(argv[++i], NULL, 10) / (long long)sizeof(float));
		else if (!strcmp(argv[i], "--launch-loop") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			launches = atoi(argv[++i]);
		else
			return fprintf(stderr, "usage: cuda_pipeline [--fixed] [--requests N] "
					       "[--size BYTES] [--launch-loop N]\n"),
			       2;
	}
	if (requests <= 0 || n <= 0)
		return fprintf(stderr, "cuda_pipeline: --requests and --size must be positive\n"),
		       2;
	int count = 0;
	nvtxRangePushA("init"); // recorded even when CUDA cannot start
	cudaError_t e = cudaGetDeviceCount(&count);
	nvtxRangePop();
	if (e != cudaSuccess || count == 0) { // no driver/GPU: one clear line, exit 3
		fprintf(stderr, "cuda_pipeline: cudaGetDeviceCount: %s\n",
			e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
		return 3;
	}
	int rc = launches ? run_launch_loop(launches)
		 : fixed  ? run_fixed(requests, n)
			  : run_slow(requests, n);
	if (rc == 0)
		CK(cudaDeviceReset()); // also exercises latprof's flush at device reset
	return rc;
}
