/* SPDX-License-Identifier: MIT */
/*
 * engine/out/framecache.c, the frames the review server shows: the ADT
 * sample's VRS frames at the ground truth's first three 214-1 times
 * (capture times from the VRS records, as test_vrs.c reads them), their
 * pixels against a direct video_extract() of the same times, one pass
 * writing all of a QA's frames, the file ring dropping the oldest, a
 * recording without a video, and the folder removed at the end. Run from
 * the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <turbojpeg.h>

#include "err.h"
#include "framecache.h"
#include "recording.h"
#include "video.h"
#include "test_util.h"

static char tmp[64];

/* the first three 214-1 times of tests/data/adt/2d_bounding_box_rgb3.csv */
static const int64_t adt_t[3] = { 87551170910700, 87551204238700, 87551237566700 };
/* the capture times of the VRS's three RGB records */
static const int64_t adt_capture[3] = { 87551170813262, 87551204152300, 87551237472175 };

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/proxima-test-fc-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	return setenv("TMPDIR", tmp, 1);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* The cache's folder under tmp (the one proxima-frames-* there), or "" */
static void cache_dir(char *out, size_t size)
{
	DIR *d = opendir(tmp);
	struct dirent *e;

	out[0] = '\0';
	assert_non_null(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "proxima-frames-", 15))
			snprintf(out, size, "%s/%.100s", tmp, e->d_name);
	closedir(d);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static uint8_t *read_fd(int fd, size_t *n)
{
	struct stat sb;
	uint8_t *b;

	assert_int_equal(fstat(fd, &sb), 0);
	b = malloc((size_t)sb.st_size);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)sb.st_size, 0), sb.st_size);
	*n = (size_t)sb.st_size;
	return b;
}

/* Decodes a JPEG to RGB: a new buffer, its size in *w x *h. */
static uint8_t *rgb_of(const uint8_t *jpg, size_t n, int *w, int *h)
{
	tjhandle tj = tjInitDecompress();
	uint8_t *px;
	int sub, cs;

	assert_int_equal(tjDecompressHeader3(tj, jpg, (unsigned long)n, w, h, &sub, &cs), 0);
	px = malloc((size_t)*w * (size_t)*h * 3);
	assert_non_null(px);
	assert_int_equal(tjDecompress2(tj, jpg, (unsigned long)n, px, *w, *w * 3, *h, TJPF_RGB, 0),
			 0);
	tjDestroy(tj);
	return px;
}

