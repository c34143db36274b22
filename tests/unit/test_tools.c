/* SPDX-License-Identifier: MIT */
/*
 * The tool registry and the first tools, on recordings built by hand in
 * the test: error results (unknown tool, invalid JSON, trailing garbage,
 * schema violations with paths), the schemas of every tool, context
 * slots, and the tools' numbers against hand-computed values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bev.h"
#include "err.h"
#include "recording.h"
#include "registry.h"
#include "schema.h"

#define S 1000000000LL /* one second in ns */
#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ======================= Building recordings ======================= */

static struct recording *rec_new(void)
{
	struct recording *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->id = strdup("handmade");
	r->root = strdup("handmade");
	r->layout = "test";
	r->camera.width = 640;
	r->camera.height = 480;
	return r;
}

/* A camera sample at (x,y,z) looking level along world heading h (degrees). */
static void rec_cam(struct recording *r, int64_t t, float x, float y, float z, double h_deg)
{
	mat3 m = { { 0, -1, 0 }, { 0, 0, -1 }, { 1, 0, 0 } }; /* heading +X: cam x->-Y, y->-Z, z->+X */
	versor q0, qz, q;
	struct pose_sample *s;

	r->traj = realloc(r->traj, (r->ntraj + 1) * sizeof(*r->traj));
	assert_non_null(r->traj);
	glm_mat3_quat(m, q0);
	glm_quatv(qz, (float)(h_deg * M_PI / 180.0), (vec3){ 0, 0, 1 });
	glm_quat_mul(qz, q0, q);
	s = &r->traj[r->ntraj++];
	s->t_ns = t;
	pose_set(&s->pose, q[0], q[1], q[2], q[3], x, y, z);
}

/* A 10 cm box object at (x,y,z); returns its index. */
static long rec_obj(struct recording *r, const char *id, float x, float y, float z,
		    bool dynamic)
{
	struct rec_object *o;

	r->objects = realloc(r->objects, (r->nobjects + 1) * sizeof(*r->objects));
	assert_non_null(r->objects);
	o = &r->objects[r->nobjects];
	memset(o, 0, sizeof(*o));
	o->id = strdup(id);
	o->name = strdup(id);
	o->category = strdup(id);
	o->half[0] = o->half[1] = o->half[2] = 0.05f;
	o->motion = dynamic ? REC_DYNAMIC : REC_STATIC;
	pose_set(&o->static_pose, 0, 0, 0, 1, x, y, z);
	o->pose_first = r->nobj_poses;
	return (long)r->nobjects++;
}

/* A pose sample of the last added (dynamic) object. */
static void rec_pose(struct recording *r, int64_t t, float x, float y, float z)
{
	struct rec_object *o = &r->objects[r->nobjects - 1];
	struct pose_sample *s;

	r->obj_poses = realloc(r->obj_poses, (r->nobj_poses + 1) * sizeof(*r->obj_poses));
	assert_non_null(r->obj_poses);
	s = &r->obj_poses[r->nobj_poses++];
	s->t_ns = t;
	pose_set(&s->pose, 0, 0, 0, 1, x, y, z);
	if (!o->pose_count)
		o->static_pose = s->pose;
	o->pose_count++;
}

static void rec_act(struct recording *r, int64_t start, int64_t end, const char *verb,
		    long obj, enum rec_hand hand, const char *goal)
{
	struct rec_action *a;

	r->actions = realloc(r->actions, (r->nactions + 1) * sizeof(*r->actions));
	assert_non_null(r->actions);
	a = &r->actions[r->nactions++];
	memset(a, 0, sizeof(*a));
	a->start_ns = start;
	a->end_ns = end;
	a->verb = verb ? strdup(verb) : NULL;
	a->object = obj;
	a->hand = hand;
	a->description = verb ? strdup(verb) : NULL;
	a->goal = goal ? strdup(goal) : NULL;
	a->step_id = -1;
}

static void rec_done(struct recording *r)
{
	assert_int_equal(recording__finish(r), 0);
}

/* A still camera at (0,0,1.5) looking along heading h for 10 s. */
static struct recording *still_rec(double h_deg)
{
	struct recording *r = rec_new();

	rec_cam(r, 0, 0, 0, 1.5f, h_deg);
	rec_cam(r, 10 * S, 0, 0, 1.5f, h_deg);
	return r;
}

/* ======================= Result access ======================= */

/* The item at a '/'-separated path of keys and array indices. */
static const cJSON *jget(const cJSON *v, const char *path)
{
	char key[64];

	while (v && *path) {
		size_t n = strcspn(path, "/");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		if (cJSON_IsArray(v))
			v = cJSON_GetArrayItem(v, (int)strtol(key, NULL, 10));
		else
			v = cJSON_GetObjectItemCaseSensitive(v, key);
		path += n;
		if (*path == '/')
			path++;
	}
	if (!v)
		fail_msg("no item at the path");
	return v;
}

static double jnum(const cJSON *v, const char *path)
{
	const cJSON *x = jget(v, path);

	if (cJSON_IsRaw(x))
		return strtod(x->valuestring, NULL);
	assert_true(cJSON_IsNumber(x));
	return x->valuedouble;
}

static const char *jstr(const cJSON *v, const char *path)
{
	const cJSON *x = jget(v, path);

	if (!cJSON_IsString(x))
		fail_msg("%s is not a string", path);
	return x->valuestring;
}

static bool jhas_str(const cJSON *arr, const char *s)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, arr)
		if (cJSON_IsString(x) && !strcmp(x->valuestring, s))
			return true;
	return false;
}

/* Runs a tool; returns the result (caller frees) and stores the return code. */
static cJSON *run(struct tool_ctx *ctx, const char *name, const char *args, int *rc)
{
	cJSON *res = NULL;

	*rc = tool_call(ctx, name, args, &res);
	assert_non_null(res);
	return res;
}

/* Runs a tool that must succeed. */
static cJSON *run_ok(struct tool_ctx *ctx, const char *name, const char *args)
{
	int rc;
	cJSON *res = run(ctx, name, args, &rc);

	if (rc) {
		char *t = cJSON_PrintUnformatted(res);

		fail_msg("%s %s failed: %s", name, args, t);
	}
	assert_true(cJSON_IsTrue(jget(res, "ok")));
	return res;
}

/* ======================= Registry ======================= */

