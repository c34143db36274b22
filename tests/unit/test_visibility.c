/* SPDX-License-Identifier: MIT */
/*
 * The visibility predicate on hand-made scenes (in view with its pixel,
 * behind, outside the image, occluded, beyond the range, a room around
 * the camera, a shelf around the target, a moving occluder, a fisheye),
 * the scene's casts against a brute-force loop on random scenes, the
 * 10 Hz timeline of a turning camera, and the visible_objects tool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "recording.h"
#include "registry.h"
#include "scene.h"
#include "tools2_fixture.h"
#include "visibility.h"

/* A camera at the origin facing +X for 10 s. */
static struct recording *still(void)
{
	struct recording *r = fx_new();
	vec3 p = { 0, 0, 0 };

	fx_traj(r, 10 * FX_S, FX_S / 10, p, 0, 0);
	return r;
}

/* The predicate for object obj at t on a finished recording. */
static enum visibility_reason vis(const struct recording *r, size_t obj, int64_t t,
				  float range, struct visibility_info *info)
{
	struct scene *s = NULL;
	struct visibility_view v;
	enum visibility_reason why;

	assert_int_equal(scene_new(r, &s), 0);
	assert_int_equal(visibility_view_at(s, r, t, range, &v), 0);
	why = visibility_test(s, &v, obj, true, info);
	scene_free(s);
	return why;
}

static void test_in_view_pixel(void **state)
{
	struct recording *r = still();
	struct visibility_info info;

	(void)state;
	fx_box(r, "a", 3, 0.5f, 0.3f, 0.05f, 0.05f, 0.05f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 0, 0, 6, &info), VIS_VISIBLE);
	/* camera x = -world y, camera y = -world z: u = 320 * -0.5 / 3 + 320 */
	assert_float_equal(info.u, 266.6667, 1e-3);
	assert_float_equal(info.v, 208.0, 1e-3);
	assert_float_equal(info.p_cam[2], 3.0, 1e-5);
	assert_float_equal(info.distance_m, sqrt(9 + 0.25 + 0.09), 1e-5);
	recording_free(r);
}

static void test_behind(void **state)
{
	struct recording *r = still();
	struct visibility_info info;

	(void)state;
	fx_box(r, "a", -2, 0.1f, 0, 0.05f, 0.05f, 0.05f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 0, 0, 6, &info), VIS_BEHIND);
	assert_float_equal(info.p_cam[2], -2.0, 1e-5);
	recording_free(r);
}

static void test_outside_image(void **state)
{
	struct recording *r = still();

	(void)state;
	fx_box(r, "in", 3, 2.9f, 0, 0.01f, 0.01f, 0.01f, 0);   /* u = 10.7 */
	fx_box(r, "left", 3, 3.05f, 0, 0.01f, 0.01f, 0.01f, 0); /* u = -5.3 */
	fx_box(r, "top", 3, 0, 2.3f, 0.01f, 0.01f, 0.01f, 0);   /* v = -5.3 */
	fx_box(r, "right", 3, -2.95f, 0, 0.01f, 0.01f, 0.01f, 0); /* u = 634.7 */
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 0, 0, 6, NULL), VIS_VISIBLE);
	assert_int_equal(vis(r, 1, 0, 6, NULL), VIS_OUTSIDE_IMAGE);
	assert_int_equal(vis(r, 2, 0, 6, NULL), VIS_OUTSIDE_IMAGE);
	assert_int_equal(vis(r, 3, 0, 6, NULL), VIS_VISIBLE);
	recording_free(r);
}

static void test_occluded(void **state)
{
	struct recording *r = still();
	struct visibility_info info;

	(void)state;
	fx_box(r, "a", 3, 0, 0, 0.1f, 0.1f, 0.1f, 0);
	fx_box(r, "wall", 1.5f, 0, 0, 0.05f, 0.5f, 0.5f, 0);
	fx_box(r, "b", 3, 1.5f, 0, 0.1f, 0.1f, 0.1f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 0, 0, 6, &info), VIS_OCCLUDED);
	assert_int_equal(info.occluder, 1);
	assert_int_equal(vis(r, 1, 0, 6, NULL), VIS_VISIBLE);
	/* the ray to b passes the wall at y = 0.75 > 0.5 */
	assert_int_equal(vis(r, 2, 0, 6, NULL), VIS_VISIBLE);
	recording_free(r);
}

