/* SPDX-License-Identifier: MIT */
/*
 * The software renderer of synthetic recordings (private to engine/synth
 * and its tests): what the wearer's camera sees, drawn with a depth
 * buffer and flat wrapped-Lambert shading, and the video encoder that
 * writes those frames as MP4/H.264 through FFmpeg's libraries.
 *
 * Conventions: world +Z up, metres; a camera is OpenCV (+X right, +Y
 * down, +Z forward) with pinhole intrinsics, and pixel (u, v) is sampled
 * at its centre, which the pinhole model puts at u = fx X / Z + cx (so
 * pixel 0 covers [-0.5, 0.5)). Images are RGB24, rows top down.
 *
 * A scene is a list of objects, each a set of triangles in the object's
 * own frame; render_draw() places each object with the pose given for it
 * and draws the view. Drawing is a pure function of the scene, the camera
 * and the poses: no state is kept between calls and nothing is allocated,
 * so frames can be drawn on any number of threads at once (one image
 * each) and come out byte-identical whatever the thread count.
 *
 * Errors: functions that can fail return 0 or a negative enum eng_err
 * (ENG_ENOMEM, ENG_EINVAL, ENG_EIO) with err_msg() saying what failed.
 * Ownership: a scene copies every name it is given; images are owned by
 * the caller (render_image_init/release).
 */
#ifndef RENDER_H
#define RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pose.h"
#include "synth.h"

/* Largest image side accepted. */
#define RENDER_MAX_DIM 4096
/* Near clipping plane, m in front of the camera. */
#define RENDER_ZNEAR 0.05f
/* render_image.ids value of a pixel no object covers (also world geometry). */
#define RENDER_NO_OBJECT 0xffffu
/* Most objects a scene holds (ids are 16 bits, RENDER_NO_OBJECT excluded). */
#define RENDER_MAX_OBJECTS 1024

/* Pinhole intrinsics and image size. */
struct render_camera {
	int width, height;     /* pixels, 1..RENDER_MAX_DIM */
	float fx, fy, cx, cy;  /* pixels */
};

/* A frame and its buffers (caller-owned, see render_image_init). */
struct render_image {
	int width, height;
	uint8_t *rgb;          /* width * height * 3 bytes, RGB, rows top down */
	float *inv_depth;      /* 1 / z of the nearest surface per pixel, 0 = none */
	uint16_t *ids;         /* object index per pixel, RENDER_NO_OBJECT where none */
};

/*
 * Allocates the buffers of a width x height image. Returns 0, ENG_EINVAL
 * for a size outside 1..RENDER_MAX_DIM, or ENG_ENOMEM (im is then zeroed).
 */
int render_image_init(struct render_image *im, int width, int height);

/* Frees the buffers and zeroes im. Safe on a zeroed image. Can't fail. */
void render_image_release(struct render_image *im);

/* ======================= Scenes ======================= */

struct render_scene;

/* Index standing for the world frame in render_scene_add_*(): not moved by any pose. */
#define RENDER_WORLD ((size_t)-1)

enum render_tri_flags {
	RENDER_TWO_SIDED = (1 << 0) /* drawn from both sides (no back-face culling) */
};

/* A new empty scene in *out. Returns 0 or ENG_ENOMEM. */
int render_scene_new(struct render_scene **out);

/* Frees a scene. render_scene_free(NULL) is a no-op. */
void render_scene_free(struct render_scene *sc);

/*
 * Adds an object named `label` (copied; NULL: never labelled) and
 * stores its index (0, 1, ... in order of addition) in *idx. Returns 0,
 * ENG_ENOMEM, or ENG_EINVAL past RENDER_MAX_OBJECTS objects.
 */
int render_scene_add_object(struct render_scene *sc, const char *label, size_t *idx);

/* The number of objects added. Can't fail. */
size_t render_scene_objects(const struct render_scene *sc);

/*
 * Adds a triangle to object obj (or RENDER_WORLD), in that object's frame,
 * with colour rgb (0..1 each). Its outward normal is the side facing away
 * from `inside` (a point inside the solid it bounds); a triangle seen from
 * the other side is culled unless flags has RENDER_TWO_SIDED. Returns 0,
 * ENG_ENOMEM, or ENG_EINVAL for an unknown object or a degenerate triangle
 * (which is not added).
 */
int render_scene_add_tri(struct render_scene *sc, size_t obj, const vec3 a, const vec3 b,
			 const vec3 c, const vec3 inside, const float rgb[3], unsigned flags);

/* A box of half-extents h centred at c in obj's frame, axis-aligned there. Returns as _add_tri. */
int render_scene_add_box(struct render_scene *sc, size_t obj, const vec3 c, const vec3 h,
			 const float rgb[3]);

/*
 * An elliptic frustum along axis `axis` (0 x, 1 y, 2 z) of obj's frame:
 * centre c, half length hl, radii (r0a, r0b) at the low end and (r1a, r1b)
 * at the high end (a, b: the two other axes in order), nseg 3..64 side
 * facets, the two caps coloured cap_lo and cap_hi (NULL: open end). Returns
 * as _add_tri.
 */
int render_scene_add_frustum(struct render_scene *sc, size_t obj, const vec3 c, int axis,
			     float hl, float r0a, float r0b, float r1a, float r1b, int nseg,
			     const float side[3], const float cap_lo[3], const float cap_hi[3]);

