/* SPDX-License-Identifier: MIT */
/*
 * The video of a recording, whatever holds it: a container file (MP4,
 * WebM, ... through FFmpeg's libraries: a native recording's video, an
 * Ego-Exo4D take's Aria RGB MP4) or a VRS file (the Aria RGB stream
 * 214-1 through vrs.h, turned upright). It maps frames to device time and
 * writes the frames at a list of device times as JPEG in one pass.
 *
 * Device time of a frame: a VRS frame carries its capture time. A
 * container frame at presentation time p (s, from the stream's start) is
 * at rec->video.t0_ns + p, or, when the recording gives a per-frame table
 * (rec->video.frame_ns, Ego-Exo4D's timesync), frame_ns[round(p * fps)].
 *
 * Which frame a time gets: the nearest one; a tie goes to the later frame
 * (the one ffmpeg -ss seeks to). A time before the first frame gets the first frame and a time
 * after the last one the last frame: each result says which frame was
 * written and its time, so callers can tell how far it is.
 *
 * Errors: functions return 0 or a negative enum eng_err with err_msg()
 * naming the file (and the frame or byte offset): ENG_ENOENT (no video, or
 * its file is missing), ENG_EPARSE (a broken file), ENG_EIO, ENG_ENOMEM.
 *
 * Memory: a struct video is an opaque handle owning its decoder state;
 * video_close() frees it. It does not keep the recording. One thread
 * uses a handle at a time; different handles may run in parallel.
 */
#ifndef VIDEO_H
#define VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recording;
struct video;

/* Frame width written when the caller does not say (EgoProx's). */
#define VIDEO_DEFAULT_WIDTH 640
/* JPEG quality of the frames written (libjpeg scale, 1..100). */
#define VIDEO_JPEG_QUALITY 90

/* What the video holds. */
struct video_info {
	const char *file;    /* the source file (owned by the handle) */
	const char *kind;    /* "vrs" or the codec name ("h264", "vp9", ...) */
	size_t nframes;      /* frames in the stream */
	int64_t t_first_ns;  /* device time of the first frame */
	int64_t t_last_ns;   /* device time of the last frame */
	int width, height;   /* frame size as written at full width (upright) */
	double fps;          /* nominal frame rate, 0 when unknown */
	bool rotated;        /* frames are stored rotated and turned upright */
};

/* One frame written by video_extract(). */
struct video_shot {
	int64_t t_ns;        /* the device time asked for */
	int64_t frame_ns;    /* device time of the frame written */
	long frame;          /* its index in the stream, from 0 */
	int width, height;   /* size of the JPEG written */
};

/*
 * Opens the video of `rec` (rec->video.path, relative to rec->root, or a
 * VRS file there). Stores a new handle in *out and returns 0; a recording
 * without a video is ENG_ENOENT ("'<id>' has no video").
 */
int video_open(const struct recording *rec, struct video **out);

/* Frees the handle. video_close(NULL) is a no-op. */
void video_close(struct video *v);

/* Fills *out; its strings live as long as v. Can't fail. */
void video_get_info(const struct video *v, struct video_info *out);

/*
 * Writes the frames at the n device times t_ns[] as JPEG files paths[i],
 * at most `width` pixels wide (aspect kept, height even; never upscaled;
 * width <= 0 means VIDEO_DEFAULT_WIDTH), and fills shots[i]. The times
 * may come in any order and repeat: they are sorted and served in one
 * pass (one seek, then decoding forward; VRS frames are read directly
 * and, at full width, rotated losslessly). Returns 0, or an error naming
 * the frame; files written before an error stay.
 */
int video_extract(struct video *v, const int64_t *t_ns, size_t n, int width,
		  const char *const *paths, struct video_shot *shots);

#endif /* VIDEO_H */
