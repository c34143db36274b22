/* SPDX-License-Identifier: MIT */
/*
 * engine/base/dynlib: a table filled from a real library (libm's cos and
 * sqrt, checked against the linked functions), and the messages of a
 * missing library and of a missing function.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "dynlib.h"
#include "err.h"

static void test_fills_the_table(void **state)
{
	static const char *const sonames[] = { "libm.so.6" };
	double (*my_cos)(double) = NULL, (*my_sqrt)(double) = NULL;
	const struct dynlib_sym syms[] = {
		{ 0, "cos", (void **)&my_cos },
		{ 0, "sqrt", (void **)&my_sqrt },
	};
	struct dynlib d = { .sonames = sonames, .nlibs = 1, .syms = syms, .nsyms = 2,
			    .needed_by = "which this test needs", .hint = "",
			    .lock = PTHREAD_MUTEX_INITIALIZER };

	(void)state;
	assert_int_equal(dynlib_load(&d), 0);
	assert_string_equal(d.failure, "");
	assert_non_null(my_cos);
	assert_non_null(my_sqrt);
	/* the functions found are libm's: their values are those of the linked ones */
	assert_true(my_cos(0.5) == cos(0.5));
	assert_true(my_sqrt(2.0) == sqrt(2.0));
}

static void test_missing_library(void **state)
{
	static const char *const sonames[] = { "libm.so.6", "libproxima-none.so.0" };
	void *slot = NULL;
	const struct dynlib_sym syms[] = { { 1, "f", &slot } };
	struct dynlib d = { .sonames = sonames, .nlibs = 2, .syms = syms, .nsyms = 1,
			    .needed_by = "which this test needs", .hint = " (Debian: none)",
			    .lock = PTHREAD_MUTEX_INITIALIZER };

	(void)state;
	assert_int_equal(dynlib_load(&d), ENG_EIO);
	assert_non_null(strstr(err_msg(), "cannot load libproxima-none.so.0, which this test needs: "));
	assert_non_null(strstr(err_msg(), " (Debian: none)"));
	assert_null(slot);
}

static void test_missing_function(void **state)
{
	static const char *const sonames[] = { "libm.so.6" };
	void *a = NULL, *b = NULL;
	const struct dynlib_sym syms[] = {
		{ 0, "cos", &a },
		{ 0, "proxima_no_such_function", &b },
	};
	struct dynlib d = { .sonames = sonames, .nlibs = 1, .syms = syms, .nsyms = 2,
			    .needed_by = "which this test needs", .hint = "",
			    .lock = PTHREAD_MUTEX_INITIALIZER };

	(void)state;
	assert_int_equal(dynlib_load(&d), ENG_EIO);
	assert_string_equal(err_msg(), "libm.so.6 has no function proxima_no_such_function");
	assert_non_null(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fills_the_table),
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_missing_function),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