static void test_max_range(void **state)
{
	struct recording *r = still();
	struct visibility_info info;

	(void)state;
	fx_box(r, "near", 5.9f, 1, 0, 0.05f, 0.05f, 0.05f, 0);  /* 5.984 m */
	fx_box(r, "far", 6.1f, -1, 0, 0.05f, 0.05f, 0.05f, 0);  /* 6.181 m */
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 0, 0, 6, NULL), VIS_VISIBLE);
	assert_int_equal(vis(r, 1, 0, 6, &info), VIS_OUT_OF_RANGE);
	assert_float_equal(info.distance_m, sqrt(6.1 * 6.1 + 1), 1e-5);
	assert_int_equal(vis(r, 1, 0, 7, NULL), VIS_VISIBLE);
	recording_free(r);
}

static void test_room_around_camera(void **state)
{
	struct recording *r = still();
	struct scene *s;

	(void)state;
	fx_box(r, "room", 0, 0, 0.5f, 5, 5, 3, 0);
	fx_box(r, "a", 3, 0, 0, 0.1f, 0.1f, 0.1f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 1, 0, 6, NULL), VIS_VISIBLE);
	/* the room's centre is beside the camera, at camera z = 0 */
	assert_int_equal(vis(r, 0, 0, 6, NULL), VIS_BEHIND);
	assert_int_equal(scene_new(r, &s), 0);
	assert_true(scene_is_enclosure(s, 0));
	assert_false(scene_is_enclosure(s, 1));
	scene_free(s);
	recording_free(r);
}

/*
 * Contexts that share a store classify the boxes once: the scene each
 * gets copies the first scene's groups, the room still an enclosure and
 * the small box still a solid in both.
 */
static void test_room_around_camera_shared(void **state)
{
	struct recording *r = still();
	struct tool_shared *sh = NULL;
	struct tool_ctx *ctx[2] = { NULL, NULL };
	struct scene *s[2];
	int k;

	(void)state;
	fx_box(r, "room", 0, 0, 0.5f, 5, 5, 3, 0);
	fx_box(r, "a", 3, 0, 0, 0.1f, 0.1f, 0.1f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(tool_shared_new(&sh), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(tool_ctx_new(r, &ctx[k]), 0);
		tool_ctx_share(ctx[k], sh);
		assert_int_equal(scene_get(ctx[k], &s[k]), 0);
		assert_true(scene_is_enclosure(s[k], 0));
		assert_false(scene_is_enclosure(s[k], 1));
	}
	assert_ptr_not_equal(s[0], s[1]); /* each context moves its own in time */
	for (k = 0; k < 2; k++)
		tool_ctx_free(ctx[k]);
	tool_shared_free(sh);
	recording_free(r);
}

static void test_shelf_around_target(void **state)
{
	struct recording *r = still();
	struct visibility_info info;

	(void)state;
	fx_box(r, "shelf", 3, 0, 0, 0.4f, 0.4f, 0.4f, 0);
	fx_box(r, "book", 3, 0.1f, 0.1f, 0.05f, 0.05f, 0.05f, 0);
	fx_box(r, "far", 4.5f, 0.1f, 0.1f, 0.05f, 0.05f, 0.05f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 1, 0, 6, NULL), VIS_VISIBLE);
	assert_int_equal(vis(r, 2, 0, 6, &info), VIS_OCCLUDED);
	assert_int_equal(info.occluder, 0);
	recording_free(r);
}

