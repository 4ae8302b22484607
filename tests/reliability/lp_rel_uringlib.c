/* SPDX-License-Identifier: MIT */
/* A stand-in for liburing's exported io_uring_enter2 (tests/reliability/
 * test_uring.py): the app calls it through the PLT, and it makes the call
 * through syscall(), as liburing built against libc's syscall() does. */
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

int io_uring_enter2(unsigned fd, unsigned submit, unsigned wait, unsigned flags, sigset_t *sig,
		    size_t sz)
{
	return (int)syscall(SYS_io_uring_enter, fd, submit, wait, flags, sig, sz);
}
