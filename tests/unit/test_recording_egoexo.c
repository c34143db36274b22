/* SPDX-License-Identifier: MIT */
/*
 * The Ego-Exo4D take loader on the hand-made fixture in tests/data/egoexo
 * (built to follow formats.md section 5; see tests/data/SOURCES.md). The
 * fixture's timesync column aria02_214-1_capture_timestamp_ns holds, for
 * data row r, 149300000000 + (r - 4) * 33333333 + (r * 7919 mod 1000) ns,
 * except row 154 (NaN); it has 300 rows. The take's timesync_start_idx is
 * 3, so take time t s maps to row 4 + round(30 t). Run from the repository
 * root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "recording.h"

#define TAKE "tests/data/egoexo/takes/cmu_bike01_2"
#define SOLO "tests/data/egoexo/takes/solo_take_3"

/* The fixture's timesync value of row r (see the file comment). */
static int64_t row_ns(int64_t r)
{
	return 149300000000LL + (r - 4) * 33333333LL + (r * 7919) % 1000;
}

static struct recording *load(const char *dir)
{
	struct recording *rec = NULL;
	int rc = recording_load(dir, REC_LAYOUT_AUTO, &rec);

	if (rc)
		print_error("%s: %s\n", dir, err_msg());
	assert_int_equal(rc, 0);
	return rec;
}

static void test_take_in_download_layout(void **state)
{
	struct recording *rec;

	(void)state;
	/* takes.json sits two folders up: <root>/takes/<take_name>/ */
	assert_int_equal(recording_detect(TAKE), REC_LAYOUT_EGOEXO);
	rec = load(TAKE);
	assert_string_equal(rec->layout, "egoexo4d");
	assert_string_equal(rec->id, "cmu_bike01_2");
	/* every 10th row of the every-10th MPS sample; gaze is the Gen1 vergence sample */
	assert_int_equal(rec->ntraj, 116);
	assert_string_equal(rec->gaze_schema, "gen1-vergence");
	assert_int_equal(rec->gaze_rows, 123);
	assert_int_equal(rec->ngaze, 114);
	assert_int_equal(rec->camera.model, REC_CAM_FISHEYE);
	assert_null(rec->video.path); /* no frame_aligned_videos/ in the fixture */
	assert_string_equal(rec->info_actions.file, "../../annotations/keystep_val.json");

	/* keystep_train.json holds another take; keystep_val.json holds this one */
	assert_int_equal(rec->nactions, 4);
	/* segment 1: 0.5 s -> row 4 + 15 = 19; 1.8 s -> row 4 + 54 = 58 */
	assert_true(rec->actions[0].start_ns == row_ns(19));
	assert_true(rec->actions[0].start_ns == 149800000456LL);
	assert_true(rec->actions[0].end_ns == row_ns(58));
	assert_string_equal(rec->actions[0].description, "Take the rear wheel off the frame");
	assert_string_equal(rec->actions[0].goal, "Fix the flat"); /* taxonomy parent of step 11 */
	assert_int_equal(rec->actions[0].step_id, 1101);
	assert_int_equal(rec->actions[0].object, -1);
	assert_int_equal(rec->actions[0].hand, REC_HAND_NONE);
	/* segment 2: 2.0 s -> row 64; 4.26 s -> round(127.8) = 128 -> row 132 */
	assert_true(rec->actions[1].start_ns == row_ns(64));
	assert_true(rec->actions[1].end_ns == row_ns(132));
	assert_true(rec->actions[1].end_ns == 153566666932LL);
	/* an empty step_description falls back to step_name */
	assert_string_equal(rec->actions[1].description, "Find the puncture");
	/*
	 * segment 3: 5.0 s -> row 154 is NaN: the first valid row of the take
	 * (row 4) + 5 s = 149300000676 + 5000000000; 6.0 s -> row 184.
	 */
	assert_true(rec->actions[2].start_ns == row_ns(4) + 5000000000LL);
	assert_true(rec->actions[2].start_ns == 154300000676LL);
	assert_true(rec->actions[2].end_ns == row_ns(184));
	assert_string_equal(rec->actions[2].goal, "Inflate");
	/* segment 4: 8.0 s -> row 244; 10.0 s -> row 304 is past the end (300 rows) */
	assert_true(rec->actions[3].start_ns == row_ns(244));
	assert_true(rec->actions[3].end_ns == row_ns(4) + 10000000000LL);
	/* step 2 has no parent in the taxonomy: the goal is the scenario */
	assert_string_equal(rec->actions[3].goal, "Bike Repair");
	assert_string_equal(rec->actions[3].description, "Put the tools away");
	/* the aria01 column (500 ms later) was not used */
	assert_non_null(rec->warnings);
	assert_non_null(strstr(rec->warnings, "2 keysteps fell on a NaN or missing row"));
	recording_free(rec);
}