static void test_moving_occluder(void **state)
{
	struct recording *r = still();
	int64_t times[3] = { 0, FX_S, 2 * FX_S };
	vec3 pos[3] = { { 1.5f, 2, 0 }, { 1.5f, 1, 0 }, { 1.5f, 0, 0 } };

	(void)state;
	fx_box(r, "a", 3, 0, 0, 0.1f, 0.1f, 0.1f, 0);
	fx_box(r, "door", 0, 0, 0, 0.05f, 0.5f, 0.5f, 0);
	fx_dynamic(r, 1, times, pos, 3);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 0, 0, 6, NULL), VIS_VISIBLE);
	assert_int_equal(vis(r, 0, FX_S, 6, NULL), VIS_VISIBLE);       /* door y in [0.5, 1.5] */
	assert_int_equal(vis(r, 0, 3 * FX_S / 2, 6, NULL), VIS_OCCLUDED); /* y in [0, 1] */
	assert_int_equal(vis(r, 0, 2 * FX_S, 6, NULL), VIS_OCCLUDED);
	assert_int_equal(vis(r, 0, 5 * FX_S, 6, NULL), VIS_OCCLUDED);  /* rests at the last pose */
	recording_free(r);
}

/*
 * visibility_precheck() agrees with visibility_test() wherever it decides
 * (behind, out of range, outside the image), for static and moving
 * targets at times the scene is not at, and never moves the scene.
 */
static void test_precheck_agrees(void **state)
{
	struct recording *r = fx_new();
	vec3 p = { 0, 0, 0 };
	int64_t times[3] = { 0, 4 * FX_S, 8 * FX_S };
	vec3 pos[3] = { { 3, 0, 0 }, { -2, 3, 0 }, { 0.5f, -9, 0 } };
	struct scene *s = NULL;
	struct visibility_view v;
	size_t obj;
	int64_t t;
	int decided = 0, rc;

	(void)state;
	fx_traj(r, 10 * FX_S, FX_S / 10, p, 0, 36);
	fx_box(r, "static_a", 2, 0.5f, 0, 0.1f, 0.1f, 0.1f, 0);
	fx_box(r, "static_b", -3, 1, 0, 0.1f, 0.1f, 0.1f, 0);
	fx_box(r, "mover", 0, 0, 0, 0.1f, 0.1f, 0.1f, 0);
	fx_dynamic(r, 2, times, pos, 3);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(scene_new(r, &s), 0);
	for (t = 0; t <= 10 * FX_S; t += FX_S / 4) {
		for (obj = 0; obj < 3; obj++) {
			enum visibility_reason pre, full;

			/* the scene sits at another time while the precheck runs */
			assert_int_equal(scene_at(s, 10 * FX_S - t), 0);
			pre = visibility_precheck(s, r, t, 6, obj, &rc);
			assert_int_equal(rc, 0);
			assert_true(scene_time(s) == 10 * FX_S - t);
			assert_int_equal(visibility_view_at(s, r, t, 6, &v), 0);
			full = visibility_test(s, &v, obj, false, NULL);
			if (pre != VIS_VISIBLE) {
				assert_int_equal(pre, full);
				decided++;
			} else {
				assert_true(full == VIS_VISIBLE || full == VIS_OCCLUDED);
			}
		}
	}
	assert_true(decided > 20);
	scene_free(s);
	recording_free(r);
}

