/* SPDX-License-Identifier: MIT */
/*
 * engine/recording/video.c: the ADT sample's VRS frames (times, upright
 * size, clockwise rotation checked pixel by pixel against the stored
 * JPEG), a native recording's video and an Ego-Exo4D take's RGB MP4 made
 * here with the ffmpeg program (frame N has luminance 16 + 6 N or 16 + 3 N, so the
 * grey of each JPEG written says which frame it is), the take's frame
 * index to device time mapping through its timesync.csv, nearest-frame
 * ties and times outside the video. The ffmpeg cases are skipped when the
 * program is not installed (make test installs it). Run from the
 * repository root.
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

#include <turbojpeg.h>

#include "err.h"
#include "recording.h"
#include "video.h"
#include "vrs.h"
#include "test_util.h"

static char tmp[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/proxima-test-video-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static bool have_ffmpeg(void)
{
	return system("ffmpeg -version >/dev/null 2>&1") == 0;
}

static void run(const char *cmd)
{
	if (system(cmd) != 0) {
		print_error("command failed: %s\n", cmd);
		fail();
	}
}

/* Decodes a JPEG file to grey: a new buffer, its size in *w x *h. */
static uint8_t *grey_of(const char *path, int *w, int *h)
{
	size_t n;
	uint8_t *jpg = tu_slurp(path, &n), *px;
	tjhandle tj = tjInitDecompress();
	int sub, cs;

	assert_int_equal(tjDecompressHeader3(tj, jpg, (unsigned long)n, w, h, &sub, &cs), 0);
	px = malloc((size_t)*w * (size_t)*h);
	assert_non_null(px);
	assert_int_equal(tjDecompress2(tj, jpg, (unsigned long)n, px, *w, *w, *h, TJPF_GRAY, 0), 0);
	tjDestroy(tj);
	free(jpg);
	return px;
}

static double mean_grey(const char *path)
{
	int w, h;
	uint8_t *px = grey_of(path, &w, &h);
	double s = 0;
	int i;

	for (i = 0; i < w * h; i++)
		s += px[i];
	free(px);
	return s / (w * h);
}

/* Full-range grey of frame N of the native ramp video: limited Y = 16 + 6 N. */
static double ramp_grey(long n)
{
	return (double)(6 * n) * 255.0 / 219.0;
}

/* ======================= ADT: VRS frames ======================= */

static void test_adt_video(void **state)
{
	/* the first three 214-1 times of 2d_bounding_box.csv, and two outside */
	static const int64_t t[5] = { 87551237566700, 87551170910700, 87551204238700,
				      87551000000000, 87552000000000 };
	static const long want[5] = { 2, 0, 1, 0, 2 };
	static const int64_t capture[3] = { 87551170813262, 87551204152300, 87551237472175 };
	struct recording *rec = NULL;
	struct video *v = NULL;
	struct video_info vi;
	struct video_shot shots[5];
	char names[5][160];
	const char *paths[5];
	int i, w, h;

	(void)state;
	assert_int_equal(recording_load("tests/data/adt", REC_LAYOUT_AUTO, &rec), 0);
	assert_string_equal(rec->video.path, "video.vrs");
	assert_int_equal(video_open(rec, &v), 0);
	video_get_info(v, &vi);
	assert_string_equal(vi.kind, "vrs");
	assert_string_equal(vi.file, "tests/data/adt/video.vrs");
	assert_int_equal(vi.nframes, 3);
	assert_int_equal(vi.t_first_ns, capture[0]);
	assert_int_equal(vi.t_last_ns, capture[2]);
	assert_int_equal(vi.width, 1408);
	assert_int_equal(vi.height, 1408);
	assert_true(vi.rotated);
	assert_true(vi.fps == 30.0);
	for (i = 0; i < 5; i++) {
		snprintf(names[i], sizeof(names[i]), "%s/adt_%d.jpg", tmp, i);
		paths[i] = names[i];
	}
	assert_int_equal(video_extract(v, t, 5, 0, paths, shots), 0);
	for (i = 0; i < 5; i++) {
		uint8_t *px;

		assert_int_equal(shots[i].t_ns, t[i]);
		assert_int_equal(shots[i].frame, want[i]);
		assert_int_equal(shots[i].frame_ns, capture[want[i]]);
		assert_int_equal(shots[i].width, 640);
		assert_int_equal(shots[i].height, 640);
		px = grey_of(paths[i], &w, &h);
		assert_int_equal(w, 640);
		assert_int_equal(h, 640);
		free(px);
	}
	video_close(v);
	recording_free(rec);
}

/*
 * At full width the frame is the stored JPEG rotated losslessly by 90
 * degrees clockwise: upright (x, y) is stored (y, H - 1 - x).
 */
