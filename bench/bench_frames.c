/* SPDX-License-Identifier: MIT */
/*
 * Frame extraction (engine/recording/video.h) as export --frames uses it:
 * the 8 frames of each of 60 clips of a recording, 640 px wide, in one
 * call (one decode pass). The target is 200 frames/s on this machine's 2
 * cores. The recording is the bundled kitchen when it has a video, else a
 * copy of it with a 640x480, 10 fps, 120 s test video made by the ffmpeg
 * program in $BENCH_WORK. The anchor is what export did before: one
 * ffmpeg process per frame (-ss before -i, scale to 640), timed on the
 * first 16 of the same frames. The ADT sample's VRS frames (1408x1408
 * JPEG, turned upright and scaled to 640) are timed too.
 *
 * usage: bench_frames [RECORDING]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "err.h"
#include "recording.h"
#include "video.h"

#define TARGET_FPS 200.0
#define NCLIPS 60
#define PER_CLIP 8
#define CLIP_NS 8000000000LL
#define ANCHOR_FRAMES 16

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_u64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A recording with a video: the argument, the kitchen, or a kitchen copy with a test video. */
static int load(int argc, char **argv, const char *work, struct recording **rec)
{
	char dir[2100], cmd[16384];
	const char *src = argc > 1 ? argv[1] : "examples/kitchen-10min";
	int rc = recording_load(src, REC_LAYOUT_AUTO, rec);

	if (!rc && (*rec)->video.path) {
		struct video *v = NULL;

		if (!video_open(*rec, &v)) {
			video_close(v);
			return 0;
		}
	}
	recording_free(*rec);
	*rec = NULL;
	snprintf(dir, sizeof(dir), "%s/kitchen-video", work);
	rc = recording_load(dir, REC_LAYOUT_AUTO, rec);
	if (!rc && (*rec)->video.path)
		return 0;
	recording_free(*rec);
	*rec = NULL;
	if (system("ffmpeg -version >/dev/null 2>&1") != 0)
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && cp -r examples/kitchen-10min '%s' && "
		 "ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc=size=640x480:rate=10 -t 120 "
		 "-pix_fmt yuv420p -preset veryfast '%s/video.mp4' && "
		 "sed -i 's|\"streams\"|\"video\": {\"path\": \"video.mp4\", \"t0_ns\": 0, \"fps\": 10},\\n  \"streams\"|' "
		 "'%s/recording.json'", dir, dir, dir, dir);
	if (system(cmd) != 0)
		return -1;
	return recording_load(dir, REC_LAYOUT_AUTO, rec);
}

/* Times n frames in one call; returns frames/s (0 on failure). */
static double run(struct video *v, const int64_t *t, size_t n, const char *dir)
{
	const char **paths = malloc(n * sizeof(*paths));
	struct video_shot *shots = calloc(n, sizeof(*shots));
	char (*names)[600] = malloc(n * sizeof(*names));
	double t0, dt = 0;
	size_t i;
	int rc = -1;

	if (paths && shots && names) {
		for (i = 0; i < n; i++) {
			snprintf(names[i], sizeof(names[i]), "%s/%04zu.jpg", dir, i);
			paths[i] = names[i];
		}
		t0 = now_s();
		rc = video_extract(v, t, n, VIDEO_DEFAULT_WIDTH, paths, shots);
		dt = now_s() - t0;
		if (rc)
			fprintf(stderr, "error: %s\n", err_msg());
	}
	free(paths);
	free(shots);
	free(names);
	return rc || dt <= 0 ? 0 : (double)n / dt;
}

/* The old export: one ffmpeg process per frame. Returns frames/s, 0 when ffmpeg is missing. */
static double anchor(const char *file, int64_t t0_ns, const int64_t *t, size_t n, const char *dir)
{
	char cmd[16384];
	double t1;
	size_t i;

	if (system("ffmpeg -version >/dev/null 2>&1") != 0)
		return 0;
	t1 = now_s();
	for (i = 0; i < n; i++) {
		double s = (double)(t[i] - t0_ns) / 1e9;

		snprintf(cmd, sizeof(cmd),
			 "ffmpeg -nostdin -hide_banner -loglevel error -y -ss %.6f -i '%s' -frames:v 1 "
			 "-vf \"scale='min(640,iw)':-2\" -q:v 2 '%s/anchor_%02zu.jpg'",
			 s < 0 ? 0 : s, file, dir, i);
		if (system(cmd) != 0)
			return 0;
	}
	return (double)n / (now_s() - t1);
}

