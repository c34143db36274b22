/* SPDX-License-Identifier: MIT */
/*
 * The loader table of engine/recording/recording.c: every layout's name
 * and aliases map back to it, unknown names are refused, and each bundled
 * fixture is detected as its own layout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "recording.h"

#define DATA "tests/data/"

static void test_names_round_trip(void **state)
{
	static const struct {
		const char *name;
		enum rec_layout l;
	} cases[] = {
		{ "native", REC_LAYOUT_NATIVE }, { "proxima-recording/1", REC_LAYOUT_NATIVE },
		{ "adt", REC_LAYOUT_ADT }, { "mps", REC_LAYOUT_MPS },
		{ "aria-mps", REC_LAYOUT_MPS }, { "egoexo", REC_LAYOUT_EGOEXO },
		{ "egoexo4d", REC_LAYOUT_EGOEXO },
	};
	enum rec_layout l;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		l = REC_LAYOUT_AUTO;
		assert_int_equal(recording_layout_from_name(cases[i].name, &l), 0);
		assert_int_equal(l, cases[i].l);
	}
	assert_string_equal(recording_layout_name(REC_LAYOUT_NATIVE), "proxima-recording/1");
	assert_string_equal(recording_layout_name(REC_LAYOUT_ADT), "adt");
	assert_string_equal(recording_layout_name(REC_LAYOUT_MPS), "aria-mps");
	assert_string_equal(recording_layout_name(REC_LAYOUT_EGOEXO), "egoexo4d");
	assert_string_equal(recording_layout_name(REC_LAYOUT_AUTO), "unknown");
	l = REC_LAYOUT_ADT;
	assert_int_equal(recording_layout_from_name("Native", &l), ENG_EINVAL);
	assert_int_equal(recording_layout_from_name("", &l), ENG_EINVAL);
	assert_int_equal(recording_layout_from_name(NULL, &l), ENG_EINVAL);
	assert_int_equal(l, REC_LAYOUT_ADT);
}

static void test_names_list(void **state)
{
	char b[256], small[8];

	(void)state;
	recording_layout_names(b, sizeof(b));
	assert_string_equal(b, "native, adt, mps, egoexo");
	recording_layout_names(small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
}

static void test_detect_fixtures(void **state)
{
	(void)state;
	assert_int_equal(recording_detect(DATA "native"), REC_LAYOUT_NATIVE);
	assert_int_equal(recording_detect(DATA "adt"), REC_LAYOUT_ADT);
	assert_int_equal(recording_detect(DATA "mps"), REC_LAYOUT_MPS);
	assert_int_equal(recording_detect(DATA "egoexo/takes/cmu_bike01_2"), REC_LAYOUT_EGOEXO);
	assert_int_equal(recording_detect(DATA "egoexo/takes/solo_take_3"), REC_LAYOUT_EGOEXO);
	assert_int_equal(recording_detect(DATA "bad/unknown-layout"), REC_LAYOUT_AUTO);
	assert_non_null(strstr(err_msg(), "unknown layout (no recording.json, ADT scene_objects.csv, "
				"Ego-Exo4D take.json or MPS closed_loop_trajectory.csv)"));
	assert_int_equal(recording_detect(DATA "no/such/folder"), REC_LAYOUT_AUTO);
	assert_non_null(strstr(err_msg(), "no such file or directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_round_trip),
		cmocka_unit_test(test_names_list),
		cmocka_unit_test(test_detect_fixtures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
