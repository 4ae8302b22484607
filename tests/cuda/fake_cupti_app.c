/* SPDX-License-Identifier: MIT */
/*
 * Plays the CUDA driver's part for tests/cuda/test_collector.py: loads
 * CUDA_INJECTION64_PATH (set by latprof run) and calls its
 * InitializeInjection, as cuInit does, then makes GPU work appear through
 * the stand-in libcupti (fake_cupti.c) inside NVTX "request" ranges.
 *
 * usage: fake_cupti_app MODE
 *   normal        20 requests x 50 launches; exit normally (atexit flush)
 *   reset-exit    10 requests, cudaDeviceReset, 5 more launches the reset
 *                 loses, then _exit: only the flush at the reset saved them
 *   limit         launches that fill and hold buffers past the collector's
 *                 LATPROF_CUDA_BUFFER_MB limit: records dropped and counted
 *   init          InitializeInjection only, then "initialized" and exit 0
 * Prints "launches N written W" (W = records the stand-in stored).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*emit_fn)(int n, int hold);

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "normal";
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	void *h = inj ? dlopen(inj, RTLD_NOW) : NULL;
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	if (!init || init() != 1)
		return fprintf(stderr, "fake_cupti_app: no injection library (%s)\n",
			       inj ? dlerror() : "CUDA_INJECTION64_PATH unset"),
		       3;
	if (!strcmp(mode, "init"))
		return puts("initialized") < 0;
	/* Loaded for the injection library, locally: not in the global scope. */
	void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	emit_fn emit = cupti ? (emit_fn)dlsym(cupti, "fake_cupti_emit") : NULL;
	void (*reset)(void) =
	    cupti ? (void (*)(void))dlsym(cupti, "fake_cupti_device_reset") : NULL;
	if (!emit || !reset)
		return fprintf(stderr, "fake_cupti_app: libcupti is not the stand-in\n"), 3;
	int launches = 0, written = 0;
	int requests = !strcmp(mode, "reset-exit") ? 10 : !strcmp(mode, "limit") ? 4 : 20;
	int per = !strcmp(mode, "limit") ? 12000 : 50;
	for (int r = 0; r < requests; r++) {
		nvtxRangePushA("request");
		int w = emit(per, !strcmp(mode, "limit"));
		if (w < 0)
			return fprintf(stderr, "fake_cupti_app: CUPTI was not started\n"), 4;
		written += w;
		launches += per;
		usleep(200);
		nvtxRangePop();
	}
	printf("launches %d written %d\n", launches, written);
	fflush(stdout);
	if (!strcmp(mode, "reset-exit")) {
		reset();
		emit(5, 0); /* after the reset's flush: lost with the buffer */
		_exit(0);   /* no atexit: the reset's flush is all there is */
	}
	return 0;
}