static void test_unknown_tool(void **state)
{
	struct tool_ctx *ctx;
	cJSON *res;
	int rc;

	(void)state;
	assert_int_equal(tool_ctx_new(NULL, &ctx), 0);
	res = run(ctx, "teleport", "{}", &rc);
	assert_int_equal(rc, ENG_ENOTFOUND);
	assert_true(cJSON_IsFalse(jget(res, "ok")));
	assert_string_equal(jstr(res, "error"), "unknown_tool");
	assert_string_equal(jstr(res, "detail"), "no tool named 'teleport'");
	assert_int_equal(cJSON_GetArraySize(jget(res, "valid_tools")), (int)tool_count());
	assert_true(jhas_str(jget(res, "valid_tools"), "spatial_relation"));
	assert_true(jhas_str(jget(res, "valid_tools"), "build_chain"));
	cJSON_Delete(res);
	tool_ctx_free(ctx);
}

static void test_invalid_json_and_trailing_garbage(void **state)
{
	struct recording *r = still_rec(0);
	struct tool_ctx *ctx;
	cJSON *res;
	int rc;

	(void)state;
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run(ctx, "describe_recording", "{\"object_offset\": ", &rc);
	assert_int_equal(rc, ENG_EPARSE);
	assert_string_equal(jstr(res, "error"), "invalid_json");
	assert_non_null(strstr(jstr(res, "detail"), "invalid JSON at byte"));
	assert_non_null(strstr(jstr(res, "hint"), "JSON object"));
	cJSON_Delete(res);

	res = run(ctx, "describe_recording",
		  "{\"object_offset\":null,\"object_limit\":null} {\"x\":1}", &rc);
	assert_int_equal(rc, ENG_EPARSE);
	assert_string_equal(jstr(res, "error"), "invalid_json");
	assert_string_equal(jstr(res, "detail"),
			    "unexpected characters after the JSON value at byte 43: '{\"x\":1}'");
	cJSON_Delete(res);

	/* trailing whitespace is fine; an empty argument string means {} */
	res = run(ctx, "describe_recording", "{\"object_offset\":null,\"object_limit\":null}\n ", &rc);
	assert_int_equal(rc, 0);
	cJSON_Delete(res);
	res = run(ctx, "describe_recording", "", &rc);
	assert_int_equal(rc, ENG_ESCHEMA); /* strict: both fields are required */
	assert_int_equal(cJSON_GetArraySize(jget(res, "violations")), 2);
	cJSON_Delete(res);
	assert_int_equal(tool_call_value(ctx, "describe_recording", NULL, &res), ENG_ESCHEMA);
	cJSON_Delete(res);
	tool_ctx_set_flags(ctx, TOOL_CTX_FILL_NULLS);
	res = run(ctx, "describe_recording", "", &rc);
	assert_int_equal(rc, 0);
	cJSON_Delete(res);
	assert_int_equal(tool_call_value(ctx, "describe_recording", NULL, &res), 0);
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

static void test_schema_violations_with_paths(void **state)
{
	struct recording *r = still_rec(0);
	struct tool_ctx *ctx;
	const cJSON *v;
	cJSON *res;
	int rc;

	(void)state;
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run(ctx, "spatial_relation",
		  "{\"t\":\"soon\",\"point\":[1,2],\"object\":null,\"reference\":null,\"extra\":1}",
		  &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "error"), "invalid_arguments");
	v = jget(res, "violations");
	assert_int_equal(cJSON_GetArraySize(v), 4);
	assert_string_equal(jstr(v, "0/path"), "/t2");
	assert_string_equal(jstr(v, "0/message"), "is required");
	assert_string_equal(jstr(v, "1/path"), "/t");
	assert_string_equal(jstr(v, "1/message"), "must be of type integer, got string \"soon\"");
	assert_string_equal(jstr(v, "2/path"), "/point");
	assert_string_equal(jstr(v, "2/message"), "must have at least 3 items, got 2");
	assert_string_equal(jstr(v, "3/path"), "/extra");
	assert_non_null(strstr(jstr(v, "3/message"), "is not allowed"));
	assert_string_equal(jstr(res, "hint"), "call spatial_relation again with corrected arguments");
	cJSON_Delete(res);

	/* nested: an item of an item */
	res = run(ctx, "build_chain",
		  "{\"actions\":[0,1],\"t\":null,\"k\":null,\"before\":[[0,-1]],"
		  "\"keep_goal_order\":null,\"limit\":null}", &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/before/0/1");
	assert_string_equal(jstr(res, "violations/0/message"), "must be >= 0, got -1");
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* Every object schema is strict-mode friendly: additionalProperties false, all properties required. */
static void check_strict(const cJSON *s, const char *tool)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "type");
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required"), *p, *x;
	bool is_obj = cJSON_IsString(t) ? !strcmp(t->valuestring, "object") : false;

	cJSON_ArrayForEach(x, t)
		if (cJSON_IsString(x) && !strcmp(x->valuestring, "object"))
			is_obj = true;
	if (is_obj) {
		if (!cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "additionalProperties")))
			fail_msg("%s: an object without additionalProperties false", tool);
		cJSON_ArrayForEach(p, props) {
			bool found = false;
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(p, "description");

			cJSON_ArrayForEach(x, req)
				if (!strcmp(x->valuestring, p->string))
					found = true;
			if (!found)
				fail_msg("%s: property '%s' is not in required", tool, p->string);
			if (!cJSON_IsString(d) || strlen(d->valuestring) < 10)
				fail_msg("%s: property '%s' has no description", tool, p->string);
		}
		assert_int_equal(cJSON_GetArraySize(req), cJSON_GetArraySize(props));
	}
	cJSON_ArrayForEach(p, props)
		check_strict(p, tool);
	x = cJSON_GetObjectItemCaseSensitive(s, "items");
	if (x)
		check_strict(x, tool);
}

static void test_every_tool_has_a_schema(void **state)
{
	cJSON *arr = NULL;
	size_t i;

	(void)state;
	assert_true(tool_count() >= 5);
	if (tool_registry_check())
		fail_msg("%s", err_msg());
	for (i = 0; i < tool_count(); i++) {
		const struct tool_def *t = tool_at(i);
		const struct schema *s = NULL;

		assert_int_equal(tool_schema(t, &s), 0);
		assert_non_null(s);
		assert_true(strlen(tool_description(t)) > 80);
		assert_true(tool_find(t->name) == t);
		check_strict(schema_doc(s), t->name);
	}
	assert_null(tool_at(tool_count()));
	assert_null(tool_find("nope"));
	assert_int_equal(tool_openai_tools(&arr), 0);
	assert_int_equal(cJSON_GetArraySize(arr), (int)tool_count());
	assert_string_equal(jstr(arr, "0/type"), "function");
	assert_string_equal(jstr(arr, "0/function/name"), tool_at(0)->name);
	assert_true(cJSON_IsTrue(jget(arr, "0/function/strict")));
	assert_string_equal(jstr(arr, "0/function/parameters/type"), "object");
	/* the description is next to the name, not repeated in the parameters */
	assert_null(cJSON_GetObjectItemCaseSensitive(jget(arr, "0/function/parameters"),
						     "description"));
	cJSON_Delete(arr);
}

