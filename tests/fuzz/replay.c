/* SPDX-License-Identifier: MIT */
/*
 * A main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput() once on each file named on the command line, so
 * that tests/cli/test_fuzz.sh can replay the seed corpus (and the inputs
 * that once crashed) in every `make test` and `make check`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads a whole file into a malloc'd buffer; NULL on failure. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL, *nb;
	size_t n = 0, cap = 0, got;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			nb = realloc(b, cap);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (b && ferror(f)) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = n;
	return b;
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		size_t len = 0;
		uint8_t *data = slurp(argv[i], &len);

		if (!data) {
			fprintf(stderr, "error: cannot read '%s'\n", argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput(data, len);
		free(data);
	}
	printf("replayed %d inputs\n", argc - 1);
	return 0;
}