static void test_fisheye(void **state)
{
	struct recording *r = still();
	struct visibility_info info;
	double f = 704.0 / (55 * FX_DEG);

	(void)state;
	r->camera.model = REC_CAM_FISHEYE;
	r->camera.width = r->camera.height = 1408;
	r->camera.fx = r->camera.fy = (float)f;
	r->camera.cx = r->camera.cy = 704;
	r->camera.fov_deg = 110;
	fx_box(r, "b50", (float)(3 * cos(50 * FX_DEG)), (float)(3 * sin(50 * FX_DEG)), 0,
	       0.01f, 0.01f, 0.01f, 0);
	fx_box(r, "b60", (float)(3 * cos(60 * FX_DEG)), (float)(-3 * sin(60 * FX_DEG)), 0,
	       0.01f, 0.01f, 0.01f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(vis(r, 0, 0, 6, &info), VIS_VISIBLE);
	/* equidistant: r = f * 50 deg = 640 px to the left of the centre */
	assert_float_equal(info.u, (704 - (double)f * 50 * FX_DEG), 0.05);
	assert_float_equal(info.v, 704, 0.05);
	assert_int_equal(vis(r, 1, 0, 6, NULL), VIS_OUTSIDE_IMAGE);
	/* the same box at 50 degrees is outside a 90-degree pinhole */
	r->camera.model = REC_CAM_PINHOLE;
	r->camera.width = 640;
	r->camera.height = 480;
	r->camera.fx = r->camera.fy = 320;
	r->camera.cx = 320;
	r->camera.cy = 240;
	assert_int_equal(vis(r, 0, 0, 6, NULL), VIS_OUTSIDE_IMAGE);
	recording_free(r);
}

/* ======================= Casts against a brute-force loop ======================= */

static uint64_t lcg_state;

static double rnd(double lo, double hi)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (hi - lo) * (double)(lcg_state >> 11) / 9007199254740992.0;
}

static bool holds(const struct obb *b, const vec3 p)
{
	struct ray r;
	float t;

	r.o[0] = p[0];
	r.o[1] = p[1];
	r.o[2] = p[2];
	r.d[0] = r.d[1] = r.d[2] = 0.57735026f;
	return ray_obb(&r, b, 0, &t);
}

/* The rules of scene.h, one box at a time. */
static long brute_cast(const struct recording *rec, int64_t t, const struct ray *r,
		       float tmax, float *tout)
{
	long best = -1;
	float bt = 0, tt;
	size_t i;

	for (i = 0; i < rec->nobjects; i++) {
		struct obb b;

		recording_object_box_at(rec, i, t, &b);
		if (holds(&b, r->o) || !ray_obb(r, &b, tmax, &tt))
			continue;
		if (best < 0 || tt < bt) {
			best = (long)i;
			bt = tt;
		}
	}
	*tout = bt;
	return best;
}

static bool brute_occluded(const struct recording *rec, int64_t t, const struct ray *r,
			   float tmax, long target, const vec3 p)
{
	size_t i;
	float tt;

	for (i = 0; i < rec->nobjects; i++) {
		struct obb b;

		recording_object_box_at(rec, i, t, &b);
		if ((long)i == target || holds(&b, r->o) || holds(&b, p))
			continue;
		if (ray_obb(r, &b, tmax, &tt))
			return true;
	}
	return false;
}