static void test_adt_rotation(void **state)
{
	struct recording *rec = NULL;
	struct video *v = NULL;
	struct vrs_file *f = NULL;
	struct video_shot shot;
	char name[160], sname[160];
	const char *path = name;
	int64_t t = 87551204238700;
	uint8_t *up, *st, *jpg;
	size_t n;
	int uw, uh, sw, sh, x, y;
	double diff = 0, flip = 0;
	FILE *fp;

	(void)state;
	assert_int_equal(recording_load("tests/data/adt", REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(video_open(rec, &v), 0);
	snprintf(name, sizeof(name), "%s/adt_full.jpg", tmp);
	assert_int_equal(video_extract(v, &t, 1, 4096, &path, &shot), 0);
	assert_int_equal(shot.frame, 1);
	assert_int_equal(shot.width, 1408);
	assert_int_equal(shot.height, 1408);
	assert_int_equal(vrs_open("tests/data/adt/video.vrs", 214, 1, &f), 0);
	assert_int_equal(vrs_read_jpeg(f, 1, &jpg, &n), 0);
	snprintf(sname, sizeof(sname), "%s/adt_stored.jpg", tmp);
	fp = fopen(sname, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(jpg, 1, n, fp), n);
	fclose(fp);
	free(jpg);
	vrs_close(f);
	up = grey_of(name, &uw, &uh);
	st = grey_of(sname, &sw, &sh);
	assert_int_equal(uw, sh);
	assert_int_equal(uh, sw);
	for (y = 0; y < uh; y += 7)
		for (x = 0; x < uw; x += 7) {
			diff += fabs((double)up[y * uw + x] - st[(sh - 1 - x) * sw + y]);
			/* the other direction, counter-clockwise: stored (W - 1 - y, x) */
			flip += fabs((double)up[y * uw + x] - st[x * sw + (sw - 1 - y)]);
		}
	diff /= (uw / 7.0) * (uh / 7.0);
	flip /= (uw / 7.0) * (uh / 7.0);
	assert_true(diff < 1.5);  /* the same pixels, up to IDCT rounding */
	assert_true(flip > 10.0); /* and not the mirror image */
	{
		/* at 640 px (decoded to YCbCr planes, each turned, scaled): the full
		 * size's picture, sampled at the same places */
		char sm[160];
		const char *sp = sm;
		uint8_t *small;
		int w6, h6;
		double d6 = 0, f6 = 0;

		snprintf(sm, sizeof(sm), "%s/adt_640.jpg", tmp);
		assert_int_equal(video_extract(v, &t, 1, 640, &sp, &shot), 0);
		small = grey_of(sm, &w6, &h6);
		assert_int_equal(w6, 640);
		assert_int_equal(h6, 640);
		for (y = 0; y < h6; y += 5)
			for (x = 0; x < w6; x += 5) {
				int ux = (int)((x + 0.5) * uw / w6), uy = (int)((y + 0.5) * uh / h6);

				d6 += fabs((double)small[y * w6 + x] - up[uy * uw + ux]);
				f6 += fabs((double)small[y * w6 + x] - up[uy * uw + (uw - 1 - ux)]);
			}
		d6 /= (w6 / 5.0) * (h6 / 5.0);
		f6 /= (w6 / 5.0) * (h6 / 5.0);
		assert_true(d6 < 6.0);  /* scaling blurs edges a little */
		assert_true(f6 > 10.0); /* not mirrored */
		free(small);
	}
	free(up);
	free(st);
	video_close(v);
	recording_free(rec);
}

/* ======================= A native recording's video ======================= */

/* A copy of tests/data/native whose recording.json names `video` with t0 1 s. */
static void native_copy(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp tests/data/native/* '%s'/", dir, dir);
	run(cmd);
}

static void test_native_video(void **state)
{
	/*
	 * 10 fps from t0 = 1 s: frame N at 1 + N / 10 s. 1.24 s -> 2, 1.26 -> 3,
	 * 1.25 -> a tie: the later, 3; before the start -> 0, past the end -> 29.
	 */
	static const int64_t t[7] = { 1260000000, 1240000000, 1250000000, 0, 9000000000,
				      3900000000, 2000000000 };
	static const long want[7] = { 3, 2, 3, 0, 29, 29, 10 };
	struct recording *rec = NULL;
	struct video *v = NULL;
	struct video_info vi;
	struct video_shot shots[7];
	char dir[128], cmd[768], names[7][160];
	const char *paths[7];
	int i;

	(void)state;
	if (!have_ffmpeg()) {
		fprintf(stderr, "test_native_video: skipped: ffmpeg is not installed\n");
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/native", tmp);
	native_copy(dir);
	snprintf(cmd, sizeof(cmd),
		 "ffmpeg -nostdin -loglevel error -y -f lavfi -i "
		 "\"nullsrc=s=96x64:r=10:d=3,geq=lum='16+N*6':cb=128:cr=128,format=yuv420p\" "
		 "-c:v mpeg4 -q:v 1 -g 5 '%s/video.mp4'", dir);
	run(cmd);
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(video_open(rec, &v), 0);
	video_get_info(v, &vi);
	assert_string_equal(vi.kind, "mpeg4");
	assert_int_equal(vi.nframes, 30);
	assert_int_equal(vi.t_first_ns, 1000000000);
	assert_int_equal(vi.t_last_ns, 3900000000);
	assert_int_equal(vi.width, 96);
	assert_int_equal(vi.height, 64);
	assert_true(fabs(vi.fps - 10) < 1e-9);
	assert_false(vi.rotated);
	for (i = 0; i < 7; i++) {
		snprintf(names[i], sizeof(names[i]), "%s/native_%d.jpg", tmp, i);
		paths[i] = names[i];
	}
	assert_int_equal(video_extract(v, t, 7, 48, paths, shots), 0);
	for (i = 0; i < 7; i++) {
		int w, h;
		uint8_t *px = grey_of(paths[i], &w, &h);

		free(px);
		assert_int_equal(shots[i].frame, want[i]);
		assert_int_equal(shots[i].frame_ns, 1000000000 + want[i] * 100000000);
		assert_int_equal(w, 48);
		assert_int_equal(h, 32);
		if (fabs(mean_grey(paths[i]) - ramp_grey(want[i])) > 3) {
			print_error("%s: grey %.1f, frame %ld should be %.1f\n", paths[i],
				    mean_grey(paths[i]), want[i], ramp_grey(want[i]));
			fail();
		}
	}
	video_close(v);
	recording_free(rec);
}

/* ======================= An Ego-Exo4D take's RGB MP4 ======================= */

/* The fixture's timesync: data row r of aria02_214-1_capture_timestamp_ns. */
static int64_t timesync_row(long r)
{
	return 149300000000LL + (r - 4) * 33333333LL + (r * 7919) % 1000;
}

static void test_egoexo_video(void **state)
{
	struct recording *rec = NULL;
	struct video *v = NULL;
	struct video_info vi;
	struct video_shot shots[3];
	char root[128], take[160], cmd[768], names[3][160];
	const char *paths[3];
	int64_t t[3];
	int i;

	(void)state;
	if (!have_ffmpeg()) {
		fprintf(stderr, "test_egoexo_video: skipped: ffmpeg is not installed\n");
		skip();
	}
	snprintf(root, sizeof(root), "%s/egoexo", tmp);
	snprintf(cmd, sizeof(cmd), "cp -r tests/data/egoexo '%s'", root);
	run(cmd);
	snprintf(take, sizeof(take), "%s/takes/cmu_bike01_2", root);
	/* 2 s at 30 fps; the ego camera of this take is aria02 */
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/frame_aligned_videos' && ffmpeg -nostdin -loglevel error -y -f lavfi -i "
		 "\"nullsrc=s=64x64:r=30:d=2,geq=lum='16+N*3':cb=128:cr=128,format=yuv420p\" "
		 "-c:v mpeg4 -q:v 1 -g 10 '%s/frame_aligned_videos/aria02_214-1.mp4'", take, take);
	run(cmd);
	assert_int_equal(recording_load(take, REC_LAYOUT_AUTO, &rec), 0);
	assert_string_equal(rec->video.path, "frame_aligned_videos/aria02_214-1.mp4");
	/*
	 * Frame i is timesync row timesync_start_idx + 1 + i = 4 + i, for i below
	 * timesync_end_idx - timesync_start_idx - 1 = 299 - 3 - 1 = 295; row 154
	 * (frame 150) is NaN: halfway between rows 153 and 155.
	 */
	assert_int_equal(rec->video.nframe_ns, 295);
	assert_int_equal(rec->video.frame_ns[0], timesync_row(4));
	assert_int_equal(rec->video.frame_ns[1], timesync_row(5));
	assert_int_equal(rec->video.frame_ns[149], timesync_row(153));
	assert_true(llabs(rec->video.frame_ns[150] - (timesync_row(153) + timesync_row(155)) / 2) <= 1);
	assert_int_equal(rec->video.frame_ns[294], timesync_row(298));
	assert_int_equal(rec->video.t0_ns, timesync_row(4));
	assert_int_equal(video_open(rec, &v), 0);
	video_get_info(v, &vi);
	assert_int_equal(vi.nframes, 60);
	assert_int_equal(vi.t_first_ns, timesync_row(4));
	assert_int_equal(vi.t_last_ns, timesync_row(4 + 59));
	/* frames 10 and 57 at their device times, and 3 ms after frame 20 */
	t[0] = timesync_row(4 + 57);
	t[1] = timesync_row(4 + 10);
	t[2] = timesync_row(4 + 20) + 3000000;
	for (i = 0; i < 3; i++) {
		snprintf(names[i], sizeof(names[i]), "%s/egoexo_%d.jpg", tmp, i);
		paths[i] = names[i];
	}
	assert_int_equal(video_extract(v, t, 3, 640, paths, shots), 0);
	assert_int_equal(shots[0].frame, 57);
	assert_int_equal(shots[1].frame, 10);
	assert_int_equal(shots[2].frame, 20);
	assert_int_equal(shots[0].frame_ns, timesync_row(61));
	assert_int_equal(shots[2].frame_ns, timesync_row(24));
	assert_int_equal(shots[1].width, 64); /* never upscaled */
	for (i = 0; i < 3; i++) {
		double want = (double)(3 * shots[i].frame) * 255.0 / 219.0;

		if (fabs(mean_grey(paths[i]) - want) > 3) {
			print_error("%s: grey %.1f, frame %ld should be %.1f\n", paths[i],
				    mean_grey(paths[i]), shots[i].frame, want);
			fail();
		}
	}
	video_close(v);
	recording_free(rec);
}

/*
 * The bundled kitchen's H.264 (B-frames, 5 s keyframe interval): three
 * clips far apart go to two decoders in one call; each clip asked alone is
 * one pass on one decoder. The files are the same byte for byte, and each
 * frame is the nearest one (10 fps: within 50 ms).
 */
static void test_split_passes(void **state)
{
	static const int64_t clip_T[3] = { 100000000000LL, 333333333333LL, 540000000000LL };
	struct recording *rec = NULL;
	struct video *v = NULL, *w = NULL;
	struct video_shot shots[24], one[8];
	int64_t t[24];
	char names[24][160], alone[8][160];
	const char *paths[24], *apaths[8];
	int i, k;

	(void)state;
	assert_int_equal(recording_load("examples/kitchen-10min", REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(video_open(rec, &v), 0);
	for (i = 0; i < 24; i++) {
		/* the clips interleaved, so the call sorts them */
		k = i % 3;
		t[i] = clip_T[k] - 8000000000LL + 8000000000LL * (i / 3) / 7;
		snprintf(names[i], sizeof(names[i]), "%s/all%02d.jpg", tmp, i);
		paths[i] = names[i];
	}
	assert_int_equal(video_extract(v, t, 24, 0, paths, shots), 0);
	for (k = 0; k < 3; k++) {
		int64_t tk[8];

		assert_int_equal(video_open(rec, &w), 0);
		for (i = 0; i < 8; i++) {
			tk[i] = t[i * 3 + k];
			snprintf(alone[i], sizeof(alone[i]), "%s/c%d_%d.jpg", tmp, k, i);
			apaths[i] = alone[i];
		}
		assert_int_equal(video_extract(w, tk, 8, 0, apaths, one), 0);
		for (i = 0; i < 8; i++) {
			size_t na, nb;
			uint8_t *a = tu_slurp(names[i * 3 + k], &na), *b = tu_slurp(alone[i], &nb);

			assert_int_equal(one[i].frame, shots[i * 3 + k].frame);
			assert_true(llabs(shots[i * 3 + k].frame_ns - tk[i]) <= 50000000LL);
			assert_int_equal(na, nb);
			assert_memory_equal(a, b, na);
			free(a);
			free(b);
		}
		video_close(w);
		w = NULL;
	}
	video_close(v);
	recording_free(rec);
}

static void test_no_video(void **state)
{
	struct recording *rec = NULL;
	struct video *v = NULL;

	(void)state;
	assert_int_equal(recording_load("tests/data/mps", REC_LAYOUT_AUTO, &rec), 0);
	assert_null(rec->video.path);
	assert_int_equal(video_open(rec, &v), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), "has no video"));
	recording_free(rec);
	/* the native fixture names a video.mp4 that is not there */
	assert_int_equal(recording_load("tests/data/native", REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(video_open(rec, &v), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), "cannot open the video 'tests/data/native/video.mp4'"));
	assert_null(v);
	recording_free(rec);
	video_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adt_video),
		cmocka_unit_test(test_adt_rotation),
		cmocka_unit_test(test_native_video),
		cmocka_unit_test(test_egoexo_video),
		cmocka_unit_test(test_split_passes),
		cmocka_unit_test(test_no_video),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
