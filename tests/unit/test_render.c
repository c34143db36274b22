/* SPDX-License-Identifier: MIT */
/*
 * The renderer of synthetic recordings against hand-computed values: a
 * thin box at a known pose covers exactly the pixels whose centres the
 * pinhole model puts inside its front face (in the camera frame and
 * through a world camera from synth__camera_pose), with the depth 1 / z and
 * the shade the lighting formula gives; the depth test keeps the nearer
 * box in either drawing order; a box behind the camera draws nothing; a
 * box straddling the near plane covers exactly the analytic footprint of
 * its visible face (no holes, no stray triangles); the font draws its
 * glyph bits. Then recordings: the named objects of the kitchen show in
 * their colours, every frame is byte-identical across 1 and 2 threads and
 * two runs (SHA-256 of all frames), and the MP4 writer puts the index
 * (moov) before the frames and gives the same bytes twice.
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
#include <unistd.h>

#include "err.h"
#include "hash.h"
#include "render.h"
#include "synth.h"
#include "test_util.h"

#define W 160
#define H 120

static const struct render_camera CAM = { W, H, 100, 100, 80, 60 };
static const float RED[3] = { 1, 0, 0 }, BLUE[3] = { 0, 0, 1 };
static const float LIGHT[3] = { 0.35f, -0.55f, 0.7582875f };

static void identity(struct pose *p)
{
	memset(p, 0, sizeof(*p));
	p->q[3] = 1;
}

static void at(struct pose *p, float x, float y, float z)
{
	identity(p);
	p->t[0] = x;
	p->t[1] = y;
	p->t[2] = z;
}

/* A scene of one box object of half-extents h, coloured rgb. */
static struct render_scene *one_box(float hx, float hy, float hz, const float rgb[3])
{
	struct render_scene *sc = NULL;
	vec3 c = { 0, 0, 0 }, h = { hx, hy, hz };
	size_t idx;

