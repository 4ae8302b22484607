/* SPDX-License-Identifier: MIT */
/*
 * Replays checked-in inputs (seed corpus and crash regressions) through a
 * fuzz target's LLVMFuzzerTestOneInput in an ordinary build: every input a
 * fuzzer ever crashed on stays a unit test. Usage: fuzz_replay_X FILE|DIR...
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return perror(path), 1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
	fclose(f);
	if (!buf || got != (size_t)n)
		return free(buf), fprintf(stderr, "%s: read failed\n", path), 1;
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	printf("ok: %s (%ld bytes)\n", path, n);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0, n = 0;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			struct dirent **names;
			int k = scandir(argv[i], &names, NULL, alphasort);
			for (int j = 0; j < k; j++) {
				char p[4096];
				snprintf(p, sizeof(p), "%s/%s", argv[i], names[j]->d_name);
				if (names[j]->d_name[0] != '.' && stat(p, &st) == 0 &&
				    S_ISREG(st.st_mode))
					bad |= replay_file(p), n++;
				free(names[j]);
			}
			free(names);
		} else {
			bad |= replay_file(argv[i]);
			n++;
		}
	}
	printf("replayed %d inputs without a crash\n", n);
	return bad || n == 0;
}
