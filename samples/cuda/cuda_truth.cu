// SPDX-License-Identifier: MIT
/*
 * samples/cuda/cuda_truth: GPU work whose every number the program knows
 * itself, so tests/gpu/truth.py can hold latprof's CUPTI capture against a
 * second source: exact counts per request, and the program's own cudaEvent
 * timings of its kernels and copies.
 *
 * usage: cuda_truth requests N   N requests ("request" NVTX range): a
 *                                pinned 4 MB cudaMemcpyAsync to the device,
 *                                3 kernels (~100 us of spinning in all), the
 *                                copy back, one cudaStreamSynchronize; events
 *                                around the copies and the kernels
 *        cuda_truth graph N      a CUDA graph of 50 ~2 us kernels (stream
 *                                capture), launched N times, each synced
 *        cuda_truth kill N       N launches of a ~20 us kernel, then SIGTERM
 *                                to itself while they run (default action)
 *        cuda_truth exit N       as kill, but _exit(0)
 * Prints one line "truth MODE key value ..." (flushed before a kill or
 * _exit). Exit status: 0 ok, 2 bad arguments, 3 CUDA error (one line).
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "cuda_truth: %s: %s\n", #call, cudaGetErrorString(e_));    \
			exit(3);                                                                   \
		}                                                                                  \
	} while (0)

__global__ void spin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

static long long cycles_per_us(void)
{
	int khz = 0, dev = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
	return khz > 0 ? khz / 1000 : 1500;
}

static double elapsed_ns(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, a, b));
	return ms * 1e6;
}

static int run_requests(int n)
{
	const size_t bytes = 4u << 20;
	long long c = cycles_per_us();
	float *h, *d;
	cudaStream_t s;
	cudaEvent_t e[6];
	CK(cudaMallocHost(&h, bytes));
	CK(cudaMalloc(&d, bytes));
	memset(h, 1, bytes);
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < 6; i++)
		CK(cudaEventCreate(&e[i]));
	double kern = 0, h2d = 0, d2h = 0;
	for (int r = 0; r < n; r++) {
		nvtxRangePushA("request");
		CK(cudaEventRecord(e[0], s));
		CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
		CK(cudaEventRecord(e[1], s));
		spin<<<1, 32, 0, s>>>(20 * c);
		spin<<<1, 32, 0, s>>>(50 * c);
		spin<<<1, 32, 0, s>>>(30 * c);
		CK(cudaEventRecord(e[2], s));
		CK(cudaEventRecord(e[3], s));
		CK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
		CK(cudaEventRecord(e[4], s));
		CK(cudaStreamSynchronize(s));
		nvtxRangePop();
		h2d += elapsed_ns(e[0], e[1]);
		kern += elapsed_ns(e[1], e[2]);
		d2h += elapsed_ns(e[3], e[4]);
	}
	printf("truth requests %d kernels %d copies %d syncs %d kernel_ns %.0f h2d_ns %.0f d2h_ns "
	       "%.0f\n",
	       n, 3 * n, 2 * n, n, kern, h2d, d2h);
	return 0;
}

static int run_graph(int n)
{
	long long c = cycles_per_us();
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < 50; i++)
		spin<<<1, 32, 0, s>>>(2 * c);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&x, g, 0));
	for (int r = 0; r < n; r++) {
		nvtxRangePushA("request");
		CK(cudaGraphLaunch(x, s));
		CK(cudaStreamSynchronize(s));
		nvtxRangePop();
	}
	printf("truth graph launches %d nodes 50 kernels %d\n", n, 50 * n);
	return 0;
}

static int run_kill(int n, int how)
{
	long long c = cycles_per_us();
	spin<<<1, 32>>>(c); // module load before the count
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < n; i++)
		spin<<<1, 32>>>(20 * c);
	CK(cudaGetLastError());
	printf("truth %s launches %d kernels %d\n", how ? "exit" : "kill", n, n + 1);
	fflush(stdout);
	if (how)
		_exit(0);
	raise(SIGTERM);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;
	if (argc != 3 || n <= 0)
		return fprintf(stderr, "usage: cuda_truth requests|graph|kill|exit N\n"), 2;
	if (!strcmp(argv[1], "requests"))
		return run_requests(n);
	if (!strcmp(argv[1], "graph"))
		return run_graph(n);
	if (!strcmp(argv[1], "kill") || !strcmp(argv[1], "exit"))
		return run_kill(n, !strcmp(argv[1], "exit"));
	return fprintf(stderr, "cuda_truth: unknown mode %s\n", argv[1]), 2;
}
