/* SPDX-License-Identifier: MIT */
/*
 * Frames on demand, for the review server: the JPEG of one of a QA's
 * frames, written by video_extract() the first time it is asked and
 * served from a private folder afterwards. Whatever holds the recording's
 * video works (a native recording's MP4 or WebM, an ADT or Aria VRS file,
 * an Ego-Exo4D take's Aria MP4 mapped through timesync): the recording is
 * loaded with recording_load() and its video opened once, then kept.
 *
 * The frames of one QA are written together, in one pass over the video,
 * when any of them is missing: a page asks for all of them at once.
 *
 * Files: a folder made with mkdtemp() under $TMPDIR (else /tmp), holding
 * at most max_files JPEGs (the oldest go first), removed by
 * framecache_free(). File names are digests of the recording, the time
 * and the width, so no name from the store reaches the file system.
 *
 * Threads: every function may be called from any thread; one lock guards
 * the cache, and is held while a recording loads or frames are written.
 *
 * Errors: 0 or a negative enum eng_err with err_msg() saying why:
 * ENG_ENOENT (the recording has no video, or its folder or video cannot
 * be read), ENG_EPARSE (a broken video), ENG_EIO, ENG_ENOMEM, ENG_EINVAL.
 */
#ifndef FRAMECACHE_H
#define FRAMECACHE_H

#include <stddef.h>
#include <stdint.h>

struct framecache;

/* Files kept when the caller does not say. */
#define FRAMECACHE_FILES 4096
/* Recordings kept open. */
#define FRAMECACHE_RECORDINGS 4

/* What a recording's video is, as framecache_probe() gives it. */
struct framecache_video {
	char file[256];      /* the video file, relative to the recording folder */
	char kind[16];       /* "vrs" or the codec name */
	size_t nframes;
	int width, height;   /* full size, upright */
	double fps;
};

/* Makes the cache and its folder. max_files 0 is FRAMECACHE_FILES. */
int framecache_new(size_t max_files, struct framecache **out);

/* Removes the files and the folder, frees fc. framecache_free(NULL) is a no-op. */
void framecache_free(struct framecache *fc);

/*
 * Loads recording rec_id from folder root (once; a failure is remembered
 * too) and fills *out with its video. ENG_ENOENT when it has none.
 */
int framecache_probe(struct framecache *fc, const char *rec_id, const char *root,
		     struct framecache_video *out);

/*
 * Opens the JPEG of frame k of the n times t_ns[] (device ns) of
 * recording rec_id, at most `width` pixels wide (0 = VIDEO_DEFAULT_WIDTH),
 * writing the missing ones of the n first. Stores a read-only descriptor
 * in *fd (the caller closes it; the file may be evicted meanwhile, the
 * descriptor stays good) and, when frame_ns is not NULL, the time of the
 * frame written there.
 */
int framecache_open(struct framecache *fc, const char *rec_id, const char *root,
		    const int64_t *t_ns, size_t n, size_t k, int width, int *fd,
		    int64_t *frame_ns);

#endif /* FRAMECACHE_H */