static void test_self_contained_take(void **state)
{
	struct recording *rec;

	(void)state;
	assert_int_equal(recording_detect(SOLO), REC_LAYOUT_EGOEXO);
	rec = load(SOLO);
	assert_string_equal(rec->id, "solo_take_3");
	assert_int_equal(rec->ntraj, 24);
	assert_int_equal(rec->ngaze, 0);
	/*
	 * take.json, keystep.json and timesync.csv (aria01, 150000000000 +
	 * 33333333 r) in the folder; timesync_start_idx 0: 0.2 s -> row 1 + 6,
	 * 0.9 s -> row 1 + 27.
	 */
	assert_int_equal(rec->nactions, 1);
	assert_true(rec->actions[0].start_ns == 150000000000LL + 7 * 33333333LL);
	assert_true(rec->actions[0].end_ns == 150000000000LL + 28 * 33333333LL);
	assert_string_equal(rec->actions[0].description, "Fill the kettle and switch it on");
	assert_string_equal(rec->actions[0].goal, "Cooking");
	assert_int_equal(rec->actions[0].step_id, 501);
	assert_string_equal(rec->info_actions.file, "keystep.json");
	/* no capture object: the ego camera defaults to aria01, with a warning */
	assert_non_null(strstr(rec->warnings, "using aria01"));
	assert_non_null(strstr(rec->warnings, "no eye-gaze file"));
	recording_free(rec);
}

static char tmpdir[64];

static void put(const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_bad_takes(void **state)
{
	struct recording *rec = NULL;
	char p[256];

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/proxima-test-egoexo-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(p, sizeof(p), "%s/trajectory", tmpdir);
	assert_int_equal(mkdir(p, 0755), 0);
	put("trajectory/closed_loop_trajectory.csv",
	    "tracking_timestamp_us,tx_world_device,ty_world_device,tz_world_device,qx_world_device,"
	    "qy_world_device,qz_world_device,qw_world_device\n100,0,0,0,0,0,0,1\n200,0,0,0,0,0,0,1\n");
	put("timesync.csv", "aria01_214-1_capture_timestamp_ns\n100000\n150000\n");
	put("take.json", "{\"take_name\": \"t_1\", \"take_uid\": \"u\", \"timesync_start_idx\": 0}");
	put("keystep.json", "{\"annotations\": {\"u\": {\"scenario\": \"S\", \"segments\": "
			    "[{\"start_time\": 2.0, \"end_time\": 1.0, \"step_name\": \"x\"}]}}}");
	assert_int_equal(recording_load(tmpdir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "keystep.json: annotations.u.segments[0].end_time: 1 s is before start_time 2 s"));
	put("keystep.json", "{\"annotations\": {\"u\": {\"scenario\": \"S\", \"segments\": "
			    "[{\"start_time\": 0.0, \"end_time\": 0.01, \"step_name\": \"x\"}]}}}");
	put("take.json", "{\"take_name\": \"t_1\", \"take_uid\": \"u\", \"timesync_start_idx\": 5}");
	assert_int_equal(recording_load(tmpdir, REC_LAYOUT_AUTO, &rec), ENG_ERANGE);
	assert_non_null(strstr(err_msg(), "timesync.csv: no valid row for this take"));
	put("take.json", "{\"take_uid\": \"u\"}");
	assert_int_equal(recording_load(tmpdir, REC_LAYOUT_AUTO, &rec), ENG_EPARSE);
	assert_non_null(strstr(err_msg(), "take.json: take.take_name: missing"));
	put("take.json", "{\"take_name\": \"t_1\", \"capture\": {\"cameras\": [{\"cam_id\": \"aria1x\", \"is_ego\": true, \"device_type\": \"aria\"}]}}");
	assert_int_equal(recording_load(tmpdir, REC_LAYOUT_AUTO, &rec), ENG_EPARSE);
	assert_non_null(strstr(err_msg(), "ego camera id 'aria1x' is not aria<N>"));
	/* a good one: t 0 -> row 1 (150000 ns) */
	put("take.json", "{\"take_name\": \"t_1\", \"take_uid\": \"u\", \"timesync_start_idx\": 0}");
	assert_int_equal(recording_load(tmpdir, REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(rec->nactions, 1);
	assert_true(rec->actions[0].start_ns == 150000);
	assert_string_equal(rec->actions[0].goal, "S");
	recording_free(rec);
	snprintf(p, sizeof(p), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_in_download_layout),
		cmocka_unit_test(test_self_contained_take),
		cmocka_unit_test(test_bad_takes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