static int destroyed;

static void count_destroy(void *p)
{
	destroyed++;
	free(p);
}

static void test_ctx_slots(void **state)
{
	struct tool_ctx *ctx;
	void *a = malloc(8), *b = malloc(8);

	(void)state;
	destroyed = 0;
	assert_int_equal(tool_ctx_new(NULL, &ctx), 0);
	assert_null(tool_ctx_slot(ctx, TOOL_SLOT_ASTAR));
	assert_int_equal(tool_ctx_set_slot(ctx, TOOL_SLOT_ASTAR, a, count_destroy), 0);
	assert_ptr_equal(tool_ctx_slot(ctx, TOOL_SLOT_ASTAR), a);
	assert_int_equal(tool_ctx_set_slot(ctx, TOOL_SLOT_ASTAR, a, count_destroy), 0);
	assert_int_equal(destroyed, 0); /* the same pointer is kept */
	assert_int_equal(tool_ctx_set_slot(ctx, TOOL_SLOT_ASTAR, b, count_destroy), 0);
	assert_int_equal(destroyed, 1); /* a was replaced */
	assert_int_equal(tool_ctx_set_slot(ctx, TOOL_SLOT_COUNT, a, count_destroy), ENG_EINVAL);
	assert_null(tool_ctx_slot(ctx, TOOL_SLOT_COUNT));
	NEAR(tool_ctx_disc(ctx)->near_m, 1.0, 1e-6);
	tool_ctx_free(ctx);
	assert_int_equal(destroyed, 2); /* b freed with the context */
	tool_ctx_free(NULL);
}

static void test_no_recording(void **state)
{
	struct tool_ctx *ctx;
	cJSON *res;
	int rc;

	(void)state;
	assert_int_equal(tool_ctx_new(NULL, &ctx), 0);
	res = run(ctx, "describe_recording", "{\"object_offset\":null,\"object_limit\":null}", &rc);
	assert_int_equal(rc, ENG_EINVAL);
	assert_string_equal(jstr(res, "error"), "tool_failed");
	assert_string_equal(jstr(res, "detail"), "no recording is loaded");
	cJSON_Delete(res);
	tool_ctx_free(ctx);
}

/* ======================= describe_recording ======================= */

static void test_describe_recording_pages(void **state)
{
	struct recording *r = still_rec(0);
	struct tool_ctx *ctx;
	cJSON *res;
	char id[16];
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(id, sizeof(id), "obj%d", i);
		rec_obj(r, id, (float)i, 0, 1, false);
	}
	rec_act(r, 1 * S, 2 * S, "take", 0, REC_HAND_LEFT, "tea");
	rec_act(r, 3 * S, 4 * S, "pour", 1, REC_HAND_RIGHT, "tea");
	rec_act(r, 5 * S, 6 * S, "take", 2, REC_HAND_RIGHT, "wash");
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run_ok(ctx, "describe_recording", "{\"object_offset\":null,\"object_limit\":2}");
	NEAR(jnum(res, "t1_ns"), 10 * S, 0);
	NEAR(jnum(res, "duration_s"), 10, 1e-9);
	NEAR(jnum(res, "objects/total"), 5, 0);
	NEAR(jnum(res, "objects/next_offset"), 2, 0);
	assert_string_equal(jstr(res, "objects/items/1/id"), "obj1");
	NEAR(jnum(res, "objects/items/1/position/0"), 1, 1e-9);
	NEAR(jnum(res, "objects/items/1/size/2"), 0.1, 1e-9);
	assert_string_equal(jstr(res, "goals/0/goal"), "tea");
	NEAR(jnum(res, "goals/0/actions"), 2, 0);
	NEAR(jnum(res, "goals/0/t_last_ns"), 3 * S, 0);
	assert_string_equal(jstr(res, "goals/1/goal"), "wash");
	assert_int_equal(cJSON_GetArraySize(jget(res, "verbs")), 2);
	cJSON_Delete(res);
	res = run_ok(ctx, "describe_recording", "{\"object_offset\":4,\"object_limit\":2}");
	assert_int_equal(cJSON_GetArraySize(jget(res, "objects/items")), 1);
	assert_true(cJSON_IsNull(jget(res, "objects/next_offset")));
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* ======================= spatial_relation ======================= */

static cJSON *rel_point(struct tool_ctx *ctx, double x, double y, double z)
{
	char a[256];

	snprintf(a, sizeof(a), "{\"t\":%lld,\"point\":[%.9g,%.9g,%.9g],\"object\":null,"
		 "\"t2\":null,\"reference\":null}", 5 * S, x, y, z);
	return run_ok(ctx, "spatial_relation", a);
}