static void test_casts_match_brute_force(void **state)
{
	int scene_no;

	(void)state;
	lcg_state = 42;
	for (scene_no = 0; scene_no < 6; scene_no++) {
		struct recording *r = still();
		struct scene *s = NULL;
		int64_t times[2] = { 0, 10 * FX_S };
		size_t i, q, hits = 0, occl = 0;

		for (i = 0; i < 60; i++) {
			char id[16];
			float big = i % 15 == 0 ? 3.0f : 0.4f;

			snprintf(id, sizeof(id), "o%zu", i);
			fx_box(r, id, (float)rnd(-4, 4), (float)rnd(-4, 4), (float)rnd(-1, 2),
			       (float)rnd(0.05, big), (float)rnd(0.05, big), (float)rnd(0.05, big),
			       rnd(0, 180));
		}
		for (i = 50; i < 60; i++) { /* the last ten move across the scene */
			vec3 pos[2];

			glm_vec3_copy(r->objects[i].static_pose.t, pos[0]);
			pos[1][0] = (float)rnd(-4, 4);
			pos[1][1] = (float)rnd(-4, 4);
			pos[1][2] = (float)rnd(-1, 2);
			fx_dynamic(r, i, times, pos, 2);
		}
		assert_int_equal(fx_finish(r), 0);
		assert_int_equal(scene_new(r, &s), 0);
		for (q = 0; q < 400; q++) {
			int64_t t = (int64_t)rnd(0, 10) * FX_S;
			struct ray ray;
			long got, want, target = (long)(q % 60);
			float gt, wt, len;
			vec3 p;
			struct obb tb;

			assert_int_equal(scene_at(s, t), 0);
			ray.o[0] = (float)rnd(-4, 4);
			ray.o[1] = (float)rnd(-4, 4);
			ray.o[2] = (float)rnd(-1, 2);
			ray.d[0] = (float)rnd(-1, 1);
			ray.d[1] = (float)rnd(-1, 1);
			ray.d[2] = (float)rnd(-1, 1);
			glm_vec3_normalize(ray.d);
			got = -2;
			scene_cast(s, &ray, 8, &got, &gt);
			want = brute_cast(r, t, &ray, 8, &wt);
			assert_int_equal(got, want);
			if (want >= 0) {
				assert_float_equal(gt, wt, 1e-6);
				hits++;
			}
			/* occlusion of a target centre from the ray origin */
			recording_object_box_at(r, (size_t)target, t, &tb);
			glm_vec3_copy(tb.c, p);
			glm_vec3_sub(p, ray.o, ray.d);
			len = glm_vec3_norm(ray.d);
			glm_vec3_scale(ray.d, 1.0f / len, ray.d);
			{
				bool o1 = scene_occluded(s, &ray, len, target, p, NULL);
				bool o2 = brute_occluded(r, t, &ray, len, target, p);

				assert_int_equal(o1, o2);
				occl += o1;
			}
		}
		/* the random scenes exercise hits, misses and both answers */
		assert_true(hits > 50 && hits < 390);
		assert_true(occl > 20 && occl < 390);
		scene_free(s);
		recording_free(r);
	}
}

/* ======================= Timeline ======================= */

static void test_timeline_turning_camera(void **state)
{
	struct recording *r = fx_new();
	const struct visibility_timeline *tl;
	struct tool_ctx *ctx = NULL;
	struct scene *s = NULL;
	vec3 p = { 0, 0, 1.6f };
	size_t k;

	(void)state;
	/* 10 deg/s: the box at bearing 0 leaves the 90-degree view at 4.5 s */
	fx_traj(r, 30 * FX_S, FX_S / 10, p, 0, 10);
	fx_box(r, "box", 3, 0, 1.6f, 0.1f, 0.1f, 0.1f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	assert_int_equal(visibility_timeline_get(ctx, &tl), 0);
	assert_int_equal(tl->nframes, 301);
	assert_int_equal(tl->step_ns, FX_S / 10);
	for (k = 0; k <= 44; k++)
		assert_true(visibility_timeline_visible(tl, 0, k));
	for (k = 46; k < tl->nframes; k++)
		assert_false(visibility_timeline_visible(tl, 0, k));
	assert_false(visibility_timeline_visible(tl, 0, tl->nframes));
	assert_false(visibility_timeline_visible(tl, 1, 0));
	/* the cached answer equals the predicate at every frame */
	assert_int_equal(scene_new(r, &s), 0);
	for (k = 0; k < tl->nframes; k++) {
		struct visibility_view v;

		assert_int_equal(visibility_view_at(s, r, visibility_timeline_time(tl, k),
						    VISIBILITY_MAX_RANGE_M, &v), 0);
		assert_int_equal(visibility_test(s, &v, 0, false, NULL) == VIS_VISIBLE,
				 visibility_timeline_visible(tl, 0, k));
	}
	scene_free(s);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* ======================= visible_objects ======================= */

/* True when the invalid_arguments result names the field at path. */
static bool names_field(const cJSON *res, const char *path)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItem(res, "violations"))
		if (!strcmp(cJSON_GetObjectItem(v, "path")->valuestring, path))
			return true;
	return false;
}

