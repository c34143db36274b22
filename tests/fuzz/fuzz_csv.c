/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for engine/recording/csv.h: arbitrary bytes read as a CSV file
 * with a header row, every cell of every row read as text and through each
 * number parser. csv_open() takes a path, so the input is written to an
 * in-memory file (memfd) opened through /proc/self/fd.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];

/* Replaces the memfd's contents by data[0..size); 0 or -1. */
static int put_input(const uint8_t *data, size_t size)
{
	size_t off = 0;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_csv", 0);
		if (memfd < 0)
			return -1;
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0))
		return -1;
	while (off < size) {
		ssize_t n = pwrite(memfd, data + off, size - off, (off_t)off);

		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct csv *c = NULL;
	size_t i, n, idx;
	double d;
	int64_t i64;
	uint64_t u64;
	int rc;

	if (put_input(data, size))
		abort();
	if (csv_open(memfd_path, &c))
		return 0;
	n = csv_ncols(c);
	for (i = 0; i < n; i++) {
		if (csv_col(c, csv_header(c, i)) != (long)i)
			abort(); /* header names are unique: each finds itself */
		if (csv_need(c, csv_header(c, i), &idx) || idx != i)
			abort();
	}
	(void)csv_need(c, "no such column", &idx);
	for (;;) {
		rc = csv_next(c);
		if (rc <= 0)
			break;
		for (i = 0; i <= n; i++) {
			(void)strlen(csv_cell(c, i));
			(void)csv_f64(c, i, &d);
			(void)csv_f64_opt(c, i, 0.0, &d);
			(void)csv_f64_nan(c, i, &d);
			(void)csv_i64(c, i, &i64);
			(void)csv_u64(c, i, &u64);
		}
		(void)csv_line(c);
		(void)csv_path(c);
	}
	csv_free(c);
	return 0;
}