static void test_spatial_point_angles(void **state)
{
	struct recording *r = still_rec(0);
	struct tool_ctx *ctx;
	cJSON *res;

	(void)state;
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);

	/* (1, 1) at camera height: yaw +45 (left of +X), front-left, letter F */
	res = rel_point(ctx, 1, 1, 1.5);
	NEAR(jnum(res, "camera/heading_deg"), 0, 1e-3);
	NEAR(jnum(res, "yaw_deg"), 45, 0.01);
	assert_string_equal(jstr(res, "direction"), "front-left");
	assert_string_equal(jstr(res, "letter"), "F");
	NEAR(jnum(res, "sector_margin_deg"), 22.5, 0.01);
	NEAR(jnum(res, "distance_m"), M_SQRT2, 1e-3);
	assert_string_equal(jstr(res, "turn"), "left");
	assert_string_equal(jstr(res, "vertical"), "level");
	assert_string_equal(jstr(res, "proximity"), "mid");
	NEAR(jnum(res, "local_m/0"), 1, 1e-3);
	NEAR(jnum(res, "local_m/1"), 1, 1e-3);
	NEAR(jnum(res, "discrete/yaw_deg"), 45, 1e-9);
	NEAR(jnum(res, "discrete/distance_m"), 1.4, 1e-9);
	assert_int_equal(cJSON_GetArraySize(jget(res, "ambiguous")), 0);
	cJSON_Delete(res);

	/* just behind, either side of the +-180 seam: atan2(+-0.01, -1) = +-179.427 */
	res = rel_point(ctx, -1, 0.01, 1.5);
	NEAR(jnum(res, "yaw_deg"), 179.43, 0.01);
	assert_string_equal(jstr(res, "direction"), "back");
	assert_string_equal(jstr(res, "letter"), "D");
	NEAR(jnum(res, "sector_margin_deg"), 179.427 - 157.5, 0.01);
	assert_string_equal(jstr(res, "turn"), "around");
	NEAR(jnum(res, "discrete/yaw_deg"), 180, 1e-9);
	cJSON_Delete(res);
	res = rel_point(ctx, -1, -0.01, 1.5);
	NEAR(jnum(res, "yaw_deg"), -179.43, 0.01);
	assert_string_equal(jstr(res, "direction"), "back");
	NEAR(jnum(res, "discrete/yaw_deg"), -180, 1e-9);
	cJSON_Delete(res);

	/* 3 degrees past the front / front-left boundary at 22.5: ambiguous direction */
	res = rel_point(ctx, 2 * cos(25.5 * M_PI / 180), 2 * sin(25.5 * M_PI / 180), 1.5);
	NEAR(jnum(res, "yaw_deg"), 25.5, 0.01);
	assert_string_equal(jstr(res, "direction"), "front-left");
	NEAR(jnum(res, "sector_margin_deg"), 3, 0.01);
	assert_true(jhas_str(jget(res, "ambiguous"), "direction"));
	NEAR(jnum(res, "discrete/yaw_deg"), 25, 1e-9); /* 25.5 rounds to the 5-degree step 25 */
	NEAR(jnum(res, "discrete/distance_m"), 2.0, 1e-9);
	assert_true(jhas_str(jget(res, "ambiguous"), "proximity")); /* 2.0 m is the far edge */
	cJSON_Delete(res);

	/* below and to the right: dz = -1, distance sqrt(4 + 1 + 1) */
	res = rel_point(ctx, 2, -1, 0.5);
	NEAR(jnum(res, "yaw_deg"), -26.57, 0.01);
	assert_string_equal(jstr(res, "direction"), "front-right");
	assert_string_equal(jstr(res, "letter"), "E");
	NEAR(jnum(res, "dz_m"), -1, 1e-3);
	assert_string_equal(jstr(res, "vertical"), "down");
	NEAR(jnum(res, "vertical_margin_m"), 0.7, 1e-3);
	NEAR(jnum(res, "distance_m"), sqrt(6.0), 1e-3);
	assert_string_equal(jstr(res, "proximity"), "far");
	NEAR(jnum(res, "discrete/dz_m"), -1.0, 1e-9);
	NEAR(jnum(res, "discrete/distance_m"), 2.4, 1e-9);
	cJSON_Delete(res);

	/* straight above the camera: no yaw */
	res = rel_point(ctx, 0, 0, 2.5);
	assert_true(cJSON_IsNull(jget(res, "yaw_deg")));
	assert_true(jhas_str(jget(res, "ambiguous"), "direction"));
	assert_string_equal(jstr(res, "vertical"), "up");
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