static void test_adt_frames(void **state)
{
	struct framecache *fc = NULL;
	struct framecache_video fv;
	struct recording *rec = NULL;
	struct video *v = NULL;
	struct video_shot shots[3];
	char dir[256], direct[3][160];
	const char *paths[3];
	int64_t fns = 0;
	uint8_t *a, *b, *pa, *pb;
	size_t na, nb;
	int fd = -1, k, w, h, w2, h2;

	(void)state;
	assert_int_equal(framecache_new(0, &fc), 0);
	cache_dir(dir, sizeof(dir));
	assert_true(dir[0]);
	assert_int_equal(count_files(dir), 0);
	assert_int_equal(framecache_probe(fc, "adt", "tests/data/adt", &fv), 0);
	assert_string_equal(fv.kind, "vrs");
	assert_string_equal(fv.file, "video.vrs");
	assert_int_equal(fv.nframes, 3);
	assert_int_equal(fv.width, 1408);
	assert_int_equal(fv.height, 1408);

	/* frame 1 asked first: all three are written in that one pass */
	assert_int_equal(framecache_open(fc, "adt", "tests/data/adt", adt_t, 3, 1, 0, &fd, &fns), 0);
	assert_int_equal(fns, adt_capture[1]);
	assert_int_equal(count_files(dir), 3);
	a = read_fd(fd, &na);
	close(fd);

	/* the same frame straight from the video: the same picture */
	assert_int_equal(recording_load("tests/data/adt", REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(video_open(rec, &v), 0);
	for (k = 0; k < 3; k++) {
		snprintf(direct[k], sizeof(direct[k]), "%s/direct%d.jpg", tmp, k);
		paths[k] = direct[k];
	}
	assert_int_equal(video_extract(v, adt_t, 3, 0, paths, shots), 0);
	b = tu_slurp(direct[1], &nb);
	pa = rgb_of(a, na, &w, &h);
	pb = rgb_of(b, nb, &w2, &h2);
	assert_int_equal(w, 640);
	assert_int_equal(h, 640);
	assert_int_equal(w2, w);
	assert_int_equal(h2, h);
	assert_memory_equal(pa, pb, (size_t)w * (size_t)h * 3);
	free(pa);
	free(pb);
	free(a);
	free(b);

	/* asked again: served from the folder, nothing new written */
	for (k = 0; k < 3; k++) {
		assert_int_equal(framecache_open(fc, "adt", "tests/data/adt", adt_t, 3, (size_t)k, 0,
						 &fd, &fns), 0);
		assert_int_equal(fns, adt_capture[k]);
		close(fd);
	}
	assert_int_equal(count_files(dir), 3);
	/* another width is another file */
	assert_int_equal(framecache_open(fc, "adt", "tests/data/adt", adt_t, 1, 0, 320, &fd, &fns),
			 0);
	a = read_fd(fd, &na);
	close(fd);
	pa = rgb_of(a, na, &w, &h);
	assert_int_equal(w, 320);
	assert_int_equal(h, 320);
	free(pa);
	free(a);
	assert_int_equal(count_files(dir), 4);
	assert_int_equal(framecache_open(fc, "adt", "tests/data/adt", adt_t, 3, 3, 0, &fd, &fns),
			 ENG_EINVAL);

	video_close(v);
	recording_free(rec);
	framecache_free(fc);
	assert_int_equal(access(dir, F_OK), -1);
}

static void test_ring(void **state)
{
	struct framecache *fc = NULL;
	char dir[256];
	int64_t fns = 0;
	int fd = -1;

	(void)state;
	assert_int_equal(framecache_new(2, &fc), 0);
	cache_dir(dir, sizeof(dir));
	assert_int_equal(framecache_open(fc, "adt", "tests/data/adt", adt_t, 3, 2, 0, &fd, &fns), 0);
	close(fd);
	/* three written, the ring keeps two: the oldest (frame 0) went */
	assert_int_equal(count_files(dir), 2);
	assert_int_equal(fns, adt_capture[2]);
	assert_int_equal(framecache_open(fc, "adt", "tests/data/adt", adt_t, 3, 0, 0, &fd, &fns), 0);
	close(fd);
	assert_int_equal(fns, adt_capture[0]);
	assert_int_equal(count_files(dir), 2);
	framecache_free(fc);
}

static void test_no_video(void **state)
{
	struct framecache *fc = NULL;
	struct framecache_video fv;
	int fd = -1;

	(void)state;
	assert_int_equal(framecache_new(0, &fc), 0);
	assert_int_equal(framecache_probe(fc, "mps", "tests/data/mps", &fv), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), "has no video"));
	/* the failure is remembered, and said again */
	err_clear();
	assert_int_equal(framecache_open(fc, "mps", "tests/data/mps", adt_t, 1, 0, 0, &fd, NULL),
			 ENG_ENOENT);
	assert_non_null(strstr(err_msg(), "has no video"));
	assert_int_equal(framecache_probe(fc, "gone", "tests/data/no-such-folder", &fv), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), "no-such-folder"));
	framecache_free(fc);
}

/*
 * A native recording.json whose video lies outside its folder is refused:
 * a path with .. by the loader, a link that leads out by the cache.
 */
static void test_video_outside(void **state)
{
	struct framecache *fc = NULL;
	struct framecache_video fv;
	char cmd[1024], rec[256];

	(void)state;
	snprintf(rec, sizeof(rec), "%s/rec", tmp);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && cp tests/data/native/* '%s'/ && touch '%s/outside.mp4' && "
		 "sed -i 's|\"video.mp4\"|\"../outside.mp4\"|' '%s/recording.json'",
		 rec, rec, tmp, rec);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(framecache_new(0, &fc), 0);
	/* the loader refuses the path itself */
	assert_true(framecache_probe(fc, "out", rec, &fv) < 0);
	assert_non_null(strstr(err_msg(), "must be a relative path inside the recording folder"));
	snprintf(cmd, sizeof(cmd),
		 "ln -s ../outside.mp4 '%s/link.mp4' && "
		 "sed -i 's|\"../outside.mp4\"|\"link.mp4\"|' '%s/recording.json'", rec, rec);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(framecache_probe(fc, "link", rec, &fv), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "video 'link.mp4' resolves outside the recording folder"));
	framecache_free(fc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_adt_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_video, setup, teardown),
		cmocka_unit_test_setup_teardown(test_video_outside, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