static void test_visible_objects_tool(void **state)
{
	struct recording *r = still();
	struct tool_ctx *ctx = NULL;
	cJSON *res = NULL, *objs, *o, *hid;

	(void)state;
	fx_box(r, "mug", 3, 0.5f, 0.3f, 0.05f, 0.05f, 0.05f, 0);
	fx_box(r, "wall", 1.5f, -1, 0, 0.05f, 0.5f, 0.5f, 0);
	fx_box(r, "cup", 3, -2, 0, 0.05f, 0.05f, 0.05f, 0);
	fx_box(r, "back", -3, 0, 0, 0.05f, 0.05f, 0.05f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	assert_int_equal(tool_call(ctx, "visible_objects",
				   "{\"t\":0,\"max_range_m\":null,\"include_hidden\":true,\"limit\":null}",
				   &res), 0);
	assert_int_equal(cJSON_GetObjectItem(res, "total")->valueint, 2);
	objs = cJSON_GetObjectItem(res, "objects");
	assert_int_equal(cJSON_GetArraySize(objs), 2);
	o = cJSON_GetArrayItem(objs, 0); /* the wall (1.80 m) before the mug (3.06 m) */
	assert_string_equal(cJSON_GetObjectItem(o, "id")->valuestring, "wall");
	o = cJSON_GetArrayItem(objs, 1);
	assert_string_equal(cJSON_GetObjectItem(o, "id")->valuestring, "mug");
	assert_float_equal(cJSON_GetObjectItem(o, "yaw_deg")->valuedouble,
			   (atan2(0.5, 3) / FX_DEG), 0.01);
	assert_string_equal(cJSON_GetObjectItem(o, "direction")->valuestring, "front");
	assert_string_equal(cJSON_GetObjectItem(o, "letter")->valuestring, "C");
	assert_float_equal(cJSON_GetObjectItem(o, "sector_margin_deg")->valuedouble,
			   (22.5 - atan2(0.5, 3) / FX_DEG), 0.01);
	assert_float_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "pixel"), 0)->valuedouble,
			   266.7, 1e-9);
	assert_float_equal(cJSON_GetObjectItem(o, "distance_m")->valuedouble, 3.056, 1e-9);
	hid = cJSON_GetObjectItem(res, "hidden");
	assert_int_equal(cJSON_GetArraySize(hid), 2);
	o = cJSON_GetArrayItem(hid, 0); /* the cup (3.61 m) is behind the wall */
	assert_string_equal(cJSON_GetObjectItem(o, "id")->valuestring, "back");
	assert_string_equal(cJSON_GetObjectItem(o, "reason")->valuestring, "behind");
	o = cJSON_GetArrayItem(hid, 1);
	assert_string_equal(cJSON_GetObjectItem(o, "id")->valuestring, "cup");
	assert_string_equal(cJSON_GetObjectItem(o, "reason")->valuestring, "occluded");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "occluder"), "id")->valuestring,
			    "wall");
	cJSON_Delete(res);

	/* a time outside the recording names the field */
	assert_int_equal(tool_call(ctx, "visible_objects",
				   "{\"t\":99000000000,\"max_range_m\":null,\"include_hidden\":null,"
				   "\"limit\":null}", &res), ENG_ESCHEMA);
	assert_true(names_field(res, "/t"));
	cJSON_Delete(res);
	assert_int_equal(tool_call(ctx, "visible_objects", "{\"t\":\"soon\"}", &res), ENG_ESCHEMA);
	assert_true(names_field(res, "/t"));
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

#ifndef EXAMPLE
#define EXAMPLE "examples/tiny"
#endif

struct tl_job {
	const struct recording *rec;
	struct tool_shared *sh;
	unsigned seed;
	int rc;
	const uint64_t *ref; /* the bits of a timeline computed alone */
	size_t wrong;   /* frames of an asked range that read otherwise than ref */
	uint64_t *bits; /* the whole timeline's bits, as this thread read them */
};

