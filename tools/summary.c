/* SPDX-License-Identifier: MIT */
/*
 * describe_recording: a compact summary of the recording for the brain:
 * time span, stream sizes, a page of the object list, and the goals and
 * verbs of the actions.
 */
#include "registry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

#define DEFAULT_OBJECT_LIMIT 50
#define MAX_GOALS 50
#define MAX_VERBS 50

static int add_stream(cJSON *streams, const char *key, const struct rec_stream_info *si)
{
	cJSON *s = cJSON_AddObjectToObject(streams, key);

	if (!s || !cJSON_AddNumberToObject(s, "count", (double)si->count) ||
	    !tool__add_num(s, "rate_hz", si->rate_hz, 2))
		return ENG_ENOMEM;
	if (si->count) {
		if (!tool__add_time(s, "t_first_ns", si->t_first) ||
		    !tool__add_time(s, "t_last_ns", si->t_last))
			return ENG_ENOMEM;
	}
	return 0;
}

static int add_objects(cJSON *result, const struct recording *rec, size_t off,
		       size_t limit)
{
	cJSON *o = cJSON_AddObjectToObject(result, "objects"), *items;
	size_t i, ndyn = 0, end = off + limit < rec->nobjects ? off + limit : rec->nobjects;

	if (!o)
		return ENG_ENOMEM;
	for (i = 0; i < rec->nobjects; i++)
		if (rec->objects[i].motion == REC_DYNAMIC)
			ndyn++;
	if (!cJSON_AddNumberToObject(o, "total", (double)rec->nobjects) ||
	    !cJSON_AddNumberToObject(o, "dynamic", (double)ndyn) ||
	    !cJSON_AddNumberToObject(o, "offset", (double)off) ||
	    !(end < rec->nobjects ? cJSON_AddNumberToObject(o, "next_offset", (double)end)
				  : cJSON_AddNullToObject(o, "next_offset")))
		return ENG_ENOMEM;
	items = cJSON_AddArrayToObject(o, "items");
	if (!items)
		return ENG_ENOMEM;
	for (i = off; i < end; i++) {
		const struct rec_object *ob = &rec->objects[i];
		cJSON *x = cJSON_CreateObject();
		vec3 pos = { 0 }, size;

		if (!x)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(items, x);
		tool__object_pos(rec, i, recording_t0(rec), pos);
		size[0] = 2 * ob->half[0];
		size[1] = 2 * ob->half[1];
		size[2] = 2 * ob->half[2];
		if (!tool__add_str(x, "id", ob->id) || !tool__add_str(x, "name", ob->name) ||
		    !tool__add_str(x, "category", ob->category) ||
		    !cJSON_AddStringToObject(x, "motion",
					     ob->motion == REC_DYNAMIC ? "dynamic" : "static") ||
		    !tool__add_vec3(x, "position", pos, 2) || !tool__add_vec3(x, "size", size, 2))
			return ENG_ENOMEM;
	}
	return 0;
}

/* Distinct goals with their action counts and first/last start, in order of appearance. */
static int add_goals(cJSON *result, const struct recording *rec)
{
	cJSON *arr = cJSON_AddArrayToObject(result, "goals"), *g;
	size_t i, j, last, n = 0;

	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < rec->nactions; i++) {
		const char *goal = rec->actions[i].goal;
		size_t count = 0;

		if (!goal)
			continue;
		for (j = 0; j < i; j++)
			if (rec->actions[j].goal && !strcmp(rec->actions[j].goal, goal))
				break;
		if (j < i)
			continue; /* seen */
		if (n++ >= MAX_GOALS)
			continue;
		g = cJSON_CreateObject();
		if (!g)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(arr, g);
		last = i;
		for (j = i; j < rec->nactions; j++)
			if (rec->actions[j].goal && !strcmp(rec->actions[j].goal, goal)) {
				count++;
				last = j;
			}
		if (!cJSON_AddStringToObject(g, "goal", goal) ||
		    !cJSON_AddNumberToObject(g, "actions", (double)count) ||
		    !tool__add_time(g, "t_first_ns", rec->actions[i].start_ns) ||
		    !tool__add_time(g, "t_last_ns", rec->actions[last].start_ns))
			return ENG_ENOMEM;
	}
	if (!cJSON_AddNumberToObject(result, "goals_total", (double)n))
		return ENG_ENOMEM;
	return 0;
}

static int add_verbs(cJSON *result, const struct recording *rec)
{
	cJSON *arr = cJSON_AddArrayToObject(result, "verbs");
	size_t i, j, n = 0;

	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < rec->nactions && n < MAX_VERBS; i++) {
		const char *v = rec->actions[i].verb;
		cJSON *s;

		if (!v)
			continue;
		for (j = 0; j < i; j++)
			if (rec->actions[j].verb && !strcmp(rec->actions[j].verb, v))
				break;
		if (j < i)
			continue;
		s = cJSON_CreateString(v);
		if (!s)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(arr, s);
		n++;
	}
	return 0;
}

int tool_describe_recording(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	size_t off = (size_t)tool__num(args, "object_offset", 0);
	size_t limit = (size_t)tool__num(args, "object_limit", DEFAULT_OBJECT_LIMIT);
	int64_t t0 = recording_t0(rec), t1 = recording_t1(rec);
	cJSON *streams, *cam;
	int rc;

	if (off > rec->nobjects)
		return tool__reject(ctx, "/object_offset",
				    "must be <= the number of objects (%zu), got %zu",
				    rec->nobjects, off);
	if (!tool__add_str(result, "id", rec->id) ||
	    !tool__add_str(result, "layout", rec->layout) ||
	    !tool__add_time(result, "t0_ns", t0) || !tool__add_time(result, "t1_ns", t1) ||
	    !tool__add_num(result, "duration_s", (double)(t1 - t0) / 1e9, 3) ||
	    !tool__add_num(result, "floor_z", rec->floor_z, 3))
		return ENG_ENOMEM;
	streams = cJSON_AddObjectToObject(result, "streams");
	if (!streams)
		return ENG_ENOMEM;
	rc = add_stream(streams, "trajectory", &rec->info_traj);
	if (!rc)
		rc = add_stream(streams, "gaze", &rec->info_gaze);
	if (!rc)
		rc = add_stream(streams, "object_poses", &rec->info_objects);
	if (!rc)
		rc = add_stream(streams, "actions", &rec->info_actions);
	if (rc)
		return rc;
	cam = cJSON_AddObjectToObject(result, "camera");
	if (!cam ||
	    !cJSON_AddStringToObject(cam, "model",
				     rec->camera.model == REC_CAM_FISHEYE ? "fisheye" : "pinhole") ||
	    !cJSON_AddNumberToObject(cam, "width", rec->camera.width) ||
	    !cJSON_AddNumberToObject(cam, "height", rec->camera.height) ||
	    !cJSON_AddBoolToObject(result, "video", rec->video.path != NULL))
		return ENG_ENOMEM;
	rc = add_objects(result, rec, off, limit);
	if (!rc)
		rc = add_goals(result, rec);
	if (!rc)
		rc = add_verbs(result, rec);
	return rc;
}