/* An ellipsoid of radii r centred at c, nlat 2..32 bands of 2 * nlat facets. */
int render_scene_add_ellipsoid(struct render_scene *sc, size_t obj, const vec3 c, const vec3 r,
			       int nlat, const float rgb[3]);

/* ======================= Drawing ======================= */

/*
 * Draws the scene as seen by a camera at T_world_camera `cam_pose` into
 * im (whose size must be the camera's): every buffer is cleared, then
 * each triangle is moved by its object's pose (obj_poses[i] = T_world_object
 * of object i; world triangles are not moved), clipped against the near
 * plane, projected and depth-tested per pixel. The colour of a triangle is
 * its own times 0.50 + 0.50 (0.5 + 0.5 n.l)^2, n its world normal and l
 * a fixed light from above (render.c, LIGHT_DIR), so each face of a box
 * has its own tone. Can't fail; nothing is drawn when im's size differs
 * from the camera's.
 */
void render_draw(const struct render_scene *sc, const struct render_camera *cam,
		 const struct pose *cam_pose, const struct pose *obj_poses,
		 struct render_image *im);

/*
 * Smooths im->rgb in place with a [1 2 1] / 4 filter along rows and then
 * columns (edges repeat), which takes the stair steps off the edges of
 * the shapes. Allocates nothing (two rows on the stack). Can't fail.
 */
void render_smooth(struct render_image *im);

/* Pixels an object must cover to get its label. */
#define RENDER_LABEL_MIN_PX 30

/*
 * Draws the label of every labelled object that covers at least
 * RENDER_LABEL_MIN_PX pixels of im->ids (so im must hold a frame that
 * render_draw just drew): the name in capitals in a built-in 5x7 font,
 * light on a dark box, centred on the middle of the object's visible
 * pixels; a label that would overlap an earlier one (nearest objects
 * first) moves one or two label heights up or down, or is left out.
 * Can't fail.
 */
void render_draw_labels(const struct render_scene *sc, struct render_image *im);

/*
 * Draws text at pixel (x, y) (top left) with each font pixel a scale x
 * scale square in colour rgb; characters the font lacks are drawn as a
 * box. Returns the width drawn, in pixels. Can't fail.
 */
int render_text(struct render_image *im, int x, int y, int scale, const char *text,
		const uint8_t rgb[3]);

/* ======================= Recordings ======================= */

/*
 * The scene of a synthetic recording: object i of the scene is object i
 * of s, drawn with the shape and colour of its category and name
 * (render_shapes.c: a mug is a cylinder with a handle in the colour its
 * name says, a cutting board a flat wooden board, a chair a seat, legs
 * and a back, ...); the world frame holds the tiled floor and the
 * ceiling. Labels are the object names, walls excepted. Returns 0 or
 * ENG_ENOMEM.
 */
int render_scene_from_synth(const struct synth_recording *s, struct render_scene **out);

/*
 * The camera pose and every object pose of s at time t: what render_draw
 * needs for the frame at t. obj_poses holds s->nobjects poses. Can't fail.
 */
void render_synth_poses(const struct synth_recording *s, int64_t t, struct pose *cam_pose,
			struct pose *obj_poses);

/* Video settings. */
struct render_video_opts {
	double fps;       /* frames per second, SYNTH_VIDEO_FPS_MIN..SYNTH_VIDEO_FPS_MAX */
	bool labels;      /* draw the object names */
	int threads;      /* render threads, 0: OpenMP's default (every core) */
	int crf;          /* x264 constant rate factor, 0..51 */
};
#define RENDER_DEFAULT_CRF 37

/* What a run did. */
struct render_video_stats {
	size_t frames;    /* frames written */
	int64_t t0_ns;    /* device time of frame 0 */
	double seconds;   /* wall time of rendering and encoding */
	int threads;      /* render threads used */
};

/* Frames of s at fps: one every 1/fps s from its first pose to its last. Can't fail. */
size_t render_frame_count(const struct synth_recording *s, double fps);

/* Device time of frame i at fps: t0 + round(i * 1e9 / fps). Can't fail. */
int64_t render_frame_time(const struct synth_recording *s, double fps, size_t i);

/*
 * Called with each frame in order (i = 0, 1, ...); a non-zero return stops
 * the run and is returned by render_frames().
 */
typedef int (*render_sink_fn)(void *ctx, size_t i, const struct render_image *im);

/*
 * Renders every frame of s (render_frame_count) with o->threads threads
 * (render_draw, render_smooth, then render_draw_labels when o->labels)
 * and hands them to sink in order. Returns 0, ENG_ENOMEM, ENG_EINVAL for
 * a bad camera or fps, or the sink's code. stats may be NULL.
 */
int render_frames(const struct synth_recording *s, const struct render_video_opts *o,
		  render_sink_fn sink, void *ctx, struct render_video_stats *stats);

/*
 * Renders s and writes the frames to `path` as MP4 (H.264 by libx264,
 * yuv420p, the moov atom first so a browser can play while loading, no
 * creation time or library version in the container): the same s and
 * options give the same bytes. Returns 0, ENG_EINVAL (bad options),
 * ENG_ENOMEM or ENG_EIO (the encoder or the file failed; err_msg() names
 * the path and FFmpeg's reason). On failure path may be left partly
 * written. stats may be NULL. FFmpeg's log is never printed: this sets
 * its process-wide log callback to one that keeps the last error of the
 * calling thread for the message.
 */
int render_write_video(const struct synth_recording *s, const char *path,
		       const struct render_video_opts *o, struct render_video_stats *stats);

#endif /* RENDER_H */