/* Random ranges in a thread's own order, then the whole timeline. */
static void *tl_worker(void *p)
{
	struct tl_job *j = p;
	const struct visibility_timeline *tl = NULL;
	struct tool_ctx *ctx = NULL;
	size_t k, o;
	int i;

	j->rc = tool_ctx_new(j->rec, &ctx);
	if (j->rc)
		return NULL;
	tool_ctx_share(ctx, j->sh);
	for (i = 0; i < 40 && !j->rc; i++) {
		size_t n, a, b;

		j->seed = j->seed * 1103515245u + 12345u;
		j->rc = visibility_timeline_range(ctx, 0, 0, &tl);
		if (j->rc)
			break;
		n = tl->nframes;
		a = (j->seed >> 8) % n;
		b = a + (j->seed >> 4) % 300;
		j->rc = visibility_timeline_range(ctx, a, b, &tl);
		/* every frame asked for reads as computed alone, from the first call */
		for (k = a; !j->rc && k < b && k < n; k++)
			for (o = 0; o < tl->nobjects; o++)
				j->wrong += visibility_timeline_visible(tl, o, k) !=
					    (bool)((j->ref[o * tl->words + k / 64] >> (k % 64)) & 1);
	}
	if (!j->rc)
		j->rc = visibility_timeline_get(ctx, &tl);
	if (!j->rc) {
		j->bits = malloc(tl->nobjects * tl->words * sizeof(*j->bits) + 1);
		if (j->bits)
			memcpy(j->bits, tl->bits, tl->nobjects * tl->words * sizeof(*j->bits));
	}
	tool_ctx_free(ctx);
	return NULL;
}

/*
 * One timeline shared by four threads' contexts, each computing the chunks
 * it asks for in its own order (waiting for the chunks another computes,
 * setting bits of words another sets too), holds the bits of a timeline
 * computed alone on one context, and each range asked for reads so at once.
 */
static void test_timeline_shared(void **state)
{
	struct recording *rec = NULL;
	struct tool_ctx *ctx = NULL;
	struct tool_shared *sh = NULL;
	const struct visibility_timeline *tl;
	struct tl_job jobs[4];
	pthread_t th[4];
	struct stat st;
	size_t nbits, set = 0, i;
	int k;

	(void)state;
	if (stat(EXAMPLE "/recording.json", &st)) {
		print_message("skipped: %s is missing (the synthetic example recording)\n", EXAMPLE);
		skip();
	}
	assert_int_equal(recording_load(EXAMPLE, REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(tool_ctx_new(rec, &ctx), 0);
	assert_int_equal(visibility_timeline_get(ctx, &tl), 0);
	nbits = tl->nobjects * tl->words;
	for (i = 0; i < nbits; i++)
		set += (size_t)__builtin_popcountll(tl->bits[i]);
	assert_true(set > 1000);
	assert_int_equal(tool_shared_new(&sh), 0);
	for (k = 0; k < 4; k++) {
		jobs[k] = (struct tl_job){ rec, sh, 7u + 31u * (unsigned)k, 0, tl->bits, 0, NULL };
		assert_int_equal(pthread_create(&th[k], NULL, tl_worker, &jobs[k]), 0);
	}
	for (k = 0; k < 4; k++) {
		pthread_join(th[k], NULL);
		assert_int_equal(jobs[k].rc, 0);
		assert_int_equal(jobs[k].wrong, 0);
		assert_non_null(jobs[k].bits);
		assert_memory_equal(jobs[k].bits, tl->bits, nbits * sizeof(*tl->bits));
		free(jobs[k].bits);
	}
	tool_shared_free(sh);
	tool_ctx_free(ctx);
	recording_free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_view_pixel),
		cmocka_unit_test(test_behind),
		cmocka_unit_test(test_outside_image),
		cmocka_unit_test(test_occluded),
		cmocka_unit_test(test_room_around_camera_shared),
		cmocka_unit_test(test_max_range),
		cmocka_unit_test(test_room_around_camera),
		cmocka_unit_test(test_shelf_around_target),
		cmocka_unit_test(test_moving_occluder),
		cmocka_unit_test(test_precheck_agrees),
		cmocka_unit_test(test_fisheye),
		cmocka_unit_test(test_casts_match_brute_force),
		cmocka_unit_test(test_timeline_turning_camera),
		cmocka_unit_test(test_timeline_shared),
		cmocka_unit_test(test_visible_objects_tool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