	assert_int_equal(render_scene_new(&sc), 0);
	assert_int_equal(render_scene_add_object(sc, "box", &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(render_scene_add_box(sc, idx, c, h, rgb), 0);
	return sc;
}

/* Bounds of the pixels covered by object id (x0 > x1 when none). */
static size_t covered(const struct render_image *im, uint16_t id, int *x0, int *y0, int *x1,
		      int *y1)
{
	size_t n = 0;
	int x, y;

	*x0 = *y0 = 1 << 20;
	*x1 = *y1 = -1;
	for (y = 0; y < im->height; y++)
		for (x = 0; x < im->width; x++) {
			if (im->ids[(size_t)y * (size_t)im->width + (size_t)x] != id)
				continue;
			n++;
			*x0 = x < *x0 ? x : *x0;
			*x1 = x > *x1 ? x : *x1;
			*y0 = y < *y0 ? y : *y0;
			*y1 = y > *y1 ? y : *y1;
		}
	return n;
}

/* The byte the lighting formula gives for channel value c under world normal n. */
static int shaded(float c, const float n[3])
{
	double d = (double)n[0] * (double)LIGHT[0] + (double)n[1] * (double)LIGHT[1] +
		   (double)n[2] * (double)LIGHT[2];
	double s = 0.5 + 0.5 * d;

	return (int)(c * (float)(0.5 + 0.5 * s * s) * 255.0f + 0.5f);
}

/*
 * A box of half-extents (0.2, 0.2, 0.001) at (cx, cy, cz) in front of an
 * identity camera: its front face at z = cz - 0.001 spans
 * u = 100 (cx +- 0.2) / z + 80, v = 100 (cy +- 0.2) / z + 60, and the
 * pixels whose centres fall inside are covered (the back face is smaller).
 */
static void check_square(float cx, float cy, float cz)
{
	struct render_scene *sc = one_box(0.2f, 0.2f, 0.001f, RED);
	struct render_image im;
	struct pose cam, obj;
	double z = (double)cz - 0.001;
	double u0 = 100 * ((double)cx - 0.2) / z + 80, u1 = 100 * ((double)cx + 0.2) / z + 80;
	double v0 = 100 * ((double)cy - 0.2) / z + 60, v1 = 100 * ((double)cy + 0.2) / z + 60;
	int x0, y0, x1, y1, xm, ym;
	static const float front[3] = { 0, 0, -1 };
	size_t p;

	assert_int_equal(render_image_init(&im, W, H), 0);
	identity(&cam);
	at(&obj, cx, cy, cz);
	render_draw(sc, &CAM, &cam, &obj, &im);
	covered(&im, 0, &x0, &y0, &x1, &y1);
	assert_int_equal(x0, (int)ceil(u0));
	assert_int_equal(x1, (int)floor(u1));
	assert_int_equal(y0, (int)ceil(v0));
	assert_int_equal(y1, (int)floor(v1));
	xm = (int)lround((u0 + u1) / 2);
	ym = (int)lround((v0 + v1) / 2);
	p = (size_t)ym * W + (size_t)xm;
	assert_true(fabs((double)im.inv_depth[p] - 1 / z) < 1e-6);
	/* The front face's normal is -Z (camera and world agree here). */
	assert_int_equal(im.rgb[3 * p], shaded(1, front));
	assert_int_equal(im.rgb[3 * p + 1], 0);
	assert_int_equal(im.rgb[3 * p + 2], 0);
	render_image_release(&im);
	render_scene_free(sc);
}

static void test_projection(void **state)
{
	(void)state;
	check_square(0, 0, 2);
	check_square(0.5f, -0.3f, 4);
	check_square(-0.6f, 0.25f, 1.5f);
}

/*
 * A world camera (Z up) at (0, 0, 1.6) looking along +X: right is -Y,
 * down is -Z. A wall-like box at x = 3, centre y = 0.51, z = 1.6 + 0.3 has
 * its face to the camera at x = 2.999, so the camera sees
 * X = -(y - 0) = -0.51 +- 0.2, Y = -(z - 1.6) = -0.3 +- 0.1, Z = 2.999
 * (its side at y = 0.31, seen edge-on, stays inside that column of pixels).
 */
static void test_world_camera(void **state)
{
	struct render_scene *sc = one_box(0.001f, 0.2f, 0.1f, BLUE);
	struct render_image im;
	struct pose cam, obj;
	double z = 2.999, u0 = 100 * -0.71 / z + 80, u1 = 100 * -0.31 / z + 80;
	double v0 = 100 * -0.4 / z + 60, v1 = 100 * -0.2 / z + 60;
	int x0, y0, x1, y1;
	size_t p;
	static const float face[3] = { -1, 0, 0 };

	(void)state;
	assert_int_equal(render_image_init(&im, W, H), 0);
	synth__camera_pose(0, 0, 1.6, 0, 0, &cam);
	at(&obj, 3, 0.51f, 1.9f);
	render_draw(sc, &CAM, &cam, &obj, &im);
	covered(&im, 0, &x0, &y0, &x1, &y1);
	assert_int_equal(x0, (int)ceil(u0));
	assert_int_equal(x1, (int)floor(u1));
	assert_int_equal(y0, (int)ceil(v0));
	assert_int_equal(y1, (int)floor(v1));
	p = (size_t)lround((v0 + v1) / 2) * W + (size_t)lround((u0 + u1) / 2);
	/* Lit by its world normal -X. */
	assert_int_equal(im.rgb[3 * p + 2], shaded(1, face));
	assert_true(fabs((double)im.inv_depth[p] - 1 / z) < 1e-5);
	render_image_release(&im);
	render_scene_free(sc);
}

/* A red box at z = 2 in front of a larger blue box at z = 3, added in either order. */
static void check_depth(bool blue_first)
{
	struct render_scene *sc = NULL;
	struct render_image im;
	struct pose cam, poses[2];
	vec3 c = { 0, 0, 0 }, small = { 0.1f, 0.1f, 0.1f }, big = { 0.5f, 0.5f, 0.1f };
	size_t a, b, red, p;

	assert_int_equal(render_scene_new(&sc), 0);
	assert_int_equal(render_scene_add_object(sc, "first", &a), 0);
	assert_int_equal(render_scene_add_object(sc, "second", &b), 0);
	red = blue_first ? b : a;
	assert_int_equal(render_scene_add_box(sc, red, c, small, RED), 0);
	assert_int_equal(render_scene_add_box(sc, red == a ? b : a, c, big, BLUE), 0);
	at(&poses[red], 0, 0, 2);
	at(&poses[red == a ? b : a], 0, 0, 3);
	identity(&cam);
	assert_int_equal(render_image_init(&im, W, H), 0);
	render_draw(sc, &CAM, &cam, poses, &im);
	p = 60 * W + 80;
	assert_int_equal(im.ids[p], red);
	assert_true(im.rgb[3 * p] > 100 && im.rgb[3 * p + 2] == 0);
	assert_true(fabs((double)im.inv_depth[p] - 1 / 1.9) < 1e-6);
	/* u = 100 * 0.3 / 2.9 + 80 = 90.3: blue only, at 1 / 2.9. */
	p = 60 * W + 90;
	assert_int_equal(im.ids[p], red == a ? b : a);
	assert_true(im.rgb[3 * p + 2] > 100 && im.rgb[3 * p] == 0);
	assert_true(fabs((double)im.inv_depth[p] - 1 / 2.9) < 1e-6);
	render_image_release(&im);
	render_scene_free(sc);
}

static void test_depth(void **state)
{
	(void)state;
	check_depth(true);
	check_depth(false);
}

static void test_behind_camera(void **state)
{
	struct render_scene *sc = one_box(0.5f, 0.5f, 0.5f, RED);
	struct render_image im;
	struct pose cam, obj;
	int x0, y0, x1, y1;

	(void)state;
	assert_int_equal(render_image_init(&im, W, H), 0);
	identity(&cam);
	at(&obj, 0, 0, -2);
	render_draw(sc, &CAM, &cam, &obj, &im);
	assert_int_equal(covered(&im, 0, &x0, &y0, &x1, &y1), 0);
	assert_int_equal(im.inv_depth[60 * W + 80], 0);
	/* Just behind the near plane: still nothing. */
	at(&obj, 0, 0, RENDER_ZNEAR - 0.5f - 0.001f);
	render_draw(sc, &CAM, &cam, &obj, &im);
	assert_int_equal(covered(&im, 0, &x0, &y0, &x1, &y1), 0);
	/* Beside the view: nothing either. */
	at(&obj, 50, 0, 5);
	render_draw(sc, &CAM, &cam, &obj, &im);
	assert_int_equal(covered(&im, 0, &x0, &y0, &x1, &y1), 0);
	render_image_release(&im);
	render_scene_free(sc);
}

/*
 * A slab under the camera reaching from z = -0.5 (behind it) to z = 1.5:
 * half-extents (0.5, 0.05, 1.0) at (0, 0.5, 0.5), its top face at y = 0.45.
 * The ray through pixel (u, v) meets that plane at z = 45 / (v - 60), at
 * x = z (u - 80) / 100, so the pixel is covered iff v > 60, z <= 1.5 and
 * |x| <= 0.5; its depth is 1 / z. Every pixel further than 0.01 px from
 * that footprint's edge must agree.
 */
static void test_near_clip(void **state)
{
	struct render_scene *sc = one_box(0.5f, 0.05f, 1.0f, RED);
	struct render_image im;
	struct pose cam, obj;
	size_t agree = 0, in = 0;
	int u, v;

	(void)state;
	assert_int_equal(render_image_init(&im, W, H), 0);
	identity(&cam);
	at(&obj, 0, 0.5f, 0.5f);
	render_draw(sc, &CAM, &cam, &obj, &im);
	for (v = 0; v < H; v++)
		for (u = 0; u < W; u++) {
			size_t p = (size_t)v * W + (size_t)u;
			bool got = im.ids[p] == 0, want, sure;
			double z = v > 60 ? 45.0 / (v - 60) : 1e9, x = z * (u - 80) / 100;
			double mz = fabs((v - 60) - 30.0), mx = fabs(fabs(u - 80.0) - 50.0 / z);

			want = v > 60 && z <= 1.5 && fabs(x) <= 0.5;
			sure = mz > 0.01 && mx > 0.01;
			if (!sure)
				continue;
			assert_int_equal(got, want);
			agree++;
			if (want) {
				in++;
				assert_true(fabs((double)im.inv_depth[p] * z - 1) < 1e-4);
			}
		}
	/* The footprint: rows 90..119, each over 60 px wide. */
	assert_true(in > 30 * 60);
	assert_true(agree > (size_t)(W * H) * 9 / 10);
	render_image_release(&im);
	render_scene_free(sc);
}

static void test_text(void **state)
{
	static const uint8_t ink[3] = { 255, 255, 255 };
	struct render_image im;
	int x, y;

	(void)state;
	assert_int_equal(render_image_init(&im, 40, 20), 0);
	memset(im.rgb, 0, 40 * 20 * 3);
	/* "i" is drawn as "I": rows 0x0e, then 0x04 five times, then 0x0e. */
	assert_int_equal(render_text(&im, 2, 3, 1, "i", ink), 5);
	for (y = 0; y < 20; y++)
		for (x = 0; x < 40; x++) {
			int gx = x - 2, gy = y - 3;
			bool want = gx >= 0 && gx < 5 && gy >= 0 && gy < 7 &&
				    ((gy == 0 || gy == 6) ? gx >= 1 && gx <= 3 : gx == 2);

			assert_int_equal(im.rgb[3 * (y * 40 + x)] == 255, want);
		}
	/* Scale 2: two glyphs of 12 px advance, 22 px wide. */
	assert_int_equal(render_text(&im, 0, 0, 2, "ab", ink), 22);
	render_image_release(&im);
	assert_int_not_equal(render_image_init(&im, 0, 10), 0);
}

/* ======================= Recordings ======================= */

static struct synth_recording *kitchen(double minutes, uint64_t seed)
{
	struct synth_params p = { SYNTH_KITCHEN, minutes, seed };
	struct synth_recording *s = NULL;

	assert_int_equal(synth_generate(&p, &s), 0);
	return s;
}

static long find(const struct synth_recording *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->nobjects; i++)
		if (!strcmp(s->objects[i].id, id))
			return (long)i;
	return -1;
}

/*
 * Looks at object `id` of s at t = 0 from 0.6 m away (level, 0.45 m above
 * it) and returns its mean colour over the pixels it covers.
 */
static size_t look_at(const struct synth_recording *s, struct render_scene *sc, const char *id,
		      double mean[3])
{
	struct render_image im;
	struct pose cam, *poses = calloc(s->nobjects, sizeof(*poses));
	long k = find(s, id);
	double yaw, sum[3] = { 0, 0, 0 };
	size_t i, n = 0;

	assert_non_null(poses);
	assert_true(k >= 0);
	render_synth_poses(s, 0, &cam, poses);
	/* Approach from the room side: the furniture fronts face local -Y. */
	{
		const struct pose *o = &poses[k];
		vec3 fwd = { 0, -1, 0 }, w;

		versor q;

		memcpy(q, o->q, sizeof(q));
		glm_quat_rotatev(q, fwd, w);
		yaw = atan2(-(double)w[1], -(double)w[0]);
		synth__camera_pose((double)o->t[0] + 0.6 * (double)w[0],
				   (double)o->t[1] + 0.6 * (double)w[1], (double)o->t[2] + 0.45, yaw,
				   -atan2(0.45, 0.6), &cam);
	}
	assert_int_equal(render_image_init(&im, W, H), 0);
	render_draw(sc, &CAM, &cam, poses, &im);
	for (i = 0; i < (size_t)(W * H); i++) {
		if (im.ids[i] != (uint16_t)k)
			continue;
		n++;
		sum[0] += im.rgb[3 * i];
		sum[1] += im.rgb[3 * i + 1];
		sum[2] += im.rgb[3 * i + 2];
	}
	for (i = 0; i < 3; i++)
		mean[i] = n ? sum[i] / (double)n : 0;
	render_image_release(&im);
	free(poses);
	return n;
}

/* The kitchen's named objects show in the colours their names and classes give. */
static void test_named_objects(void **state)
{
	struct synth_recording *s = kitchen(0.1, 1);
	struct render_scene *sc = NULL;
	double red[3], blue[3], kettle[3], board[3], sink[3];

	(void)state;
	assert_int_equal(render_scene_from_synth(s, &sc), 0);
	assert_int_equal(render_scene_objects(sc), s->nobjects);
	assert_true(look_at(s, sc, "mug_1", red) > 40);
	assert_true(red[0] > 2 * red[1] && red[0] > 2 * red[2]);
	assert_true(look_at(s, sc, "mug_2", blue) > 40);
	assert_true(blue[2] > 2 * blue[0] && blue[2] > 1.5 * blue[1]);
	/* The kettle is steel grey: no channel dominates. */
	assert_true(look_at(s, sc, "kettle_1", kettle) > 40);
	assert_true(fabs(kettle[0] - kettle[1]) < 25 && fabs(kettle[1] - kettle[2]) < 25);
	/* The cutting board is wood: red > green > blue. */
	assert_true(look_at(s, sc, "cutting_board_1", board) > 40);
	assert_true(board[0] > board[1] + 20 && board[1] > board[2] + 20);
	assert_true(look_at(s, sc, "sink_1", sink) > 400);
	render_scene_free(sc);
	synth_free(s);
}

/* Hashes every frame in order; frame i must arrive i-th. */
struct hasher {
	struct hash *h;
	size_t next;
	size_t lit;      /* pixels that are not background */
	int bad;
};

static int hash_sink(void *ctx, size_t i, const struct render_image *im)
{
	struct hasher *hs = ctx;
	size_t n = (size_t)im->width * (size_t)im->height, k;

	if (i != hs->next++)
		hs->bad = 1;
	for (k = 0; k < n; k++)
		hs->lit += im->ids[k] != RENDER_NO_OBJECT || im->inv_depth[k] > 0;
	return hash_add(hs->h, im->rgb, n * 3);
}

static void frames_hash(const struct synth_recording *s, int threads, bool labels,
			char out[HASH_HEX_LEN + 1], size_t *frames)
{
	struct render_video_opts o = { 10, labels, threads, RENDER_DEFAULT_CRF };
	struct render_video_stats st;
	struct hasher hs = { NULL, 0, 0, 0 };

	assert_int_equal(hash_new(&hs.h), 0);
	assert_int_equal(render_frames(s, &o, hash_sink, &hs, &st), 0);
	assert_int_equal(hs.bad, 0);
	assert_int_equal(st.frames, hs.next);
	assert_int_equal(st.threads, threads);
	/* Indoors every pixel shows a surface. */
	assert_int_equal(hs.lit, hs.next * (size_t)(s->camera.width * s->camera.height));
	assert_int_equal(hash_finish(hs.h, out), 0);
	*frames = st.frames;
}

/* A small camera keeps the frames quick: 160x120 with the same 90 deg field of view. */
static void small_camera(struct synth_recording *s)
{
	s->camera.width = W;
	s->camera.height = H;
	s->camera.fx = 80;
	s->camera.fy = 80;
	s->camera.cx = 80;
	s->camera.cy = 60;
}

static void test_deterministic_frames(void **state)
{
	struct synth_recording *s = kitchen(0.2, 2), *other = kitchen(0.2, 3);
	char h1[HASH_HEX_LEN + 1], h2[HASH_HEX_LEN + 1], h3[HASH_HEX_LEN + 1];
	char h4[HASH_HEX_LEN + 1], h5[HASH_HEX_LEN + 1];
	size_t n1, n2, n3, n4, n5;

	(void)state;
	small_camera(s);
	small_camera(other);
	/* 12 s at 10 fps: frames 0..120, the last at 12 s. */
	assert_int_equal(render_frame_count(s, 10), 121);
	assert_int_equal(render_frame_time(s, 10, 120), 12000000000LL);
	assert_int_equal(render_frame_time(s, 3, 1), 333333333LL);
	frames_hash(s, 1, false, h1, &n1);
	frames_hash(s, 2, false, h2, &n2);
	frames_hash(s, 2, false, h3, &n3);
	assert_int_equal(n1, 121);
	assert_int_equal(n2, 121);
	assert_int_equal(n3, 121);
	assert_string_equal(h1, h2);
	assert_string_equal(h2, h3);
	/* Labels and another walk change the frames. */
	frames_hash(s, 2, true, h4, &n4);
	assert_string_not_equal(h4, h1);
	frames_hash(other, 2, false, h5, &n5);
	assert_string_not_equal(h5, h1);
	synth_free(s);
	synth_free(other);
}

/* Offset of the first top-level MP4 box of type `type`, or -1. */
static long top_box(const uint8_t *b, size_t n, const char *type)
{
	size_t off = 0;

	while (off + 8 <= n) {
		size_t size = ((size_t)b[off] << 24) | ((size_t)b[off + 1] << 16) |
			      ((size_t)b[off + 2] << 8) | b[off + 3];

		if (!memcmp(b + off + 4, type, 4))
			return (long)off;
		if (size < 8)
			return -1;
		off += size;
	}
	return -1;
}

static void test_video_file(void **state)
{
	struct synth_recording *s = kitchen(0.05, 2);
	struct render_video_opts o1 = { 5, false, 1, RENDER_DEFAULT_CRF };
	struct render_video_opts o2 = { 5, false, 2, RENDER_DEFAULT_CRF };
	struct render_video_stats st;
	char d[] = "/tmp/test_render_XXXXXX", p1[64], p2[64], bad[96];
	uint8_t *b1, *b2;
	size_t n1, n2;

	(void)state;
	small_camera(s);
	assert_non_null(mkdtemp(d));
	snprintf(p1, sizeof(p1), "%s/a.mp4", d);
	snprintf(p2, sizeof(p2), "%s/b.mp4", d);
	assert_int_equal(render_write_video(s, p1, &o1, &st), 0);
	/* 3 s at 5 fps. */
	assert_int_equal(st.frames, 16);
	assert_int_equal(render_write_video(s, p2, &o2, NULL), 0);
	b1 = tu_slurp(p1, &n1);
	b2 = tu_slurp(p2, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(b1, b2, n1);
	/* ftyp, then the index, then the frames: a browser plays while loading. */
	assert_int_equal(top_box(b1, n1, "ftyp"), 0);
	assert_true(top_box(b1, n1, "moov") > 0);
	assert_true(top_box(b1, n1, "mdat") > top_box(b1, n1, "moov"));
	free(b1);
	free(b2);
	remove(p1);
	remove(p2);
	/* A folder that does not exist: an I/O error naming the file. */
	snprintf(bad, sizeof(bad), "%s/missing/c.mp4", d);
	assert_int_equal(render_write_video(s, bad, &o1, NULL), ENG_EIO);
	assert_non_null(strstr(err_msg(), bad));
	/* Bad options and an odd size are refused before anything is written. */
	o1.fps = 0.5;
	assert_int_equal(render_write_video(s, p1, &o1, NULL), ENG_EINVAL);
	o1.fps = 5;
	s->camera.width = 161;
	assert_int_equal(render_write_video(s, p1, &o1, NULL), ENG_EINVAL);
	assert_int_not_equal(access(p1, F_OK), 0);
	rmdir(d);
	synth_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_world_camera),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_behind_camera),
		cmocka_unit_test(test_near_clip),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_named_objects),
		cmocka_unit_test(test_deterministic_frames),
		cmocka_unit_test(test_video_file),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
