// SPDX-License-Identifier: MIT
/*
 * The fuzz targets without libFuzzer: each file named (a directory: each file in it)
 * is run once through the target's LLVMFuzzerTestOneInput, as libFuzzer would run it.
 * The plain and sanitizer builds replay the seed corpora so (ctest fuzz_seeds), and a
 * crashing input a fuzzer found replays the same way under gdb.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned runs;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return 1;
	}
	data = malloc(n ? (size_t)n : 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)n);
	free(data);
	runs++;
	return 0;
}

static int run_path(const char *path)
{
	struct stat st;
	struct dirent *d;
	DIR *dir;
	int err = 0;

	if (stat(path, &st)) {
		fprintf(stderr, "replay: no %s\n", path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	dir = opendir(path);
	if (!dir)
		return 1;
	while ((d = readdir(dir))) {
		char sub[4096];

		if (d->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, d->d_name);
		err |= run_file(sub);
	}
	closedir(dir);
	return err;
}

int main(int argc, char **argv)
{
	int err = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		err |= run_path(argv[i]);
	printf("%s: %u inputs, no invariant broken\n", argv[0], runs);
	return err;
}
