/* SPDX-License-Identifier: MIT */
/*
 * A PTHREAD_PROCESS_SHARED mutex in MAP_SHARED | MAP_ANONYMOUS memory,
 * inherited by CHILDREN forked processes that each take it ITERS times and
 * hold it 1 ms. Usage: lp_pshared CHILDREN ITERS.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, iters = argc > 2 ? atoi(argv[2]) : 20;
	char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	pthread_mutex_t *m = (pthread_mutex_t *)(mem + 64); /* offset 0x40 */
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(m, &a);
	for (int i = 0; i < n; i++)
		if (fork() == 0) {
			for (int k = 0; k < iters; k++) {
				pthread_mutex_lock(m);
				usleep(1000);
				pthread_mutex_unlock(m);
			}
			_exit(0);
		}
	int st, bad = 0;
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	return bad;
}