int main(int argc, char **argv)
{
	const char *work = getenv("BENCH_WORK");
	char wdir[2048], out[2100];
	struct recording *rec = NULL, *adt = NULL;
	struct video *v = NULL;
	struct video_info vi;
	int64_t t[NCLIPS * PER_CLIP], sorted16[ANCHOR_FRAMES];
	double ours, old, vrs;
	size_t i, k;

	snprintf(wdir, sizeof(wdir), "%s", work && *work ? work : "/tmp");
	snprintf(out, sizeof(out), "%s/frames-out", wdir);
	mkdir(out, 0777);
	if (load(argc, argv, wdir, &rec) || video_open(rec, &v)) {
		printf("frames: n/a (no recording with a video, and no ffmpeg program to make one)\n");
		recording_free(rec);
		return 0;
	}
	video_get_info(v, &vi);
	printf("video %s: %s %dx%d, %zu frames, %.1f s\n", vi.file, vi.kind, vi.width, vi.height,
	       vi.nframes, (double)(vi.t_last_ns - vi.t_first_ns) / 1e9);
	/* the 8 frames over [T - 8 s, T] of 60 clips at random T, as a QA shows them */
	for (i = 0; i < NCLIPS; i++) {
		int64_t span = vi.t_last_ns - vi.t_first_ns - CLIP_NS;
		int64_t T = vi.t_first_ns + CLIP_NS + (span > 0 ? (int64_t)(next_u64() % (uint64_t)span) : 0);

		for (k = 0; k < PER_CLIP; k++)
			t[i * PER_CLIP + k] = T - CLIP_NS + CLIP_NS * (int64_t)k / (PER_CLIP - 1);
	}
	ours = run(v, t, NCLIPS * PER_CLIP, out);
	printf("frames: ours %.0f frames/s, target %.0f frames/s, ratio %.2f (%d frames of %d clips, "
	       "640 px, one pass)\n", ours, TARGET_FPS, ours / TARGET_FPS, NCLIPS * PER_CLIP, NCLIPS);
	memcpy(sorted16, t, sizeof(sorted16));
	old = anchor(vi.file, vi.t_first_ns, sorted16, ANCHOR_FRAMES, out);
	if (old > 0)
		printf("frames vs ffmpeg per frame: ours %.0f frames/s, ffmpeg-per-frame %.1f frames/s, "
		       "ratio %.1f\n", ours, old, ours / old);
	else
		printf("frames vs ffmpeg per frame: ours %.0f frames/s, ffmpeg-per-frame n/a\n", ours);
	video_close(v);
	recording_free(rec);
	v = NULL;

	/* the ADT sample: 3 VRS frames, 1408 px JPEG upright to 640 px, 20 times each */
	if (!recording_load("tests/data/adt", REC_LAYOUT_AUTO, &adt) && !video_open(adt, &v)) {
		int64_t tv[60];

		video_get_info(v, &vi);
		for (i = 0; i < 60; i++)
			tv[i] = i % 3 == 0 ? vi.t_first_ns : i % 3 == 1 ? vi.t_last_ns :
				(vi.t_first_ns + vi.t_last_ns) / 2;
		/* distinct frames each time: one call per pass over the three */
		{
			double t0 = now_s();
			int pass;

			for (pass = 0; pass < 20; pass++)
				if (!run(v, tv, 3, out))
					break;
			vrs = 60 / (now_s() - t0);
		}
		printf("frames vrs: ours %.0f frames/s, target %.0f frames/s, ratio %.2f (1408x1408 JPEG "
		       "upright to 640 px)\n", vrs, TARGET_FPS, vrs / TARGET_FPS);
	} else {
		printf("frames vrs: n/a (%s)\n", err_msg());
	}
	video_close(v);
	recording_free(adt);
	return 0;
}