static void test_spatial_heading_wraps(void **state)
{
	/* heading 170: a point at world angle -165 (= 195) is 25 degrees to the left */
	struct recording *r = still_rec(170);
	struct tool_ctx *ctx;
	double a = -165 * M_PI / 180;
	cJSON *res;

	(void)state;
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = rel_point(ctx, 2 * cos(a), 2 * sin(a), 1.5);
	NEAR(jnum(res, "camera/heading_deg"), 170, 1e-3);
	NEAR(jnum(res, "yaw_deg"), 25, 0.01);
	assert_string_equal(jstr(res, "direction"), "front-left");
	NEAR(jnum(res, "sector_margin_deg"), 2.5, 0.01);
	assert_true(jhas_str(jget(res, "ambiguous"), "direction"));
	assert_string_equal(jstr(res, "turn"), "left");
	assert_false(jhas_str(jget(res, "ambiguous"), "turn"));
	cJSON_Delete(res);
	/* the mirror: world angle 145 is 25 degrees to the right */
	a = 145 * M_PI / 180;
	res = rel_point(ctx, 2 * cos(a), 2 * sin(a), 1.5);
	NEAR(jnum(res, "yaw_deg"), -25, 0.01);
	assert_string_equal(jstr(res, "direction"), "front-right");
	assert_string_equal(jstr(res, "turn"), "right");
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

static void test_spatial_objects_and_relation(void **state)
{
	struct recording *r = still_rec(0);
	struct tool_ctx *ctx;
	char a[256];
	cJSON *res;
	int rc;

	(void)state;
	rec_obj(r, "sink", 2, 0, 1, false);
	rec_obj(r, "cup", 2, 0.8f, 1, false);
	rec_obj(r, "pan", 3, 0.2f, 1, false);
	rec_obj(r, "jar", 1.5f, 0.45f, 1, false);
	rec_obj(r, "mug", 0, 0, 1, true); /* moves from (0,0,1) at 0 s to (2,2,1) at 10 s */
	rec_pose(r, 0, 0, 0, 1);
	rec_pose(r, 10 * S, 2, 2, 1);
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);

	/* cup relative to sink: B->A = (0, 0.8) in the camera frame: left of, near */
	snprintf(a, sizeof(a), "{\"t\":%lld,\"point\":null,\"object\":\"cup\",\"t2\":null,"
		 "\"reference\":\"sink\"}", 5 * S);
	res = run_ok(ctx, "spatial_relation", a);
	assert_string_equal(jstr(res, "target/object/id"), "cup");
	NEAR(jnum(res, "yaw_deg"), atan2(0.8, 2) * 180 / M_PI, 0.01);
	assert_string_equal(jstr(res, "relation/label"), "left of");
	assert_true(cJSON_IsTrue(jget(res, "relation/near")));
	NEAR(jnum(res, "relation/distance_m"), 0.8, 1e-3);
	NEAR(jnum(res, "relation/angle_deg"), 90, 0.01);
	NEAR(jnum(res, "relation/side_margin_deg"), 45, 0.01);
	NEAR(jnum(res, "relation/near_margin_m"), 0.2, 1e-3);
	assert_string_equal(jstr(res, "relation/letter"), "B");
	assert_int_equal(cJSON_GetArraySize(jget(res, "relation/ambiguous")), 0);
	cJSON_Delete(res);

	/* pan relative to sink: (1, 0.2): farther along the heading: behind */
	snprintf(a, sizeof(a), "{\"t\":%lld,\"point\":null,\"object\":\"pan\",\"t2\":null,"
		 "\"reference\":\"sink\"}", 5 * S);
	res = run_ok(ctx, "spatial_relation", a);
	assert_string_equal(jstr(res, "relation/label"), "behind");
	NEAR(jnum(res, "relation/angle_deg"), atan2(0.2, 1) * 180 / M_PI, 0.01);
	NEAR(jnum(res, "relation/side_margin_deg"), 45 - atan2(0.2, 1) * 180 / M_PI, 0.01);
	assert_false(cJSON_IsTrue(jget(res, "relation/near"))); /* 1.02 m */
	cJSON_Delete(res);

	/* jar relative to sink: (-0.5, 0.45): closer to the camera, 3 degrees from the diagonal */
	snprintf(a, sizeof(a), "{\"t\":%lld,\"point\":null,\"object\":\"jar\",\"t2\":null,"
		 "\"reference\":\"sink\"}", 5 * S);
	res = run_ok(ctx, "spatial_relation", a);
	assert_string_equal(jstr(res, "relation/label"), "in front of");
	NEAR(jnum(res, "relation/angle_deg"), 180 - atan2(0.45, 0.5) * 180 / M_PI, 0.01);
	NEAR(jnum(res, "relation/side_margin_deg"), 180 - atan2(0.45, 0.5) * 180 / M_PI - 135, 0.01);
	assert_true(jhas_str(jget(res, "relation/ambiguous"), "side"));
	cJSON_Delete(res);

	/* a dynamic object placed at t2: the mug is at (1.6, 1.6, 1) at 8 s */
	snprintf(a, sizeof(a), "{\"t\":%lld,\"point\":null,\"object\":\"mug\",\"t2\":%lld,"
		 "\"reference\":null}", 2 * S, 8 * S);
	res = run_ok(ctx, "spatial_relation", a);
	NEAR(jnum(res, "target/position/0"), 1.6, 1e-3);
	NEAR(jnum(res, "target/position/1"), 1.6, 1e-3);
	NEAR(jnum(res, "target/t_ns"), 8 * S, 0);
	NEAR(jnum(res, "yaw_deg"), 45, 0.01);
	NEAR(jnum(res, "dz_m"), -0.5, 1e-3);
	assert_string_equal(jstr(res, "vertical"), "down");
	cJSON_Delete(res);

	/* argument errors the schema cannot see */
	snprintf(a, sizeof(a), "{\"t\":%lld,\"point\":null,\"object\":\"ghost\",\"t2\":null,"
		 "\"reference\":null}", 5 * S);
	res = run(ctx, "spatial_relation", a, &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/object");
	assert_non_null(strstr(jstr(res, "violations/0/message"), "no object with id 'ghost'"));
	cJSON_Delete(res);
	res = run(ctx, "spatial_relation",
		  "{\"t\":99000000000,\"point\":[1,1,1],\"object\":null,\"t2\":null,\"reference\":null}",
		  &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/t");
	assert_string_equal(jstr(res, "violations/0/message"),
			    "must be within the recording [0, 10000000000] ns, got 99000000000");
	cJSON_Delete(res);
	res = run(ctx, "spatial_relation",
		  "{\"t\":0,\"point\":[1,1,1],\"object\":\"cup\",\"t2\":null,\"reference\":null}", &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/object");
	assert_string_equal(jstr(res, "violations/0/message"),
			    "give exactly one of point and object (the other null)");
	cJSON_Delete(res);
	res = run(ctx, "spatial_relation",
		  "{\"t\":0,\"point\":null,\"object\":null,\"t2\":null,\"reference\":null}", &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/point");
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* ======================= find_interactions ======================= */

static void test_find_interactions_motion_start(void **state)
{
	struct recording *r = still_rec(0);
	struct tool_ctx *ctx;
	long cup, kettle;
	cJSON *res;
	char a[256];
	int i;

	(void)state;
	/* cup: rests at x=1 until 2.0 s, moves +2 cm per 0.1 s to x=1.2 at 3.0 s, rests */
	cup = rec_obj(r, "cup", 1, 0, 1, true);
	for (i = 0; i <= 50; i++) {
		double t = i * 0.1, x = t <= 2.0 ? 1.0 : t >= 3.0 ? 1.2 : 1.0 + 0.2 * (t - 2.0);

		rec_pose(r, (int64_t)i * S / 10, (float)x, 0, 1);
	}
	/* jar: +-2 mm of jitter, never moves */
	rec_obj(r, "jar", 0, 1, 1, true);
	for (i = 0; i <= 50; i++)
		rec_pose(r, (int64_t)i * S / 10, (i % 2) ? 0.002f : -0.002f, 1, 1);
	/* box: sampled once a second, jumps 0.3 m between 2 s and 3 s */
	rec_obj(r, "box", 0, 2, 1, true);
	for (i = 0; i <= 5; i++)
		rec_pose(r, (int64_t)i * S, i >= 3 ? 0.3f : 0.0f, 2, 1);
	/* ball: already rolling at its first sample, resting from 0.5 s */
	rec_obj(r, "ball", 0, 3, 1, true);
	for (i = 0; i <= 10; i++)
		rec_pose(r, (int64_t)i * S / 10, 0.1f * (float)(i < 5 ? i : 5), 3, 1);
	kettle = rec_obj(r, "kettle", 3, 0, 1, false);
	rec_act(r, 2300000000LL, 3500000000LL, "pick up", cup, REC_HAND_RIGHT, "make tea");
	rec_act(r, 4 * S, 4500000000LL, "switch on", kettle, REC_HAND_LEFT, "make tea");
	rec_act(r, 4 * S, 5 * S, "wait", -1, REC_HAND_NONE, NULL);
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);

	/* from 1 ns: the ball's motion (at 0) is outside the window */
	snprintf(a, sizeof(a), "{\"t0\":1,\"t1\":%lld,\"object\":null,\"min_move_m\":null,"
		 "\"window_s\":null,\"limit\":null}", 5 * S);
	res = run_ok(ctx, "find_interactions", a);
	assert_non_null(tool_ctx_slot(ctx, TOOL_SLOT_MOTION)); /* segments are cached */
	NEAR(jnum(res, "total"), 3, 0);
	/* cup: the last rest sample is 2.0 s, the motion ends at 3.0 s */
	NEAR(jnum(res, "events/0/t_ns"), 2 * S, 0);
	assert_string_equal(jstr(res, "events/0/kind"), "motion+action");
	assert_string_equal(jstr(res, "events/0/object/id"), "cup");
	assert_string_equal(jstr(res, "events/0/hand"), "right");
	assert_string_equal(jstr(res, "events/0/verb"), "pick up");
	assert_string_equal(jstr(res, "events/0/goal"), "make tea");
	NEAR(jnum(res, "events/0/location/0"), 1.0, 1e-3);
	NEAR(jnum(res, "events/0/motion/end_ns"), 3 * S, 0);
	NEAR(jnum(res, "events/0/motion/displacement_m/0"), 0.2, 1e-3);
	NEAR(jnum(res, "events/0/motion/distance_m"), 0.2, 1e-3);
	assert_true(cJSON_IsTrue(jget(res, "events/0/motion/onset_observed")));
	NEAR(jnum(res, "events/0/action/index"), 0, 0);
	/* box: the window end is interpolated between the 1 Hz samples */
	NEAR(jnum(res, "events/1/t_ns"), 2 * S, 0);
	assert_string_equal(jstr(res, "events/1/object/id"), "box");
	assert_string_equal(jstr(res, "events/1/kind"), "motion");
	assert_true(cJSON_IsNull(jget(res, "events/1/hand")));
	NEAR(jnum(res, "events/1/motion/end_ns"), 3 * S, 0);
	NEAR(jnum(res, "events/1/motion/distance_m"), 0.3, 1e-3);
	/* the kettle action; the object-less action and the jittering jar are no events */
	NEAR(jnum(res, "events/2/t_ns"), 4 * S, 0);
	assert_string_equal(jstr(res, "events/2/kind"), "action");
	assert_string_equal(jstr(res, "events/2/object/id"), "kettle");
	assert_true(cJSON_IsNull(jget(res, "events/2/motion")));
	NEAR(jnum(res, "events/2/location/0"), 3, 1e-3);
	cJSON_Delete(res);

	/* the ball: a motion from its first sample, whose onset was not seen */
	snprintf(a, sizeof(a), "{\"t0\":0,\"t1\":%lld,\"object\":\"ball\",\"min_move_m\":null,"
		 "\"window_s\":null,\"limit\":null}", 5 * S);
	res = run_ok(ctx, "find_interactions", a);
	NEAR(jnum(res, "total"), 1, 0);
	NEAR(jnum(res, "events/0/t_ns"), 0, 0);
	NEAR(jnum(res, "events/0/motion/end_ns"), 5 * S / 10, 0);
	NEAR(jnum(res, "events/0/motion/distance_m"), 0.5, 1e-3);
	assert_false(cJSON_IsTrue(jget(res, "events/0/motion/onset_observed")));
	cJSON_Delete(res);

	/* a later window and an object filter */
	snprintf(a, sizeof(a), "{\"t0\":%lld,\"t1\":%lld,\"object\":null,\"min_move_m\":null,"
		 "\"window_s\":null,\"limit\":null}", 2100000000LL, 5 * S);
	res = run_ok(ctx, "find_interactions", a);
	NEAR(jnum(res, "total"), 1, 0);
	assert_string_equal(jstr(res, "events/0/object/id"), "kettle");
	cJSON_Delete(res);
	snprintf(a, sizeof(a), "{\"t0\":0,\"t1\":%lld,\"object\":\"box\",\"min_move_m\":null,"
		 "\"window_s\":null,\"limit\":null}", 5 * S);
	res = run_ok(ctx, "find_interactions", a);
	NEAR(jnum(res, "total"), 1, 0);
	cJSON_Delete(res);
	/* a higher threshold: the cup (0.2 m in 1 s, 0.1 m per 0.5 s) no longer counts */
	snprintf(a, sizeof(a), "{\"t0\":0,\"t1\":%lld,\"object\":\"cup\",\"min_move_m\":0.15,"
		 "\"window_s\":null,\"limit\":null}", 5 * S);
	res = run_ok(ctx, "find_interactions", a);
	NEAR(jnum(res, "total"), 1, 0);
	assert_string_equal(jstr(res, "events/0/kind"), "action"); /* only the action names it */
	NEAR(jnum(res, "events/0/t_ns"), 2300000000LL, 0);
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* find_interactions over [t0, t1] for one object id (NULL: all); the result. */
static cJSON *events(struct tool_ctx *ctx, int64_t t0, int64_t t1, const char *obj)
{
	char a[256], o[32] = "null";

	if (obj)
		snprintf(o, sizeof(o), "\"%s\"", obj);
	snprintf(a, sizeof(a), "{\"t0\":%lld,\"t1\":%lld,\"object\":%s,\"min_move_m\":null,"
		 "\"window_s\":null,\"limit\":null}", (long long)t0, (long long)t1, o);
	return run_ok(ctx, "find_interactions", a);
}

/*
 * A motion takes the action on its object whose span holds it, however
 * long ago the action began: here an action from 1 s to 20 s holds the
 * cup's motion at 10 s, with 40 short actions on another object between
 * them and a later cup action that does not hold it. Windows then keep
 * exactly the events that start inside them.
 */
static void test_find_interactions_long_action(void **state)
{
	struct recording *r = still_rec(0);
	struct tool_ctx *ctx;
	long cup, jar;
	cJSON *res;
	int i;

	(void)state;
	cup = rec_obj(r, "cup", 1, 0, 1, true);
	for (i = 0; i <= 400; i++)
		rec_pose(r, (int64_t)i * S / 10, i <= 100 ? 1.0f : i >= 110 ? 1.3f :
			 1.0f + 0.03f * (float)(i - 100), 0, 1);
	jar = rec_obj(r, "jar", 3, 0, 1, false);
	rec_act(r, 1 * S, 20 * S, "carry", cup, REC_HAND_RIGHT, "tidy");
	for (i = 0; i < 40; i++)
		rec_act(r, 2 * S + (int64_t)i * S / 5, 2 * S + (int64_t)i * S / 5 + S / 10, "touch",
			jar, REC_HAND_LEFT, NULL);
	rec_act(r, 30 * S, 31 * S, "put down", cup, REC_HAND_RIGHT, "tidy");
	rec_done(r);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);

	res = events(ctx, 0, 40 * S, "cup");
	NEAR(jnum(res, "total"), 2, 0);
	NEAR(jnum(res, "events/0/t_ns"), 10 * S, 0);
	assert_string_equal(jstr(res, "events/0/kind"), "motion+action");
	assert_string_equal(jstr(res, "events/0/verb"), "carry");
	NEAR(jnum(res, "events/0/action/index"), 0, 0);
	assert_string_equal(jstr(res, "events/1/kind"), "action");
	NEAR(jnum(res, "events/1/t_ns"), 30 * S, 0);
	cJSON_Delete(res);
	/* all 42 events; then windows that cut through the jar's actions */
	res = events(ctx, 0, 40 * S, NULL);
	NEAR(jnum(res, "total"), 42, 0);
	cJSON_Delete(res);
	/* [3 s, 5 s]: jar actions at 3.0, 3.2, ..., 5.0 s; [2.1 s, 9.99 s]: 2.2 .. 9.8 s */
	res = events(ctx, 3 * S, 5 * S, NULL);
	NEAR(jnum(res, "total"), 11, 0);
	NEAR(jnum(res, "events/0/t_ns"), 3 * S, 0);
	NEAR(jnum(res, "events/10/t_ns"), 5 * S, 0);
	cJSON_Delete(res);
	res = events(ctx, 2100000000LL, 9990000000LL, NULL);
	NEAR(jnum(res, "total"), 39, 0);
	cJSON_Delete(res);
	/* from 10 s on: the cup's motion at exactly t0 and its later action */
	res = events(ctx, 10 * S, 40 * S, "cup");
	NEAR(jnum(res, "total"), 2, 0);
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* ======================= extract_keysteps and build_chain ======================= */

/*
 * The chain layout: camera at the origin, heading 0 until 1 s, turning to
 * 90 by 2 s and staying there. Actions a0..a3 at 1, 2, 3, 4 s on objects
 * at (0,0), (0,1), (1,1), (0,2); a4 at 5 s names no object.
 */
static struct recording *chain_rec(void)
{
	struct recording *r = rec_new();
	long o0, o1, o2, o3;

	rec_cam(r, 0, 0, 0, 1.5f, 0);
	rec_cam(r, 1 * S, 0, 0, 1.5f, 0);
	rec_cam(r, 2 * S, 0, 0, 1.5f, 90);
	rec_cam(r, 10 * S, 0, 0, 1.5f, 90);
	o0 = rec_obj(r, "soap", 0, 0, 1, false);
	o1 = rec_obj(r, "board", 0, 1, 1, false);
	o2 = rec_obj(r, "tap", 1, 1, 1, false);
	o3 = rec_obj(r, "rack", 0, 2, 1, false);
	rec_act(r, 1 * S, 1500000000LL, "get", o0, REC_HAND_RIGHT, "wash the board");
	rec_act(r, 2 * S, 2500000000LL, "wash", o1, REC_HAND_BOTH, "wash the board");
	rec_act(r, 3 * S, 3500000000LL, "turn off", o2, REC_HAND_LEFT, "dry the board");
	rec_act(r, 4 * S, 4500000000LL, "put", o3, REC_HAND_RIGHT, "dry the board");
	rec_act(r, 5 * S, 5500000000LL, "look around", -1, REC_HAND_NONE, NULL);
	rec_done(r);
	return r;
}

static void test_build_chain_letters_and_orders(void **state)
{
	struct recording *r = chain_rec();
	struct tool_ctx *ctx;
	cJSON *res;
	int rc;

	(void)state;
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	/*
	 * Observed edges: a0->a1 (0,1) from heading 0: yaw 90, left B;
	 * a1->a2 (1,0) from heading 90: yaw -90, right A;
	 * a2->a3 (-1,1) from heading 90: yaw 45, front-left F.
	 */
	res = run_ok(ctx, "build_chain", "{\"actions\":[2,0,3,1],\"t\":null,\"k\":null,"
		     "\"before\":null,\"keep_goal_order\":null,\"limit\":null}");
	NEAR(jnum(res, "observed/order/0"), 0, 0);
	NEAR(jnum(res, "observed/order/3"), 3, 0);
	assert_string_equal(jstr(res, "observed/letters/0"), "B");
	assert_string_equal(jstr(res, "observed/letters/1"), "A");
	assert_string_equal(jstr(res, "observed/letters/2"), "F");
	assert_true(cJSON_IsTrue(jget(res, "observed/valid")));
	assert_false(cJSON_IsTrue(jget(res, "observed/ambiguous")));
	NEAR(jnum(res, "actions/1/heading_deg"), 90, 0.01);
	assert_string_equal(jstr(res, "actions/1/location_source"), "object");
	NEAR(jnum(res, "valid_order_count"), 24, 0); /* no constraint: 4! */
	assert_true(cJSON_IsTrue(jget(res, "valid_orders/0/observed")));
	cJSON_Delete(res);

	/* actions of the same goal keep their order: 4! / (2! 2!) = 6 */
	res = run_ok(ctx, "build_chain", "{\"actions\":[0,1,2,3],\"t\":null,\"k\":null,"
		     "\"before\":null,\"keep_goal_order\":true,\"limit\":null}");
	NEAR(jnum(res, "valid_order_count"), 6, 0);
	/* the lexicographic second order is a0 a2 a1 a3: a0->a2 (1,1) heading 0: F;
	 * a2->a1 (-1,0) heading 90: yaw 90, B; a1->a3 (0,1) heading 90: yaw 0, C */
	NEAR(jnum(res, "valid_orders/1/order/1"), 2, 0);
	assert_string_equal(jstr(res, "valid_orders/1/letters/0"), "F");
	assert_string_equal(jstr(res, "valid_orders/1/letters/1"), "B");
	assert_string_equal(jstr(res, "valid_orders/1/letters/2"), "C");
	assert_false(cJSON_IsTrue(jget(res, "valid_orders/1/observed")));
	cJSON_Delete(res);

	/* plus a0 before a2: a0 first, then a1 anywhere around a2 < a3: 3 orders */
	res = run_ok(ctx, "build_chain", "{\"actions\":[0,1,2,3],\"t\":null,\"k\":null,"
		     "\"before\":[[0,2]],\"keep_goal_order\":true,\"limit\":null}");
	NEAR(jnum(res, "valid_order_count"), 3, 0);
	cJSON_Delete(res);

	/* contradicting the observation: none valid */
	res = run_ok(ctx, "build_chain", "{\"actions\":[0,1,2,3],\"t\":null,\"k\":null,"
		     "\"before\":[[1,0]],\"keep_goal_order\":true,\"limit\":null}");
	NEAR(jnum(res, "valid_order_count"), 0, 0);
	assert_false(cJSON_IsTrue(jget(res, "observed/valid")));
	cJSON_Delete(res);

	/* by time: the 3 actions after 1.5 s are a1, a2, a3; the listing is capped */
	res = run_ok(ctx, "build_chain", "{\"actions\":null,\"t\":1500000000,\"k\":3,"
		     "\"before\":null,\"keep_goal_order\":null,\"limit\":2}");
	NEAR(jnum(res, "observed/order/0"), 1, 0);
	assert_string_equal(jstr(res, "observed/letters/0"), "A");
	NEAR(jnum(res, "valid_order_count"), 6, 0);
	assert_int_equal(cJSON_GetArraySize(jget(res, "valid_orders")), 2);
	assert_true(cJSON_IsTrue(jget(res, "truncated")));
	cJSON_Delete(res);

	/* an action with no object is located at the camera */
	res = run_ok(ctx, "build_chain", "{\"actions\":[3,4],\"t\":null,\"k\":null,"
		     "\"before\":null,\"keep_goal_order\":null,\"limit\":null}");
	assert_string_equal(jstr(res, "actions/1/location_source"), "camera");
	NEAR(jnum(res, "actions/1/location/2"), 1.5, 1e-3);
	/* a3 (0,2) -> camera (0,0), heading 90: world angle -90, yaw 180: back D */
	assert_string_equal(jstr(res, "observed/letters/0"), "D");
	cJSON_Delete(res);

	/* errors: an unknown index, a duplicate, too few actions after t */
	res = run(ctx, "build_chain", "{\"actions\":[0,9],\"t\":null,\"k\":null,"
		  "\"before\":null,\"keep_goal_order\":null,\"limit\":null}", &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/actions/1");
	cJSON_Delete(res);
	res = run(ctx, "build_chain", "{\"actions\":[1,1],\"t\":null,\"k\":null,"
		  "\"before\":null,\"keep_goal_order\":null,\"limit\":null}", &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	cJSON_Delete(res);
	res = run(ctx, "build_chain", "{\"actions\":null,\"t\":4500000000,\"k\":3,"
		  "\"before\":null,\"keep_goal_order\":null,\"limit\":null}", &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/k");
	cJSON_Delete(res);
	res = run(ctx, "build_chain", "{\"actions\":[0,1],\"t\":null,\"k\":null,"
		  "\"before\":[[0,3]],\"keep_goal_order\":null,\"limit\":null}", &rc);
	assert_int_equal(rc, ENG_ESCHEMA);
	assert_string_equal(jstr(res, "violations/0/path"), "/before/0/1");
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

static void test_extract_keysteps_windows(void **state)
{
	struct recording *r = chain_rec();
	struct tool_ctx *ctx;
	cJSON *res;

	(void)state;
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run_ok(ctx, "extract_keysteps", "{\"t0\":0,\"t1\":10000000000,\"k\":null,"
		     "\"clip_s\":null,\"horizon_s\":null,\"lead_s\":null,\"limit\":null}");
	NEAR(jnum(res, "actions_total"), 5, 0);
	assert_string_equal(jstr(res, "actions/2/verb"), "turn off");
	assert_string_equal(jstr(res, "actions/2/hand"), "left");
	NEAR(jnum(res, "actions/2/location/0"), 1, 1e-3);
	assert_string_equal(jstr(res, "actions/4/location_source"), "camera");
	/*
	 * K = 3: j = 1 gives T = max(1 s, 2 s - 1 s) = 1 s, observed [0],
	 * future [1,2,3]; j = 2 gives T = 2 s, observed [0,1], future [2,3,4];
	 * j = 3 lacks a third future action.
	 */
	NEAR(jnum(res, "dense_windows_total"), 2, 0);
	NEAR(jnum(res, "dense_windows/0/t_ns"), 1 * S, 0);
	assert_int_equal(cJSON_GetArraySize(jget(res, "dense_windows/0/observed")), 1);
	NEAR(jnum(res, "dense_windows/0/future/0"), 1, 0);
	NEAR(jnum(res, "dense_windows/0/future/2"), 3, 0);
	assert_string_equal(jstr(res, "dense_windows/0/goal"), "dry the board");
	assert_string_equal(jstr(res, "dense_windows/0/observed_goal"), "wash the board");
	NEAR(jnum(res, "dense_windows/1/t_ns"), 2 * S, 0);
	assert_int_equal(cJSON_GetArraySize(jget(res, "dense_windows/1/observed")), 2);
	cJSON_Delete(res);

	/* a short clip: with lead 0.2 s, T = 1.8 s; a clip of 0.5 s sees nothing before */
	res = run_ok(ctx, "extract_keysteps", "{\"t0\":0,\"t1\":10000000000,\"k\":2,"
		     "\"clip_s\":0.5,\"horizon_s\":null,\"lead_s\":0.2,\"limit\":null}");
	NEAR(jnum(res, "dense_windows_total"), 0, 0);
	cJSON_Delete(res);
	/* a window holding only 3 s .. 3.2 s lists the one overlapping action */
	res = run_ok(ctx, "extract_keysteps", "{\"t0\":3000000000,\"t1\":3200000000,\"k\":null,"
		     "\"clip_s\":null,\"horizon_s\":null,\"lead_s\":null,\"limit\":null}");
	NEAR(jnum(res, "actions_total"), 1, 0);
	NEAR(jnum(res, "actions/0/index"), 2, 0);
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_tool),
		cmocka_unit_test(test_invalid_json_and_trailing_garbage),
		cmocka_unit_test(test_schema_violations_with_paths),
		cmocka_unit_test(test_every_tool_has_a_schema),
		cmocka_unit_test(test_ctx_slots),
		cmocka_unit_test(test_no_recording),
		cmocka_unit_test(test_describe_recording_pages),
		cmocka_unit_test(test_spatial_point_angles),
		cmocka_unit_test(test_spatial_heading_wraps),
		cmocka_unit_test(test_spatial_objects_and_relation),
		cmocka_unit_test(test_find_interactions_motion_start),
		cmocka_unit_test(test_find_interactions_long_action),
		cmocka_unit_test(test_build_chain_letters_and_orders),
		cmocka_unit_test(test_extract_keysteps_windows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
