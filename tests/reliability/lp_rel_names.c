/* SPDX-License-Identifier: MIT */
/*
 * Records names that are hostile to every output format: SQL quotes, HTML
 * tags, JSON/CSV metacharacters, control characters and invalid UTF-8, as
 * NVTX ranges, a thread name and a domain.
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static const char *const names[] = {
    "'; DROP TABLE ranges; --",
    "\"quoted\", comma\nnewline\ttab\r<script>alert(1)</script>&amp;",
    "ctl \x01\x02\x1b[31m\x7f end",
    "bad utf8 \xff\xfe \xc3\x28 \xe2\x82 end",
};

static void nap(void)
{
	struct timespec ts = {0, 200000};
	nanosleep(&ts, NULL);
}

int main(void)
{
	pthread_setname_np(pthread_self(), "x'\";<b>\x01");
	nvtxDomainHandle_t d = nvtxDomainCreateA("dom'\"<i>\x02");
	for (int r = 0; r < 3; r++) {
		for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			nvtxRangePushA(names[i]);
			nap();
			nvtxRangePop();
			nvtxEventAttributes_t a = {0};
			a.version = NVTX_VERSION;
			a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
			a.messageType = NVTX_MESSAGE_TYPE_ASCII;
			a.message.ascii = names[i];
			nvtxDomainRangePushEx(d, &a);
			nap();
			nvtxDomainRangePop(d);
		}
	}
	puts("names recorded");
	return 0;
}
