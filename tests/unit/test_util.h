/* SPDX-License-Identifier: MIT */
/*
 * Helpers the unit tests share. Include after <cmocka.h> (the helpers
 * fail the running test through its asserts).
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole of file path in a new buffer (the test fails when it cannot be read); its size in *n. */
static inline uint8_t *tu_slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *b;
	long sz;

	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	sz = ftell(fp);
	assert_true(sz >= 0);
	rewind(fp);
	b = malloc(sz ? (size_t)sz : 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)sz, fp), (size_t)sz);
	fclose(fp);
	*n = (size_t)sz;
	return b;
}

#endif /* TEST_UTIL_H */
